#!/usr/bin/env bash
# Cost of --demux: symfilter with and without it on the benchmark log of scripts/bench-filter.sh
# (run that first: it builds ripgrep and bench.log) and on the same log interleaved under syslog
# prefixes by scripts/make-demux-log.py (4 processes). Wall time with hyperfine (the machine is
# shared and noisy), then instruction counts with callgrind on the first 200,000 lines (one
# thread: --one-thread).
# usage: scripts/bench-demux.sh [WORKDIR] [RUNS]   (default /tmp/symfilter-bench, 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/symfilter-bench}
runs=${2:-5}
cd "$work"
[ -f demux.log ] || python3 "$root/scripts/make-demux-log.py" bench.log demux.log
head -200000 bench.log > bench-200k.log
python3 "$root/scripts/make-demux-log.py" bench-200k.log demux-200k.log
(cd "$root" && cargo build --release -q)
SF="$root/target/release/symfilter"
for fmt in llvm human json; do
  hyperfine -N -w 1 -r "$runs" \
    -n "$fmt bench.log" "$SF --format=$fmt --build-id-dir debug -q bench.log" \
    -n "$fmt bench.log --demux" "$SF --format=$fmt --demux --build-id-dir debug -q bench.log" \
    -n "$fmt demux.log" "$SF --format=$fmt --build-id-dir debug -q demux.log" \
    -n "$fmt demux.log --demux" "$SF --format=$fmt --demux --build-id-dir debug -q demux.log" \
    --output=null
done
for fmt in llvm human json; do
  for log in bench-200k.log demux-200k.log; do
    for demux in "" --demux; do
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "$SF" --format=$fmt $demux \
        --one-thread --build-id-dir debug -q $log 2>&1 >/dev/null |
        awk -v what="$fmt $log ${demux:-(no demux)}" '/Collected/ { print what ": " $4 " instructions" }'
    done
  done
done
