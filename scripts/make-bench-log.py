#!/usr/bin/env python3
"""Writes a realistic markup log for whole-process benchmarks.

usage: make-bench-log.py BINARY OUT.log [LINES]

LINES (default 1,000,000) lines: 85% plain log text, the rest pc/bt/data elements over thousands
of distinct addresses of BINARY (taken from its symbol table), with a fresh
reset/module/mmap context every 200,000 lines. Deterministic (fixed seed).
"""
import random
import re
import subprocess
import sys

TOOLS = "/usr/lib/llvm-22/bin"


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main():
    binary, out = sys.argv[1], sys.argv[2]
    total = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
    rng = random.Random(42)
    build_id = re.search(r"Build ID: ([0-9a-f]+)", run(f"{TOOLS}/llvm-readelf", "-n", binary)).group(1)
    loads = []
    for line in run(f"{TOOLS}/llvm-readelf", "-lW", binary).splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            flags = "".join(c for c in "".join(f[6:-1]) if c in "RWE").replace("E", "X").lower()
            loads.append((int(f[2], 16), int(f[5], 16), flags))
    funcs, objs = [], []
    for line in run(f"{TOOLS}/llvm-nm", "-S", "--defined-only", binary).splitlines():
        f = line.split()
        if len(f) == 4 and int(f[1], 16) > 0:
            (funcs if f[2] in "tTW" else objs if f[2] in "dDbBrR" else []).append(
                (int(f[0], 16), int(f[1], 16)))
    rng.shuffle(funcs)
    funcs = funcs[:5000]
    objs = objs[:2000] or funcs[:10]
    words = ("request served in 12ms from cache shard worker pool queue depth retry "
             "connection reset upstream timeout user session token refreshed ok").split()
    base = 0x555555554000
    with open(out, "w") as f:
        for i in range(total):
            if i % 200_000 == 0:
                base += 0x1000000
                f.write("{{{reset}}}\n")
                f.write(f"{{{{{{module:0:{binary.rsplit('/', 1)[-1]}:elf:{build_id}}}}}}}\n")
                for vaddr, memsz, mode in loads:
                    start = vaddr & ~0xFFF
                    size = ((vaddr + memsz + 0xFFF) & ~0xFFF) - start
                    f.write(f"{{{{{{mmap:{base + start:#x}:{size:#x}:load:0:{mode}:{start:#x}}}}}}}\n")
                frame = 0
            r = rng.random()
            if r < 0.85:
                n = rng.randrange(4, 16)
                f.write(f"[{i:07d}] " + " ".join(rng.choice(words) for _ in range(n)) + "\n")
            elif r < 0.95:
                a, s = rng.choice(funcs)
                f.write(f"   {{{{{{bt:{frame}:{base + a + rng.randrange(1, max(s, 2)):#x}:ra}}}}}}\n")
                frame = (frame + 1) % 20
            elif r < 0.98:
                a, s = rng.choice(funcs)
                f.write(f"fault at {{{{{{pc:{base + a + rng.randrange(0, max(s, 1)):#x}}}}}}}\n")
            else:
                a, s = rng.choice(objs)
                f.write(f"object {{{{{{data:{base + a + rng.randrange(0, max(s, 1)):#x}}}}}}}\n")


if __name__ == "__main__":
    main()
