#!/usr/bin/env python3
"""Rewrite a current-form Breakpad .sym file (argument) in the record forms
older dump_syms versions wrote, to stdout:

  INLINE_ORIGIN <id> <file_id> <name>            (now: <id> <name>)
  INLINE <depth> <call_line> <origin> <ranges>   (now: ... <call_file> <origin> ...)

In the old form an origin's file is the inlined function's own file. It is
recovered from the current form: the call-site file of the records nested in
it (calls made from its body), else the file of the line record at the start
of its first range, else -1. Used by make-old-forms.sh and
../gsym-old-forms/make.sh.
"""
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
