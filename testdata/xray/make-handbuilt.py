#!/usr/bin/env python3
"""Hand-built XRay FDR traces covering every record kind, in both byte orders.

Writes testdata/xray/hand/:
  v1-le.xray, v1-be.xray     version 1 exactly as the format document
                             (xray-fdr-format) describes it: fixed-size
                             buffers, NewBuffer with a 2-byte thread id,
                             EndOfBuffer followed by padding up to the header's
                             buffer size.
  v1-garbage-le.xray         v1-le with the padding after EndOfBuffer filled
                             with bytes that decode as NewBuffer records (a
                             reader that does not skip would see thread 99).
  v1-concat-le.xray          two v1 logs (header + buffer) back to back.
  v1-unpadded-le.xray,       v1 whose buffers end at their EndOfBuffer record
  v1-unpadded-be.xray        (no padding to the header's buffer size), as
                             llvm-xray reads them.
  v1-mixed-le.xray           an unpadded buffer followed by a padded one.
  v5-le.xray, v5-be.xray     version 5 (what clang-22's runtime writes):
                             BufferExtents, Pid, delta-encoded custom events,
                             TypedEventMarker.
And, with llvm-xray 22 (little-endian only; llvm-xray does not read the
big-endian bit-field layout), expected/hand-{v1,v5}.{convert.yaml,account.csv}.

Timeline (cycle frequency 1 MHz, so one tick is one microsecond):
  thread 7 (process 0 in v1, 4242 in v5), cpu 1:
    1000 enter f1
    1010 enter-args f2 (args 42, 0xdeadbeef)
    1015 custom event "hello!!!" (8 bytes: llvm-xray reads the v1 padding
                                          as records, so it must stay 8-aligned)
    1020 enter f3
         NewCPUId cpu 2, tsc 2000 (migration)
    2030 exit f3                          f3: 1010 ticks
         TSCWrap to 0x100000064
    0x100000068 tail-exit f2              f2: 0x100000068 - 1010 ticks
    0x10000006e enter f4
    0x100000082 exit f4                   f4: 20 ticks
    0x100000083 exit f9 (never entered: unmatched exit)
    0x100000086 exit f1                   f1: 0x100000086 - 1000 ticks
  thread 8, cpu 0:
    1000 enter f1 (never exits: unmatched entry)
    1100 enter f5
    1110 typed event 7 "\\x01\\x02\\x03" (v5 only)
    1150 exit f5                          f5: 50 ticks
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "hand")
EXP = os.path.join(HERE, "expected")
XRAY = "/usr/lib/llvm-22/bin/llvm-xray"
V1_BUFFER = 512

ENTRY, EXIT, TAIL_EXIT, ENTRY_ARGS = 0, 1, 2, 3
NEW_BUFFER, END_OF_BUFFER, NEW_CPU, TSC_WRAP, WALLTIME = 0, 1, 2, 3, 4
CUSTOM, CALL_ARG, EXTENTS, TYPED, PID = 5, 6, 7, 8, 9


class W:
    def __init__(self, big):
        self.e = ">" if big else "<"
        self.big = big

    def meta(self, kind, body):
        first = (0x80 | kind) if self.big else (kind << 1) | 1
        body = body.ljust(15, b"\0")
        assert len(body) == 15
        return bytes([first]) + body

    def fn(self, action, fid, delta):
        if self.big:
            word = (action << 28) | fid
        else:
            word = (fid << 4) | (action << 1)
        return struct.pack(self.e + "II", word, delta)

    def p(self, fmt, *v):
        return struct.pack(self.e + fmt, *v)

    def header(self, version, buffer_size):
        return self.p("HHIQQQ", version, 1, 3, 1_000_000, buffer_size, 0)


def thread7(w, version):
    r = []
    r.append(w.meta(NEW_CPU, w.p("HQ", 1, 1000)))
    r.append(w.fn(ENTRY, 1, 0))
    r.append(w.fn(ENTRY_ARGS, 2, 10))
    r.append(w.meta(CALL_ARG, w.p("Q", 42)))
    r.append(w.meta(CALL_ARG, w.p("Q", 0xDEADBEEF)))
    if version >= 5:
        r.append(w.meta(CUSTOM, w.p("ii", 8, 5)) + b"hello!!!")
    else:
        r.append(w.meta(CUSTOM, w.p("iQ", 8, 1015)) + b"hello!!!")
    # v5 custom events advance the TSC; v1 ones carry an absolute TSC.
    r.append(w.fn(ENTRY, 3, 5 if version >= 5 else 10))
    r.append(w.meta(NEW_CPU, w.p("HQ", 2, 2000)))
    r.append(w.fn(EXIT, 3, 30))
    r.append(w.meta(TSC_WRAP, w.p("Q", 0x100000064)))
    r.append(w.fn(TAIL_EXIT, 2, 4))
    r.append(w.fn(ENTRY, 4, 6))
    r.append(w.fn(EXIT, 4, 20))
    r.append(w.fn(EXIT, 9, 1))
    r.append(w.fn(EXIT, 1, 3))
    return b"".join(r)


def thread8(w, version):
    r = []
    r.append(w.meta(NEW_CPU, w.p("HQ", 0, 1000)))
    r.append(w.fn(ENTRY, 1, 0))
    r.append(w.fn(ENTRY, 5, 100))
    if version >= 5:
        r.append(w.meta(TYPED, w.p("iiH", 3, 10, 7)) + b"\x01\x02\x03")
        r.append(w.fn(EXIT, 5, 40))
    else:
        r.append(w.fn(EXIT, 5, 50))
    return b"".join(r)


def v1_buffer(w, tid, body, pad):
    data = w.meta(NEW_BUFFER, w.p("H", tid))
    data += w.meta(WALLTIME, w.p("QI", 1_700_000_000, 5 + tid))
    data += body
    data += w.meta(END_OF_BUFFER, b"")
    assert len(data) <= V1_BUFFER
    return data + pad(V1_BUFFER - len(data))


def v1(w, pad=lambda n: b"\0" * n):
    return (
        w.header(1, V1_BUFFER)
        + v1_buffer(w, 7, thread7(w, 1), pad)
        + v1_buffer(w, 8, thread8(w, 1), pad)
    )


def fake_new_buffers(w):
    def pad(n):
        rec = w.meta(NEW_BUFFER, w.p("H", 99))
        return (rec * (n // 16 + 1))[:n]

    return pad


def v5_buffer(w, tid, body):
    data = w.meta(NEW_BUFFER, w.p("i", tid))
    data += w.meta(WALLTIME, w.p("QI", 1_700_000_000, 5 + tid))
    data += w.meta(PID, w.p("i", 4242))
    data += body
    return w.meta(EXTENTS, w.p("Q", len(data))) + data


def v5(w):
    return (
        w.header(5, 0)
        + v5_buffer(w, 7, thread7(w, 5))
        + v5_buffer(w, 8, thread8(w, 5))
    )


def main():
    os.makedirs(OUT, exist_ok=True)
    le, be = W(False), W(True)
    files = {
        "v1-le.xray": v1(le),
        "v1-be.xray": v1(be),
        "v1-garbage-le.xray": v1(le, fake_new_buffers(le)),
        "v1-concat-le.xray": le.header(1, V1_BUFFER)
        + v1_buffer(le, 7, thread7(le, 1), lambda n: b"\0" * n)
        + le.header(1, V1_BUFFER)
        + v1_buffer(le, 8, thread8(le, 1), lambda n: b"\0" * n),
        "v1-unpadded-le.xray": v1(le, lambda n: b""),
        "v1-unpadded-be.xray": v1(be, lambda n: b""),
        "v1-mixed-le.xray": le.header(1, V1_BUFFER)
        + v1_buffer(le, 7, thread7(le, 1), lambda n: b"")
        + v1_buffer(le, 8, thread8(le, 1), lambda n: b"\0" * n),
        "v5-le.xray": v5(le),
        "v5-be.xray": v5(be),
    }
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    if not os.path.exists(XRAY):
        print("llvm-xray not found; expected outputs not regenerated", file=sys.stderr)
        return
    tmp = tempfile.mkdtemp()
    try:
        for v in ("v1", "v5"):
            trace = os.path.join(OUT, v + "-le.xray")
            yaml = subprocess.run(
                [XRAY, "convert", "-output-format=yaml", trace],
                check=True, capture_output=True, text=True).stdout
            with open(os.path.join(EXP, "hand-%s.convert.yaml" % v), "w") as f:
                f.write(yaml)
            if v == "v1":
                for other in ("v1-unpadded-le.xray", "v1-mixed-le.xray"):
                    again = subprocess.run(
                        [XRAY, "convert", "-output-format=yaml", os.path.join(OUT, other)],
                        check=True, capture_output=True, text=True).stdout
                    assert again == yaml, "llvm-xray reads %s differently" % other
            # account -k: llvm-xray stops at the unmatched exit otherwise.
            csv = subprocess.run(
                [XRAY, "account", "-k", "-format=csv", trace],
                check=True, capture_output=True, text=True).stdout
            with open(os.path.join(EXP, "hand-%s.account.csv" % v), "w") as f:
                f.write(csv)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
