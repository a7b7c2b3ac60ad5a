#!/usr/bin/env bash
# LLVM's own lit tests of `llvm-symbolizer --filter-markup`, with symfilter
# held to LLVM's output: every test runs the real llvm-symbolizer (so its
# checks pass only where LLVM 22 passes them) and symfilter in its llvm
# format on the same input, and fails if symfilter's standard output differs
# (scripts/llvm-lit/llvm-symbolizer). Standard error is LLVM's; symfilter's
# diagnostics are worded its own way and not compared.
#
# usage: scripts/llvm-lit.sh LLVM_PROJECT [SYMFILTER]
#   LLVM_PROJECT: an llvm-project checkout, best at the tag of the LLVM in
#   LLVM_BIN (default /usr/lib/llvm-22/bin; for Debian's llvm-22 22.1.8:
#   git clone --depth 1 --branch llvmorg-22.1.8 https://github.com/llvm/llvm-project)
#   SYMFILTER: default target/release/symfilter (built if missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
project=${1:?usage: scripts/llvm-lit.sh LLVM_PROJECT [SYMFILTER]}
symfilter=${2:-$root/target/release/symfilter}
llvm_bin=${LLVM_BIN:-/usr/lib/llvm-22/bin}
[ -x "$symfilter" ] || (cd "$root" && cargo build --release -q)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/scripts/llvm-lit/lit.cfg.py" "$work/"
shopt -s nullglob
tests=("$project"/llvm/test/DebugInfo/symbolize-filter-markup-*.test
  "$project"/llvm/test/tools/llvm-symbolizer/filter-markup*.test)
[ ${#tests[@]} -gt 0 ] || { echo "no filter-markup tests under $project" >&2; exit 2; }
cp "${tests[@]}" "$work/"
# Tests reading binary inputs find them where they are in the checkout.
[ -d "$project/llvm/test/DebugInfo/Inputs" ] && cp -r "$project/llvm/test/DebugInfo/Inputs" "$work/"
"$llvm_bin/lit" -v "$work" --param stand_in_dir="$root/scripts/llvm-lit" \
  --param llvm_bin="$llvm_bin" --param symfilter="$(realpath "$symfilter")"
