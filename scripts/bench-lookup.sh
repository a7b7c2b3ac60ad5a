#!/usr/bin/env bash
# `symfilter lookup --file` against blazesym's blazecli, gimli's addr2line and llvm-symbolizer on
# 10,000 random .text addresses of ripgrep 14 with full DWARF (inline frames, demangling on), and
# on one address in a fresh process (wall time, peak RSS, instructions under callgrind).
# Needs the ripgrep build of scripts/bench-filter.sh, and `cargo install blazecli` and
# `cargo install addr2line --features bin` (pass their paths in BLAZECLI / ADDR2LINE).
# usage: scripts/bench-lookup.sh [WORKDIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/symfilter-bench}
cd "$work"
RG=rg/bin/rg
BLAZECLI=${BLAZECLI:-blazecli}
ADDR2LINE=${ADDR2LINE:-addr2line}
LLVM=${LLVM_SYMBOLIZER:-/usr/lib/llvm-22/bin/llvm-symbolizer}
[ -f addrs10k.txt ] || python3 - <<'PY'
import random, subprocess
out = subprocess.run(["/usr/lib/llvm-22/bin/llvm-nm", "-S", "--defined-only", "rg/bin/rg"],
                     capture_output=True, text=True).stdout
funcs = [(int(f[0], 16), int(f[1], 16)) for f in (l.split() for l in out.splitlines())
         if len(f) == 4 and f[2] in "tT" and int(f[1], 16) > 0]
rng = random.Random(1)
with open("addrs10k.txt", "w") as o:
    for _ in range(10000):
        a, s = rng.choice(funcs)
        o.write(hex(a + rng.randrange(0, s)) + "\n")
PY
SF="$root/target/release/symfilter"
first=$(head -1 addrs10k.txt)
echo "== 10,000 addresses"
hyperfine -w 3 -r 20 \
  -n "symfilter lookup" "$SF lookup --file $RG < addrs10k.txt" \
  -n blazecli "$BLAZECLI symbolize elf --path $RG \$(cat addrs10k.txt)" \
  -n addr2line "$ADDR2LINE -f -i -C -e $RG < addrs10k.txt" \
  -n llvm-symbolizer "$LLVM --obj=$RG < addrs10k.txt"
for c in "$SF lookup --file $RG" "$ADDR2LINE -f -i -C -e $RG" "$LLVM --obj=$RG"; do
  /usr/bin/time -f "%M KB peak  $c" $c < addrs10k.txt > /dev/null
done
/usr/bin/time -f "%M KB peak  blazecli" "$BLAZECLI" symbolize elf --path $RG $(cat addrs10k.txt) > /dev/null
echo "== one address ($first) in a fresh process"
hyperfine -N -w 3 -r 20 -n "symfilter one address" "$SF lookup --file $RG $first" \
  -n "blazecli one address" "$BLAZECLI symbolize elf --path $RG $first" \
  -n "addr2line one address" "$ADDR2LINE -f -i -C -e $RG $first" \
  -n "llvm one address" "$LLVM --obj=$RG $first"
for c in "$SF lookup --file $RG $first" "$BLAZECLI symbolize elf --path $RG $first" \
  "$ADDR2LINE -f -i -C -e $RG $first" "$LLVM --obj=$RG $first"; do
  /usr/bin/time -f "%M KB peak  %R page faults  ${c%% *}" $c > /dev/null
done
# Instructions do not depend on what else the machine runs (wall times do).
if command -v valgrind > /dev/null; then
  for c in "$SF lookup --file $RG $first" "$BLAZECLI symbolize elf --path $RG $first" \
    "$ADDR2LINE -f -i -C -e $RG $first"; do
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null $c 2>&1 >/dev/null |
      awk '/Collected/ {print $4}')
    echo "$ir instructions  ${c%% *}"
  done
fi
