#!/usr/bin/env python3
"""Turns the benchmark log into an interleaved one, for timing --demux.

usage: make-demux-log.py IN.log OUT.log [PROCESSES]

Every line of IN.log (scripts/make-bench-log.py's) gets a syslog prefix
`Nov 25 05:20:SS host app[PID]: ` of one of PROCESSES (default 4) processes, chosen at
random in runs of 1 to 4 lines (fixed seed). Contextual lines ({{{reset}}}, {{{module}}},
{{{mmap}}}) are written once per process, so every process has the context its elements
need: filtered with --demux=syslog or without --demux, the symbolized output is the same.
"""
import random
import sys


def main():
    src, out = sys.argv[1], sys.argv[2]
    procs = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    rng = random.Random(18)
    pids = [4242 + 1000 * p for p in range(procs)]
    pid, run = pids[0], 0
    with open(src) as f, open(out, "w") as o:
        for i, line in enumerate(f):
            stamp = f"Nov 25 05:20:{i // 1000 % 60:02d}"
            if line.startswith(("{{{reset", "{{{module", "{{{mmap")):
                for p in pids:
                    o.write(f"{stamp} host app[{p}]: {line}")
                continue
            if run == 0:
                pid, run = rng.choice(pids), rng.randrange(1, 5)
            run -= 1
            o.write(f"{stamp} host app[{pid}]: {line}")


if __name__ == "__main__":
    main()
