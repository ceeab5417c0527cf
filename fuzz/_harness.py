"""What every fuzz target shares: which build of the package is imported, atheris setup with
Python coverage of consistent_hash, and the rule for what counts as a finding.

A target is ``python fuzz/fuzz_X.py [libFuzzer flags] [corpus_dir ...]``. It imports the
package from the worktree (the normal in-place build), or from the sanitized fuzz build when
``CONSISTENT_HASH_FUZZ_BUILD=DIR`` is set (``tools/fuzz_build.sh DIR``, run through
``tools/fuzz_run.sh``, which also preloads the sanitizer runtime).

Findings: an exception other than the documented ones (``EXPECTED``), a wrong result
(AssertionError), a crash, a sanitizer report, a hang (-timeout) or a leak. libFuzzer writes
the input to ``crash-*`` / ``timeout-*`` / ``leak-*`` files.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_build = os.environ.get("CONSISTENT_HASH_FUZZ_BUILD")
sys.path.insert(0, ROOT)
if _build:
    sys.path.insert(0, os.path.abspath(_build))  # the sanitized package shadows the tree's
sys.path += [os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "support")]  # routers, models

import atheris  # noqa: E402,F401  (re-exported for the targets)

# Python coverage of the package (its modules are imported, and so instrumented, here).
# CONSISTENT_HASH_FUZZ_NO_INSTRUMENT=1 (fuzz/leak_check.py) imports it as it is: atheris's
# comparison hook leaks the result of every comparison it traces that is not an int, str or
# bytes (a NumPy comparison's bool array: 16 KB per `table >= 0` on a slot table), which is
# the interpreter-side growth of the long runs' RSS, not the library's.
_instrument = (contextlib.nullcontext() if os.environ.get("CONSISTENT_HASH_FUZZ_NO_INSTRUMENT")
               else atheris.instrument_imports(include=["consistent_hash"]))
with _instrument:
    import consistent_hash  # noqa: F401
    import consistent_hash._containers  # noqa: F401
    import consistent_hash.cli  # noqa: F401
    import consistent_hash.cli._common  # noqa: F401
    import consistent_hash.cli.assign  # noqa: F401
    import consistent_hash.cli.migrate  # noqa: F401
    import consistent_hash.compat  # noqa: F401
    import consistent_hash.compat.redis  # noqa: F401
    import consistent_hash.integrations.migrate  # noqa: F401
    import consistent_hash.integrations.pymemcache  # noqa: F401
    import consistent_hash.ringfile  # noqa: F401

from consistent_hash._format import FormatError  # noqa: E402

# The documented exceptions of the parsers: TypeError for the wrong kind of value, ValueError
# (FormatError, UnicodeDecodeError are ValueErrors) for a bad one. LookupError is a router's
# answer for an empty router / unassigned slot (EmptyRingError), not a parse failure.
EXPECTED: tuple[type[BaseException], ...] = (TypeError, ValueError, FormatError)


def check_build() -> None:
    """Fail loudly when CONSISTENT_HASH_FUZZ_BUILD is set but another build got imported."""
    from consistent_hash import _ring

    if _build and not os.path.abspath(_ring.__file__).startswith(os.path.abspath(_build)):
        raise SystemExit(f"fuzz build {_build} requested but {_ring.__file__} was imported")


@contextmanager
def expected(*extra: type[BaseException]) -> Iterator[None]:
    """Swallow the documented exceptions (and ``extra``); anything else propagates."""
    try:
        yield
    except EXPECTED + extra:
        pass


def main(test_one: Callable[[bytes], Any]) -> None:
    check_build()
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


class Bytes:
    """atheris.FuzzedDataProvider with the few helpers the targets share."""

    def __init__(self, data: bytes) -> None:
        self.fdp = atheris.FuzzedDataProvider(data)

    def int(self, lo: int, hi: int) -> int:
        return int(self.fdp.ConsumeIntInRange(lo, hi))

    def bool(self) -> bool:
        return bool(self.fdp.ConsumeBool())

    def bytes(self, n: int) -> bytes:
        return bytes(self.fdp.ConsumeBytes(n))

    def text(self, n: int) -> str:
        return str(self.fdp.ConsumeUnicodeNoSurrogates(n))

    def pick(self, seq: Any) -> Any:
        return seq[self.int(0, len(seq) - 1)]

    def rest(self) -> bytes:
        return bytes(self.fdp.ConsumeBytes(self.fdp.remaining_bytes()))

    def remaining(self) -> int:
        return int(self.fdp.remaining_bytes())
