#!/usr/bin/env python3
"""Writes a realistic markup log for whole-process benchmarks.

usage: make-bench-log.py BINARY OUT.log [LINES] [--shape repetitive|diverse|reports]

LINES (default 1,000,000) lines: 85% plain log text, the rest pc/bt/data elements, with a fresh
reset/module/mmap context every 200,000 lines. Data elements draw from 2,000 data addresses of
BINARY (taken from its symbol table). Code elements, by shape:

  repetitive (default): a fixed pool of 5,000 code addresses, one in each of 5,000 functions,
      as in logs where the same frames recur.
  diverse: every code address drawn afresh, 60% inside one of 256 hot functions, 40% inside any
      function of the binary (uniform over functions), so most addresses are new: in
      1,000,000 lines of ripgrep's log, about 100,000 distinct addresses (76,000 distinct
      module offsets, as contexts load the module at different bases).
  reports: crash reports one after another, as in a CI log of many failing runs: each its own
      context (reset, module, mmaps at a new base), a sanitizer-style header, a backtrace of
      10-30 consecutive frames from the repetitive shape's pool, and a summary line; no plain
      text between them.

Deterministic (fixed seeds); prints the numbers of distinct code addresses and module offsets
on stderr.
"""
import argparse
import random
import re
import subprocess
import sys

TOOLS = "/usr/lib/llvm-22/bin"
HOT_FUNCTIONS = 256
HOT_SHARE = 0.6


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("out")
    ap.add_argument("lines", nargs="?", type=int, default=1_000_000)
    ap.add_argument("--shape", choices=("repetitive", "diverse", "reports"), default="repetitive")
    args = ap.parse_args()
    binary, out, total = args.binary, args.out, args.lines
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
    rng.shuffle(objs)
    # The repetitive shape's fixed pool; drawn in both shapes so that the random sequence (and
    # so the repetitive log) stays what it was before the diverse shape existed.
    code = [a + rng.randrange(1, max(s, 2)) for a, s in funcs[:5000]]
    data = [a + rng.randrange(0, max(s, 1)) for a, s in (objs[:2000] or funcs[:10])]
    if args.shape == "diverse":
        # Its own generator: the text and element kinds stay those of the repetitive log.
        drng = random.Random(14)
        hot = funcs[:HOT_FUNCTIONS]

        def code_addr():
            a, s = drng.choice(hot) if drng.random() < HOT_SHARE else drng.choice(funcs)
            return a + drng.randrange(1, max(s, 2))
    else:
        def code_addr():
            return rng.choice(code)
    if args.shape == "reports":
        reports(binary, out, total, build_id, loads, code)
        return
    seen = set()
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
                a = code_addr()
                seen.add((i // 200_000, a))
                f.write(f"   {{{{{{bt:{frame}:{base + a:#x}:ra}}}}}}\n")
                frame = (frame + 1) % 20
            elif r < 0.98:
                a = code_addr()
                seen.add((i // 200_000, a))
                f.write(f"fault at {{{{{{pc:{base + a:#x}}}}}}}\n")
            else:
                f.write(f"object {{{{{{data:{base + rng.choice(data):#x}}}}}}}\n")
    offsets = len({a for _, a in seen})
    print(f"{out}: {args.shape}, {len(seen)} distinct code addresses, {offsets} distinct module "
          "offsets", file=sys.stderr)


def reports(binary, out, total, build_id, loads, code):
    rng = random.Random(7)
    name = binary.rsplit("/", 1)[-1]
    lines = n = 0
    offsets = set()
    with open(out, "w") as f:
        while lines < total:
            base = 0x555555554000 + rng.randrange(1 << 20) * 0x1000
            head = [
                "{{{reset}}}",
                f"{{{{{{module:0:{name}:elf:{build_id}}}}}}}",
                *(f"{{{{{{mmap:{base + (v & ~0xFFF):#x}:{((v + m + 0xFFF) & ~0xFFF) - (v & ~0xFFF):#x}"
                  f":load:0:{mode}:{v & ~0xFFF:#x}}}}}}}" for v, m, mode in loads),
                f"=={n}==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010",
            ]
            frames = rng.randrange(10, 31)
            start = rng.randrange(len(code) - frames)
            bt = [f"    {{{{{{bt:{i}:{base + a:#x}:ra}}}}}}" for i, a in enumerate(code[start:start + frames])]
            offsets.update(code[start:start + frames])
            tail = [f"SUMMARY: AddressSanitizer: heap-use-after-free in report {n}"]
            f.write("\n".join(head + bt + tail) + "\n")
            lines += len(head) + len(bt) + len(tail)
            n += 1
    print(f"{out}: reports, {n} reports, {len(offsets)} distinct module offsets", file=sys.stderr)


if __name__ == "__main__":
    main()
