"""Golden vectors of the modern family's routers: the documented recipe (names -> buckets, key
-> 64-bit hash, bucket of a hash) pinned.

tests/data/family_vectors.json is made by tests/data/make_family_vectors.py from the recipe over
the plain-Python models of the references (tests/support/model_family.py) and the reference hash
packages, without consistent_hash, so these tests check the routers against an independent
derivation, and any change to a mapping fails them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import DIGEST_KEYS, names_digest, vector_key

from consistent_hash import algorithms

DATA = json.loads((Path(__file__).parent / "data" / "family_vectors.json").read_text("utf-8"))
CONFIGS = DATA["configs"]


def build(cfg: dict[str, Any]) -> Any:
    cls = getattr(algorithms, cfg["router"])
    kw = {"capacity": cfg["capacity"]} if "capacity" in cfg else {}
    r = cls(cfg["nodes"], hash=cfg["hash"], seed=cfg["seed"], **kw)
    for op, name in cfg["ops"]:
        getattr(r, op)(name)
    return r


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c["name"] for c in CONFIGS])
def test_vectors_scalar_and_batch(cfg: dict[str, Any]) -> None:
    r = build(cfg)
    keys = [vector_key(k) for k, _ in cfg["vectors"]]
    expected = [node for _, node in cfg["vectors"]]
    assert [r.get(k) for k in keys] == expected
    assert r.get_many(keys).tolist() == expected
    if "slots" in cfg:
        assert r.state == (tuple(cfg["slots"]), tuple(cfg["removed"]))


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c["name"] for c in CONFIGS])
def test_assignment_digest(cfg: dict[str, Any]) -> None:
    r = build(cfg)
    assert names_digest(r.get_many(DIGEST_KEYS)) == cfg["assignment_sha256"]
    assert names_digest(r.get_many(DIGEST_KEYS, threads=2)) == cfg["assignment_sha256"]


def test_vectors_cover_every_router_and_hash() -> None:
    assert {c["router"] for c in CONFIGS} == {
        "JumpBackHash", "FlipHash", "PowerHash", "BinomialHash", "AnchorHash", "DxHash",
        "JumpBackAnchorHash"}
    assert {c["hash"] for c in CONFIGS} == {"xxh3", "xxh64", "murmur3", "md5"}
