#!/usr/bin/env python3
"""Writes a markup log of a process with many shared libraries, and a build-ID tree for them.

usage: make-modules-log.py OUT.log DEBUGDIR [LIBRARIES] [FRAMES]

Takes the first LIBRARIES (default 400) shared libraries of /usr/lib/x86_64-linux-gnu, in name
order, that have a build ID and defined function symbols, and links each into DEBUGDIR as
DEBUGDIR/.build-id/ab/cdef....debug. The log has 5 contexts; each declares every library
(module and mmap lines, loaded 1 MiB apart) and then FRAMES (default 20,000) pc elements, each
at a random function symbol of a random library plus 0-15 bytes, every one followed by a line
of plain text. Most libraries are stripped, so answers come from their dynamic symbol tables:
the cost is in finding, opening and indexing many modules, not in DWARF.

Deterministic for a given machine (fixed seed); prints the numbers of modules and distinct
addresses on stderr.
"""
import glob
import os
import random
import re
import subprocess
import sys

TOOLS = "/usr/lib/llvm-22/bin"
LIBDIR = "/usr/lib/x86_64-linux-gnu"
CONTEXTS = 5


def run(*args):
    return subprocess.run(args, capture_output=True, text=True, timeout=30).stdout


def library(path):
    """(build ID, LOAD segments, function addresses) of `path`, or None."""
    notes = run(f"{TOOLS}/llvm-readelf", "--notes", "--program-headers", "--wide", path)
    m = re.search(r"Build ID: ([0-9a-f]+)", notes)
    loads = re.findall(
        r"^\s+LOAD\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)"
        r"\s+([RWE ]+?)\s+0x",
        notes,
        re.M,
    )
    if not m or not loads:
        return None
    syms = run(f"{TOOLS}/llvm-nm", "-D", "--defined-only", path)
    funcs = [int(f[0], 16) for f in (l.split() for l in syms.splitlines())
             if len(f) == 3 and f[1] in "Tt"]
    if not funcs:
        return None
    return m.group(1), [(int(v, 16), int(s, 16), fl) for v, s, fl in loads], funcs


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, debug = sys.argv[1], sys.argv[2]
    want = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    frames = int(sys.argv[4]) if len(sys.argv) > 4 else 20_000
    paths = sorted({os.path.realpath(p) for p in glob.glob(f"{LIBDIR}/*.so*")})
    mods = []
    for path in paths:
        lib = library(path)
        if lib:
            mods.append((path,) + lib)
        if len(mods) == want:
            break
    for path, build_id, _, _ in mods:
        d = os.path.join(debug, ".build-id", build_id[:2])
        os.makedirs(d, exist_ok=True)
        link = os.path.join(d, build_id[2:] + ".debug")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(path, link)
    rng = random.Random(3)
    lines = []
    seen = set()
    for _ in range(CONTEXTS):
        lines.append("{{{reset}}}")
        base = 0x7F0000000000
        bases = []
        for i, (path, build_id, loads, _) in enumerate(mods):
            lines.append(f"{{{{{{module:{i}:{os.path.basename(path)}:elf:{build_id}}}}}}}")
            for vaddr, memsz, flags in loads:
                start = vaddr & ~0xFFF
                size = ((vaddr + memsz + 0xFFF) & ~0xFFF) - start
                mode = "".join(c for c, f in (("r", "R"), ("w", "W"), ("x", "E")) if f in flags)
                lines.append(f"{{{{{{mmap:{base + start:#x}:{size:#x}:load:{i}:{mode}:{start:#x}}}}}}}")
            bases.append(base)
            end = max(v + s for v, s, _ in loads)
            base += ((end + 0xFFFFF) & ~0xFFFFF) + 0x100000
        for k in range(frames):
            i = rng.randrange(len(mods))
            addr = bases[i] + rng.choice(mods[i][3]) + rng.randrange(16)
            seen.add(addr)
            lines.append(f"frame {k}: {{{{{{pc:{addr:#x}}}}}}} in a worker thread")
            lines.append(f"log line {k}: nothing to symbolize here")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{out}: {len(mods)} modules, {len(seen)} distinct addresses", file=sys.stderr)


if __name__ == "__main__":
    main()
