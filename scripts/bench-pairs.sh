#!/usr/bin/env bash
# Two or more symfilter builds on one log in interleaved rounds: each round runs every build
# once, in turn, and each later build is compared with the first by the median of its
# per-round ratios (wall and CPU). On a VM whose speed drifts within minutes, a ratio of runs
# in the same round separates a few percent that medians of separate runs do not.
# usage: scripts/bench-pairs.sh ROUNDS "ARGS" BASE_BIN OTHER_BIN...
#   e.g. scripts/bench-pairs.sh 10 "--format=json --build-id-dir debug diverse.log" old new
#   (run in the folder holding the log and its debug folder: scripts/bench-shapes.sh makes them)
set -euo pipefail
rounds=$1
args=$2
shift 2
times=$(mktemp)
trap 'rm -f "$times"' EXIT
for round in $(seq "$rounds"); do
  build=0
  for bin in "$@"; do
    # shellcheck disable=SC2086 # ARGS is a list of arguments
    /usr/bin/time -a -o "$times" -f "$round $build %e %U %S %M" "$bin" $args < /dev/null > /dev/null 2>&1
    build=$((build + 1))
  done
done
python3 - "$times" "$@" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 6:
        continue
    r, b, wall, user, sys_, rss = f
    runs.setdefault(int(b), {})[int(r)] = (float(wall), float(user) + float(sys_), int(rss))
for b, name in enumerate(sys.argv[2:]):
    v = runs[b]
    out = (f"{name:32s} wall median {statistics.median(x[0] for x in v.values()):.3f} s"
           f"  CPU median {statistics.median(x[1] for x in v.values()):.3f} s"
           f"  peak RSS {max(x[2] for x in v.values()) / 1024:.1f} MB")
    if b > 0:
        base = runs[0]
        wall = [v[r][0] / base[r][0] for r in v if r in base]
        cpu = [v[r][1] / base[r][1] for r in v if r in base]
        faster = sum(1 for x in wall if x < 1)
        out += (f"  | vs first: wall x{statistics.median(wall):.3f} (faster in {faster}/{len(wall)}),"
                f" CPU x{statistics.median(cpu):.3f}")
    print(out)
PY
