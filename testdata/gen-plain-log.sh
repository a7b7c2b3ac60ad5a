#!/usr/bin/env bash
# Write a plain-text log (no markup) of about SIZE_MB megabytes (default 100)
# to OUT, for whole-process speed runs, e.g.:
#   testdata/gen-plain-log.sh /tmp/plain-100m.log 100
#   hyperfine 'cat /tmp/plain-100m.log' 'target/release/symfilter /tmp/plain-100m.log'
# (stdout goes to /dev/null under hyperfine). Not committed: generate it.
set -euo pipefail
out="${1:?usage: gen-plain-log.sh OUT [SIZE_MB]}"
size_mb="${2:-100}"
python3 - "$out" "$size_mb" <<'PY'
import random, sys
out, size = sys.argv[1], int(sys.argv[2]) << 20
rng = random.Random(1)
words = ["server", "request", "GET", "/api/v1/items", "took", "ms", "cache", "miss",
         "worker", "accepted", "connection", "from", "{\"user\":", "42}", "[ok]", "retry"]
levels = ["INFO ", "DEBUG", "WARN ", "ERROR"]
with open(out, "wb") as f:
    written = 0
    i = 0
    while written < size:
        n = rng.randint(2, 18)
        line = "2024-05-01T12:%02d:%02d.%03dZ %s %s\n" % (
            (i // 3600) % 60, (i // 60) % 60, i % 1000, levels[i % 4],
            " ".join(rng.choice(words) for _ in range(n)))
        b = line.encode()
        f.write(b)
        written += len(b)
        i += 1
PY
