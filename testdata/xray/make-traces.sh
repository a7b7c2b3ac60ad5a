#!/bin/sh
# Regenerate the real XRay FDR fixtures and llvm-xray's reference outputs.
#
#   testdata/xray/bin/xray_demo        clang++-22 -fxray-instrument build of xray_demo.cc
#   testdata/xray/traces/{st,mt,mb}.xray
#       st: one thread; mt: four threads; mb: two threads with 1 KiB buffers
#       (many buffers per thread, interleaved in the file)
#   testdata/xray/expected/NAME.{account.csv,stack.flame} and {st,mt}.convert.yaml
#   testdata/xray/expected/xray_demo.extract.yaml (instrumentation map)
#       produced by llvm-xray 22 (/usr/lib/llvm-22/bin/llvm-xray).
#
# `llvm-xray account` rejects multi-threaded FDR traces ("Error processing
# record": it compares every record with the first record's TSC while walking
# the threads one after another), so its reference accounting is made from
# llvm-xray's own TSC-sorted YAML conversion of the trace (header version
# set to 1, the only version its YAML reader takes), which it accounts
# correctly; `llvm-xray stack` likewise (it fails on mb.xray directly). For
# the one-thread trace both ways agree (checked below).
#
# clang-22's FDR runtime writes version 5. Typed events are not exercised:
# the runtime crashes in FDRLogWriter::writeTypedEvent (hand-built traces
# from make-handbuilt.py cover TypedEventMarker).
set -eu
cd "$(dirname "$0")"
X=/usr/lib/llvm-22/bin/llvm-xray
CXX=${CXX:-clang++-22}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$CXX -O2 -g -fxray-instrument -fxray-instruction-threshold=1 \
    -fxray-always-emit-customevents -o bin/xray_demo xray_demo.cc -lpthread

run() { # name threads iters config
    XRAY_OPTIONS="patch_premain=false xray_mode=xray-fdr xray_logfile_base=$tmp/$1." \
        ./bin/xray_demo "$2" "$3" "$4" 2>/dev/null
    mv "$tmp/$1".xray_demo.* "traces/$1.xray"
    chmod 644 "traces/$1.xray"
}
cfg=buffer_size=16384:buffer_max=64:func_duration_threshold_us=0
run st 1 3 "$cfg"
run mt 4 3 "$cfg"
run mb 2 15 buffer_size=1024:buffer_max=400:func_duration_threshold_us=0

for t in st mt mb; do
    $X convert -instr_map=bin/xray_demo -symbolize -output-format=yaml \
        "traces/$t.xray" > "$tmp/$t.yaml"
    # Keep the (large) YAML of the small traces only.
    [ "$t" = mb ] || cp "$tmp/$t.yaml" "expected/$t.convert.yaml"
    sed 's/^  version:         5$/  version:         1/' "$tmp/$t.yaml" > "$tmp/$t.v1.yaml"
    $X account -instr_map=bin/xray_demo -format=csv "$tmp/$t.v1.yaml" > "expected/$t.account.csv"
    $X stack -instr_map=bin/xray_demo -all-stacks -stack-format=flame \
        "$tmp/$t.v1.yaml" > "expected/$t.stack.flame"
done
$X extract -symbolize bin/xray_demo > expected/xray_demo.extract.yaml
$X account -instr_map=bin/xray_demo -format=csv traces/st.xray > "$tmp/st.direct.csv"
cmp "$tmp/st.direct.csv" expected/st.account.csv
$X stack -instr_map=bin/xray_demo -all-stacks -stack-format=flame traces/st.xray > "$tmp/st.direct.flame"
cmp "$tmp/st.direct.flame" expected/st.stack.flame
./make-v0-map.sh
