#!/usr/bin/env bash
# symfilter against llvm-symbolizer --filter-markup (LLVM 22) on four log shapes (SHAPES, a
# space-separated list, runs some of them): "repetitive" (5,000 distinct module offsets),
# "diverse" (about 100,000 distinct addresses, 60% in 256 hot functions, 40% anywhere) and
# "reports" (back-to-back crash reports, each its own context and backtrace), 1,000,000 lines
# each, made by scripts/make-bench-log.py from ripgrep 14.1.1 built with full DWARF; and
# "modules" (400 of this machine's shared libraries, 100,000 pcs in 5 contexts, answered from
# their symbol tables), made by scripts/make-modules-log.py. On "modules" symfilter runs with
# --no-default-paths, so that both tools read the same files.
#
# For each shape, ROUNDS interleaved rounds (one LLVM run, then one run of each symfilter
# variant: human, llvm, json, llvm and json --one-thread, and the same for every extra build
# named in SYMFILTER_EXTRA="name=path[@VAR=VALUE] ...", run with VAR=VALUE in its environment;
# each measured run follows an unmeasured one of the same command): mean and best wall time,
# mean CPU time (user + sys) and the largest peak RSS, with LLVM's figure divided by
# symfilter's (wall, CPU) and symfilter's RSS divided by LLVM's. Wall times on a shared machine
# are noisy; instruction counts are not: each variant is then run once under
# `valgrind --tool=cachegrind --cache-sim=no` on the first INSTR_LINES lines of each log
# (default 200,000: one context), unless INSTR_LINES=0.
# The llvm format's output is compared with LLVM's on each whole log. Each shape's line of
# figures ends with the load average before its rounds and the share of CPU time the VM's host
# took back (steal) during them: two-thread runs lose more than LLVM's single thread when the
# host takes a CPU away, so a run with steal or load is not one to compare ratios by.
#
# usage: scripts/bench-shapes.sh [WORKDIR] [ROUNDS]   (default /tmp/symfilter-bench, 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/symfilter-bench}
rounds=${2:-3}
instr_lines=${INSTR_LINES:-200000}
mkdir -p "$work" && cd "$work"
LLVM=${LLVM_SYMBOLIZER:-/usr/lib/llvm-22/bin/llvm-symbolizer}
if [ ! -x rg/bin/rg ]; then
  CARGO_PROFILE_RELEASE_DEBUG=2 nice -n 10 cargo install ripgrep@14.1.1 --root "$work/rg"
fi
id=$(/usr/lib/llvm-22/bin/llvm-readelf -n rg/bin/rg | awk '/Build ID:/ {print $3}')
mkdir -p "debug/.build-id/${id:0:2}"
ln -sf "$work/rg/bin/rg" "debug/.build-id/${id:0:2}/${id:2}.debug"
[ -f bench.log ] || python3 "$root/scripts/make-bench-log.py" rg/bin/rg bench.log 1000000
[ -f diverse.log ] ||
  python3 "$root/scripts/make-bench-log.py" rg/bin/rg diverse.log 1000000 --shape diverse
[ -f reports.log ] ||
  python3 "$root/scripts/make-bench-log.py" rg/bin/rg reports.log 1000000 --shape reports
[ -f modules.log ] || python3 "$root/scripts/make-modules-log.py" modules.log modules-debug
(cd "$root" && nice -n 10 cargo build --release -q)
binaries="symfilter=$root/target/release/symfilter ${SYMFILTER_EXTRA:-}"
# On one thread: the llvm format, the cheapest to print, and json, the dearest.
variants=("human:" "llvm:--format=llvm" "json:--format=json"
  "llvm-1-thread:--format=llvm --one-thread" "json-1-thread:--format=json --one-thread")

