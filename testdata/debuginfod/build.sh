#!/usr/bin/env bash
# Regenerates the debuginfod test fixtures from hello.c:
#   hello           full binary (symbols + DWARF), build ID = the note
#   hello.debug     objcopy --only-keep-debug of it (what a server's /debuginfo serves)
#   hello.stripped  strip --strip-all of it (/executable: .dynsym only)
#   symbols.expected  "<module-relative address> <kind> <name>" lines, from llvm-symbolizer
#   lookup.expected   what `symfilter lookup` prints for the code addresses
#   markup.llvm.expected, markup.llvm.nosyms.expected
#                     markup.log through `llvm-symbolizer --filter-markup`, with and
#                     without the debug file
# Needs clang-22 and llvm-22 tools. The tests read only the committed outputs.
set -euo pipefail
cd "$(dirname "$0")"
LLVM=/usr/lib/llvm-22/bin
clang-22 -g -O1 -fdebug-prefix-map="$PWD"=/src -Wl,--build-id=sha1 -o hello hello.c
objcopy --only-keep-debug hello hello.debug
cp hello hello.stripped
strip --strip-all hello.stripped
"$LLVM"/llvm-readelf -n hello | awk '/Build ID:/ {print $3}' > build-id
{
  for sym in main compute helper; do
    addr=$("$LLVM"/llvm-nm --defined-only hello | awk -v s="$sym" '$3 == s {print $1}')
    # One byte into the function, to look up an address inside it.
    a=$(printf '0x%x' $((16#$addr + 1)))
    name=$("$LLVM"/llvm-symbolizer --obj=hello.debug --functions=linkage --no-inlines "$a" | head -1)
    echo "$a code $name"
  done
  addr=$("$LLVM"/llvm-nm --defined-only hello | awk '$3 == "global_counter" {print $1}')
  a=$(printf '0x%x' $((16#$addr + 2)))
  name=$("$LLVM"/llvm-symbolizer --obj=hello.debug "DATA $a" | head -1)
  echo "$a data $name"
} > symbols.expected
# What `symfilter lookup` must print for those code addresses: llvm-symbolizer's
# answer ("FUNCTION" then "FILE:LINE:COL") as "ADDR FUNCTION FILE:LINE[:COL]"
# (a 0 column is left out, as LLVM does in its own one-line styles).
awk '$2 == "code" {print $1}' symbols.expected |
  while read -r a; do
    "$LLVM"/llvm-symbolizer --obj=hello.debug --functions=linkage "$a" |
      awk -v a="$a" 'NF == 0 {next} NR % 2 == 1 {f = $0; next} {sub(/:0$/, ""); print a, f, $0}'
  done > lookup.expected
# markup.log (hand-written, names hello by its build ID) as LLVM 22 filters it,
# finding hello.debug in a build-ID tree.
tree=$(mktemp -d)
id=$(cat build-id)
mkdir -p "$tree/.build-id/${id:0:2}"
cp hello.debug "$tree/.build-id/${id:0:2}/${id:2}.debug"
"$LLVM"/llvm-symbolizer --filter-markup --debug-file-directory="$tree" < markup.log > markup.llvm.expected
rm -rf "$tree"
# ...and with no debug file anywhere (the elements stay as they are).
empty=$(mktemp -d)
"$LLVM"/llvm-symbolizer --filter-markup --debug-file-directory="$empty" < markup.log \
  > markup.llvm.nosyms.expected 2>/dev/null
rmdir "$empty"
