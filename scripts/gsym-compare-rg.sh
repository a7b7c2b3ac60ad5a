#!/usr/bin/env bash
# `symfilter gsym create` against `llvm-gsymutil --convert` on a real Rust binary: ripgrep 14
# with full DWARF (the same build as scripts/bench-filter.sh). Converts it with both tools,
# then looks up the same 300 addresses (seeded random over .text) in both GSYM files with
# `llvm-gsymutil --address` and diffs the answers; also says whether the files are identical.
# usage: scripts/gsym-compare-rg.sh [WORKDIR]   (default /tmp/symfilter-bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/symfilter-bench}
LLVM=/usr/lib/llvm-22/bin
mkdir -p "$work" && cd "$work"
if [ ! -x rg/bin/rg ]; then
  CARGO_PROFILE_RELEASE_DEBUG=2 nice cargo install ripgrep@14.1.1 --root "$work/rg"
fi
(cd "$root" && cargo build --release -q)
# One thread: with more, the string table order varies from run to run.
$LLVM/llvm-gsymutil --quiet --num-threads=1 --convert rg/bin/rg -o rg.llvm.gsym > /dev/null
"$root/target/release/symfilter" gsym create rg/bin/rg -o rg.symfilter.gsym
python3 - rg/bin/rg > rg.addrs <<'PY'
import random, subprocess, sys
out = subprocess.run(["/usr/lib/llvm-22/bin/llvm-readelf", "-SW", sys.argv[1]],
                     capture_output=True, text=True, check=True).stdout
for line in out.splitlines():
    f = line.split()
    if ".text" in f:
        i = f.index(".text")
        lo, size = int(f[i + 2], 16), int(f[i + 4], 16)
r = random.Random(19)
print("\n".join(hex(r.randrange(lo, lo + size)) for _ in range(300)))
PY
args=()
while read -r a; do args+=(--address "$a"); done < rg.addrs
$LLVM/llvm-gsymutil rg.llvm.gsym "${args[@]}" | tail -n +2 > rg.llvm.lookup
$LLVM/llvm-gsymutil rg.symfilter.gsym "${args[@]}" | tail -n +2 > rg.symfilter.lookup
echo "$(wc -l < rg.llvm.lookup) lookup lines; $(diff rg.llvm.lookup rg.symfilter.lookup | grep -c '^<' || true) differ"
cmp -s rg.llvm.gsym rg.symfilter.gsym && echo "GSYM files identical" || echo "GSYM files differ"
diff rg.llvm.lookup rg.symfilter.lookup > /dev/null
