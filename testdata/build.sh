#!/usr/bin/env bash
# Builds the test fixtures: the one entry point for every committed binary, the symbol files
# made from them and the reference tools' expected outputs. Each step runs the script of its
# folder (which says what it makes and needs), in dependency order:
#
#   testdata/build.sh --list        the steps
#   testdata/build.sh STEP...       those steps, in the order given
#   testdata/build.sh --all         every step (needs clang-22, gcc, rustc, llvm-22 tools, dwz,
#                                   Mozilla dump_syms, elfutils, openssl, python3, and a
#                                   symfilter built by `cargo build` for the steps that
#                                   record its own output)
#
# Rebuilding a binary gives it a new build ID and new addresses, which changes the expected
# outputs made from it: rebuild only what a change needs, run the steps that depend on it
# (listed after it), and review the diff. The fixtures of tests/crash_frames.rs are built by
# the test itself (crash/make-reports.sh); benchmark inputs that are not committed come from
# breakpad/make-bench-syms.sh, xray/make-big-trace.sh and gen-plain-log.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# Shared C/C++/Rust fixtures in bin/ and the build-ID tree in debug/.build-id (relative
# symlinks into bin/). Debug-info paths are mapped to /src so nothing depends on the checkout.
step_bin() {
  cd "$here"
  local SRC=$PWD/src OUT=$PWD/bin
  mkdir -p "$OUT"
  local CC=${CC:-clang-22} CXX=${CXX:-clang++-22}
  local MAP=(-ffile-prefix-map="$SRC"=/src -fno-omit-frame-pointer)
  local LD=(-Wl,--build-id=sha1)
  $CC -O0 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_c_O0" "$SRC/app.c"
  $CC -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_c_O2" "$SRC/app.c"
  $CC -O2 -gdwarf-4 "${MAP[@]}" "${LD[@]}" -o "$OUT/app_c_O2_dwarf4" "$SRC/app.c"
  # With .debug_aranges, which clang fills with globals as well as code (as rustc does).
  $CC -O0 -g -gdwarf-aranges "${MAP[@]}" "${LD[@]}" -o "$OUT/app_c_aranges" "$SRC/app.c"
  gcc -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_c_gcc_O2" "$SRC/app.c"
  $CXX -O2 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_cpp_O2" "$SRC/app.cpp"
  $CC -O2 -g -fPIC -shared "${MAP[@]}" "${LD[@]}" -Wl,-soname,libfixture.so \
    -o "$OUT/libfixture.so" "$SRC/lib.c"
  $CC -O1 -g "${MAP[@]}" "${LD[@]}" -o "$OUT/app_shared" "$SRC/app_shared.c" -L"$OUT" \
    -lfixture -Wl,-rpath,'$ORIGIN'
  local tmp
  tmp=$(mktemp -d)
  for mangling in legacy v0; do
    rustc --edition 2021 --crate-type staticlib -C panic=abort -C opt-level=1 -g \
      -C symbol-mangling-version=$mangling --remap-path-prefix="$SRC"=/src \
      -o "$tmp/librustlib_$mangling.a" "$SRC/rustlib.rs" 2>/dev/null \
    || RUSTC_BOOTSTRAP=1 rustc --edition 2021 --crate-type staticlib -C panic=abort \
      -C opt-level=1 -g -Z unstable-options -C symbol-mangling-version=$mangling \
      --remap-path-prefix="$SRC"=/src -o "$tmp/librustlib_$mangling.a" "$SRC/rustlib.rs"
    $CC -O1 -g "${MAP[@]}" "${LD[@]}" -Wl,--gc-sections -o "$OUT/app_rust_$mangling" \
      "$SRC/app_rust.c" "$tmp/librustlib_$mangling.a"
  done
  rm -rf "$tmp"
  # Build-ID tree: .build-id/ab/cdef....debug -> ../../../bin/NAME
  rm -rf debug
  for f in "$OUT"/*; do
    local id
    id=$(/usr/lib/llvm-22/bin/llvm-readelf -n "$f" | awk '/Build ID:/ {print $3}')
    mkdir -p "debug/.build-id/${id:0:2}"
    ln -sf "../../../bin/$(basename "$f")" "debug/.build-id/${id:0:2}/${id:2}.debug"
  done
}

step_elf() { "$here/elf/build.sh" && "$here/elf/make-expected.py"; }
step_latency() { "$here/latency/build.sh"; }
step_line0() { "$here/line0/build.sh"; }
step_gsym() { "$here/gsym/build.sh" && "$here/gsym-old-forms/make.sh"; }
step_breakpad() {
  "$here/breakpad/build.sh" && "$here/breakpad/make-old-forms.sh" &&
    "$here/breakpad/make-filter-expected.sh"
}
step_debuginfod() {
  "$here/debuginfod/build.sh" && "$here/debuginfod/dwz/build.sh" &&
    "$here/debuginfod/tls/make-certs.sh"
}
step_dumpfile() { "$here/dumpfile/make.sh"; }
step_sanitizers() { "$here/sanitizers/make-logs.sh" && "$here/sanitizers/make-cpp-logs.sh"; }
step_human() { "$here/human/make-fixture.sh"; }
step_xray() {
  "$here/xray/make-traces.sh" && "$here/xray/make-v0-map.sh" &&
    python3 "$here/xray/make-handbuilt.py"
}
step_demangle() { "$here/demangle/make-expected.sh"; }
# Expected outputs of the logs over bin/ and sanitizers/: LLVM's, then symfilter's own.
step_llvm_diff() { "$here/llvm-diff/make-logs.py" && "$here/llvm-diff/make-expected.sh"; }
step_logs() { "$here/logs/regen.sh"; }

# In dependency order: line0, sanitizers, llvm_diff and logs use what bin makes; the old-form
# and expected-output scripts use what their folder's build makes.
STEPS=(bin elf latency line0 gsym breakpad debuginfod dumpfile sanitizers human xray demangle
  llvm_diff logs)

case "${1:-}" in
  --list) printf '%s\n' "${STEPS[@]}"; exit 0 ;;
  --all) set -- "${STEPS[@]}" ;;
  "" | -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
for step in "$@"; do
  if ! declare -F "step_$step" >/dev/null; then
    echo "build.sh: no step '$step' (see --list)" >&2
    exit 2
  fi
done
for step in "$@"; do
  echo "== $step" >&2
  (set -euo pipefail; "step_$step")
done
