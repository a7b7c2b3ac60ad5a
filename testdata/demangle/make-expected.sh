#!/bin/sh
# Regenerate the demangler's expected outputs with LLVM 22's own tools:
#  special.tsv  hand-picked names (special.names) plus the symbols of
#               names.cpp (lambdas, std::function, std::thread) as
#               `llvm-symbolizer --filter-markup` prints them, and the
#               Microsoft-mangled symbols of msvc.cpp;
#  itanium.tsv  a sample of the installed C++ libraries' symbols as
#               `llvm-cxxfilt` prints them (scripts/demangle-fidelity.py);
#  msvc.tsv     a sample of the Microsoft-mangled symbols of msvc-corpus/
#               and the other testdata C++ sources, compiled for Windows, as
#               `llvm-symbolizer --filter-markup` prints them
#               (scripts/msvc-demangle-fidelity.py).
set -eu
cd "$(dirname "$0")"
LLVM=/usr/lib/llvm-22/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$LLVM/clang++" -std=c++20 -O0 -c names.cpp -o "$tmp/names.o"
"$LLVM/clang++" --target=x86_64-pc-windows-msvc -std=c++17 -c msvc.cpp -o "$tmp/msvc.obj"
{
    cat special.names
    "$LLVM/llvm-nm" --just-symbol-name "$tmp/names.o" | grep '^_Z' | sort -u
    "$LLVM/llvm-nm" --just-symbol-name "$tmp/msvc.obj" | grep '^?' | sort -u
} > "$tmp/names"
sed 's/.*/{{{symbol:&}}}/' "$tmp/names" | "$LLVM/llvm-symbolizer" --filter-markup > "$tmp/out"
paste "$tmp/names" "$tmp/out" > special.tsv
cd ../..
python3 scripts/demangle-fidelity.py --sample-size 3000 --write-sample testdata/demangle/itanium.tsv > /dev/null
python3 scripts/msvc-demangle-fidelity.py --no-undname --sample-size 2000 --write-sample testdata/demangle/msvc.tsv > /dev/null
