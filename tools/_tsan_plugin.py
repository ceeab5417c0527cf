"""pytest plugin for tools/tsan.sh: polars' compiled runtime (Rust, with its own allocator and
thread-local storage) crashes while it loads under a preloaded ThreadSanitizer, before any
test runs. Under TSan only, ``import polars`` gets this stand-in: a test that builds a polars
container skips (with that reason) when it first touches polars; every other test, and every
other container kind of the same test file, runs. The polars cases run in the normal suite."""

from __future__ import annotations

import sys
import types

import pytest

REASON = "polars' runtime cannot load under ThreadSanitizer (tools/tsan.sh); runs in the suite"


class _Unloadable(types.ModuleType):
    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        pytest.skip(REASON)


sys.modules.setdefault("polars", _Unloadable("polars"))
