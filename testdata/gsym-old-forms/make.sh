#!/bin/sh
# Rewrites the Breakpad fixtures of testdata/gsym (inl_O2.sym, app_cpp_O2.sym,
# made by dump_syms in testdata/gsym/build.sh) in the record forms older
# dump_syms versions wrote, for the `gsym create` test in tests/gsym.rs
# (old-form input gives the GSYM of the current form):
#
#   INLINE_ORIGIN <id> <file_id> <name>            (now: <id> <name>)
#   INLINE <depth> <call_line> <origin> <ranges>   (now: ... <call_file> <origin> ...)
#
# The rewriting is that of testdata/breakpad/make-old-forms.sh: an origin's
# file (the inlined function's own file) is recovered from the current form:
# the call-site file of the records nested in it, else the file of the line
# record at the start of its first range, else -1. Needs python3.
set -eu
cd "$(dirname "$0")"
for name in inl_O2 app_cpp_O2; do
python3 - "../gsym/$name.sym" >"$name.sym" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
origin_file = {}
# Calls made from an origin's body: children's call-site files.
stack = []
for l in lines:
    f = l.split(" ")
    if f[0] == "FUNC":
        stack = []
    elif f[0] == "INLINE":
        depth, call_file, origin = int(f[1]), f[3], int(f[4])
        del stack[depth:]
        if stack:
            origin_file.setdefault(stack[-1], call_file)
        stack.append(origin)
# Leaves: the line record at the start of their first range.
line_file = {}
inlines = []
for l in lines:
    f = l.split(" ")
    if f[0] == "INLINE":
        inlines.append((int(f[4]), int(f[5], 16)))
    elif f[0] and all(c in "0123456789abcdef" for c in f[0]) and len(f) == 4:
        line_file[int(f[0], 16)] = f[3]
for origin, start in inlines:
    if start in line_file:
        origin_file.setdefault(origin, line_file[start])
for l in lines:
    f = l.split(" ")
    if f[0] == "INLINE_ORIGIN":
        origin = int(f[1])
        print("INLINE_ORIGIN %d %s %s" % (origin, origin_file.get(origin, "-1"), " ".join(f[2:])))
    elif f[0] == "INLINE":
        print(" ".join(f[:3] + f[4:]))
    else:
        print(l)
PY
done
