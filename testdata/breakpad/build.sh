#!/bin/sh
# Regenerates the Breakpad fixtures (run from anywhere; needs clang-22,
# llvm-22 and Mozilla dump_syms: `cargo install dump_syms`).
#
#   bin/       small C/C++ binaries with DWARF, -O0 and -O2, PIE and non-PIE
#   store/     their Breakpad symbols in store layout (<file>/<ID>/<file>.sym),
#              made by `dump_syms --inlines`
#   expected/  llvm-symbolizer's answers (JSON lines, with inlining) for every
#              instruction address of .text: the DWARF side of the
#              differential test in tests/breakpad_diff.rs
set -eu
cd "$(dirname "$0")"
CC=${CC:-clang-22}
CXX=${CXX:-clang++-22}
LLVM=${LLVM:-/usr/lib/llvm-22/bin}
DUMP_SYMS=${DUMP_SYMS:-$HOME/.cargo/bin/dump_syms}

rm -rf bin store expected
mkdir -p bin store expected
flags="-g -fdebug-compilation-dir=/symfilter -Wl,--build-id=sha1"
$CXX $flags -O2 -o bin/inline-O2 src/inline.cc
$CXX $flags -O0 -o bin/inline-O0 src/inline.cc
$CC $flags -O2 -o bin/plain-O2 src/plain.c
$CC $flags -O1 -fno-pie -no-pie -o bin/plain-nopie-O1 src/plain.c

for b in bin/*; do
  "$DUMP_SYMS" --inlines --no-generator -s store "$b" >/dev/null
  name=$(basename "$b")
  "$LLVM/llvm-objdump" -d --no-show-raw-insn --section=.text "$b" |
    sed -n 's/^ *\([0-9a-f][0-9a-f]*\):.*/0x\1/p' >"expected/$name.addrs"
  "$LLVM/llvm-symbolizer" --obj="$b" --inlining --output-style=JSON \
    <"expected/$name.addrs" >"expected/$name.jsonl"
done
