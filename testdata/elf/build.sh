#!/usr/bin/env bash
# Regenerates the ELF-source fixtures in testdata/elf/bin and the build-ID
# tree in testdata/elf/tree. Needs clang-22, gcc, llvm-22 tools, dwz.
# Paths in the debug info are mapped to /elfsrc so nothing depends on the checkout.
set -euo pipefail
cd "$(dirname "$0")"
LLVM=/usr/lib/llvm-22/bin
SRC=$PWD/src
OUT=$PWD/bin
rm -rf "$OUT" tree
mkdir -p "$OUT"
CC=${CC:-clang-22}
CXX=${CXX:-clang++-22}
MAP=(-ffile-prefix-map="$SRC"=/elfsrc -fno-omit-frame-pointer)
LD=(-Wl,--build-id=sha1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build_id() { "$LLVM/llvm-readelf" -n "$1" | awk '/Build ID:/ {print $3}'; }

# Plain variants: optimisation, DWARF version, PIE or not, C++, shared library.
$CC -O0 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/c_O0" "$SRC/prog.c"
$CC -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/c_O2" "$SRC/prog.c"
$CC -O2 -g -fno-pie -no-pie "${MAP[@]}" "${LD[@]}" -o "$OUT/c_nopie" "$SRC/prog.c"
$CC -O2 -gdwarf-4 "${MAP[@]}" "${LD[@]}" -o "$OUT/c_dwarf4" "$SRC/prog.c"
gcc -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/c_gcc" "$SRC/prog.c"
$CXX -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/cpp_O2" "$SRC/widget.cpp"
$CXX -O2 -gline-tables-only "${MAP[@]}" "${LD[@]}" -o "$OUT/cpp_gmlt" "$SRC/widget.cpp"
$CC -O2 -g -fPIC -shared "${MAP[@]}" "${LD[@]}" -o "$OUT/libprog.so" "$SRC/prog.c"

# Compressed debug sections.
$CC -O2 -g "${MAP[@]}" "${LD[@]}" -o "$tmp/c_z" "$SRC/prog.c"
"$LLVM/llvm-objcopy" --compress-debug-sections=zlib "$tmp/c_z" "$OUT/c_zlib"
"$LLVM/llvm-objcopy" --compress-debug-sections=zstd "$tmp/c_z" "$OUT/c_zstd"

# Stripped binary + separate debug file found by .gnu_debuglink (next to it).
$CC -O2 -g "${MAP[@]}" "${LD[@]}" -o "$tmp/c_stripped" "$SRC/prog.c"
"$LLVM/llvm-objcopy" --only-keep-debug "$tmp/c_stripped" "$OUT/c_stripped.debug"
"$LLVM/llvm-objcopy" --strip-all --add-gnu-debuglink="$OUT/c_stripped.debug" \
  "$tmp/c_stripped" "$OUT/c_stripped"

# Stripped binary without debuglink whose debug file is only in the build-ID tree.
$CC -O1 -g "${MAP[@]}" "${LD[@]}" -o "$tmp/c_treeonly" "$SRC/prog.c"
"$LLVM/llvm-objcopy" --strip-all "$tmp/c_treeonly" "$OUT/c_treeonly"
id=$(build_id "$OUT/c_treeonly")
mkdir -p "tree/.build-id/${id:0:2}"
"$LLVM/llvm-objcopy" --only-keep-debug "$tmp/c_treeonly" "tree/.build-id/${id:0:2}/${id:2}.debug"
# ...and the suffix-less distro link to the (stripped) binary.
ln -sf "../../../bin/c_treeonly" "tree/.build-id/${id:0:2}/${id:2}"
# A full binary reachable only through the tree, suffix-less layout.
id=$(build_id "$OUT/c_O0")
mkdir -p "tree/.build-id/${id:0:2}"
ln -sf "../../../bin/c_O0" "tree/.build-id/${id:0:2}/${id:2}"

# Split DWARF: a .dwo next to the binary (the recorded comp dir is "."), and a .dwp.
(cd "$tmp" && $CC -O2 -g -gsplit-dwarf -fdebug-compilation-dir=. "${MAP[@]}" -c -o split_dwo.o "$SRC/prog.c")
$CC "${LD[@]}" -o "$OUT/split_dwo" "$tmp/split_dwo.o"
cp "$tmp/split_dwo.dwo" "$OUT/split_dwo.dwo"
(cd "$tmp" && $CC -O2 -g -gsplit-dwarf -fdebug-compilation-dir=. "${MAP[@]}" -c -o split_dwp.o "$SRC/prog.c")
$CC "${LD[@]}" -o "$OUT/split_dwp" "$tmp/split_dwp.o"
(cd "$tmp" && "$LLVM/llvm-dwp" -e "$OUT/split_dwp" -o "$OUT/split_dwp.dwp")

# dwz: two gcc binaries sharing DWARF through a supplementary file
# (.gnu_debugaltlink, relative name as in Debian's debug packages).
gcc -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/dwz_prog" "$SRC/prog.c"
gcc -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/dwz_other" "$SRC/other.c"
(cd "$OUT" && dwz -m dwz_common.debug -M dwz_common.debug dwz_prog dwz_other)

# Hostile DWARF: DIEs nested 20,000 deep (must give symbol-table answers, not a crash).
$CC -O2 -g "${MAP[@]}" "${LD[@]}" -o "$tmp/deep" "$SRC/prog.c"
python3 "$SRC/deep_dies.py" "$tmp/info" "$tmp/abbrev" 0x1140
"$LLVM/llvm-objcopy" --remove-section=.debug_line --remove-section=.debug_str_offsets \
  --remove-section=.debug_addr --remove-section=.debug_line_str --remove-section=.debug_rnglists \
  --remove-section=.debug_loclists "$tmp/deep" "$tmp/deep2"
"$LLVM/llvm-objcopy" --update-section .debug_info="$tmp/info" \
  --update-section .debug_abbrev="$tmp/abbrev" "$tmp/deep2" "$OUT/deep_dies"

# Two compilation units, globals in each.
$CC -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/two_units" "$SRC/units_a.c" "$SRC/units_b.c"

# A relocatable object with a build-ID note (as in LLVM's own tests): its DWARF is only
# right once its relocations are applied.
$CC -O2 -g "${MAP[@]}" -c -o "$tmp/reloc.o" "$SRC/prog.c"
python3 -c 'import hashlib, struct, sys
d = hashlib.sha1(open(sys.argv[1], "rb").read()).digest()
open(sys.argv[2], "wb").write(struct.pack("<III", 4, 20, 3) + b"GNU\0" + d)' "$tmp/reloc.o" "$tmp/note"
"$LLVM/llvm-objcopy" --add-section .note.gnu.build-id="$tmp/note" \
  --set-section-type .note.gnu.build-id=7 --set-section-flags .note.gnu.build-id=alloc,readonly \
  "$tmp/reloc.o" "$OUT/reloc.o"

ls -la "$OUT" tree/.build-id/*
du -sh "$OUT" tree
