#!/usr/bin/env bash
# The long fuzz runs: each target named, one after the other, against the sanitized build
# (tools/fuzz_build.sh), RUNS executions each (default 1,000,000), logs in LOGDIR.
#
#   tools/fuzz_long.sh LOGDIR TARGET[:SECONDS]...   e.g. tools/fuzz_long.sh /tmp/fl arrow_keys
#
# TARGET:SECONDS also stops that target after SECONDS (-max_total_time), for a shared machine.
# A session resumes from the target's scratch corpus (build/fuzz-work/TARGET), so the runs of
# a target add up; each session's log is LOGDIR/TARGET.N.log. A run ends with "Done N runs"
# and status 0 when nothing was found; a crash, a sanitizer report, a timeout (hang) or a leak
# ends it early with a non-zero status and an artifact in build/fuzz-work/TARGET/artifacts.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
logdir="$1"; shift
mkdir -p "$logdir"
for spec in "$@"; do
  t="${spec%%:*}"
  limit=()
  [ "$spec" != "$t" ] && limit=("-max_total_time=${spec#*:}")
  n=1
  while [ -e "$logdir/$t.$n.log" ]; do n=$((n + 1)); done
  start=$(date -u +%FT%TZ)
  FUZZ_WORK="${FUZZ_WORK_ROOT:-$here/build/fuzz-work}/$t" \
    "$here/tools/fuzz_run.sh" "$t" -runs="${RUNS:-1000000}" "${limit[@]}" \
    -print_final_stats=1 > "$logdir/$t.$n.log" 2>&1
  echo "$t session $n status=$? start=$start end=$(date -u +%FT%TZ)" >> "$logdir/summary.txt"
done
