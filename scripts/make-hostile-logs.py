#!/usr/bin/env python3
"""Write the hostile logs of BENCHMARKS.md ("Hostile logs") into DIR.

  pcs160k.log    160,000 {{{pc:0x9}}} on one line (no mmap covers them)
  regions1m.log  4,000 modules over 1,000,000 mmaps, then one pc per module
  dumps100.log   256 modules over 100,000 mmaps, then 100 dumpfile lines

Usage: scripts/make-hostile-logs.py DIR
"""
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "pcs160k.log"), "w") as f:
    f.write("x" + "{{{pc:0x9}}}" * 160000 + "\n")
with open(os.path.join(out, "regions1m.log"), "w") as f:
    m, r = 4000, 1000000
    for i in range(m):
        f.write("{{{module:%d:m%d:elf:%08x}}}\n" % (i, i, i + 1))
    for j in range(r):
        f.write("{{{mmap:%#x:0x1000:load:%d:rx:0x0}}}\n" % (0x10000000 + j * 0x1000, j % m))
    for i in range(m):
        f.write("{{{pc:%#x}}}\n" % (0x10000000 + i * 0x1000 + 0x10))
with open(os.path.join(out, "dumps100.log"), "w") as f:
    m, r = 256, 100000
    for i in range(m):
        f.write("{{{module:%d:m%d:elf:%04x}}}\n" % (i, i, i + 1))
    for j in range(r):
        f.write("{{{mmap:%#x:0x1000:load:%d:r:0x0}}}\n" % (0x10000000 + j * 0x1000, j * m // r))
    for i in range(100):
        f.write("{{{dumpfile:llvm-profile:p%d}}}\n" % i)
