#!/usr/bin/env bash
# A profile-guided build of symfilter: an instrumented build runs the filter over the
# benchmark logs of scripts/bench-shapes.sh (the repetitive, reports and modules logs, in
# every format; the diverse log is left out, so that it measures the build on a log it was
# not trained on), then the release build is made again with that profile. The output is
# the same as the plain build's; BENCHMARKS.md ("Profile-guided build") has what it gains.
#
# Needs llvm-profdata of the LLVM major version rustc is built on (`rustc -vV`), and the logs
# of scripts/bench-shapes.sh in WORKDIR (run it once first: it builds ripgrep with full debug
# info and writes the logs).
# usage: scripts/build-pgo.sh [WORKDIR]   (default /tmp/symfilter-bench)
#   -> target/pgo/release/symfilter
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(cd "${1:-/tmp/symfilter-bench}" && pwd)
for log in bench.log reports.log modules.log; do
  [ -f "$work/$log" ] || { echo "no $work/$log: run scripts/bench-shapes.sh first" >&2; exit 1; }
done
llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata=${LLVM_PROFDATA:-/usr/lib/llvm-$llvm_major/bin/llvm-profdata}
[ -x "$profdata" ] || { echo "need llvm-profdata of LLVM $llvm_major (set LLVM_PROFDATA)" >&2; exit 1; }

profiles=$(mktemp -d)
trap 'rm -rf "$profiles"' EXIT
cd "$root"
RUSTFLAGS="-Cprofile-generate=$profiles" CARGO_TARGET_DIR=target/pgo-generate \
  cargo build --release --locked -q
trained=target/pgo-generate/release/symfilter
export LLVM_PROFILE_FILE="$profiles/%m_%p.profraw"
for format in human json llvm; do
  "$trained" --format=$format --build-id-dir "$work/debug" "$work/bench.log" > /dev/null 2>&1
done
"$trained" --format=llvm --one-thread --build-id-dir "$work/debug" "$work/bench.log" > /dev/null 2>&1
"$trained" --format=json --build-id-dir "$work/debug" "$work/reports.log" > /dev/null 2>&1
"$trained" --no-default-paths --build-id-dir "$work/modules-debug" "$work/modules.log" > /dev/null 2>&1
unset LLVM_PROFILE_FILE
"$profdata" merge -o "$profiles/merged.profdata" "$profiles"/*.profraw
RUSTFLAGS="-Cprofile-use=$profiles/merged.profdata" CARGO_TARGET_DIR=target/pgo \
  cargo build --release --locked -q
echo "target/pgo/release/symfilter"
