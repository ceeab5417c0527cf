"""The public API type-checks under ``mypy --strict`` and the typed example really runs.

mypy runs on the consistent_hash that this test process imports (the installed wheel in CI, or
an in-place build during development), so the stubs and py.typed that ship are what get checked.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import consistent_hash

EXAMPLE = Path(__file__).resolve().parent / "typing_example.py"


def test_typing_example_runs() -> None:
    spec = importlib.util.spec_from_file_location("typing_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main()


def _package_root() -> Path:
    return Path(consistent_hash.__file__).resolve().parent.parent


def _installed() -> bool:
    site_dirs = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    return _package_root() in site_dirs


def test_mypy_strict(tmp_path: Path) -> None:
    pytest.importorskip("mypy.api", reason="mypy is not installed (pip install '.[test]')")
    env = dict(os.environ)
    args = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / ".cache")]
    if not _installed():
        # An in-place or editable build: point mypy at the tree the tests import, with the
        # project's mypy settings. (mypy refuses a site-packages directory on MYPYPATH.)
        root = _package_root()
        env["MYPYPATH"] = str(root)
        if (root / "pyproject.toml").is_file():
            args += ["--config-file", str(root / "pyproject.toml")]
    # Run outside the source tree, with a private cache, so that neither a ./consistent_hash
    # nor a stale cache stands in for the package under test.
    proc = subprocess.run(
        [*args, str(EXAMPLE)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"mypy --strict {EXAMPLE.name} failed:\n{proc.stdout}{proc.stderr}"
