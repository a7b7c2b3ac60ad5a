#!/usr/bin/env bash
# Regenerates the GSYM fixtures in testdata/gsym: small binaries built with clang-22, the
# GSYM files llvm-gsymutil (LLVM 22) converts from them, and the expected lookup outputs the
# tests compare against. Debug-info paths are mapped to /src so outputs don't depend on the
# checkout. Run from anywhere; needs clang-22, clang++-22 and /usr/lib/llvm-22/bin.
set -euo pipefail
cd "$(dirname "$0")"
LLVM=/usr/lib/llvm-22/bin
CC=${CC:-clang-22}
CXX=${CXX:-clang++-22}
MAP=(-ffile-prefix-map="$PWD"=/gsym -fno-omit-frame-pointer -Wl,--build-id=sha1)
mkdir -p bin
$CC -O2 -g "${MAP[@]}" -o bin/inl_O2 "$PWD/src/inl.c"
$CC -O0 -g "${MAP[@]}" -o bin/inl_O0 "$PWD/src/inl.c"
$CXX -O2 -g "${MAP[@]}" -o bin/app_cpp_O2 "$PWD/src/app.cpp"
$CC -O2 -g -nostdlib -static -ffreestanding "${MAP[@]}" -o bin/tiny "$PWD/src/tiny.c"
# Split DWARF: the functions live in bin/inl_split-inl.dwo.
$CC -O1 -g -gsplit-dwarf -fdebug-compilation-dir=. "${MAP[@]}" -o bin/inl_split "$PWD/src/inl.c"
# Full LTO over two units: inlined functions named across units (DW_FORM_ref_addr).
$CXX -O2 -g -flto -fuse-ld=lld "${MAP[@]}" -o bin/xunit_lto "$PWD/src/xunit_main.cc" "$PWD/src/xunit_lib.cc"
FIXTURES="inl_O2 inl_O0 app_cpp_O2 tiny inl_split xunit_lto"
for b in $FIXTURES; do
  $LLVM/llvm-gsymutil --quiet --num-threads=1 --convert bin/$b -o $b.gsym >/dev/null
done

# Breakpad symbols (mozilla dump_syms, with inline records) for the .sym -> GSYM path.
if command -v dump_syms >/dev/null; then
  for b in inl_O2 app_cpp_O2 tiny; do
    dump_syms --inlines --no-generator bin/$b > $b.sym 2>/dev/null
  done
fi

# Variants written by symfilter's writer (LLVM 22 writes only little-endian v1 with the
# smallest offset size): big-endian, version 2, forced 1/2/8-byte address offsets.
( cd ../.. && cargo build -q )
SF=../../target/debug/symfilter
mkdir -p variants
$SF gsym create bin/inl_O2 -o variants/inl_O2.be.gsym --byte-order big 2>/dev/null
$SF gsym create bin/inl_O2 -o variants/inl_O2.v2.gsym --format-version 2 2>/dev/null
$SF gsym create bin/inl_O2 -o variants/inl_O2.v2be.gsym --format-version 2 --byte-order big 2>/dev/null
$SF gsym create bin/inl_O2 -o variants/inl_O2.off8.gsym --addr-off-size 8 2>/dev/null
$SF gsym create bin/app_cpp_O2 -o variants/app_cpp_O2.off4be.gsym --addr-off-size 4 --byte-order big 2>/dev/null
$SF gsym create bin/tiny -o variants/tiny.off1.gsym --base-at-first-function --addr-off-size 1 2>/dev/null
$SF gsym create bin/tiny -o variants/tiny.off2be.gsym --addr-off-size 2 --byte-order big 2>/dev/null
$SF gsym create bin/tiny -o variants/tiny.v2off1be.gsym --base-at-first-function --addr-off-size 1 --format-version 2 --byte-order big 2>/dev/null
for b in inl_O2 app_cpp_O2; do
  [ -f $b.sym ] && $SF gsym create $b.sym -o variants/$b.sym.gsym 2>/dev/null
done
# tiny is a non-PIE executable: Breakpad addresses are relative to its 0x400000 base.
[ -f tiny.sym ] && $SF gsym create tiny.sym --image-base 0x400000 -o variants/tiny.sym.gsym 2>/dev/null

# Addresses to look up: every function start, its neighbours and middle, a sweep over the
# whole address range, and addresses outside it. Expected outputs come from llvm-gsymutil.
mkdir -p expected
for b in $FIXTURES; do
  $LLVM/llvm-gsymutil $b.gsym | python3 -c '
import re, sys
starts = sorted({int(m.group(1), 16) for m in re.finditer(r"^FunctionInfo @ 0x[0-9a-f]+: \[0x([0-9a-f]+) - 0x([0-9a-f]+)\)", sys.stdin.read(), re.M)})
addrs = set()
for i, s in enumerate(starts):
    nxt = starts[i + 1] if i + 1 < len(starts) else s + 0x40
    addrs.update({s - 1, s, s + 1, s + 4, (s + nxt) // 2, nxt - 1})
lo, hi = starts[0], starts[-1] + 0x40
step = max(1, (hi - lo) // 400)
addrs.update(range(lo, hi, step))
addrs.update({0, lo - 0x1000 if lo > 0x1000 else 0, hi + 0x1000, 0xffffffffffffffff})
print("\n".join(hex(a) for a in sorted(a for a in addrs if 0 <= a < 1 << 64)))
' > expected/$b.addrs
  args=()
  while read -r a; do args+=(--address "$a"); done < expected/$b.addrs
  $LLVM/llvm-gsymutil $b.gsym "${args[@]}" | tail -n +2 > expected/$b.llvm.txt
done

# llvm-gsymutil must read every little- and big-endian v1 variant with the same answers
# (it cannot read v2; those are checked against the same files by the Rust tests).
check() { # gsym expected-name
  local args=()
  while read -r a; do args+=(--address "$a"); done < expected/$2.addrs
  $LLVM/llvm-gsymutil "$1" "${args[@]}" | tail -n +2 | diff -q - expected/$2.llvm.txt >/dev/null \
    || { echo "llvm-gsymutil disagrees on $1" >&2; exit 1; }
}
check variants/inl_O2.be.gsym inl_O2
check variants/inl_O2.off8.gsym inl_O2
check variants/app_cpp_O2.off4be.gsym app_cpp_O2
check variants/tiny.off1.gsym tiny
check variants/tiny.off2be.gsym tiny
# Round trip: symfilter's own conversion, read by llvm-gsymutil, answers like llvm's file.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for b in $FIXTURES; do
  $SF gsym create bin/$b -o "$tmp/$b.gsym" 2>/dev/null
  check "$tmp/$b.gsym" $b
done
# Breakpad-derived GSYM files, as llvm-gsymutil reads them (the Rust tests compare).
for b in inl_O2 app_cpp_O2 tiny; do
  [ -f variants/$b.sym.gsym ] || continue
  args=()
  while read -r a; do args+=(--address "$a"); done < expected/$b.addrs
  $LLVM/llvm-gsymutil variants/$b.sym.gsym "${args[@]}" | tail -n +2 > expected/$b.sym.llvm.txt
done
# The whole output, header line included, for a relative path and addresses given as arguments.
$LLVM/llvm-gsymutil tiny.gsym --address 0x401000 --address 0x0 > expected/tiny.whole.llvm.txt
echo "fixtures regenerated"
