#!/usr/bin/env bash
# Whole-process benchmark of the filter against llvm-symbolizer --filter-markup (LLVM 22) on the
# same input and files. Builds ripgrep 14 with full DWARF (CARGO_PROFILE_RELEASE_DEBUG=2) once,
# writes the 1,000,000-line log with scripts/make-bench-log.py, then times both tools with
# hyperfine and GNU time (peak RSS), and the latency to the first symbolized line.
# usage: scripts/bench-filter.sh [WORKDIR]   (default /tmp/symfilter-bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/symfilter-bench}
mkdir -p "$work" && cd "$work"
LLVM=${LLVM_SYMBOLIZER:-/usr/lib/llvm-22/bin/llvm-symbolizer}
if [ ! -x rg/bin/rg ]; then
  CARGO_PROFILE_RELEASE_DEBUG=2 cargo install ripgrep@14.1.1 --root "$work/rg"
fi
id=$(/usr/lib/llvm-22/bin/llvm-readelf -n rg/bin/rg | awk '/Build ID:/ {print $3}')
mkdir -p "debug/.build-id/${id:0:2}"
ln -sf "$work/rg/bin/rg" "debug/.build-id/${id:0:2}/${id:2}.debug"
[ -f bench.log ] || python3 "$root/scripts/make-bench-log.py" rg/bin/rg bench.log 1000000
(cd "$root" && cargo build --release -q)
SF="$root/target/release/symfilter"
# Every timed run writes to /dev/null (writing 135 MB to a file costs the kernel more than
# symfilter's whole run). The VM this was written on varies by +-20% from run to run: LLVM gets
# 3 runs (6 s each), symfilter 10.
hyperfine -w 1 -r 3 -n llvm-symbolizer \
  "$LLVM --filter-markup --debug-file-directory=debug < bench.log > /dev/null"
hyperfine -w 1 -r 10 \
  -n "symfilter --format=llvm" "$SF --format=llvm --build-id-dir debug bench.log > /dev/null" \
  -n "symfilter --format=llvm --one-thread" \
  "$SF --format=llvm --one-thread --build-id-dir debug bench.log > /dev/null" \
  -n "symfilter (human)" "$SF --build-id-dir debug bench.log > /dev/null" \
  -n "symfilter --format=json" "$SF --format=json --build-id-dir debug bench.log > /dev/null"
for cmd in "$LLVM --filter-markup --debug-file-directory=debug" "$SF --format=llvm --build-id-dir debug" \
    "$SF --format=llvm --one-thread --build-id-dir debug" \
    "$SF --build-id-dir debug" "$SF --format=json --build-id-dir debug"; do
  /usr/bin/time -f "%e s  %U s user  %S s sys  %M KB peak  $cmd" $cmd < bench.log > /dev/null
done
# What the printing thread did (batches it printed, lookups the front thread left to it).
SYMFILTER_PIPELINE_STATS=1 "$SF" --format=llvm --build-id-dir debug bench.log > /dev/null
[ -f llvm.out ] || $LLVM --filter-markup --debug-file-directory=debug < bench.log > llvm.out
"$SF" --format=llvm --build-id-dir debug bench.log > sf-llvm.out
if cmp -s llvm.out sf-llvm.out; then
  echo "--format=llvm output identical to llvm-symbolizer's"
else
  echo "--format=llvm output DIFFERS from llvm-symbolizer's:"; cmp llvm.out sf-llvm.out
fi
# Latency to the first symbolized line: context + one bt, DWARF opened cold.
head -7 bench.log > first.log
echo "   {{{bt:0:$(grep -m1 -o 'bt:[0-9]*:0x[0-9a-f]*' bench.log | cut -d: -f3):ra}}}" >> first.log
hyperfine -w 2 -r 10 -n "symfilter first line" "$SF --build-id-dir debug first.log" \
  -n "llvm first line" "$LLVM --filter-markup --debug-file-directory=debug < first.log"
