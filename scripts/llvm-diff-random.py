#!/usr/bin/env python3
"""Random markup logs through LLVM 22's filter and symfilter's llvm format.

Each log is made from a grammar of markup with its edges bent: number forms
(octal, binary, leading zeros, odd hex lengths, values past 64 bits), field
counts, tags in the wrong case, unterminated and nested braces, SGR escapes
LLVM does and does not know, `\\r\\n` endings, bytes that are not UTF-8, and
modules and mmaps that clash. The addresses fall on the fixtures of a
build-ID tree (their load segments mapped at random bases, their symbols'
addresses and the bytes around them). Each log runs through
`llvm-symbolizer --filter-markup` and `symfilter --format=llvm`, without and
with colour; standard output must be equal byte for byte. A log whose output
differs is cut down line by line to the fewest lines that still differ and
saved, with both outputs, in OUT.

Left out, because symfilter departs from LLVM there on purpose (README, "Where
symfilter departs from LLVM 22"): module names over 4 KiB, module names that
are paths of real files, and LLVM's two sentinel module IDs (2^64-1, 2^64-2),
with which LLVM's own map misbehaves.

usage: scripts/llvm-diff-random.py [--count N] [--seed S] [--symfilter BIN]
                                   [--tree DIR] [--out DIR] [--symfilter-arg ARG]...
"""

import argparse
import os
import random
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LLVM_BIN = Path("/usr/lib/llvm-22/bin")
SENTINELS = {2**64 - 1, 2**64 - 2}


class Fixture:
    def __init__(self, build_id, segments, symbols):
        self.build_id = build_id
        # (vaddr, memsz, mode) of each PT_LOAD.
        self.segments = segments
        # Addresses of defined symbols, and a few bytes past them.
        self.symbols = symbols


def tool_output(name, *args):
    """What an LLVM tool prints; bytes that are not UTF-8 (in warnings about odd
    files) are replaced, never read."""
    return subprocess.run(
        [LLVM_BIN / name, *args], capture_output=True, text=True, errors="replace"
    ).stdout


def fixtures(tree):
    """The ELF files of a build-ID tree, with their load segments and symbols."""
    out = []
    for path in sorted(Path(tree, ".build-id").glob("*/*.debug")):
        build_id = path.parent.name + path.name[: -len(".debug")]
        segments, symbols = [], []
        for line in tool_output("llvm-readelf", "-lW", path).splitlines():
            f = line.split()
            if f[:1] == ["LOAD"] and len(f) >= 7:
                vaddr, memsz = int(f[2], 16), int(f[5], 16)
                flags = "".join(c for c in " ".join(f[6:-1]) if c in "RWE")
                mode = flags.replace("E", "x").lower() or "r"
                segments.append((vaddr, memsz, mode))
        for line in tool_output("llvm-nm", "--defined-only", path).splitlines():
            f = line.split()
            if len(f) >= 3 and re.fullmatch(r"[0-9a-f]+", f[0]):
                symbols.append((int(f[0], 16), f[2]))
        # A file that is not an object (the tree's broken fixtures) still
        # gets elements: LLVM's answers for them are part of the behaviour.
        out.append(Fixture(build_id, segments or [(0x1000, 0x1000, "rx")], symbols))
    return out


