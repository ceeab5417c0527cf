"""Golden vectors for every compatibility mode: tests/data/compat_vectors.json, made by
tests/data/make_compat_vectors.py from the reference implementations themselves (uhashring,
hashring, libketama, pylibmc/libmemcached and twemproxy against real memcached servers,
redis-py, cassandra-driver).  These pin the mappings without needing any server or package."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import names_digest, vector_key

from consistent_hash import KetamaRing, murmur3_token, murmur3_tokens, redis_slot, redis_slots
from consistent_hash.compat import hashring as compat_hashring
from consistent_hash.compat import uhashring as compat_uhashring

DATA = json.loads((Path(__file__).parent / "data" / "compat_vectors.json").read_text("utf-8"))
DIGEST_KEYS = [f"key-{i}" for i in range(20_000)]


@pytest.mark.parametrize("cfg", DATA["uhashring"], ids=[c["name"] for c in DATA["uhashring"]])
def test_uhashring(cfg: dict[str, Any]) -> None:
    ring = compat_uhashring.HashRing(cfg["nodes"], **cfg["kwargs"])
    keys = [vector_key(k) for k, _ in cfg["vectors"]]
    assert [ring.get_node(k) for k in keys] == [n for _, n in cfg["vectors"]]
    assert names_digest(ring.get_many(DIGEST_KEYS).tolist()) == cfg["assignment_sha256"]


@pytest.mark.parametrize("cfg", DATA["hashring"], ids=[c["name"] for c in DATA["hashring"]])
def test_hashring(cfg: dict[str, Any]) -> None:
    ring = compat_hashring.HashRing(cfg["nodes"], cfg["weights"])
    keys = [vector_key(k) for k, _ in cfg["vectors"]]
    assert [ring.get_node(k) for k in keys] == [n for _, n in cfg["vectors"]]
    assert names_digest(ring.get_many(DIGEST_KEYS).tolist()) == cfg["assignment_sha256"]


@pytest.mark.parametrize("cfg", DATA["ketama"], ids=[c["name"] for c in DATA["ketama"]])
def test_ketama_modes(cfg: dict[str, Any]) -> None:
    ring = KetamaRing(cfg["servers"], cfg["weights"], mode=cfg["mode"], hash=cfg["hash"])
    keys = [vector_key(k) for k, _ in cfg["vectors"]]
    expected = [n for _, n in cfg["vectors"]]
    got = [ring.nodes[i] for i in ring.get_indices(keys)]
    assert got == expected
    if "points" in cfg:
        assert len(ring.positions) == cfg["points"]
    if "assignment_sha256" in cfg:
        assert names_digest(ring.get_many(DIGEST_KEYS).tolist()) == cfg["assignment_sha256"]


def test_redis_slots() -> None:
    keys = [vector_key(k) for k, _ in DATA["redis"]]
    expected = [s for _, s in DATA["redis"]]
    assert [redis_slot(k) for k in keys] == expected
    assert redis_slots(keys).tolist() == expected


def test_cassandra_tokens() -> None:
    keys = [vector_key(k) for k, _ in DATA["cassandra"]]
    expected = [t for _, t in DATA["cassandra"]]
    assert [murmur3_token(k, raw=True) for k in keys] == expected
    assert murmur3_tokens(keys, raw=True).tolist() == expected
    assert murmur3_token(b"") == -(1 << 63)  # the server's empty-key rule (the driver: 0)


DOCS = Path(__file__).resolve().parent.parent / "docs"
COMPAT_PAGES = [DOCS / "compat.md", *sorted((DOCS / "compat").glob("*.md"))]


@pytest.mark.skipif(not (DOCS / "compat").exists(), reason="docs/compat/ is not beside tests/")
def test_compat_doc_examples() -> None:
    import doctest

    attempted = 0
    for page in COMPAT_PAGES:
        result = doctest.testfile(str(page), module_relative=False,
                                  optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, page.name
        attempted += result.attempted
    assert attempted >= 15


@pytest.mark.parametrize("name", ["consistent_hash.compat.ketama", "consistent_hash.compat.redis",
                                  "consistent_hash.compat.cassandra"])
def test_compat_docstring_examples(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
