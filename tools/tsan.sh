#!/usr/bin/env bash
# Run the parallel tests against a ThreadSanitizer build of the compiled core: every batch
# call that splits over the worker pool (ch_threads.h), from several Python threads at once,
# while writers swap the router's snapshot, and the pool's worker placement switched on and
# off while calls are in flight (tests/test_hotpath.py). Any report fails the run
# (halt_on_error, and the exit code TSan gives a run with reports). Builds in a scratch copy of
# the tree, so the working tree is untouched; mirrors tools/asan.sh.
#
#   tools/tsan.sh [pytest args...]     default: the parallel tests (below)
#
# The interpreter is not built with TSan; tools/tsan.supp suppresses races reported inside
# the interpreter (and NumPy / pyarrow) only, never in consistent_hash. See that file.
set -euo pipefail
# shellcheck source=tools/_sanitized_tree.sh
. "$(dirname "$0")/_sanitized_tree.sh"
sanitized_tree thread   # sets $here and $work, and cds into $work
libtsan="$(${CC:-gcc} -print-file-name=libtsan.so)"
# The interpreter itself, not a wrapper script in front of it (pyenv's shim is a bash
# script, which does not run under a preloaded TSan).
py="$(python -c 'import sys; print(sys.executable)')"
export LD_PRELOAD="$libtsan"
# die_after_fork=0: test_pool_after_fork starts the pool in a forked child, which TSan refuses
# by default (it cannot follow threads started after a multi-threaded fork; no report is lost
# in the parent).
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:report_signal_unsafe=0:die_after_fork=0:suppressions=$here/tools/tsan.supp:${TSAN_OPTIONS:-}"
export PYTHONMALLOC=malloc   # TSan sees the buffers the workers read as malloc'd memory
setarch "$(uname -m)" -R "$py" - <<'PY'
import consistent_hash._ring as r, sys
print("TSan build:", r.__file__, file=sys.stderr)
PY
if [ "$#" -eq 0 ]; then
  set -- tests/test_parallel.py tests/test_conformance_threads.py tests/test_threads.py \
    tests/test_hotpath.py
fi
# TSan maps its shadow memory at fixed addresses, which high mmap randomisation can collide
# with ("unexpected memory mapping"): run without address-space randomisation.
# polars' runtime crashes while loading under TSan: tools/_tsan_plugin.py stands in for it
# (the polars cases skip with that reason; they run in the normal suite).
export PYTHONPATH="$here/tools${PYTHONPATH:+:$PYTHONPATH}"
exec setarch "$(uname -m)" -R "$py" -m pytest -p no:cacheprovider -p _tsan_plugin -q -rs "$@"