class Log:
    """One random log: the context as declared so far, to aim elements at."""

    def __init__(self, rng, fixtures):
        self.rng = rng
        self.fixtures = fixtures
        self.modules = {}  # id -> fixture
        self.maps = []  # (start, size, module id, fixture, segment vaddr)

    # Numbers in the forms LLVM's fields take, and some they refuse.
    def integer(self, v):
        r = self.rng.random()
        if r < 0.55:
            return str(v)
        if r < 0.75:
            return hex(v)
        if r < 0.80:
            return "0X%x" % v
        if r < 0.85:
            return "0%o" % v if v else "0"
        if r < 0.88:
            return "0b" + bin(v)[2:]
        if r < 0.90:
            return "0o%o" % v
        if r < 0.92:
            return "00" + str(v)
        return self.rng.choice(["-1", "079", "0xfg", "0x", "", " 1", "1 ", str(2**64), "+1"])

    def address(self, v):
        r = self.rng.random()
        if r < 0.8:
            return hex(v)
        if r < 0.85:
            return "0x%X" % v
        if r < 0.88:
            return "0x000" + "%x" % v
        if r < 0.90:
            return self.rng.choice(["0", "00", "000"])
        return self.rng.choice(
            ["0X%x" % v, "%x" % v, "0x", "0x%x " % v, "-0x1", "0x1%016x" % v, "0x%xg" % v, ""]
        )

    def build_id(self, f):
        r = self.rng.random()
        bid = f.build_id
        if r < 0.75:
            return bid
        if r < 0.85:
            return bid.upper()
        if r < 0.88:
            return bid.lstrip("0") or "0"
        return self.rng.choice(
            ["", "xyz", "0x" + bid, bid + " ", "abc", "deadbeef" * 5, bid[:-1]]
        )

    def mode(self):
        good = ["r", "rx", "rw", "rwx", "R", "RX", "w", "x", "wx", "Rw"]
        bad = ["", "wr", "rr", "xw", "g", "r x"]
        return self.rng.choice(good if self.rng.random() < 0.9 else bad)

    def module_id(self):
        if self.modules and self.rng.random() < 0.7:
            return self.rng.choice(list(self.modules))
        v = self.rng.choice([0, 1, 2, 3, 7, 10, 255, 2**32, 2**63])
        return v

    def name(self):
        r = self.rng.random()
        if r < 0.6:
            return self.rng.choice(["app", "libfoo.so", "a.out", "x", "lib with space.so"])
        if r < 0.8:
            return self.rng.choice(
                ['q"uote', "back\\slash", "", "\t", "ünï", "brace}", "esc\x1b[31m", "cr\r"]
            )
        return "".join(self.rng.choice("abc{}_-.") for _ in range(self.rng.randint(1, 12)))

    def module(self):
        mid = self.module_id()
        f = self.rng.choice(self.fixtures)
        fields = [self.integer(mid), self.name(), "elf", self.build_id(f)]
        if self.rng.random() < 0.05:
            fields[2] = self.rng.choice(["ELF", "coff", ""])
        fields = self.bend_fields(fields)
        if mid not in self.modules:
            self.modules[mid] = f
        return "{{{module:%s}}}" % ":".join(fields)

    def mmap(self):
        if not self.modules or self.rng.random() < 0.05:
            mid, f = self.module_id(), self.rng.choice(self.fixtures)
        else:
            mid = self.rng.choice(list(self.modules))
            f = self.modules[mid]
        vaddr, memsz, mode = self.rng.choice(f.segments)
        if self.maps and self.rng.random() < 0.3:
            # Next to (or over) a mapping made before.
            start0, size0 = self.maps[-1][0], self.maps[-1][1]
            start = start0 + self.rng.choice([size0, size0, size0 + 0x1000, size0 // 2, 0])
        else:
            start = self.rng.choice([0x10000, 0x400000, 0x555555554000, 0x7F0000000000])
            start += self.rng.randrange(0, 64) * 0x1000
        size = memsz
        r = self.rng.random()
        if r < 0.05:
            size = 0
        elif r < 0.1:
            size = self.rng.choice([1, 0x1000, 2**64 - start + 0x10, 2**64 - start])
        rel = vaddr if self.rng.random() < 0.9 else self.rng.choice([0, vaddr + 0x10])
        fields = [
            self.address(start),
            self.integer(size),
            "load",
            self.integer(mid),
            mode if self.rng.random() < 0.7 else self.mode(),
            self.address(rel),
        ]
        if self.rng.random() < 0.04:
            fields[2] = self.rng.choice(["LOAD", "lode", ""])
        fields = self.bend_fields(fields)
        self.maps.append((start, size, mid, f, rel))
        return "{{{mmap:%s}}}" % ":".join(fields)

    def code_address(self):
        """An address in a mapping, mostly near one of its symbols."""
        if not self.maps or self.rng.random() < 0.05:
            return self.rng.choice([0, 1, 0x1000, 2**64 - 1, 0x400123])
        start, size, _mid, f, rel = self.rng.choice(self.maps)
        if size <= 0 or size > 2**40:
            return start
        near = [a for a, _ in f.symbols if rel <= a < rel + size]
        r = self.rng.random()
        if near and r < 0.8:
            at = self.rng.choice(near) + self.rng.choice([0, 0, 1, 2, 5, 16, 33, -1])
            return start + at - rel
        if r < 0.9:
            return start + self.rng.randrange(0, size)
        return start + self.rng.choice([0, size, size - 1, size + 1])

    def presentation(self):
        kind = self.rng.choice(["pc", "bt", "bt", "data", "symbol"])
        if kind == "symbol":
            names = [n for f in self.fixtures for _, n in f.symbols[:200]]
            name = self.rng.choice(
                names + ["_Z1fv", "_ZN3foo3barEv", "_RNvC3foo3bar", "main", "?f@@YAXXZ", ""]
            )
            fields = [name]
        elif kind == "data":
            fields = [self.address(self.code_address())]
        else:
            fields = [self.address(self.code_address())]
            if self.rng.random() < 0.5:
                fields.append(self.rng.choice(["ra", "pc", "ra", "pc", "RA", "", "Pc"]))
            if kind == "bt":
                n = self.rng.choice([0, 1, 2, 9, 10, 99, 100000])
                num = self.rng.choice([str(n), str(n), "00" + str(n), "0x10", "+1", "", "1e3"])
                fields.insert(0, num)
        fields = self.bend_fields(fields, fewer=False)
        return "{{{%s:%s}}}" % (kind, ":".join(fields))

    def bend_fields(self, fields, fewer=True):
        r = self.rng.random()
        if r < 0.04:
            return fields + ["extra"]
        if fewer and r < 0.07:
            return fields[:-1]
        return fields

    def odd_element(self):
        if self.rng.random() < 0.3:
            a = self.address(self.code_address())
            return self.rng.choice(
                [
                    "{{{hexdict:RIP: %s}}}" % a,
                    "{{{hexdict:a: %s b: %s}}}" % (a, a),
                    "{{{dumpfile:sancov:%s}}}" % a,
                    "{{{pc:%s}}}}" % a,
                    "{{{{pc:%s}}}" % a,
                    "{{{pc:%s:ra}}}{{{bt:0:%s}}}" % (a, a),
                ]
            )
        return self.rng.choice(
            [
                "{{{UP}}}",
                "{{{t2g}}}",
                "{{{bt_x:1}}}",
                "{{{ pc:0x1}}}",
                "{{{{symbol:_Z1fv}}}",
                "{{{}}}",
                "{{{:x}}}",
                "{{{foo:a:b}}}",
                "{{{dumpfile:sancov:1}}}",
                "{{{hexdict}}}",
                "{{{a{{{symbol:x}}}",
                "{{{symbol:a}}b}}}",
                "{{{symbol}}}",
                "{{{symbol:}}}",
                "{{{pc}}}",
                "{{{bt:1}}}",
                "{{{reset:x}}}",
                "{{{symbol:x",
                "}}}",
                "{{",
            ]
        )

    def text(self):
        words = ["frame", "  ", "#0", "in", "at", "::", "{", "}", "{{", ":", "\t", "x" * 20]
        r = self.rng.random()
        if r < 0.1:
            words += [b"\xff\xfe".decode("latin-1"), "\x00", "\r"]
        return "".join(self.rng.choice(words) for _ in range(self.rng.randint(0, 5)))

    def sgr(self):
        known = ["\x1b[0m", "\x1b[1m"] + ["\x1b[3%dm" % i for i in range(8)]
        other = ["\x1b[1;31m", "\x1b[01m", "\x1b[00m", "\x1b[2m", "\x1b[38;5;1m", "\x1b[m", "\x1b["]
        return self.rng.choice(known if self.rng.random() < 0.8 else other)

    def line(self):
        r = self.rng.random()
        if r < 0.12:
            body = self.text() + self.module() + self.maybe(self.text)
        elif r < 0.30:
            body = self.maybe(self.text) + self.mmap() + self.maybe(self.text)
        elif r < 0.34:
            body = self.maybe(self.text) + self.rng.choice(["{{{reset}}}", "{{{reset:1}}}"])
            body += self.maybe(self.text)
            self.modules.clear()
            self.maps.clear()
        elif r < 0.80:
            # A contextual element closing the line is made first, so that
            # the elements before it may fall in the mapping it declares
            # (LLVM declares it before it shows them).
            last = ""
            if self.rng.random() < 0.15:
                last = self.rng.choice([self.module, self.mmap, self.mmap])()
            parts = []
            for _ in range(self.rng.randint(1, 4)):
                c = self.rng.random()
                if c < 0.55:
                    parts.append(self.presentation())
                elif c < 0.7:
                    parts.append(self.sgr())
                elif c < 0.8:
                    parts.append(self.odd_element())
                else:
                    parts.append(self.text())
            if not last and self.rng.random() < 0.05:
                last = "{{{reset}}}"
                self.modules.clear()
                self.maps.clear()
            body = "".join(parts) + last
        elif r < 0.85:
            # Several contextual elements on one line: LLVM applies the first.
            makers = [self.module, self.mmap, self.mmap, lambda: "{{{reset}}}"]
            body = "".join(self.rng.choice(makers)() for _ in range(self.rng.randint(2, 3)))
        elif r < 0.88:
            body = self.rng.choice(["", "\r", "{{{", "}}}", "{{{}}}{{{", "\x1b[0m"])
        else:
            body = self.text() + self.maybe(self.sgr) + self.text()
        ending = "\r\n" if self.rng.random() < 0.1 else "\n"
        return body + ending

    def maybe(self, make):
        return make() if self.rng.random() < 0.3 else ""


def make_log(rng, fx):
    log = Log(rng, fx)
    lines = []
    for _ in range(rng.randint(1, 30)):
        if rng.random() < 0.03:
            # A hexdict over several lines: LLVM reads each line alone.
            a = log.address(log.code_address())
            lines += ["{{{hexdict:\n", "  RIP: %s RSP: 0x10\n" % a, "}}}\n"]
        else:
            lines.append(log.line())
    if rng.random() < 0.1:
        lines[-1] = lines[-1].rstrip("\n")
    return [l.encode("latin-1") if all(ord(c) < 256 for c in l) else l.encode() for l in lines]


def outputs(lines, args, color):
    data = b"".join(lines)
    tree = str(args.tree)
    llvm = subprocess.run(
        [LLVM_BIN / "llvm-symbolizer", "--filter-markup", "--debug-file-directory=" + tree,
         "--color=" + color],
        input=data, capture_output=True, timeout=60,
    )
    ours = subprocess.run(
        [args.symfilter, "--format=llvm", "--color=" + color, "--no-debuginfod",
         "--no-default-paths", "--build-id-dir", tree] + args.symfilter_arg,
        input=data, capture_output=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"},
    )
    if ours.returncode != 0:
        return llvm.stdout, b"<exit %d>\n" % ours.returncode + ours.stderr, ours.stderr
    if llvm.returncode != 0:
        # LLVM crashed (it does on some inputs, see the reference): no
        # comparison to make.
        return None, None, None
    return llvm.stdout, ours.stdout, ours.stderr


def differs(lines, args, color):
    want, got, _ = outputs(lines, args, color)
    return want is not None and want != got


def smallest(lines, args, color):
    """Lines dropped one at a time while the outputs still differ."""
    i = 0
    while i < len(lines):
        trial = lines[:i] + lines[i + 1 :]
        if trial and differs(trial, args, color):
            lines = trial
        else:
            i += 1
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=500)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--symfilter", default=str(ROOT / "target/release/symfilter"))
    p.add_argument("--tree", default=str(ROOT / "testdata/debug"))
    p.add_argument("--out", default="llvm-diff-random.out")
    p.add_argument("--symfilter-arg", action="append", default=[],
                   help="one more argument for symfilter (repeatable), e.g. --one-thread")
    args = p.parse_args()
    fx = fixtures(args.tree)
    rng = random.Random(args.seed)
    failed = 0
    for n in range(args.count):
        lines = make_log(rng, fx)
        for color in ["never", "always"]:
            if not differs(lines, args, color):
                continue
            failed += 1
            small = smallest(lines, args, color)
            want, got, err = outputs(small, args, color)
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            stem = out / ("case%04d-%s" % (n, color))
            stem.with_suffix(".log").write_bytes(b"".join(small))
            stem.with_suffix(".llvm").write_bytes(want)
            stem.with_suffix(".symfilter").write_bytes(got)
            stem.with_suffix(".err").write_bytes(err)
            print("DIFFERS: %s (%d lines)" % (stem.with_suffix(".log"), len(small)), flush=True)
            break
    print("%d of %d logs differ (seed %d)" % (failed, args.count, args.seed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
