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
for b in inl_O2 inl_O0 app_cpp_O2 tiny; do
  $LLVM/llvm-gsymutil --quiet --num-threads=1 --convert bin/$b -o $b.gsym >/dev/null
done
