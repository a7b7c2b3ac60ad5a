#!/bin/bash
# Byte-identity check for --format=json between two symfilter binaries (used
# when the JSON renderer was rewritten; run it again after changing it):
#
#   testdata/json-identity/compare.sh OLD_BIN NEW_BIN [EXTRA.log ...] [-- SYMFILTER_ARGS...]
#
# Runs both on every *.log under testdata (with and without --keep-context and
# --strip-path-prefix), on a generated hostile log (random markup fragments,
# escapes, control characters, invalid UTF-8; needs python3) through a file
# and through stdin, and on any extra logs given; compares stdout, stderr and
# exit status. Prints each difference and "runs=N fail=0|1".
set -u
OLD=$(realpath "$1"); NEW=$(realpath "$2"); shift 2
extra_logs=(); extra_args=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra_args=("$@"); break; fi
  extra_logs+=("$(realpath "$1")"); shift
done
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/hostile.log" <<'PY'
import random, sys
random.seed(7)
ctx = (b"{{{module:0:rg:elf:c48f793832c02b52c4ffab2a9dfa2b7c47714259}}}\n"
       b"{{{mmap:0x555556554000:0x1c1000:load:0:r:0x0}}}\n"
       b"{{{mmap:0x555556715000:0x2a4000:load:0:rx:0x1c1000}}}\n")
frags = [b"{{{", b"}}}", b"{{{pc:0x1234}}}", b"{{{pc:0x55555683ea6d}}}", b"{{{bt:1:0x55555683ea6d}}}",
 b"{{{bt:0:0x555556871131:ra}}}", b"{{{data:0x555556651e61}}}", b"{{{symbol:_ZN3foo3barEv}}}",
 b"{{{symbol:\xff\xfe}}}", b"\x1b[31m", b"\x1b[0m", b"\x1b[1m", b"\x1b", b"\r", b"\t", b"\x00", b"\x7f",
 b"\"", b"\\", b"\xc3\xa9", b"\xe2\x82", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80", b"\x08\x0c\x1f",
 b"{{{module:1:x\xffy:elf:abcd}}}", b"{{{mmap:0x1000:0x1000:load:1:rx:0x0}}}",
 b"{{{hexdict:\n  a: 0x555556871131\n  b: 0x12\n}}}", b"{{{reset}}}\n" + ctx, b"{{{foo:bar}}}", b"{{{FOO}}}",
 b"{{{dumpfile:sancov:x}}}", b"{{{pc:0xffffffffffffffff:ra}}}", b"{{{bt:99999999999:0x555556871131:pc}}}",
 b"{{{hexdict:\n}}}", b"\n", b"\n", b"\n", b"plain text ", b"\xff"]
out = bytearray(ctx)
for i in range(60000):
    out += random.choice(frags)
    if random.random() < 0.05:
        out += bytes(random.randrange(256) for _ in range(random.randrange(8)))
out += b"no newline at end \xff"
open(sys.argv[1], "wb").write(out)
PY
fail=0; n=0
run() { # log, extra option
  local log=$1 opt=$2 d; d=$(dirname "$log")
  local args=(--format=json --no-debuginfod --offline --build-id-dir testdata/debug
    --symbol-path testdata/dumpfile/bin --symbol-path testdata/xray/bin --symbol-path testdata/bin
    --breakpad-store testdata/breakpad/store --dumpfile-dir "$d" ${opt:+"$opt"} "${extra_args[@]}")
  "$OLD" "${args[@]}" "$log" >"$tmp/a.out" 2>"$tmp/a.err"; local ra=$?
  "$NEW" "${args[@]}" "$log" >"$tmp/b.out" 2>"$tmp/b.err"; local rb=$?
  n=$((n+1))
  if ! cmp -s "$tmp/a.out" "$tmp/b.out" || ! cmp -s "$tmp/a.err" "$tmp/b.err" || [ $ra != $rb ]; then
    echo "DIFF: $log $opt"; fail=1
  fi
}
for log in $(find testdata -name '*.log' | sort) "$tmp/hostile.log" "${extra_logs[@]}"; do
  for opt in "" --keep-context --strip-path-prefix=/src; do run "$log" "$opt"; done
done
"$OLD" --format=json --no-debuginfod <"$tmp/hostile.log" >"$tmp/a.out" 2>"$tmp/a.err"
"$NEW" --format=json --no-debuginfod <"$tmp/hostile.log" >"$tmp/b.out" 2>"$tmp/b.err"
n=$((n+1))
if ! cmp -s "$tmp/a.out" "$tmp/b.out" || ! cmp -s "$tmp/a.err" "$tmp/b.err"; then echo "DIFF: stdin"; fail=1; fi
echo "runs=$n fail=$fail"
