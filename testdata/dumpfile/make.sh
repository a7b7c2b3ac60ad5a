#!/bin/sh
# Regenerate the dumpfile fixtures (tests/dumpfile.rs).
#
#   bin/cov               clang-22 -fsanitize-coverage=trace-pc-guard
#                         -fsanitize=address -shared-libasan build of cov.c
#   cov.1234.sancov       the .sancov file the ASan runtime wrote for one run
#                         (ASAN_OPTIONS=coverage=1:coverage_dir=...); 64-bit
#                         magic, module-relative PCs (pc - load bias), renamed
#                         from cov.PID.sancov to a fixed PID
#   abs32.sancov          the same PCs as absolute addresses of a load at
#                         0x10000000, 32-bit magic (Fuchsia-style absolute PCs)
#   truncated.sancov      cov.1234.sancov cut in the middle of a PC
#   garbage.sancov        8 bytes that are not a sancov magic
#   truncated.xray        the first 100 bytes of ../xray/traces/st.xray
#   st.xray               a copy of ../xray/traces/st.xray (dumpfile names
#                         resolve inside the log's directory only)
#   sancov.llvm.out       llvm-symbolizer 22 --filter-markup output for
#                         sancov.log (--format=llvm must match it)
#
# The compiler-rt 22 runtime prints no {{{dumpfile}}} element on Linux (even
# with enable_symbolizer_markup=1): it only reports
# "SanitizerCoverage: DIR/cov.PID.sancov: N PCs written". The logs
# (*.log) are therefore written by hand around these real files, with the
# module/mmap context of the binary's real LOAD segments (llvm-readelf -l).
# The script prints the build ID and LOAD segments at the end: if a rebuild
# changes them (another compiler, another checkout path in the debug info),
# update the {{{module}}}/{{{mmap}}} lines of *.log and the expected outputs
# in tests/dumpfile.rs.
set -eu
cd "$(dirname "$0")"
CC=${CC:-clang-22}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p bin
$CC -O1 -g -fsanitize-coverage=trace-pc-guard -fsanitize=address -shared-libasan \
    -Wl,--build-id -o bin/cov cov.c
rtdir=$($CC -print-runtime-dir)
ASAN_OPTIONS=coverage=1:coverage_dir=$tmp:enable_symbolizer_markup=1 \
    LD_LIBRARY_PATH=$rtdir ./bin/cov > /dev/null
cp "$tmp"/cov.*.sancov cov.1234.sancov
chmod 644 cov.1234.sancov
python3 - <<'PY'
import struct
data = open("cov.1234.sancov", "rb").read()
pcs = struct.unpack("<%dQ" % ((len(data) - 8) // 8), data[8:])
with open("abs32.sancov", "wb") as f:
    f.write(struct.pack("<Q", 0xC0BFFFFFFFFFFF32))
    for pc in pcs:
        f.write(struct.pack("<I", 0x10000000 + pc))
open("truncated.sancov", "wb").write(data[:8 + 8 + 3])
open("garbage.sancov", "wb").write(b"NOTSANCV")
open("truncated.xray", "wb").write(open("../xray/traces/st.xray", "rb").read()[:100])
PY
cp ../xray/traces/st.xray st.xray
/usr/lib/llvm-22/bin/llvm-symbolizer --filter-markup < sancov.log > sancov.llvm.out 2>/dev/null
/usr/lib/llvm-22/bin/llvm-readelf -n bin/cov | sed -n 's/.*Build ID: //p'
/usr/lib/llvm-22/bin/llvm-readelf -l bin/cov | grep LOAD
