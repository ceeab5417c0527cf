#!/usr/bin/env bash
# Run the test suite against an AddressSanitizer + UndefinedBehaviorSanitizer build of the
# compiled core. Any sanitizer report aborts the run (halt_on_error), so a green run means
# zero errors. Builds in a scratch copy of the tree, so the working tree is untouched.
#
#   tools/asan.sh [pytest args...]        e.g. tools/asan.sh -x -q tests/test_fuzz.py
set -euo pipefail
# shellcheck source=tools/_sanitized_tree.sh
. "$(dirname "$0")/_sanitized_tree.sh"
sanitized_tree address,undefined   # sets $here and $work, and cds into $work
libasan="$(${CC:-gcc} -print-file-name=libasan.so)"
libubsan="$(${CC:-gcc} -print-file-name=libubsan.so)"
export LD_PRELOAD="$libasan:$libubsan"
# Python itself is not built with ASan: leak checking would report the interpreter's own
# allocations, so it is off; every memory error in our code still aborts.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PYTHONMALLOC=malloc   # let ASan see every Python allocation too
python - <<'PY'
import consistent_hash._ring as r, sys
print("sanitized build:", r.__file__, file=sys.stderr)
PY
# Two tests measure what ASan itself changes, so they are left to the normal run:
# test_memory (ASan's quarantine keeps freed memory resident by design) and test_dask (its
# worker processes exceed distributed's memory limits under ASan's shadow memory); the
# kernels they drive are the ones every other test runs here.
if [ "$#" -eq 0 ]; then
  set -- tests --deselect tests/test_memory.py::test_no_rss_growth_over_ten_million_lookups \
    --ignore tests/test_dask.py
fi
python -m pytest -p no:cacheprovider -q "$@"
