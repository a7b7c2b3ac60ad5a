#!/usr/bin/env bash
# Enters each of the given files of bin/ (paths relative to this folder) in the suite's build-ID
# tree, ../debug/.build-id, as a relative link under its build ID; the make-*.sh scripts here
# call it for the binaries they build.
set -euo pipefail
cd "$(dirname "$0")"
for f in "$@"; do
  id=$(/usr/lib/llvm-22/bin/llvm-readelf -n "$f" | awk '/Build ID:/ {print $3}')
  [ -n "$id" ] || { echo "$f: no build ID" >&2; exit 1; }
  mkdir -p "../debug/.build-id/${id:0:2}"
  ln -sf "../../../sanitizers/$f" "../debug/.build-id/${id:0:2}/${id:2}.debug"
done
