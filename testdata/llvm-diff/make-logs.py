#!/usr/bin/env python3
"""Writes the markup logs of the differential suite against llvm-symbolizer --filter-markup.

Each log describes one or more fixture binaries of ../bin as loaded at a fixed base (module and
mmap elements from their PT_LOAD headers) and then asks for pc/bt/data/symbol elements at
addresses taken from their symbol tables: function starts, interiors, return addresses, globals
and their interiors, plus misses (no mmap, unknown build ID) and malformed elements. Deterministic.
"""
import os
import random
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "..", "bin")
TOOLS = "/usr/lib/llvm-22/bin"


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", run(f"{TOOLS}/llvm-readelf", "-n", path))
    return m.group(1)


def loads(path):
    out = []
    for line in run(f"{TOOLS}/llvm-readelf", "-lW", path).splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            vaddr, memsz = int(f[2], 16), int(f[5], 16)
            flags = "".join(c for c in "".join(f[6:-1]) if c in "RWE").replace("E", "X")
            out.append((vaddr, memsz, flags.lower()))
    return out


def symbols(path):
    funcs, objs = [], []
    for line in run(f"{TOOLS}/llvm-nm", "-S", "--defined-only", path).splitlines():
        f = line.split()
        if len(f) != 4:
            continue
        addr, size, kind, name = int(f[0], 16), int(f[1], 16), f[2], f[3]
        if size == 0:
            continue
        if kind in "tTW":
            funcs.append((addr, size, name))
        elif kind in "dDbBrR":
            objs.append((addr, size, name))
    return funcs, objs


class Module:
    def __init__(self, mid, name, base):
        self.mid, self.name, self.base = mid, name, base
        path = os.path.join(BIN, name)
        self.build_id = build_id(path)
        self.loads = loads(path)
        self.funcs, self.objs = symbols(path)

    def context(self):
        lines = [f"{{{{{{module:{self.mid}:{self.name}:elf:{self.build_id}}}}}}}"]
        for vaddr, memsz, mode in self.loads:
            start = self.base + (vaddr & ~0xFFF)
            size = ((vaddr + memsz + 0xFFF) & ~0xFFF) - (vaddr & ~0xFFF)
            lines.append(f"{{{{{{mmap:{start:#x}:{size:#x}:load:{self.mid}:{mode}:{vaddr & ~0xFFF:#x}}}}}}}")
        return lines

    def addr(self, rel):
        return self.base + rel


def presentation(mods, rng, count):
    lines = []
    frame = 0
    for i in range(count):
        m = rng.choice(mods)
        kind = rng.random()
        if kind < 0.45 and m.funcs:
            addr, size, _ = rng.choice(m.funcs)
            off = rng.randrange(0, max(size, 1))
            suffix = rng.choice(["", ":ra", ":pc"])
            lines.append(f"    {{{{{{bt:{frame}:{m.addr(addr + off):#x}{suffix}}}}}}}")
            frame += 1
        elif kind < 0.75 and m.funcs:
            addr, size, _ = rng.choice(m.funcs)
            off = rng.randrange(0, max(size, 1))
            suffix = rng.choice(["", ":ra", ":pc"])
            lines.append(f"pc here: {{{{{{pc:{m.addr(addr + off):#x}{suffix}}}}}}} end")
            frame = 0
        elif kind < 0.9 and m.objs:
            addr, size, _ = rng.choice(m.objs)
            off = rng.choice([0, rng.randrange(0, max(size, 1))])
            lines.append(f"data {{{{{{data:{m.addr(addr + off):#x}}}}}}}")
        else:
            _, _, name = rng.choice(m.funcs)
            lines.append(f"symbol {{{{{{symbol:{name}}}}}}}")
    return lines


