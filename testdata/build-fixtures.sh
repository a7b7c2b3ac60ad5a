#!/usr/bin/env bash
# Regenerates the shared fixture binaries in testdata/bin and the build-ID tree in
# testdata/debug/.build-id (relative symlinks into bin/). Needs clang-22, gcc, rustc.
# Paths in the debug info are mapped to /src so the output does not depend on the checkout.
set -euo pipefail
cd "$(dirname "$0")"
SRC=$PWD/src
OUT=$PWD/bin
mkdir -p "$OUT"
CC=${CC:-clang-22}
CXX=${CXX:-clang++-22}
MAP=(-ffile-prefix-map="$SRC"=/src -fno-omit-frame-pointer)
LD=(-Wl,--build-id=sha1)

$CC -O0 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_c_O0" "$SRC/app.c"
$CC -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_c_O2" "$SRC/app.c"
$CC -O2 -gdwarf-4 "${MAP[@]}" "${LD[@]}" -o "$OUT/app_c_O2_dwarf4" "$SRC/app.c"
gcc -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_c_gcc_O2" "$SRC/app.c"
$CXX -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_cpp_O2" "$SRC/app.cpp"
$CC -O2 -g -fPIC -shared "${MAP[@]}" "${LD[@]}" -Wl,-soname,libfixture.so -o "$OUT/libfixture.so" "$SRC/lib.c"
$CC -O1 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_shared" "$SRC/app_shared.c" -L"$OUT" -lfixture -Wl,-rpath,'$ORIGIN'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mangling in legacy v0; do
  rustc --edition 2021 --crate-type staticlib -C panic=abort -C opt-level=1 -g \
    -C symbol-mangling-version=$mangling --remap-path-prefix="$SRC"=/src \
    -o "$tmp/librustlib_$mangling.a" "$SRC/rustlib.rs" 2>/dev/null \
  || RUSTC_BOOTSTRAP=1 rustc --edition 2021 --crate-type staticlib -C panic=abort -C opt-level=1 -g \
    -Z unstable-options -C symbol-mangling-version=$mangling --remap-path-prefix="$SRC"=/src \
    -o "$tmp/librustlib_$mangling.a" "$SRC/rustlib.rs"
  $CC -O1 -g "${MAP[@]}" "${LD[@]}" -Wl,--gc-sections -o "$OUT/app_rust_$mangling" \
    "$SRC/app_rust.c" "$tmp/librustlib_$mangling.a"
done

# Build-ID tree: .build-id/ab/cdef....debug -> ../../../bin/NAME
rm -rf debug
for f in "$OUT"/*; do
  id=$(/usr/lib/llvm-22/bin/llvm-readelf -n "$f" | awk '/Build ID:/ {print $3}')
  mkdir -p "debug/.build-id/${id:0:2}"
  ln -sf "../../../bin/$(basename "$f")" "debug/.build-id/${id:0:2}/${id:2}.debug"
done
ls -la "$OUT"
