#!/bin/sh
# llvm-xray's reading of a version 0 instrumentation map (absolute sled
# addresses, the layout before LLVM 7, which clang-22 no longer writes):
# bin/xray_demo with its sleds rewritten as version 0 (addresses made
# absolute; tests/xray_real.rs makes the same copy), and
# expected/xray_demo.v0.extract.yaml from llvm-xray 22.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
O=/usr/lib/llvm-22/bin
$O/llvm-objcopy --dump-section xray_instr_map="$tmp/map" bin/xray_demo "$tmp/junk"
base=$($O/llvm-readelf -S bin/xray_demo | awk '$2 == "xray_instr_map" {print $4} $3 == "xray_instr_map" {print $5}')
python3 - "$tmp/map" "$base" <<'PY'
import struct, sys
p, base = sys.argv[1], int(sys.argv[2], 16)
b = bytearray(open(p, "rb").read())
M = (1 << 64) - 1
for i in range(0, len(b), 32):  # address, function, kind, always, version, padding
    a, f = struct.unpack_from("<QQ", b, i)
    struct.pack_into("<QQ", b, i, (base + i + a) & M, (base + i + 8 + f) & M)
    b[i + 18] = 0
open(p, "wb").write(b)
PY
$O/llvm-objcopy --update-section xray_instr_map="$tmp/map" bin/xray_demo "$tmp/v0"
$O/llvm-xray extract -symbolize "$tmp/v0" > expected/xray_demo.v0.extract.yaml
