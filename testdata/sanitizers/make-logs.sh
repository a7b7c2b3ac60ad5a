#!/usr/bin/env bash
# Builds the sanitizer fixtures (clang-22, shared sanitizer runtime so the binaries stay small) and
# records the reports they print with symbolizer markup enabled, under `setarch -R` so addresses
# repeat. The leak report (lsan.log) is LeakSanitizer as built into ASan (`detect_leaks=1`): the
# same report as `-fsanitize=leak`, whose runtime only links statically (a 480 KB fixture instead
# of 45 KB). Its leak check needs ptrace (a sandbox that refuses it prints "SuspendAllThreads
# retry" and no report). Writes testdata/sanitizers/bin/* and *.log; adds the binaries to
# ../debug/.build-id.
set -euo pipefail
cd "$(dirname "$0")"
SRC=$(realpath ../src)
mkdir -p bin
MAP=(-ffile-prefix-map="$SRC"=/src -fno-omit-frame-pointer -g -Wl,--build-id=sha1)
CC=clang-22
CXX=clang++-22
$CC -O1 -fsanitize=address -shared-libasan -fPIC -shared "${MAP[@]}" -Wl,-soname,libasan_lib.so \
  -o bin/libasan_lib.so "$SRC/asan_lib.c"
$CC -O1 -fsanitize=address -shared-libasan "${MAP[@]}" -o bin/asan_heap_overflow "$SRC/asan_main.c" \
  -Lbin -lasan_lib -Wl,-rpath,'$ORIGIN'
$CXX -O1 -fsanitize=address -shared-libasan "${MAP[@]}" -o bin/asan_uaf_cpp "$SRC/asan_cpp.cpp"
$CC -O0 -fsanitize=undefined -shared-libsan "${MAP[@]}" -o bin/ubsan "$SRC/ubsan.c"
$CC -O1 -fsanitize=address -shared-libasan "${MAP[@]}" -o bin/lsan "$SRC/lsan.c"

RT=$(dirname "$($CC -print-file-name=libclang_rt.asan-x86_64.so)")
export LD_LIBRARY_PATH=$RT
run() { setarch -R "$@" 2>&1 || true; }
ASAN_OPTIONS=enable_symbolizer_markup=1:symbolize=0 run bin/asan_heap_overflow >asan_heap_overflow.log
ASAN_OPTIONS=enable_symbolizer_markup=1:symbolize=0 run bin/asan_uaf_cpp >asan_uaf_cpp.log
UBSAN_OPTIONS=enable_symbolizer_markup=1:print_stacktrace=1:symbolize=0 run bin/ubsan >ubsan.log
ASAN_OPTIONS=detect_leaks=1:enable_symbolizer_markup=1:symbolize=0 run bin/lsan >lsan.log
grep -q 'ERROR: LeakSanitizer: detected memory leaks' lsan.log || { echo "no leak report" >&2; exit 1; }

./link-build-ids.sh bin/*
ls -la bin *.log
