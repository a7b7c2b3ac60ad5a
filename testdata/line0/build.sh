#!/usr/bin/env bash
# Fixtures for src/elf/line0.rs (columns of line-table rows with line 0): ../src/lib.c built as a
# shared library with split DWARF (a skeleton unit in lib_split.so, the full unit in
# lib_split.dwo next to it), and llvm-symbolizer 22's answers for every byte of .text of it and
# of the shared ../bin/libfixture.so, where they come from lib.c (plain DWARF, a line-0 row inside an inlined call):
# NAME.expected, `ADDR FUNCTION FILE:LINE:COLUMN` per frame, innermost first.
set -euo pipefail
cd "$(dirname "$0")"
SRC=$(realpath ../src)
LLVM=/usr/lib/llvm-22/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && clang-22 -O2 -g -gsplit-dwarf -fdebug-compilation-dir=. -ffile-prefix-map="$SRC"=/src \
  -fPIC -c -o lib_split.o "$SRC/lib.c")
clang-22 -shared -Wl,--build-id=sha1 -Wl,-soname,lib_split.so -o lib_split.so "$tmp/lib_split.o"
cp "$tmp/lib_split.dwo" lib_split.dwo
for obj in lib_split.so ../bin/libfixture.so; do
  # Run from here so the split unit's comp dir "." finds the .dwo.
  python3 - "$obj" "$LLVM" >"$(basename "$obj").expected" <<'PY'
import json, subprocess, sys
obj, llvm = sys.argv[1], sys.argv[2]
out = subprocess.run([f"{llvm}/llvm-readelf", "-SW", obj], check=True, capture_output=True, text=True).stdout
for line in out.splitlines():
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".text":
        start, size = int(f[3], 16), int(f[5], 16)
addrs = range(start, start + size)
res = subprocess.run([f"{llvm}/llvm-symbolizer", "--output-style=JSON", f"--obj={obj}"],
                     input="".join(f"0x{a:x}\n" for a in addrs), check=True, capture_output=True, text=True)
for rec in res.stdout.splitlines():
    rec = json.loads(rec)
    if not rec["Symbol"][0]["FileName"].startswith("/src/"):
        continue  # crt code: symbol table only, not what this is about
    for f in rec["Symbol"]:
        print("%s %s %s:%d:%d" % (rec["Address"], f["FunctionName"], f["FileName"], f["Line"], f["Column"]))
PY
done
grep -c ':0:[1-9]' ./*.expected
