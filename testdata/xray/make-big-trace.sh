#!/bin/sh
# Make a ~100 MB single-threaded FDR trace for benchmarks (not committed):
#   testdata/xray/make-big-trace.sh [OUT] [ITERATIONS]
# Default OUT is target/xray-big.xray. One thread in one 100 MiB buffer,
# so `llvm-xray account` can process it too: it rejects multi-threaded
# traces, and reorders the buffers of one thread (its sort by wall clock
# uses an invalid comparator) so that a trace of many 1 MiB buffers fails
# with "Error processing record" (and -k writes gigabytes of stack dumps).
# Needs testdata/xray/bin/xray_demo (make-traces.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../target/xray-big.xray}
iters=${2:-110000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
XRAY_OPTIONS="patch_premain=false xray_mode=xray-fdr xray_logfile_base=$tmp/big." \
    "$here/bin/xray_demo" 1 "$iters" \
    buffer_size=104857600:buffer_max=1:func_duration_threshold_us=0 2>/dev/null
mv "$tmp"/big.xray_demo.* "$out"
ls -l "$out"
