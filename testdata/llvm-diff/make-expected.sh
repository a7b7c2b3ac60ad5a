#!/usr/bin/env bash
# Runs LLVM 22's filter over every log here: NAME.log -> NAME.llvm.out (stdout, the reference for
# `symfilter --format=llvm`), NAME.llvm-color.out (the same with `--color=always`) and
# NAME.llvm.err (stderr: the lines and columns of its located diagnostics are compared).
set -euo pipefail
cd "$(dirname "$0")"
python3 make-logs.py
SYM=${LLVM_SYMBOLIZER:-/usr/lib/llvm-22/bin/llvm-symbolizer}
"$SYM" --version | grep -q 'version 22' || { echo "need LLVM 22's llvm-symbolizer" >&2; exit 1; }
# The sanitizer reports of ../sanitizers are part of the suite too (outputs written next to them).
for log in *.log ../sanitizers/*.log; do
  "$SYM" --filter-markup --debug-file-directory=../debug <"$log" >"${log%.log}.llvm.out" 2>"${log%.log}.llvm.err"
  "$SYM" --filter-markup --color=always --debug-file-directory=../debug <"$log" \
    >"${log%.log}.llvm-color.out" 2>/dev/null
done
ls -la
