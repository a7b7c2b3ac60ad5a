#!/usr/bin/env bash
# Regenerate the golden outputs of testdata/logs/*.log.
#
#   NAME.llvm        llvm-symbolizer 22 --filter-markup, colour off   (reference tool)
#   NAME.llvm-color  llvm-symbolizer 22 --filter-markup --color=always (reference tool)
#   NAME.human       symfilter --format=human   (our own output: review the diff!)
#   NAME.json        symfilter --format=json    (our own output: review the diff!)
#   NAME.stderr      symfilter --format=human diagnostics
#
# No symbol files are involved: every build ID is unknown, so presentation
# elements stay unresolved. Usage: testdata/logs/regen.sh [path/to/symfilter]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
LLVM_SYMBOLIZER="${LLVM_SYMBOLIZER:-/usr/lib/llvm-22/bin/llvm-symbolizer}"
SYMFILTER="${1:-$here/../../target/debug/symfilter}"
empty="$(mktemp -d)"
trap 'rmdir "$empty"' EXIT
llvm() { "$LLVM_SYMBOLIZER" --filter-markup --debug-file-directory="$empty" --no-debuginfod "$@"; }
ours() { "$SYMFILTER" --build-id-dir "$empty" --no-debuginfod --offline "$@"; }
for log in *.log; do
  name="${log%.log}"
  llvm < "$log" > "$name.llvm" 2>/dev/null
  llvm --color=always < "$log" > "$name.llvm-color" 2>/dev/null
  ours --format=human --color=never "$log" > "$name.human" 2> "$name.stderr"
  ours --format=json "$log" > "$name.json" 2>/dev/null
done
