"""Fuzz the load-balancer config readers (``from_config`` of the nginx / HAProxy / Envoy /
twemproxy rings): the bytes as a config text, handed to every reader listed in ``READERS``.

A reader is added by listing it: ``("nginx", "consistent_hash.compat.nginx", "NginxRing",
"from_config")`` names the module, the class (or None for a module-level function) and the
reader; its seed configs go in ``fuzz/corpus/lb_config/`` (byte 0 of an input picks the
reader, byte 1 the ``name=``), its tokens in ``fuzz/lb_config.dict``. An accepted config must
give a router that round-trips through ``to_bytes`` / ``from_bytes`` and routes a few keys the
same way through ``get`` and ``get_many``; a bad one raises TypeError or ValueError. With no
reader listed the target reports that and exits 0.

    python fuzz/fuzz_lb_config.py [-atheris_runs=N] fuzz/corpus/lb_config
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

import _harness  # noqa: I001

# (name, module, class or None, reader): one line per load-balancer config reader.
READERS: list[tuple[str, str, str | None, str]] = [
    ("nginx", "consistent_hash.compat.nginx", None, "from_config"),
    ("haproxy", "consistent_hash.compat.haproxy", None, "from_config"),
    ("envoy", "consistent_hash.compat.envoy", None, "from_config"),
    ("twemproxy", "consistent_hash.compat.twemproxy", None, "from_config"),
    ("any", "consistent_hash.compat.config", None, "from_text"),  # detection, then one above
]

KEYS = ["", "a", "user:42", "/index.html", "10.0.0.1"]
# Byte 1 of an input picks name= (None: the file must hold one upstream/backend/cluster/pool).
NAMES = [None, "cache", "plain", "web", "ring", "mag", "alpha", "beta"]


def _resolve() -> list[tuple[str, Callable[[str], Any]]]:
    out = []
    for name, module, cls, reader in READERS:
        with _harness.atheris.instrument_imports(include=[module]):
            mod = importlib.import_module(module)
        owner = getattr(mod, cls) if cls else mod
        out.append((name, getattr(owner, reader)))
    return out


FUNCS = _resolve()


def test_one(data: bytes) -> None:
    if len(data) < 2:
        return
    name, read = FUNCS[data[0] % len(FUNCS)]
    pick = NAMES[data[1] % len(NAMES)]
    text = data[2:].decode("utf-8", "surrogateescape")
    try:
        router = read(text, name=pick)
    except _harness.EXPECTED:
        return
    again = type(router).from_bytes(router.to_bytes())
    assert again == router, name
    if len(router):
        try:
            want = [router.get(k) for k in KEYS]
        except LookupError:
            return
        assert list(router.get_many(KEYS)) == want, name


if __name__ == "__main__":
    if not FUNCS:
        print("fuzz_lb_config: no load-balancer config reader is listed in READERS yet",
              file=sys.stderr)
        raise SystemExit(0)
    _harness.main(test_one)
