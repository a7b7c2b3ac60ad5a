#!/bin/sh
# Rewrites dump_syms' inline-O2.sym (store/, made by build.sh) in the
# record forms older dump_syms versions wrote, for tests/breakpad_old_forms.rs:
#
#   INLINE_ORIGIN <id> <file_id> <name>            (now: <id> <name>)
#   INLINE <depth> <call_line> <origin> <ranges>   (now: ... <call_file> <origin> ...)
#
# In the old form an origin's file is the inlined function's own file. It is
# recovered here from the current form: the call-site file of the records
# nested in it (calls made from its body), else the file of the line record
# at the start of its first range, else -1 (to-old-forms.py). Needs python3.
set -eu
cd "$(dirname "$0")"
sym=$(ls store/inline-O2/*/inline-O2.sym)
python3 to-old-forms.py "$sym" >old-forms/inline-O2.sym
