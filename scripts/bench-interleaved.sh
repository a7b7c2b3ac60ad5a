#!/usr/bin/env bash
# Interleaved whole-process timing of llvm-symbolizer --filter-markup and symfilter's formats on
# the 1M-line log of scripts/bench-filter.sh (run that first: it builds ripgrep and the log).
# On a noisy machine the ratio of means is only fair when both tools' runs share the same
# minutes: each round runs LLVM once, then every symfilter variant three times.
# usage: scripts/bench-interleaved.sh [WORKDIR] [ROUNDS]   (default /tmp/symfilter-bench, 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/symfilter-bench}
rounds=${2:-4}
cd "$work"
LLVM=${LLVM_SYMBOLIZER:-/usr/lib/llvm-22/bin/llvm-symbolizer}
SF="$root/target/release/symfilter"
(cd "$root" && cargo build --release -q)
for _ in $(seq "$rounds"); do
  /usr/bin/time -f "llvm-symbolizer %e %U %M" "$LLVM" --filter-markup \
    --debug-file-directory=debug < bench.log > /dev/null
  for _ in 1 2 3; do
    /usr/bin/time -f "symfilter-llvm %e %U %M" "$SF" --format=llvm --build-id-dir debug bench.log > /dev/null
    /usr/bin/time -f "symfilter-llvm-1-thread %e %U %M" "$SF" --format=llvm --one-thread \
      --build-id-dir debug bench.log > /dev/null
    /usr/bin/time -f "symfilter-human %e %U %M" "$SF" --build-id-dir debug bench.log > /dev/null
    /usr/bin/time -f "symfilter-json %e %U %M" "$SF" --format=json --build-id-dir debug bench.log > /dev/null
  done
done 2>&1 | awk '{ n[$1]++; w[$1] += $2; u[$1] += $3; if ($4 > m[$1]) m[$1] = $4;
                   if (!($1 in lo) || $2 < lo[$1]) lo[$1] = $2 }
  END { for (k in n) printf "%-26s %2d runs  wall mean %.3f s (min %.2f)  user %.2f s  peak %d KB\n",
        k, n[k], w[k] / n[k], lo[k], u[k] / n[k], m[k] }' | sort
