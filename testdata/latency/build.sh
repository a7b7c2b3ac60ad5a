#!/usr/bin/env bash
# Regenerates the fixtures of the lookup-latency work in testdata/latency/bin
# (needs clang-22 and llvm-22's llvm-objcopy):
#   types_only    a unit with types and data only (no ranges, empty line
#                 program) next to one with code
#   deep_lines    20,000 nested DIEs in a unit ranged by its line program only
#   deep_aranges  the same, ranged by .debug_aranges only
#   deep_ranges   the same, ranged by DW_AT_ranges
# The deep ones must get symbol-table answers, never a crash.
set -euo pipefail
cd "$(dirname "$0")"
LLVM=/usr/lib/llvm-22/bin
SRC=$PWD/src
OUT=$PWD/bin
rm -rf "$OUT"
mkdir -p "$OUT"
CC=${CC:-clang-22}
MAP=(-ffile-prefix-map="$SRC"=/latsrc -ffile-prefix-map="$PWD/../elf/src"=/elfsrc)
LD=(-Wl,--build-id=sha1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$CC -O1 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/types_only" "$SRC/main.c" "$SRC/types.c"

$CC -O2 -gdwarf-4 "${MAP[@]}" "${LD[@]}" -o "$tmp/base" ../elf/src/prog.c
outer=0x$("$LLVM/llvm-nm" "$tmp/base" | awk '$3 == "outer" {print $1}')
strip_debug=()
for s in info abbrev aranges ranges rnglists loc loclists str_offsets addr line_str; do
  strip_debug+=(--remove-section=.debug_$s)
done
for v in lines aranges ranges; do
  python3 "$SRC/deep.py" "$v" "$outer" "$tmp"
  add=(--add-section .debug_info="$tmp/info" --add-section .debug_abbrev="$tmp/abbrev")
  keep=()
  case $v in
    aranges) add+=(--add-section .debug_aranges="$tmp/aranges"); keep=(--remove-section=.debug_line) ;;
    ranges) add+=(--add-section .debug_ranges="$tmp/ranges"); keep=(--remove-section=.debug_line) ;;
  esac
  "$LLVM/llvm-objcopy" "${strip_debug[@]}" "${keep[@]}" "$tmp/base" "$tmp/stripped"
  "$LLVM/llvm-objcopy" "${add[@]}" "$tmp/stripped" "$OUT/deep_$v"
done
ls -la "$OUT"
