#!/usr/bin/env python3
"""Writes hostile DWARF 4 sections: a compile unit whose subprogram (at
LOW_PC, 0x20 bytes) holds 20,000 nested DW_TAG_inlined_subroutine DIEs, the
unit's address ranges declared one of three ways, none of them low/high pc:
  lines    DW_AT_stmt_list only (the ranges come from the line program at 0)
  aranges  no range attribute; a .debug_aranges set for the unit
  ranges   DW_AT_low_pc 0 and DW_AT_ranges into .debug_ranges
Usage: deep.py VARIANT LOW_PC OUTDIR (writes info, abbrev and aranges/ranges)"""
import os, struct, sys

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


variant, low_pc, out = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
size = 0x20
DW_AT_name, DW_AT_stmt_list, DW_AT_low_pc, DW_AT_high_pc, DW_AT_ranges = 0x03, 0x10, 0x11, 0x12, 0x55
DW_FORM_addr, DW_FORM_data8, DW_FORM_string, DW_FORM_sec_offset = 0x01, 0x07, 0x08, 0x17
if variant == "lines":
    cu_attrs = [(DW_AT_name, DW_FORM_string), (DW_AT_stmt_list, DW_FORM_sec_offset)]
    cu_vals = b"deep.c\0" + struct.pack("<I", 0)
elif variant == "aranges":
    cu_attrs = [(DW_AT_name, DW_FORM_string)]
    cu_vals = b"deep.c\0"
elif variant == "ranges":
    cu_attrs = [(DW_AT_name, DW_FORM_string), (DW_AT_low_pc, DW_FORM_addr),
                (DW_AT_ranges, DW_FORM_sec_offset)]
    cu_vals = b"deep.c\0" + struct.pack("<QI", 0, 0)
else:
    sys.exit("unknown variant " + variant)


def abbrev(code, tag, children, attrs):
    body = uleb(code) + uleb(tag) + bytes([children])
    for name, form in attrs:
        body += uleb(name) + uleb(form)
    return body + b"\0\0"


abbrevs = (abbrev(1, 0x11, 1, cu_attrs)
           + abbrev(2, 0x2E, 1, [(DW_AT_low_pc, DW_FORM_addr), (DW_AT_high_pc, DW_FORM_data8),
                                 (DW_AT_name, DW_FORM_string)])
           + abbrev(3, 0x1D, 1, []) + b"\0")
body = (uleb(1) + cu_vals
        + uleb(2) + struct.pack("<QQ", low_pc, size) + b"deep\0"
        + uleb(3) * DEPTH + b"\0" * (DEPTH + 2))
header = struct.pack("<HIB", 4, 0, 8)  # version 4, abbrev offset 0, 8-byte addresses
with open(os.path.join(out, "info"), "wb") as f:
    f.write(struct.pack("<I", len(header) + len(body)) + header + body)
with open(os.path.join(out, "abbrev"), "wb") as f:
    f.write(abbrevs)
if variant == "aranges":
    # version 2, unit at 0, 8-byte addresses, no segments, padded to 16.
    sets = struct.pack("<HIBB", 2, 0, 8, 0) + b"\0" * 4 + struct.pack("<QQQQ", low_pc, size, 0, 0)
    with open(os.path.join(out, "aranges"), "wb") as f:
        f.write(struct.pack("<I", len(sets)) + sets)
if variant == "ranges":
    with open(os.path.join(out, "ranges"), "wb") as f:
        f.write(struct.pack("<QQQQ", low_pc, low_pc + size, 0, 0))
