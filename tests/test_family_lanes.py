"""The removal-capable batch kernels (AnchorHash, DxHash, JumpBackAnchor, MementoHash) run keys
in lockstep lanes, in groups of four (Memento) or key by key depending on the state's size
(ch_family.h, ch_memento.h): every batch
answer must be the scalar path's (route1: the reference's loop as written, pinned to the
models and the golden vectors elsewhere) and the pure-Python model's, after heavy removal in
random order (90%, 99%, all but one bucket), on both sides of the lanes' size threshold, and
the same on threads=2."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from model_family import Anchor, JumpBackAnchor

from consistent_hash.algorithms import (
    AnchorBuckets,
    AnchorHash,
    DxHash,
    JumpBackAnchorBuckets,
    JumpBackAnchorHash,
    MementoHash,
)

RNG = np.random.default_rng(2222)
KEYS = np.concatenate([np.array([0, 1, 2, 2**63, 2**64 - 1], dtype=np.uint64),
                       RNG.integers(0, 2**64, 40_000, dtype=np.uint64)])
ROUTERS = {"AnchorHash": AnchorHash, "DxHash": DxHash, "JumpBackAnchorHash": JumpBackAnchorHash,
           "MementoHash": MementoHash}
# 1,000 slots: every state in cache (key by key for JumpBackAnchor, four keys a group for
# Memento); 70,000: past the lanes' threshold for all four (256 KiB: 32,768 JumpBackAnchor
# and 65,536 Memento slots).
TOTALS = [1_000, 70_000]


def removed_router(cls: Any, total: int, left: int, seed: int) -> Any:
    """cls over total slots with all but left removed in a random order (one from_state)."""
    order = list(range(total))
    random.Random(seed).shuffle(order)
    removed = order[: total - left]
    slots: list[str | None] = [f"node-{i}" for i in range(total)]
    for b in removed:
        slots[b] = None
    return cls.from_state(slots, removed)


@pytest.mark.parametrize("algo", sorted(ROUTERS))
@pytest.mark.parametrize("total", TOTALS)
@pytest.mark.parametrize("share", [0.0, 0.9, 0.99, "all but one"])
def test_batch_equals_scalar_after_heavy_removal(algo: str, total: int, share: Any) -> None:
    left = 1 if share == "all but one" else total - int(total * share)
    r = removed_router(ROUTERS[algo], total, left, total + left)
    got = r.lookup(KEYS, threads=1)
    core = r._core
    want = np.array([core.index_of_hash(int(h)) for h in KEYS], dtype=got.dtype)
    assert np.array_equal(got, want)
    assert ((got >= 0) & (got < left)).all()
    if left == 1:
        assert (got == 0).all()
    assert np.array_equal(r.lookup(KEYS, threads=2), got)
    # a batch cut at every length near the lane count and the group of four: refills and
    # tails line up
    for m in (1, 2, 3, 5, 6, 63, 64, 65, 66, 257):
        assert np.array_equal(r.lookup(KEYS[:m], threads=1), got[:m])


@pytest.mark.parametrize("a,share", [(300, 0.99), (2_000, 0.9), (2_000, 0.999)])
def test_anchor_buckets_batch_equals_the_model(a: int, share: float) -> None:
    """AnchorBuckets' batch with both keys (key2 not 0) against the pure-Python AnchorHashQre
    after random removals (its batch takes no threads=; the routers' tests above do)."""
    rng = random.Random(a)
    ours, model = AnchorBuckets(a, a), Anchor(a, a)
    order = list(range(a))
    rng.shuffle(order)
    for b in order[: int(a * share)]:
        ours.remove(b)
        model.remove(b)
    k1 = RNG.integers(0, 2**64, 3000, dtype=np.uint64)
    k2 = RNG.integers(0, 2**64, 3000, dtype=np.uint64)
    got = ours.bucket(k1, k2)
    assert got.tolist() == [model.bucket(int(x), int(y)) for x, y in zip(k1, k2, strict=True)]


def test_jumpback_anchor_buckets_batch_equals_the_model_past_the_threshold() -> None:
    """JumpBackAnchorBuckets grown to 40,000 buckets (past the lanes' threshold) and 99% of
    them removed in random order, against the pure-Python hash4j model."""
    rng = random.Random(40)
    ours, model = JumpBackAnchorBuckets(), JumpBackAnchor()
    a = 40_000
    for _ in range(a):
        ours.add()
        model.add()
    order = list(range(a))
    rng.shuffle(order)
    for b in order[: a - 400]:
        assert ours.remove(b) and model.remove(b)
    keys = KEYS[:2000]
    got = ours.bucket(keys, threads=1)
    assert got.tolist() == [model.bucket(int(h)) for h in keys]
    assert np.array_equal(ours.bucket(KEYS, threads=2), ours.bucket(KEYS, threads=1))
