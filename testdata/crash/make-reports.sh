#!/usr/bin/env bash
# Builds the sanitizer fixtures (clang-22: ASan on C with a shared library
# and an inlined helper, ASan on C++, TSan, UBSan, MSan with origins) into OUT and records each
# report twice: NAME.raw with symbolize=0 (what symfilter's crash-frame
# recogniser reads) and NAME.sym with the runtime's own symbolizer
# (llvm-symbolizer 22), the reference it is compared with.
# Usage: make-reports.sh OUT. Run by tests/crash_frames.rs.
set -euo pipefail
out="${1:?usage: make-reports.sh OUT}"
src=$(realpath "$(dirname "$0")/../src")
mkdir -p "$out"
cd "$out"
CC=clang-22
CXX=clang++-22
SYM=/usr/lib/llvm-22/bin/llvm-symbolizer
common=(-g -fno-omit-frame-pointer -Wl,--build-id=sha1)
$CC -O1 -fsanitize=address -fPIC -shared "${common[@]}" -o libasan_lib.so "$src/asan_lib.c"
$CC -O1 -fsanitize=address "${common[@]}" -o asan_c "$src/asan_main.c" -L. -lasan_lib \
  -Wl,-rpath,'$ORIGIN'
$CXX -O1 -fsanitize=address "${common[@]}" -o asan_cpp "$src/asan_cpp.cpp"
$CC -O1 -fsanitize=thread "${common[@]}" -o tsan "$src/tsan_race.c"
$CC -O0 -fsanitize=undefined "${common[@]}" -o ubsan "$src/ubsan.c"
$CC -O1 -fsanitize=memory -fsanitize-memory-track-origins "${common[@]}" -o msan "$src/msan.c"

# Each report twice; the exit status is the sanitizer's (not zero).
report() {
  local name=$1 var=$2 extra=$3
  env "$var=symbolize=0$extra" "./$name" >"$name.raw" 2>&1 || true
  env "$var=symbolize=1:external_symbolizer_path=$SYM$extra" ASAN_SYMBOLIZER_PATH="$SYM" \
    "./$name" >"$name.sym" 2>&1 || true
}
report asan_c ASAN_OPTIONS ""
report asan_cpp ASAN_OPTIONS ""
report tsan TSAN_OPTIONS ""
report ubsan UBSAN_OPTIONS ":print_stacktrace=1"
report msan MSAN_OPTIONS ""
