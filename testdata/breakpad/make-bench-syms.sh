#!/bin/sh
# Makes big Breakpad .sym files for benches/breakpad.rs (not committed: they
# are tens of MB). Writes target/breakpad-bench/<name>.sym with Mozilla
# dump_syms --inlines from binaries that carry DWARF on this machine; pass
# other binaries as arguments to use those instead.
#   libpython3.13.so: C at -O3 with full DWARF: FUNC, line and INLINE heavy
#   libLLVM.so.22.1:  no DWARF, 56 MB of STACK CFI and PUBLIC records
#   cargo:            Rust release build, line tables and inlines
set -eu
cd "$(dirname "$0")/../.."
DUMP_SYMS=${DUMP_SYMS:-$HOME/.cargo/bin/dump_syms}
out=target/breakpad-bench
mkdir -p "$out"
if [ $# -eq 0 ]; then
  set -- \
    "$HOME/.pyenv/versions/3.13.0/lib/libpython3.13.so.1.0" \
    /usr/lib/x86_64-linux-gnu/libLLVM.so.22.1 \
    "$HOME/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/cargo"
fi
for bin in "$@"; do
  [ -f "$bin" ] || { echo "skip (missing): $bin" >&2; continue; }
  name=$(basename "$bin")
  "$DUMP_SYMS" --inlines --no-generator -o "$out/$name.sym" "$bin"
  ls -l "$out/$name.sym"
done
