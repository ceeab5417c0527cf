#!/usr/bin/env bash
# Every fuzz target for a bounded time (FUZZ_SMOKE_SECONDS each, default 20) against the
# normal in-place build, starting from its committed corpus (replayed first, so every
# regress-* input is re-checked) and its dictionary. New inputs go to a scratch directory;
# the committed corpora are not modified. Any finding fails the run. .ci/run calls this.
#
#   tools/fuzz_smoke.sh [TARGET...]        (default: every fuzz/fuzz_*.py)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
secs="${FUZZ_SMOKE_SECONDS:-20}"
# A fixed seed and a fixed number of runs: the smoke explores the same inputs on every machine,
# so a clean run here is a clean run in CI (the long runs, tools/fuzz_long.sh, explore anew).
# The time is only a cap for a slow machine.
runs="${FUZZ_SMOKE_RUNS:-50000}"
seed="${FUZZ_SMOKE_SEED:-1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$here"
export PYTHONHASHSEED=0  # the same str hashes on every run, as the fixed seed needs
if [ "$#" -eq 0 ]; then
  set -- $(ls fuzz/fuzz_*.py | sed 's|fuzz/fuzz_||; s|\.py$||')
fi
for t in "$@"; do
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=("-dict=fuzz/$t.dict")
  echo "-- fuzz $t (seed $seed, $runs runs, at most ${secs}s)"
  if ! python "fuzz/fuzz_$t.py" -seed="$seed" -runs="$runs" -max_total_time="$secs" \
      -timeout=25 -rss_limit_mb=3072 \
      -print_final_stats=1 -artifact_prefix="$work/$t/artifacts/" "${dict[@]}" \
      "$work/$t/corpus" "fuzz/corpus/$t" > "$work/$t/log" 2>&1; then
    tail -40 "$work/$t/log"
    echo "fuzz $t: FINDING (input: $(ls "$work/$t/artifacts"))" >&2
    ls "$work/$t/artifacts" | while read -r f; do base64 -w0 "$work/$t/artifacts/$f"; echo; done
    exit 1
  fi
  { grep -E "^stat::number_of_executed_units|no load-balancer" "$work/$t/log" || true; } | tr "\n" " "; echo
done
