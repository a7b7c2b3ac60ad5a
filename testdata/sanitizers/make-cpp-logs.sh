#!/usr/bin/env bash
# C++ sanitizer reports whose frames are lambdas, std::function and
# std::thread internals (names that test the demangler): an ASan
# use-after-free read through std::function and a TSan data race between
# two std::threads. Built like make-logs.sh (clang-22, shared runtime,
# -O0 so the library frames stay), recorded under `setarch -R`; adds the
# binaries to ../debug/.build-id. Then run ../llvm-diff/make-expected.sh.
set -euo pipefail
cd "$(dirname "$0")"
SRC=$(realpath ../src)
mkdir -p bin
MAP=(-ffile-prefix-map="$SRC"=/src -fno-omit-frame-pointer -g -Wl,--build-id=sha1)
CXX=clang++-22
$CXX -O0 -fsanitize=address -shared-libasan "${MAP[@]}" -o bin/asan_lambda_cpp "$SRC/asan_lambda.cpp"
$CXX -O0 -fsanitize=thread -shared-libsan "${MAP[@]}" -o bin/tsan_thread_cpp "$SRC/tsan_thread.cpp"

RT=$(dirname "$(clang-22 -print-file-name=libclang_rt.asan-x86_64.so)")
export LD_LIBRARY_PATH=$RT
run() { setarch -R "$@" 2>&1 || true; }
ASAN_OPTIONS=enable_symbolizer_markup=1:symbolize=0 run bin/asan_lambda_cpp >asan_lambda_cpp.log
TSAN_OPTIONS=enable_symbolizer_markup=1:symbolize=0 run bin/tsan_thread_cpp >tsan_thread_cpp.log
# The logs name the modules as the main checkout has them, as the others do.
sed -i "s#$(realpath ..)/#/work/main/testdata/#g" asan_lambda_cpp.log tsan_thread_cpp.log
grep -q 'heap-use-after-free' asan_lambda_cpp.log || { echo "no ASan report" >&2; exit 1; }
grep -q 'WARNING: ThreadSanitizer: data race' tsan_thread_cpp.log || { echo "no TSan report" >&2; exit 1; }

./link-build-ids.sh bin/asan_lambda_cpp bin/tsan_thread_cpp
ls -la bin/asan_lambda_cpp bin/tsan_thread_cpp asan_lambda_cpp.log tsan_thread_cpp.log
