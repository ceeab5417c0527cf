"""Optional libraries for the test modules that exercise every container kind.

``optional("pyarrow")`` is the module where it is installed; where it is not (no wheel for the
platform: pyarrow and polars on s390x), it is a stand-in whose first use skips the test using it,
naming the library, so the rest of the module still runs there.
"""

from __future__ import annotations

import importlib
import platform
from typing import Any

import pytest


class _Missing:
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_") or attr == "pytestmark":  # pytest's probes while collecting
            raise AttributeError(attr)
        pytest.skip(f"{self._name} is not installed on this platform ({platform.machine()})")


def optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return _Missing(name)
