#!/usr/bin/env python3
"""Regenerates testdata/elf/expected/: for each fixture, the addresses looked
up (NAME.addrs) and what llvm-symbolizer 22 says about them, written in
`symfilter lookup`'s text format (NAME.txt):

    0xADDR FUNCTION FILE:LINE[:COLUMN]     one line per frame, innermost first

The addresses are every third byte of .text plus a few outside it.

Where symfilter deliberately does more than llvm-symbolizer 22, the reference
is adjusted, and said so here:
* stripped binaries (c_stripped, c_treeonly): symfilter merges the symbol
  tables of the binary and its debug file, llvm-symbolizer reads only the
  binary's; the reference is llvm-symbolizer run on the debug file itself.
* dwz (dwz_*): llvm-symbolizer does not read names from the supplementary
  file (.gnu_debugaltlink) and prints "??" for such frames; those names are
  taken from elfutils' eu-addr2line for the same frame, after checking that
  its file:line agrees."""
import json, os, subprocess, sys

LLVM = "/usr/lib/llvm-22/bin"
HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "bin")
OUT = os.path.join(HERE, "expected")

FIXTURES = ["c_O0", "c_O2", "c_nopie", "c_dwarf4", "c_gcc", "cpp_O2", "cpp_gmlt",
            "libprog.so", "c_zlib", "c_zstd", "c_stripped", "c_treeonly",
            "split_dwo", "split_dwp", "dwz_prog", "dwz_other", "reloc.o"]


def section_range(path, name):
    out = subprocess.run([f"{LLVM}/llvm-readelf", "-S", "--wide", path],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[1] == name:
            return int(parts[3], 16), int(parts[5], 16)
    return None


def text_range(path):
    r = section_range(path, ".text")
    if r is None:
        raise SystemExit(f"{path}: no .text")
    return r


def data_expectations(name):
    """`lookup --data` lines for every other byte of .rodata, .data and .bss,
    from llvm-symbolizer's DATA lookups (name, start and size, file:line)."""
    path = os.path.join(BIN, name)
    addrs = []
    for sec in (".rodata", ".data", ".bss"):
        r = section_range(path, sec)
        if r:
            addrs += range(r[0], r[0] + r[1], 2)
    res = subprocess.run([f"{LLVM}/llvm-symbolizer", f"--obj={REFERENCE_OBJ.get(name, name)}"],
                         input="".join(f"DATA 0x{a:x}\n" for a in addrs), cwd=BIN,
                         check=True, capture_output=True, text=True)
    groups = res.stdout.strip("\n").split("\n\n")
    lines = []
    for addr, group in zip(addrs, groups):
        sym, start_size, loc = group.split("\n")
        start = int(start_size.split()[0])
        if sym in ("", "??") and start == 0:
            lines.append(f"0x{addr:x} ?? ??:0")
            continue
        if loc == "??:?":
            loc = "??:0"
        lines.append(f"0x{addr:x} {sym}+0x{addr - start:x} {loc}")
    return addrs, lines


# Fixtures whose data lookups are checked too. Not c_gcc: llvm-symbolizer 22
# finds no declaration for gcc's array variables (g_name, g_points) and
# prints ??:0, where symfilter gives their DW_AT_decl_file:decl_line.
DATA_FIXTURES = ["c_O0", "c_O2", "c_dwarf4", "cpp_O2", "libprog.so", "c_stripped"]

# The file llvm-symbolizer is pointed at, when not the fixture itself (see above).
REFERENCE_OBJ = {"c_stripped": "c_stripped.debug"}


def eu_frames(path, addr):
    """[(function, file:line:column)] innermost first, from eu-addr2line."""
    out = subprocess.run(["eu-addr2line", "-e", path, "-f", "-i", f"0x{addr:x}"],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    return [(out[i].split(" inlined at ")[0], out[i + 1]) for i in range(0, len(out) - 1, 2)]


def fmt(addr, frame):
    func = frame.get("FunctionName") or "??"
    file = frame.get("FileName") or "??"
    line = f"0x{addr:x} {func} {file}:{frame.get('Line', 0)}"
    if frame.get("Column", 0):
        line += f":{frame['Column']}"
    return line


def main():
    os.makedirs(OUT, exist_ok=True)
    tree = os.path.join(HERE, "tree", ".build-id")
    for sub in os.listdir(tree):
        for f in os.listdir(os.path.join(tree, sub)):
            if f.endswith(".debug"):
                REFERENCE_OBJ["c_treeonly"] = os.path.join(tree, sub, f)
    for name in sys.argv[1:] or FIXTURES:
        path = os.path.join(BIN, name)
        start, size = text_range(path)
        addrs = list(range(start, start + size, 3)) + [0, start + size + 0x100, 0xffffffff]
        with open(os.path.join(OUT, name + ".addrs"), "w") as f:
            f.write("".join(f"0x{a:x}\n" for a in addrs))
        # Run from bin/ so split DWARF's comp dir "." resolves for the reference tool.
        obj = REFERENCE_OBJ.get(name, name)
        res = subprocess.run(
            [f"{LLVM}/llvm-symbolizer", "--output-style=JSON", f"--obj={obj}",
             "--debug-file-directory=../tree"],
            input="".join(f"0x{a:x}\n" for a in addrs), cwd=BIN,
            check=True, capture_output=True, text=True)
        lines = []
        for rec, addr in zip(res.stdout.splitlines(), addrs):
            data = json.loads(rec)
            frames = data[0]["Symbol"] if isinstance(data, list) else data["Symbol"]
            if name.startswith("dwz_") and any(not f.get("FunctionName") and f.get("FileName") for f in frames):
                eu = eu_frames(path, addr)
                for i, frame in enumerate(frames):
                    if not frame.get("FunctionName") and frame.get("FileName"):
                        func, loc = eu[i]
                        want = f"{frame['FileName']}:{frame['Line']}:{frame['Column']}"
                        assert loc == want, (name, hex(addr), loc, want)
                        frame["FunctionName"] = func
            for frame in frames:
                lines.append(fmt(addr, frame))
        with open(os.path.join(OUT, name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print(name, len(addrs), "addresses,", len(lines), "lines")
        if name in DATA_FIXTURES:
            daddrs, dlines = data_expectations(name)
            with open(os.path.join(OUT, name + ".data.addrs"), "w") as f:
                f.write("".join(f"0x{a:x}\n" for a in daddrs))
            with open(os.path.join(OUT, name + ".data.txt"), "w") as f:
                f.write("\n".join(dlines) + "\n")
            print(name, len(daddrs), "data addresses")


if __name__ == "__main__":
    sys.exit(main())
