#!/usr/bin/env bash
# A MemorySanitizer report: use of an uninitialized heap value three calls deep, with the
# origin of the allocation (-fsanitize-memory-track-origins), built by clang-22 at -O0 (every
# call keeps its frame) and recorded with symbolizer markup under `setarch -R` like
# make-logs.sh. MSan links its runtime statically only, so the binary is 1.4 MB: only its
# debug half is kept as bin/msan (`objcopy --only-keep-debug`: symbol tables and DWARF, no
# code, 0.3 MB), which symbolizes the report as the whole binary does (both tools), and it is
# added to ../debug/.build-id. Then run ../llvm-diff/make-expected.sh.
set -euo pipefail
cd "$(dirname "$0")"
SRC=$(realpath ../src)
mkdir -p bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clang-22 -O0 -fsanitize=memory -fsanitize-memory-track-origins -ffile-prefix-map="$SRC"=/src \
  -fno-omit-frame-pointer -g -Wl,--build-id=sha1 -o "$tmp/msan" "$SRC/msan.c"
MSAN_OPTIONS=enable_symbolizer_markup=1:symbolize=0 setarch -R "$tmp/msan" >msan.log 2>&1 || true
grep -q 'WARNING: MemorySanitizer: use-of-uninitialized-value' msan.log ||
  { echo "no MSan report" >&2; exit 1; }
# The log names the module as the main checkout has it, as the others do.
sed -i "s#$tmp/msan#/work/main/testdata/sanitizers/bin/msan#g" msan.log
objcopy --only-keep-debug "$tmp/msan" bin/msan
./link-build-ids.sh bin/msan
ls -la bin/msan msan.log
