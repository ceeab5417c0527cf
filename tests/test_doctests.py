"""The README's examples and the docstrings' examples run as doctests."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import consistent_hash

README = Path(__file__).resolve().parent.parent / "README.md"
# Every module of the package, so a module added or moved is doctested without a list to edit.
MODULES = sorted(m.name for m in pkgutil.walk_packages(consistent_hash.__path__,
                                                       "consistent_hash."))


@pytest.mark.skipif(not README.exists(), reason="README.md is not beside tests/")
def test_readme_examples() -> None:
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10
    assert result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if name != "consistent_hash._ring" and ">>> " in inspect.getsource(module):
        if result.attempted == 0 and name.rsplit(".", 1)[1].startswith("_"):
            # a package's private part whose classes carry the package as their module (so
            # pickles and docs name the package): doctest finds their examples there
            parent = doctest.testmod(importlib.import_module(name.rsplit(".", 1)[0]),
                                     optionflags=doctest.ELLIPSIS)
            assert parent.failed == 0
            result = parent
        assert result.attempted > 0  # its examples were found and run
