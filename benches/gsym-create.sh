#!/usr/bin/env bash
# Whole-process timing of `symfilter gsym create` against `llvm-gsymutil --convert` on a
# large binary (default: symfilter's own debug build, ~30 MB with DWARF), plus the size
# comparison the GSYM proposal makes (GSYM vs DWARF vs Breakpad .sym).
# Usage: benches/gsym-create.sh [BINARY]   (needs hyperfine, llvm-22, optionally dump_syms)
set -euo pipefail
cd "$(dirname "$0")/.."
LLVM=/usr/lib/llvm-22/bin
cargo build -q --release
if [ $# -ge 1 ]; then BIN=$1; else cargo build -q; BIN=target/debug/symfilter; fi
SF=target/release/symfilter
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$BIN" "$tmp/input"
hyperfine --warmup 1 --runs 5 \
  -n "symfilter gsym create" "$SF gsym create $tmp/input -o $tmp/ours.gsym" \
  -n "llvm-gsymutil --convert (1 thread)" "$LLVM/llvm-gsymutil --quiet --num-threads=1 --convert $tmp/input -o $tmp/llvm1.gsym" \
  -n "llvm-gsymutil --convert (all threads)" "$LLVM/llvm-gsymutil --quiet --convert $tmp/input -o $tmp/llvm.gsym"

size() { stat -c %s "$1"; }
dwarf=$($LLVM/llvm-readelf -S -W "$tmp/input" | python3 -c '
import sys
print(sum(int(f[5], 16) for f in (l.replace("[ ", "[").split() for l in sys.stdin) if len(f) > 5 and f[1].startswith(".debug_")))')
echo "input:            $(size "$tmp/input") bytes, DWARF sections $dwarf bytes"
echo "GSYM (symfilter): $(size "$tmp/ours.gsym") bytes (DWARF/GSYM = $(echo "scale=2; $dwarf / $(size "$tmp/ours.gsym")" | bc))"
echo "GSYM (llvm):      $(size "$tmp/llvm.gsym") bytes"
if command -v dump_syms >/dev/null; then
  dump_syms --inlines "$tmp/input" > "$tmp/input.sym" 2>/dev/null
  $SF gsym create "$tmp/input.sym" -o "$tmp/sym.gsym" 2>/dev/null
  echo ".sym (inlines):   $(size "$tmp/input.sym") bytes; GSYM from it $(size "$tmp/sym.gsym") bytes (.sym/GSYM = $(echo "scale=2; $(size "$tmp/input.sym") / $(size "$tmp/sym.gsym")" | bc))"
fi
# Same bytes as llvm-gsymutil writes single-threaded (with threads only the string table
# order changes).
if cmp -s "$tmp/ours.gsym" "$tmp/llvm1.gsym"; then
  echo "symfilter's GSYM is byte-identical to llvm-gsymutil --num-threads=1"
else
  echo "symfilter's GSYM DIFFERS from llvm-gsymutil --num-threads=1"
fi
