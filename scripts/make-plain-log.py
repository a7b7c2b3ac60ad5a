#!/usr/bin/env python3
"""Writes a log with no markup at all (for the `cat` comparison). usage: make-plain-log.py OUT [MB]"""
import random
import sys

out = sys.argv[1]
mb = int(sys.argv[2]) if len(sys.argv) > 2 else 100
rng = random.Random(7)
words = ("request served in 12ms from cache shard worker pool queue depth retry connection reset "
         "upstream timeout user session token refreshed ok {braces} [brackets] 0x7f3a21 path=/a/b").split()
lines = [" ".join(rng.choice(words) for _ in range(rng.randrange(4, 20))) + "\n" for _ in range(5000)]
chunk = "".join(lines).encode()
with open(out, "wb") as f:
    written = 0
    while written < mb * 1_000_000:
        f.write(chunk)
        written += len(chunk)