# "NAME ENV BINARY ARGS" of every symfilter run, one a line (ENV: VAR=VALUE, or - for none).
runs() {
  for b in $binaries; do
    local bin=${b#*=} env=-
    if [[ $bin == *@* ]]; then env=${bin#*@} bin=${bin%%@*}; fi
    for v in "${variants[@]}"; do
      echo "${b%%=*}-${v%%:*} $env $bin ${v#*:}"
    done
  done
}

for shape in ${SHAPES:-repetitive diverse reports modules}; do
  dir=debug extra=
  case $shape in
    repetitive) log=bench.log ;;
    diverse) log=diverse.log ;;
    reports) log=reports.log ;;
    modules) log=modules.log dir=modules-debug extra=--no-default-paths ;;
  esac
  echo "== $shape ($log: $(grep -c '{{{' "$log") elements)"
  times="$shape.times"
  : > "$times"
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  stat_before=$(head -1 /proc/stat)
  for _ in $(seq "$rounds"); do
    # Each run follows an unmeasured run of the same command (a warm-up, as
    # `hyperfine --warmup` does): on a VM that takes freed memory back, a
    # run right after another tool's pays for memory the other left cold.
    for measured in /dev/null "$times"; do
      /usr/bin/time -a -o "$measured" -f "llvm-symbolizer %e %U %S %M" "$LLVM" --filter-markup \
        --debug-file-directory="$dir" < "$log" > /dev/null
    done
    while read -r name env bin args; do
      for measured in /dev/null "$times"; do
        # shellcheck disable=SC2086
        /usr/bin/time -a -o "$measured" -f "$name %e %U %S %M" env ${env#-} "$bin" $args $extra \
          --build-id-dir "$dir" "$log" < /dev/null > /dev/null
      done
    done < <(runs)
  done
  awk '
    { n[$1]++; w[$1] += $2; c[$1] += $3 + $4; if ($5 > m[$1]) m[$1] = $5
      if (!($1 in lo) || $2 < lo[$1]) lo[$1] = $2 }
    END {
      lw = w["llvm-symbolizer"] / n["llvm-symbolizer"]; lc = c["llvm-symbolizer"] / n["llvm-symbolizer"]
      lm = m["llvm-symbolizer"]
      printf "%-34s %4s %9s %7s %8s %9s %8s %7s %7s\n", "", "runs", "wall mean", "(best)",
        "CPU", "peak RSS", "LLVM/x", "CPU", "RSS/LLVM"
      for (k in n) printf "%-34s %4d %8.3fs %6.2fs %7.3fs %7d KB %7.1fx %6.1fx %8.2f\n", k, n[k],
        w[k] / n[k], lo[k], c[k] / n[k], m[k], lw / (w[k] / n[k]), lc / (c[k] / n[k]), m[k] / lm
    }' "$times" | sort -k1,1
  # The cpu line of /proc/stat: user nice system idle iowait irq softirq steal ...
  echo "load average before: $load; host steal during the rounds: $(
    echo "$stat_before" "$(head -1 /proc/stat)" | awk '{
      n = (NF - 2) / 2; total = 0
      for (i = 2; i <= n + 1; i++) total += $(i + n + 1) - $i
      printf "%.1f%%", total ? 100 * ($(9 + n + 1) - $9) / total : 0 }')"
  "$LLVM" --filter-markup --debug-file-directory="$dir" < "$log" > "$shape.llvm.out"
  # shellcheck disable=SC2086
  "$root/target/release/symfilter" --format=llvm $extra --build-id-dir "$dir" "$log" \
    > "$shape.sf-llvm.out"
  if cmp -s "$shape.llvm.out" "$shape.sf-llvm.out"; then
    echo "--format=llvm output identical to llvm-symbolizer's"
  else
    echo "--format=llvm output DIFFERS from llvm-symbolizer's:"
    cmp "$shape.llvm.out" "$shape.sf-llvm.out" || true
  fi
  if [ "$instr_lines" -gt 0 ]; then
    head -n "$instr_lines" "$log" > "$shape.head.log"
    echo "instructions, first $instr_lines lines ($(grep -c '{{{' "$shape.head.log") elements):"
    {
      echo "llvm-symbolizer - $LLVM --filter-markup --debug-file-directory=$dir"
      runs | sed "s|\$| $extra --build-id-dir $dir|"
    } | while read -r name env cmd; do
      # shellcheck disable=SC2086
      env ${env#-} valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null $cmd \
        < "$shape.head.log" > /dev/null 2> "$shape.cg.err" ||
        { echo "$name: valgrind failed (see $work/$shape.cg.err)"; continue; }
      awk -v n="$name" '/I *refs:/ { gsub(",", "", $NF); printf "  %-34s %7.3f G\n", n, $NF / 1e9 }' \
        "$shape.cg.err"
    done
  fi
done
