#!/usr/bin/env bash
# Run one fuzz target against the sanitized fuzz build (tools/fuzz_build.sh): libFuzzer's
# coverage of the compiled core, AddressSanitizer + UndefinedBehaviorSanitizer on it (any
# report aborts the run and leaves a crash-* input), Python coverage of the package.
#
#   tools/fuzz_run.sh TARGET [libFuzzer flags...]
#   e.g. tools/fuzz_run.sh from_bytes -runs=1000000
#
# The seed corpus fuzz/corpus/TARGET is read and not written: new inputs go to a scratch
# corpus (FUZZ_WORK, default build/fuzz-work/TARGET), the findings to its artifacts/.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
target="$1"; shift
build="${CONSISTENT_HASH_FUZZ_BUILD:-$here/build/fuzz}"
[ -d "$build/consistent_hash" ] || "$here/tools/fuzz_build.sh" "$build"
work="${FUZZ_WORK:-$here/build/fuzz-work/$target}"
mkdir -p "$work/corpus" "$work/artifacts"
atheris_dir="$(python -c 'import atheris; print(atheris.path())')"
export CONSISTENT_HASH_FUZZ_BUILD="$build"
export LD_PRELOAD="$atheris_dir/asan_with_fuzzer.so"
# Python is not built with ASan: its own allocations at exit are not our leaks, so leak
# checking is off (what our core allocates per call is freed in the call, which ASan sees as
# use-after-free or a double free if it is not). allocator_may_return_null lets a too-large
# allocation be a MemoryError instead of an abort.
# malloc_context_size=2 and a 64 MB quarantine: with PYTHONMALLOC=malloc every Python object
# is an ASan allocation, and unwinding 30 frames for each (the default) made the parser targets
# (lb_config, cli_inputs) run ~75 executions/s instead of ~500-800 (RSS 1.4 GB instead of
# 0.2-0.35 GB); a report still shows the faulting access in full and 2 frames of where the
# memory came from (re-run its crash-* input with ASAN_OPTIONS=malloc_context_size=30 for more).
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:allocator_may_return_null=1:malloc_context_size=2:quarantine_size_mb=64:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
export PYTHONMALLOC=malloc   # ASan sees every Python allocation (the buffers the core reads)
dict=()
[ -f "$here/fuzz/$target.dict" ] && dict=("-dict=$here/fuzz/$target.dict")
exec python "$here/fuzz/fuzz_$target.py" -timeout=25 -rss_limit_mb=3072 \
  -artifact_prefix="$work/artifacts/" "${dict[@]}" "$@" "$work/corpus" "$here/fuzz/corpus/$target"
