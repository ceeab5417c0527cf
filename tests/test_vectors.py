"""Golden vectors: the key -> node mapping is a promise, pinned here.

tests/data/ring_vectors.json is made by tests/data/make_ring_vectors.py straight from the placement
recipe with the reference hash packages (no consistent_hash code), so these tests check the
library against an independent derivation, and any change to the mapping fails them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import DIGEST_KEYS, names_digest, vector_key

from consistent_hash import HashRing

DATA = json.loads((Path(__file__).parent / "data" / "ring_vectors.json").read_text("utf-8"))
CONFIGS = DATA["configs"]


def _ring(cfg: dict[str, Any]) -> HashRing:
    return HashRing(cfg["nodes"], vnodes=cfg["vnodes"], hash=cfg["hash"], seed=cfg["seed"])


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c["name"] for c in CONFIGS])
def test_vectors_scalar_and_batch(cfg: dict[str, Any]) -> None:
    ring = _ring(cfg)
    keys = [vector_key(k) for k, _ in cfg["vectors"]]
    expected = [node for _, node in cfg["vectors"]]
    assert [ring.get(k) for k in keys] == expected
    assert ring.get_many(keys).tolist() == expected


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c["name"] for c in CONFIGS])
def test_assignment_digest(cfg: dict[str, Any]) -> None:
    ring = _ring(cfg)
    assert names_digest(ring.get_many(DIGEST_KEYS)) == cfg["assignment_sha256"]
    if len(ring.positions) > 32_768:  # that batch went through the line table, built for it
        assert ring._core.direct_table_lines and ring._core.direct_table_built
    assert (hashlib.sha256(ring.positions.astype("<u8").tobytes()).hexdigest()
            == cfg["positions_sha256"])


def test_vectors_cover_every_hash() -> None:
    assert {c["hash"] for c in CONFIGS} == {"xxh3", "xxh64", "murmur3", "md5"}
