#!/usr/bin/env python3
"""Measure how often symfilter's Microsoft C++ names equal LLVM's.

Nobody on this machine ships Microsoft-mangled symbols, so the corpus is
compiled: clang-22 builds C++ sources for x86_64-pc-windows-msvc and
i686-pc-windows-msvc (testdata/demangle/msvc-corpus/: the language's
features, and libstdc++'s templates instantiated against its own headers;
plus the project's testdata C++ sources that compile for that ABI). Every
`?` symbol, defined or undefined, of the objects is one name. Each is run
as a `{{{symbol:NAME}}}` line through `llvm-symbolizer --filter-markup` (the
reference), `llvm-undname`, and `symfilter --format=llvm` / `--format=human`.

    scripts/msvc-demangle-fidelity.py [--symfilter target/release/symfilter]
        [--show-diffs N] [--write-sample testdata/demangle/msvc.tsv]

With --write-sample, a deterministic sample of names and llvm-symbolizer's
output for them is written as `mangled<TAB>demangled` lines (the test
suite's expected outputs; see tests/demangle.rs).
"""

import argparse
import glob
import importlib.util
import os
import subprocess
import sys
import tempfile

LLVM = "/usr/lib/llvm-22/bin"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Running the tools and writing the sample as the Itanium script does.
_spec = importlib.util.spec_from_file_location(
    "demangle_fidelity", os.path.join(ROOT, "scripts", "demangle-fidelity.py")
)
itanium = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(itanium)
run_lines = itanium.run_lines

TARGETS = {
    "x86_64": ["--target=x86_64-pc-windows-msvc", "-fno-ms-compatibility", "-fms-extensions"],
    "i686": ["--target=i686-pc-windows-msvc", "-fno-ms-compatibility", "-fms-extensions"],
}

# libstdc++'s and glibc's headers, read as if for Linux: glibc wants its
# own platform macros, and a 32-bit stubs header that a 64-bit-only
# installation lacks (an empty one is written into SHIM).
def host_headers(shim):
    return [
        "-U_WIN32", "-U_WIN64", "-U_MSC_VER", "-U_MSC_FULL_VER", "-U_MSC_EXTENSIONS",
        "-D__linux__", "-D__linux", "-Dlinux", "-D__unix__", "-D__unix",
        "-D__gnu_linux__", "-D__ELF__", "-D_GNU_SOURCE", "-nostdinc++",
        "-isystem", "/usr/include/c++/12",
        "-isystem", "/usr/include/x86_64-linux-gnu/c++/12",
        "-isystem", shim,
        "-isystem", "/usr/include/x86_64-linux-gnu",
        "-isystem", "/usr/include",
    ]


def sources():
    corpus = sorted(glob.glob(f"{ROOT}/testdata/demangle/msvc-corpus/*.cpp"))
    others = sorted(
        p
        for ext in ("cpp", "cc")
        for p in glob.glob(f"{ROOT}/testdata/**/*.{ext}", recursive=True)
        if "/msvc-corpus/" not in p
    )
    return corpus + others


def compile_all(tmp):
    shim = os.path.join(tmp, "shim")
    os.makedirs(os.path.join(shim, "gnu"), exist_ok=True)
    open(os.path.join(shim, "gnu", "stubs-32.h"), "w").close()
    objects = []
    for src in sources():
        for arch, flags in TARGETS.items():
            obj = os.path.join(tmp, f"{os.path.basename(src)}.{arch}.obj")
            cmd = [f"{LLVM}/clang++", *flags, "-std=c++20", "-Wno-everything",
                   *host_headers(shim), "-I", os.path.dirname(src), "-c", src, "-o", obj]
            r = subprocess.run(cmd, capture_output=True, text=True)
            rel = os.path.relpath(src, ROOT)
            if r.returncode == 0:
                objects.append((f"{rel} ({arch})", obj))
            else:
                print(f"(skipped {rel} for {arch}: does not compile)", file=sys.stderr)
    return objects


def mangled_names(obj):
    r = subprocess.run(
        [f"{LLVM}/llvm-nm", "--just-symbol-name", obj],
        capture_output=True, text=True, errors="surrogateescape",
    )
    return {n for n in r.stdout.splitlines() if n.startswith("?") and n.isascii()}


def markup(names):
    return ["{{{symbol:" + n + "}}}" for n in names]


def undname(names):
    # One name per run: llvm-undname prints an error and a blank line for a
    # name it cannot read, which would shift the others.
    out = []
    for n in names:
        r = subprocess.run([f"{LLVM}/llvm-undname", n], capture_output=True, text=True)
        lines = r.stdout.splitlines()
        out.append(lines[1] if len(lines) > 1 and r.returncode == 0 else n)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symfilter", default="target/release/symfilter")
    ap.add_argument("--show-diffs", type=int, default=0)
    ap.add_argument("--write-sample")
    ap.add_argument("--sample-size", type=int, default=3000)
    ap.add_argument("--no-undname", action="store_true")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        per_obj = {label: mangled_names(obj) for label, obj in compile_all(tmp)}
    per_obj = {label: names for label, names in per_obj.items() if names}
    everything = sorted(set().union(*per_obj.values()))
    expected = dict(zip(everything, run_lines([f"{LLVM}/llvm-symbolizer", "--filter-markup"], markup(everything))))
    got = {
        fmt: dict(zip(everything, run_lines([args.symfilter, f"--format={fmt}"], markup(everything))))
        for fmt in ("llvm", "human")
    }
    columns = ["llvm", "human"]
    if not args.no_undname:
        got["undname"] = dict(zip(everything, undname(everything)))
        columns.append("undname")

    rows = sorted(per_obj.items(), key=lambda r: -len(r[1]))
    rows.append((f"total ({len(per_obj)} objects)", everything))
    print(f"{'object':<48} {'names':>7} " + " ".join(f"{c:>9}" for c in columns))
    for label, names in rows:
        cols = []
        for fmt in columns:
            same = sum(got[fmt][n] == expected[n] for n in names)
            cols.append(f"{100.0 * same / len(names):8.3f}%")
        print(f"{label:<48} {len(names):>7} " + " ".join(cols))
    kept = sum(expected[n] == n for n in everything)
    print(f"(llvm-symbolizer leaves {kept} of the {len(everything)} names mangled)")

    itanium.show_diffs(everything, expected, got["llvm"], args.show_diffs)
    if args.write_sample:
        itanium.write_sample(args.write_sample, everything, expected, args.sample_size)


if __name__ == "__main__":
    main()
