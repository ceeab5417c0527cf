"""The README's python examples run as written (the memcached one against servers started
here: its `servers = [...]` line is pointed at them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text("utf-8"), re.S) if README.exists() \
    else []


def _id(block: str) -> str:
    for word in ("HashClient", "dask", "pandas"):
        if word in block:
            return word
    return "block"


@pytest.mark.skipif(not README.exists(), reason="README.md is not beside tests/")
def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS, ids=[_id(b) for b in BLOCKS])
def test_readme_python_example(code: str) -> None:
    if "HashClient" in code:
        pytest.importorskip("pymemcache")
        from live_servers import memcached_servers

        with memcached_servers(3) as ports:
            live = f"servers = {[('127.0.0.1', p) for p in ports]!r}"
            patched, n = re.subn(r"^servers = \[.*\]$", live, code, flags=re.M)
            assert n == 1
            exec(compile(patched, "README.md", "exec"), {})
        return
    for mod in ("pandas", "pyarrow", "dask"):
        if f"import {mod}" in code:
            pytest.importorskip(mod)
    exec(compile(code, "README.md", "exec"), {})
