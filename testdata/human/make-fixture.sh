#!/usr/bin/env bash
# Fixture for --format=human path shortening: a small C program whose sources
# live in several directories, built as if in /home/dev/projects/widget, that
# hits a heap-use-after-free under AddressSanitizer. Its report is recorded with
# symbolizer markup (under `setarch -R` so addresses repeat), and the expected
# human outputs are written from it (our own output: review the diff!):
#
#   widget.log          the ASan report (markup; the binary's path in it is
#                       rewritten to /opt/widget/bin/widget)
#   widget.human        symfilter (paths shortened: the default)
#   widget.full.human   symfilter --full-paths
#   widget.strip.human  symfilter --strip-path-prefix /home/dev/projects/widget/app
#
# Symbols come from bin/ through --symbol-path. Needs clang-22 with the shared
# ASan runtime. Usage: testdata/human/make-fixture.sh [path/to/symfilter]
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
SRC=$here/src
SYMFILTER="${1:-$here/../../target/debug/symfilter}"
CC=clang-22
mkdir -p bin
FLAGS=(-O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -ffile-prefix-map="$SRC"=/home/dev/projects/widget
  -fsanitize=address -shared-libasan -Wl,--build-id=sha1 -I"$SRC/include")
(cd "$SRC" && $CC "${FLAGS[@]}" -o "$here/bin/widget" app/main.c app/net/conn.c lib/util/strbuf.c)

RT=$(dirname "$($CC -print-file-name=libclang_rt.asan-x86_64.so)")
LD_LIBRARY_PATH=$RT ASAN_OPTIONS=enable_symbolizer_markup=1:symbolize=0 \
  setarch -R bin/widget >widget.log 2>&1 || true
# The module name is where the binary was run from: make it independent of
# the checkout (symbols are found by build ID, not by this name).
sed -i "s#$here/bin/widget#/opt/widget/bin/widget#" widget.log

empty=$(mktemp -d)
trap 'rmdir "$empty"' EXIT
ours() {
  "$SYMFILTER" --build-id-dir "$empty" --symbol-path bin --no-debuginfod --offline -q \
    --color=never "$@" widget.log
}
ours >widget.human
ours --full-paths >widget.full.human
ours --strip-path-prefix /home/dev/projects/widget/app >widget.strip.human