def write(name, lines):
    with open(os.path.join(HERE, name + ".log"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    rng = random.Random(20261122)
    singles = ["app_c_O0", "app_c_O2", "app_c_O2_dwarf4", "app_c_gcc_O2", "app_cpp_O2",
               "app_rust_legacy", "app_rust_v0"]
    for i, name in enumerate(singles):
        m = Module(0, name, 0x555555554000 + i * 0x10000000)
        lines = ["{{{reset}}}"] + m.context() + ["program started"]
        lines += presentation([m], rng, 120)
        write(name, lines)

    # A program and its shared library, a module with an unknown build ID, resets.
    app = Module(0, "app_shared", 0x555555554000)
    lib = Module(1, "libfixture.so", 0x7ffff7fb0000)
    lines = ["boot: {{{reset}}}"] + app.context() + lib.context()
    lines += ["{{{module:2:libmissing.so:elf:00112233445566778899aabbccddeeff00112233}}}",
              "{{{mmap:0x7ffff7a00000:0x2000:load:2:rx:0x0}}}"]
    lines += presentation([app, lib], rng, 80)
    lines += ["missing: {{{pc:0x7ffff7a00100}}} and {{{bt:3:0x7ffff7a00200:ra}}}",
              "nowhere: {{{pc:0x1000}}} {{{data:0x10}}}",
              "{{{reset}}}", "after reset: {{{pc:" + hex(app.addr(app.funcs[0][0])) + "}}}"]
    lines += ["{{{reset}}}"] + lib.context() + presentation([lib], rng, 30)
    write("shared_and_missing", lines)

    # Malformed and edge-case elements around a valid context (app_c_O2).
    m = Module(7, "app_c_O2", 0x400000000)
    f0 = m.funcs[0][0]
    lines = ["{{{reset}}}"] + m.context() + [
        "tags: {{{UP}}} {{{t2g:1}}} {{{}}} {{{:x}}} {{{foo:a:b}}} {{{dumpfile:sancov:x.1}}}",
        "hexdict one line {{{hexdict:RIP: 0x%x}}}" % m.addr(f0),
        "fields: {{{pc}}} {{{pc:0x1:ra:extra}}} {{{bt:1}}} {{{bt:x:0x1}}} {{{data}}}",
        "addr: {{{pc:42}}} {{{pc:0X10}}} {{{pc:0}}} {{{pc:0x}}}",
        "symbol: {{{symbol}}} {{{symbol:}}} {{{symbol:_ZN3foo3barEv:x}}} {{{symbol:_RNvC3foo3bar}}}",
        "\x1b[1mbold\x1b[0m \x1b[31mred {{{pc:%#x}}}\x1b[0m \x1b[1;31mkept\x1b[0m" % m.addr(f0 + 1),
        "crlf line {{{pc:%#x}}}\r" % m.addr(f0),
        "dup: {{{module:7:again:elf:abcd}}} tail",
        "unknown mmap module {{{mmap:0x900000000:0x1000:load:99:r:0x0}}}",
        "overlap {{{mmap:%#x:0x10:load:7:r:0x0}}}" % m.addr(0x1000),
        "mode {{{mmap:0x910000000:0x1000:load:7:wr:0x0}}}",
        "module type {{{module:8:x:coff:ab}}}",
        "text before {{{module:9:late:elf:abcdef}}} text after",
        "{{{mmap:0x920000000:0x1000:load:9:rx:0x0}}}",
        "{{{mmap:0x930000000:0:load:9:r:0x0}}}",
        "frame zero {{{bt:0:%#x}}} {{{bt:007:%#x:pc}}}" % (m.addr(f0), m.addr(f0 + 4)),
        # LLVM ignores the type field when more fields follow it.
        "type then more {{{bt:0:%#x:pc:x}}} {{{bt:1:%#x:bogus:x}}} {{{pc:%#x:ra:x}}}"
        % (m.addr(f0), m.addr(f0), m.addr(f0)),
        "{{{reset:x}}}",
        "no newline at end {{{pc:0x0}}}",
    ]
    with open(os.path.join(HERE, "edge_cases.log"), "w", newline="") as f:
        f.write("\n".join(lines))

    # The kinds of case LLVM's own lit tests of the filter check (field parsing, modules,
    # mmaps, resets, context lines with text around them, element positions), in values of
    # our own, around the same module.
    m = Module(3, "app_c_O2", 0x500000000)
    f0, f1 = m.funcs[0][0], m.funcs[1][0]
    base = 0x600000000
    lines = ["{{{reset}}}"] + m.context() + [
        "modes:",
        "{{{module:4:modes.so:elf:c0ffee}}}",
        "{{{mmap:%#x:0x10:load:4:r:0x0}}}" % base,
        "{{{mmap:%#x:0x10:load:4:w:0x0}}}" % (base + 0x10),
        "{{{mmap:%#x:0x10:load:4:x:0x0}}}" % (base + 0x20),
        "{{{mmap:%#x:0x10:load:4:rwx:0x0}}}" % (base + 0x30),
        "{{{mmap:%#x:0x10:load:4:RWX:0x0}}}" % (base + 0x40),
        "{{{mmap:%#x:0x20:load:4:rx:0x10}}}" % (base + 0x50),
        "bad mmaps:",
        "{{{mmap}}}",
        "{{{mmap:%#x:0x10:stack}}}" % (base + 0x100),
        "{{{mmap:%#x:0x10:load}}}" % (base + 0x100),
        "{{{mmap:12:0x10:load:4:r:0x0}}}",
        "{{{mmap:%#x:-16:load:4:r:0x0}}}" % (base + 0x100),
        "{{{mmap:%#x:0x10:load:4::0x0}}}" % (base + 0x100),
        "{{{mmap:%#x:0x10:load:4:q:0x0}}}" % (base + 0x100),
        "{{{mmap:%#x:0x10:load:4:xr:0x0}}}" % (base + 0x100),
        "overlaps:",
        "{{{mmap:%#x:0x10:load:4:r:0x0}}}" % (base + 0x58),
        "{{{mmap:%#x:0x10:load:4:r:0x0}}}" % (base + 0x48),
        "{{{mmap:%#x:0x40:load:4:r:0x0}}}" % (base + 0x48),
        "mmap fields: {{{mmap:0x6f:1:other}}} {{{mmap:000:1:other}}} {{{mmap::1:other}}}"
        " {{{mmap:77:1:other}}} {{{mmap:0xzz:1:other}}}",
        "modules:",
        "{{{module}}}",
        "{{{module:5:e.so:pe}}}",
        "{{{module:4:again.so:elf:beef}}}",
        "{{{module:6:f.so:elf}}}",
        "{{{module:10::elf:01}}}",
        "{{{module:::elf:01}}}",
        "{{{module:-2::elf:01}}}",
        "{{{module:013::elf:01}}}",
        "{{{module:018::elf:01}}}",
        "{{{module:0x1f::elf:01}}}",
        "{{{module:0x1z::elf:01}}}",
        "{{{module:0X::elf:01}}}",
        "{{{module:20::elf:}}}",
        "{{{module:21::elf:1}}}",
        "{{{module:22::elf:EE}}}",
        "{{{module:23::elf:ez}}}",
        "around context: keep{{{module:24:g.so:elf:aa}}}cut",
        "cut{{{mmap:0x700000000:0x10:load:24:r:0x0}}}cut",
        "pcs: {{{pc:%#x}}} {{{pc:%#x:ra}}} {{{pc:%#x:pc}}} {{{pc:%#x:}}} {{{pc:0x0}}}"
        % (m.addr(f0), m.addr(f0 + 4), m.addr(f1), m.addr(f1)),
        "bts: {{{bt:0:%#x:}}} {{{bt:1:%#x:pc:}}} {{{bt}}} {{{bt:2:0x4}}}" % (m.addr(f0), m.addr(f1)),
        "data: {{{data:%#x}}} {{{data:0x4}}}" % m.addr(m.objs[0][0] if m.objs else 0x3000),
        "two symbols {{{symbol:_Z4lit1v}}} and {{{symbol}}} {{{symbol}}}",
        "tags {{{t3g}}} {{{tAg:x}}}",
        "  {{{reset}}}",
        "{{{module:3:reused:elf:0011}}}",
        "{{{mmap:0x800000000:0x1000:load:3:r:0x0}}}",
        "after reuse {{{pc:0x800000010}}}",
        "{{{reset:}}}",
    ]
    write("lit_cases", lines)

    # Where a line holds elements and then a contextual element, LLVM applies the contextual
    # element first and then shows the elements before it: they may fall in the line's mmap
    # (when it opens a new module line; when it extends the open one they are not shown), and
    # they still see the context a line's reset ends.
    m = Module(5, "app_c_O2", 0x700000000)
    lib = Module(6, "app_cpp_O2", 0x710000000)
    f0, f1 = m.funcs[0][0], m.funcs[1][0]
    obj = m.objs[0][0] if m.objs else f0
    g0 = lib.funcs[0][0]
    module, r, rx, *later = m.context()
    lib_module, lib_r, lib_rx, *_ = lib.context()
    lines = ["{{{reset}}}", module, r, "closes the module line"] + [
        "new line {{{pc:%#x}}} {{{bt:0:%#x}}} {{{data:%#x}}} %s tail" % (m.addr(f0), m.addr(f1), m.addr(obj), rx)
    ] + later[:-1] + [
        "shown {{{pc:%#x}}}" % m.addr(f0),
        lib_module,
        "extends the open line {{{pc:%#x}}} %s" % (lib.addr(g0), lib_r),
        "another module's line {{{data:%#x}}} {{{pc:%#x}}} %s" % (m.addr(obj), lib.addr(g0), later[-1]),
        "other module {{{bt:1:%#x}}} %s" % (lib.addr(g0 + 1), lib_rx),
        "before reset {{{pc:%#x}}} {{{reset}}} after" % m.addr(f1),
        "gone {{{pc:%#x}}}" % m.addr(f1),
        # An mmap starting where a size-0 mmap starts passes LLVM's overlap check and is not
        # stored: LLVM lists the size-0 one again, as of its own module.
        "{{{module:7:zero.so:elf:%s}}}" % m.build_id,
        "{{{module:8:other.so:elf:%s}}}" % lib.build_id,
        "{{{mmap:0x720000000:0:load:7:r:0x0}}}",
        "{{{mmap:0x720000000:0x1000:load:8:rx:0x1000}}}",
        "between {{{pc:0x720000010}}}",
        "{{{mmap:0x720000000:0x2000:load:8:rx:0x1000}}}",
        "after {{{pc:0x720000010}}}",
        # LLVM neither shows nor diagnoses the elements before a refused contextual element,
        # nor before a reset with nothing to reset.
        "before a refused mmap {{{pc:0x1}}} {{{mmap:0x730000000:0x10:load:99:r:0x0}}}",
        "before a refused module {{{bt:0:0x1}}} {{{module:8:again:elf:01}}}",
        "{{{reset}}}",
        "before an empty reset {{{pc:0x1}}} {{{reset}}}",
    ]
    write("context_order", lines)

    unreadable_files()


# Build IDs whose .build-id/xx/rest.debug file exists but is not an object file: a text file
# (LLVM: "The file was not recognized as a valid object file"), a directory ("Is a directory") and
# an ELF file cut short ("section header table goes past the end of the file").
CORRUPT_ID = "badc0ffee0ddf00d0123456789abcdef01234567"
DIR_ID = "badd1e0000000000000000000000000000000000"
TRUNCATED_ID = "bad0e1f000000000000000000000000000000000"


def unreadable_files():
    """The unreadable-file case: the first element LLVM looks up in the module prints raw (and the
    error), after which LLVM has cached the module as bad: pc raw, bt nothing, data <invalid>."""
    debug = os.path.join(HERE, "..", "debug", ".build-id")
    os.makedirs(os.path.join(HERE, "unreadable"), exist_ok=True)
    with open(os.path.join(HERE, "unreadable", "not-an-object.debug"), "w") as f:
        f.write("this build-ID file is not an ELF object\n" * 3)
    # git keeps no empty folder: the folder standing in the .debug slot holds a placeholder.
    os.makedirs(os.path.join(HERE, "unreadable", "a-folder.debug"), exist_ok=True)
    with open(os.path.join(HERE, "unreadable", "a-folder.debug", "README"), "w") as f:
        f.write("A folder where a build-ID tree expects a .debug file.\n")
    with open(os.path.join(BIN, "app_c_O2"), "rb") as f:
        head = f.read(200)
    with open(os.path.join(HERE, "unreadable", "truncated.debug"), "wb") as f:
        f.write(head)
    for bid, target in [(CORRUPT_ID, "not-an-object.debug"), (DIR_ID, "a-folder.debug"),
                        (TRUNCATED_ID, "truncated.debug")]:
        sub = os.path.join(debug, bid[:2])
        os.makedirs(sub, exist_ok=True)
        link = os.path.join(sub, bid[2:] + ".debug")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.join("..", "..", "..", "llvm-diff", "unreadable", target), link)
    lines = [
        "{{{reset}}}",
        "{{{module:0:broken:elf:%s}}}" % CORRUPT_ID,
        "{{{mmap:0x10000:0x2000:load:0:rx:0x0}}}",
        # Elided (the mmap extends the open info line): LLVM looks nothing up for it.
        "skip {{{bt:0:0x10100}}}{{{mmap:0x12000:0x1000:load:0:r:0x2000}}} skip",
        "{{{module:1:folder:elf:%s}}}" % DIR_ID,
        "{{{mmap:0x20000:0x2000:load:1:r:0x0}}}",
        # Printed verbatim, nothing looked up.
        "hexdict {{{hexdict:RIP: 0x10100}}}",
        "first bt {{{bt:0:0x10100}}} after",
        "   {{{bt:1:0x10104}}} later bt",
        "pc {{{pc:0x10108}}} and {{{pc:0x1010c:ra}}} end",
        "    #2 {{{bt:2:0x10110:pc}}}",
        "data {{{data:0x10200}}} end",
        "data first {{{data:0x20010}}} then bt {{{bt:3:0x20020}}} then pc {{{pc:0x20030}}}",
        "{{{module:2:truncated:elf:%s}}}" % TRUNCATED_ID,
        "{{{mmap:0x40000:0x2000:load:2:rx:0x0}}}",
        "pc first {{{pc:0x40100}}}",
        "   {{{bt:0:0x40100}}} bt then data {{{data:0x40200}}} then pc {{{pc:0x40100}}}",
        "{{{reset}}}",
        "{{{module:5:broken-again:elf:%s}}}" % CORRUPT_ID,
        "{{{mmap:0x30000:0x1000:load:5:rx:0x0}}}",
        "after reset {{{bt:0:0x30100}}} {{{data:0x30200}}} {{{pc:0x30300}}}",
        "no mmap {{{bt:9:0x90000}}}",
    ]
    write("unreadable_build_id", lines)

    # .debug_aranges claiming globals' addresses for their unit: LLVM's pc lookup then finds a
    # unit there and gives no symbol's STT_FILE name; bt's lookup still does. Every object's
    # start and interior, through pc, bt and data; then the usual mix. Its own seed, so that
    # the logs above stay as they were.
    m = Module(0, "app_c_aranges", 0x555555554000)
    lines = ["{{{reset}}}"] + m.context()
    for addr, size, _ in m.objs:
        for off in sorted({0, size // 2, size - 1}):
            a = m.addr(addr + off)
            lines += [f"pc {{{{{{pc:{a:#x}}}}}}} ra {{{{{{pc:{a + 1:#x}:ra}}}}}}",
                      f"    {{{{{{bt:0:{a:#x}:pc}}}}}}", f"data {{{{{{data:{a:#x}}}}}}}"]
    lines += presentation([m], random.Random(20261206), 60)
    write("aranges", lines)


if __name__ == "__main__":
    main()
