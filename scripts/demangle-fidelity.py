#!/usr/bin/env python3
"""Measure how often symfilter's C++ names equal LLVM's, library by library.

Collects every `_Z` symbol (dynamic and static symbol tables) of the C++
libraries installed on this machine, runs them through `llvm-cxxfilt` and
through symfilter (as `{{{symbol:NAME}}}` lines, in the llvm and the human
format) and prints the share of names whose output is byte-identical.

    scripts/demangle-fidelity.py [--symfilter target/release/symfilter]
        [--show-diffs N] [--write-sample testdata/demangle/itanium.tsv]
        [LIB.so ...]

With --write-sample, a deterministic sample of names and llvm-cxxfilt's
output for them is written as `mangled<TAB>demangled` lines (the test
suite's expected outputs; see tests/demangle.rs).
"""

import argparse
import glob
import hashlib
import os
import subprocess
import sys

LLVM = "/usr/lib/llvm-22/bin"

# Where shared libraries are looked for; every real file is read once, and
# those with at least one `_Z` symbol are the C++ libraries measured.
PATTERNS = [
    "/usr/lib/x86_64-linux-gnu/*.so*",
    "/usr/lib/llvm-*/lib/*.so*",
]

# Libraries with fewer names are summed up in one row.
SMALL = 100


def libraries():
    seen, out = set(), []
    for pattern in PATTERNS:
        for path in sorted(glob.glob(pattern)):
            real = os.path.realpath(path)
            if real in seen or not os.path.isfile(real):
                continue
            seen.add(real)
            out.append(real)
    return out


def mangled_names(lib):
    names = set()
    for flags in (["-D"], []):
        r = subprocess.run(
            [f"{LLVM}/llvm-nm", "--just-symbol-name", *flags, lib],
            capture_output=True,
            text=True,
            errors="surrogateescape",
        )
        for line in r.stdout.splitlines():
            # Versioned dynamic symbols carry `@VERSION`; the name is before it.
            name = line.strip().split("@", 1)[0]
            if name.startswith("_Z") and name.isascii() and " " not in name:
                names.add(name)
    return sorted(names)


def run_lines(cmd, lines):
    r = subprocess.run(
        cmd,
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        errors="surrogateescape",
    )
    out = r.stdout.split("\n")
    if out and out[-1] == "":
        out.pop()
    if len(out) != len(lines):
        sys.exit(f"{cmd[0]}: {len(out)} lines for {len(lines)} names")
    return out


def symfilter(binary, fmt, names):
    return run_lines(
        [binary, f"--format={fmt}"], ["{{{symbol:" + n + "}}}" for n in names]
    )


def show_diffs(names, expected, got, most):
    """Print the first `most` names whose output differs from LLVM's."""
    shown = 0
    for n in names:
        if shown >= most:
            break
        if got[n] != expected[n]:
            shown += 1
            print(f"\n{n}\n  llvm: {expected[n]}\n  ours: {got[n]}")


def write_sample(path, names, expected, size):
    """Write `size` of the names up to 400 bytes long with LLVM's output,
    as `mangled<TAB>demangled` lines: deterministically the names whose hash
    is smallest, so the sample spreads over all sources and stays stable as
    they change."""

    def key(n):
        return hashlib.sha1(n.encode()).digest()

    short = [n for n in names if len(n) <= 400]
    sample = sorted(sorted(short, key=key)[:size])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for n in sample:
            f.write(f"{n}\t{expected[n]}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symfilter", default="target/release/symfilter")
    ap.add_argument("--show-diffs", type=int, default=0)
    ap.add_argument("--write-sample")
    ap.add_argument("--sample-size", type=int, default=4000)
    ap.add_argument("libs", nargs="*")
    args = ap.parse_args()

    libs = args.libs or libraries()
    per_lib = {lib: mangled_names(lib) for lib in libs}
    per_lib = {lib: names for lib, names in per_lib.items() if names}
    everything = sorted(set().union(*per_lib.values()))
    expected = dict(
        zip(everything, run_lines([f"{LLVM}/llvm-cxxfilt"], everything))
    )
    got = {
        fmt: dict(zip(everything, symfilter(args.symfilter, fmt, everything)))
        for fmt in ("llvm", "human")
    }

    def label(lib):
        # /usr/lib/llvm-22/lib/LLVMPolly.so -> llvm-22/LLVMPolly.so
        parts = lib.split("/")
        return "/".join(parts[-3::2]) if parts[-2] == "lib" and "llvm-" in parts[-3] else parts[-1]

    big = sorted(
        ((label(lib), n) for lib, n in per_lib.items() if len(n) >= SMALL),
        key=lambda r: -len(r[1]),
    )
    small = [lib for lib, n in per_lib.items() if len(n) < SMALL]
    rows = big + [
        (f"{len(small)} smaller libraries", sorted(set().union(*(per_lib[l] for l in small)))),
        (f"total ({len(per_lib)} libraries)", everything),
    ]
    print(f"{'library':<40} {'names':>8} {'llvm':>9} {'human':>9}")
    for label, names in rows:
        if not names:
            continue
        cols = []
        for fmt in ("llvm", "human"):
            same = sum(got[fmt][n] == expected[n] for n in names)
            cols.append(f"{100.0 * same / len(names):8.3f}%")
        print(f"{label:<40} {len(names):>8} {cols[0]} {cols[1]}")
    kept = sum(expected[n] == n for n in everything)
    print(f"(llvm-cxxfilt leaves {kept} of the {len(everything)} names mangled)")

    show_diffs(everything, expected, got["llvm"], args.show_diffs)
    if args.write_sample:
        write_sample(args.write_sample, everything, expected, args.sample_size)

if __name__ == "__main__":
    main()
