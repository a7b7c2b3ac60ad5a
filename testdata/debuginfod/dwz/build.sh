#!/usr/bin/env bash
# Regenerates the dwz fixture: hello and other share common.h; `dwz -m` moves
# the shared DWARF (the inlined shared_scale) into common.dwz, which hello
# names in .gnu_debugaltlink (by a path that does not exist, and by build ID).
# A debuginfod client must fetch common.dwz by that build ID.
#   hello           the dwz-processed binary
#   common.dwz      the supplementary file
#   build-id, common-build-id
#   lookup.expected "ADDR FUNCTION FILE:LINE[:COL]" lines from llvm-symbolizer
#                   on the binary before dwz, innermost frame first.
# Needs gcc, dwz and llvm-22 tools.
set -euo pipefail
cd "$(dirname "$0")"
LLVM=/usr/lib/llvm-22/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/compute/compute2/g' hello.c > "$tmp/other.c"
cp common.h "$tmp/"
gcc -g -O1 -fdebug-prefix-map="$PWD"=/src -Wl,--build-id=sha1 -o "$tmp/hello" hello.c
gcc -g -O1 -fdebug-prefix-map="$tmp"=/src -Wl,--build-id=sha1 -o "$tmp/other" "$tmp/other.c"
cp "$tmp/hello" "$tmp/hello.orig"
dwz -m "$tmp/common.dwz" -M /usr/lib/debug/.dwz/symfilter-test-common.dwz "$tmp/hello" "$tmp/other"
cp "$tmp/hello" hello
cp "$tmp/common.dwz" common.dwz
"$LLVM"/llvm-readelf -n hello | awk '/Build ID:/ {print $3}' > build-id
"$LLVM"/llvm-readelf -n common.dwz | awk '/Build ID:/ {print $3}' > common-build-id
# An address inside the loop of compute, where shared_scale is inlined.
addr=$("$LLVM"/llvm-nm hello | awk '$3 == "compute" {print $1}')
objdump -d --no-show-raw-insn "$tmp/hello.orig" |
  awk -v s="$addr" 'index($0, "<compute>:") {on = 1; next} on && /imul/ {sub(":", "", $1); print "0x" $1; exit}' > "$tmp/addr"
a=$(cat "$tmp/addr")
"$LLVM"/llvm-symbolizer --obj="$tmp/hello.orig" --functions=linkage "$a" |
  awk -v a="$a" 'NF == 0 {next} NR % 2 == 1 {f = $0; next} {sub(/:0$/, ""); print a, f, $0}' > lookup.expected
