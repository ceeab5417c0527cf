#!/usr/bin/env bash
# The long fuzz runs: each target named, one after the other, against the sanitized build
# (tools/fuzz_build.sh), RUNS executions each (default 1,000,000), logs in LOGDIR.
#
#   tools/fuzz_long.sh LOGDIR TARGET...     e.g. tools/fuzz_long.sh /tmp/fuzzlogs arrow_keys
#
# A run ends with "Done N runs" and status 0 when nothing was found; a crash, sanitizer
# report, timeout (hang) or leak ends it early with a non-zero status and an artifact.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
logdir="$1"; shift
mkdir -p "$logdir"
for t in "$@"; do
  start=$(date -u +%FT%TZ)
  FUZZ_WORK="${FUZZ_WORK_ROOT:-$here/build/fuzz-work}/$t" \
    "$here/tools/fuzz_run.sh" "$t" -runs="${RUNS:-1000000}" -print_final_stats=1 \
    > "$logdir/$t.log" 2>&1
  echo "$t status=$? start=$start end=$(date -u +%FT%TZ)" >> "$logdir/summary.txt"
done
