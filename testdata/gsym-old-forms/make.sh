#!/bin/sh
# Rewrites the Breakpad fixtures of testdata/gsym (inl_O2.sym, app_cpp_O2.sym,
# made by dump_syms in testdata/gsym/build.sh) in the record forms older
# dump_syms versions wrote, for the `gsym create` test in tests/gsym.rs
# (old-form input gives the GSYM of the current form):
#
#   INLINE_ORIGIN <id> <file_id> <name>            (now: <id> <name>)
#   INLINE <depth> <call_line> <origin> <ranges>   (now: ... <call_file> <origin> ...)
#
# The rewriting is testdata/breakpad/to-old-forms.py: an origin's
# file (the inlined function's own file) is recovered from the current form:
# the call-site file of the records nested in it, else the file of the line
# record at the start of its first range, else -1. Needs python3.
set -eu
cd "$(dirname "$0")"
for name in inl_O2 app_cpp_O2; do
  python3 ../breakpad/to-old-forms.py "../gsym/$name.sym" >"$name.sym"
done
