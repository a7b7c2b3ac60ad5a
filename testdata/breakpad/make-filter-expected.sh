#!/bin/sh
# Markup logs over the Breakpad fixtures and what `llvm-symbolizer
# --filter-markup` (reading the binaries' DWARF) prints for them: the
# expected side of tests/breakpad_filter.rs, where symfilter reads the same
# logs with only the Breakpad store. Run after build.sh. Needs python3.
#
# Each log maps one module and has a backtrace frame for every third .text
# instruction that lies inside a FUNC record, alternating pc and ra types
# (an ra frame carries the next byte's address, as a return address would).
set -eu
cd "$(dirname "$0")"
LLVM=${LLVM:-/usr/lib/llvm-22/bin}
rm -rf filter
mkdir -p filter/build-id
for b in inline-O2 inline-O0 plain-O2 plain-nopie-O1; do
  sym=$(ls store/$b/*/$b.sym)
  python3 - "$b" "$sym" "expected/$b.addrs" >"filter/$b.log" <<'PY'
import sys
name, sym, addrs = sys.argv[1:]
funcs, build_id = [], None
for line in open(sym):
    f = line.split()
    if f[:2] == ["INFO", "CODE_ID"]:
        build_id = f[2].lower()
    elif f and f[0] == "FUNC":
        a = 2 if f[1] == "m" else 1
        lo = int(f[a], 16)
        funcs.append((lo, lo + int(f[a + 1], 16)))
# Non-PIE: segments at their link-time addresses, module-relative = vaddr,
# and .sym addresses are relative to the first PT_LOAD (0x400000).
nopie = "nopie" in name
image = 0x400000 if nopie else 0
load = 0 if nopie else 0x7F5500000000
print("{{{module:0:%s:elf:%s}}}" % (name, build_id))
print("{{{mmap:%#x:0x10000:load:0:rx:%#x}}}" % (load + image, image))
k = frame = 0
for line in open(addrs):
    vaddr = int(line, 16)
    if not any(lo <= vaddr - image < hi for lo, hi in funcs):
        continue
    k += 1
    if k % 3:
        continue
    if frame % 2:
        print("{{{bt:%d:%#x:ra}}}" % (frame, load + vaddr + 1))
    else:
        print("{{{bt:%d:%#x:pc}}}" % (frame, load + vaddr))
    frame += 1
with open("filter/build-id/" + build_id, "w") as out:
    out.write(name)
PY
  id=$(ls filter/build-id | grep -v -e '^\.' | head -1)
  mkdir -p "filter/build-id/.build-id/$(echo "$id" | cut -c1-2)"
  cp "bin/$b" "filter/build-id/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
  rm "filter/build-id/$id"
  "$LLVM/llvm-symbolizer" --filter-markup --debug-file-directory=filter/build-id \
    <"filter/$b.log" >"filter/$b.llvm.txt"
done
rm -rf filter/build-id
