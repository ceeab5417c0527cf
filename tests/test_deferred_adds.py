"""A ring that merges (HashRing, a RingRouter with an independent recipe) checks each add() at
once and merges the nodes' points at the next read, all the adds since the last read in one
pass (ring_merge).  Whatever read comes next, and in whatever order reads and adds interleave,
the router must be exactly the ring built whole from its final weights: the same positions,
owners, prefix index and route layout, the same routes, bytes, fingerprint and analysis.  The
references: a build of the whole ring (HashRing(weights)), np.searchsorted over its positions,
and a bisect model for rings whose points collide.
"""

from __future__ import annotations

import bisect
import copy
import pickle
import random
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ringrouter_example import FastringRing

from consistent_hash import HashRing, RingRouter
from consistent_hash._core import ring_merge
from consistent_hash.analysis import migration_plan, movement

KEYS = [f"user:{i}" for i in range(3_000)]
H = np.random.default_rng(7).integers(0, 2**64, 4_000, dtype=np.uint64, endpoint=False)


def assert_same_ring(ring: Any, built: Any) -> None:
    assert ring.nodes == built.nodes
    assert list(ring.weights) == list(built.weights)
    assert ring.weights == built.weights
    assert np.array_equal(ring.positions, built.positions)
    assert np.array_equal(ring.owners, built.owners)
    core, bcore = ring._core, built._core
    assert np.array_equal(core.prefix_index, bcore.prefix_index)
    # the route layout answers what a search of the positions does
    pos = built.positions
    want = built.owners[np.searchsorted(pos, H, side="left") % len(pos)]
    assert np.array_equal(ring.lookup(H), want)
    assert np.array_equal(ring.get_indices(KEYS), built.get_indices(KEYS))
    assert ring.to_bytes() == built.to_bytes()
    assert ring.fingerprint() == built.fingerprint()
    assert ring == built


# Reads that may come between adds: each must see every add made before it.
READS: list[Callable[[Any], object]] = [
    lambda r: r.get("user:1"),
    lambda r: r.get_many(KEYS[:50]),
    lambda r: r.get_indices(KEYS[:2000]),
    lambda r: r.lookup(H[:100]),
    lambda r: r.replicas("user:2", 2),
    lambda r: r.nodes,
    lambda r: len(r),
    lambda r: r.positions,
    lambda r: r.weights,
    lambda r: repr(r),
    lambda r: r.ownership(),
    lambda r: r.to_bytes(),
    lambda r: r.fingerprint(),
    lambda r: r.copy(),
    lambda r: pickle.dumps(r),
    lambda r: r.down,
]


def _check_read(ring: Any, read: Callable[[Any], object], weights: dict[str, float],
                vnodes: int) -> None:
    built = HashRing(weights, vnodes=vnodes)
    got = read(ring)
    want = read(built)
    if isinstance(got, np.ndarray):
        assert np.array_equal(got, want)
    elif isinstance(got, HashRing):
        assert_same_ring(got, built)
    elif isinstance(got, bytes) and got[:1] == b"\x80":  # a pickle
        assert_same_ring(pickle.loads(got), built)
    else:
        assert got == want


@pytest.mark.parametrize("seed", range(6))
def test_adds_with_any_reads_between_give_the_built_ring(seed: int) -> None:
    rng = random.Random(seed)
    vnodes = rng.choice([1, 7, 160])
    names = rng.sample([f"n{i:03d}" for i in range(400)] + ["ü", "a#1", ""], 60)
    weights: dict[str, float] = {}
    start = rng.randrange(0, 10)
    for n in names[:start]:
        weights[n] = rng.choice([0.5, 1.0, 2.5, 0.01])
    ring = HashRing(weights, vnodes=vnodes)
    for n in names[start:]:
        w = rng.choice([0.5, 1.0, 2.5, 0.01])
        ring.add(n, w)
        weights[n] = w
        assert n in ring  # the weights are current at once
        if rng.random() < 0.3:
            _check_read(ring, rng.choice(READS), weights, vnodes)
    assert_same_ring(ring, HashRing(weights, vnodes=vnodes))


@pytest.mark.parametrize("hash", ["xxh3", "xxh64", "murmur3", "md5", "callable"])
def test_a_batch_of_adds_with_every_hash(hash: Any) -> None:
    import hashlib

    h: Any = hash
    if hash == "callable":
        h = lambda b: int.from_bytes(hashlib.sha1(b).digest()[:8], "little")  # noqa: E731
    seed = 0 if hash in ("md5", "callable") else 12345
    ring = HashRing(["a", "m"], hash=h, seed=seed)
    for n in ["b", "z", "c", "0", "k"]:
        ring.add(n, 1.5 if n == "c" else 1.0)
    built = HashRing({"a": 1.0, "m": 1.0, "b": 1.0, "z": 1.0, "c": 1.5, "0": 1.0, "k": 1.0},
                     hash=h, seed=seed)
    assert np.array_equal(ring.positions, built.positions)
    assert np.array_equal(ring.owners, built.owners)
    assert ring.get_many(KEYS).tolist() == built.get_many(KEYS).tolist()


def test_every_consumer_sees_the_adds() -> None:
    base = HashRing([f"n{i}" for i in range(10)])
    grown = base.copy()
    for i in range(10, 14):
        grown.add(f"n{i}")
    built = HashRing([f"n{i}" for i in range(14)])
    assert movement(base, grown, KEYS).moved == movement(base, built, KEYS).moved
    grown2 = base.copy()
    for i in range(10, 14):
        grown2.add(f"n{i}")
    assert migration_plan(base, grown2).ranges == migration_plan(base, built).ranges
    grown3 = base.copy()
    for i in range(10, 14):
        grown3.add(f"n{i}")
    assert copy.deepcopy(grown3) == built
    assert HashRing.from_bytes(grown3.to_bytes()) == built


def test_down_marks_stay_across_deferred_adds() -> None:
    ring = HashRing(["a", "b", "c"])
    ring.mark_down("b")
    for n in ["d", "e", "0"]:
        ring.add(n)
    built = HashRing(["a", "b", "c", "d", "e", "0"])
    built.mark_down("b")
    assert ring.down == frozenset({"b"})
    assert ring == built
    assert ring.get_many(KEYS).tolist() == built.get_many(KEYS).tolist()
    assert ring.to_bytes() == built.to_bytes()
    # marking down a node whose add is not yet merged
    ring.add("f")
    ring.mark_down("f")
    built.add("f")
    built.mark_down("f")
    assert ring.get_many(KEYS).tolist() == built.get_many(KEYS).tolist()
    assert "f" not in set(ring.get_many(KEYS).tolist())


def test_a_refused_add_between_deferred_ones_changes_nothing() -> None:
    ring = HashRing(["a"])
    ring.add("b")
    ring.add("c", 2.0)
    with pytest.raises(ValueError, match="already"):
        ring.add("b")
    with pytest.raises(ValueError, match="finite"):
        ring.add("d", float("nan"))
    with pytest.raises(TypeError):
        ring.add(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="vnodes"):
        ring.add("e", 2.0**40)
    assert_same_ring(ring, HashRing({"a": 1.0, "b": 1.0, "c": 2.0}))


def test_remove_and_set_weight_after_deferred_adds() -> None:
    ring = HashRing(["a", "b"])
    for n in ["c", "d", "e"]:
        ring.add(n)
    ring.remove("d")
    ring.add("f")
    ring.set_weight("c", 3.0)
    ring.add("g")
    ring.remove("a")
    assert_same_ring(ring, HashRing({"b": 1.0, "c": 3.0, "e": 1.0, "f": 1.0, "g": 1.0}))


class _Colliding(RingRouter):
    """Points from a tiny space, so different nodes share points: the tie rule decides."""

    def points(self, node: str, weight: Any) -> list[int]:
        rng = random.Random(node)
        return [rng.randrange(64) << 58 for _ in range(int(8 * weight))]


class _CollidingOrdered(_Colliding):
    ordered = True


def _model_owner(ring: Any, h: int) -> str:
    """The ring's recipe, sorted by (point, index in nodes): the 'keep' tie rule."""
    pairs = sorted((p, i) for i, n in enumerate(ring.nodes)
                   for p in ring.points(n, ring.weights[n]))
    pts = [p for p, _ in pairs]
    return ring.nodes[pairs[bisect.bisect_left(pts, h) % len(pairs)][1]]


@pytest.mark.parametrize("cls", [_Colliding, _CollidingOrdered, FastringRing])
def test_ring_routers_batch_their_adds_exactly(cls: type) -> None:
    rng = random.Random(3)
    names = [f"x{i}" for i in range(30)]
    rng.shuffle(names)
    weights = {n: rng.choice([0.5, 1.0, 2.0]) for n in names}
    ring = cls(dict(list(weights.items())[:3]))
    for i, n in enumerate(names[3:]):
        ring.add(n, weights[n])
        if i % 7 == 6:
            ring.get("k")
    built = cls(weights)
    assert ring.nodes == built.nodes
    assert np.array_equal(ring.positions, built.positions)
    assert np.array_equal(ring.owners, built.owners)
    assert ring.to_bytes() == built.to_bytes()
    if cls is not FastringRing:
        hs = [int(x) for x in H[:300]] + [p for p in ring.positions[:50].tolist()]
        assert [ring.nodes[i] for i in ring.lookup(np.array(hs, dtype=np.uint64))] == [
            _model_owner(built, h) for h in hs]


def test_ring_merge_checks_its_arguments() -> None:
    core = HashRing(["a", "c"])._core
    pb = np.array([5, 1], dtype=np.uint64)
    ob = np.array([1, 1], dtype=np.int32)
    nodes = ("a", "b", "c")
    remap = np.array([0, 2], dtype=np.int32)
    merged = ring_merge(core, nodes, remap, pb.copy(), ob.copy())
    assert merged.nodes == nodes
    assert merged.positions[:2].tolist() == [1, 5]
    assert len(merged) == len(core) + 2
    with pytest.raises(ValueError, match="differ"):
        ring_merge(core, nodes, remap, pb.copy(), ob[:1].copy())
    with pytest.raises(ValueError, match="remap"):
        ring_merge(core, nodes, np.array([0], dtype=np.int32), pb.copy(), ob.copy())
    with pytest.raises(ValueError, match="increasing"):
        ring_merge(core, nodes, np.array([2, 0], dtype=np.int32), pb.copy(), ob.copy())
    with pytest.raises(ValueError, match="increasing"):
        ring_merge(core, nodes, np.array([0, 3], dtype=np.int32), pb.copy(), ob.copy())
    with pytest.raises(ValueError, match="index"):
        ring_merge(core, nodes, remap, pb.copy(), np.array([1, 3], dtype=np.int32))


def test_concurrent_readers_during_adds_see_whole_rings() -> None:
    ring = HashRing([f"n{i}" for i in range(5)])
    added = [f"m{i}" for i in range(200)]
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                core = ring._core  # one snapshot: its arrays agree with its nodes
                assert len(core.positions) == len(core.owners)
                assert int(core.owners.max()) < len(core.nodes)
                assert ring.get("user:1") in ring
                ring.get_indices(KEYS[:100])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for n in added:
            ring.add(n)
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert not errors, errors[:3]
    assert_same_ring(ring, HashRing([f"n{i}" for i in range(5)] + added))


def test_a_big_ring_takes_one_add_in_one_pass() -> None:
    # one add waits for the next read, which merges it alone (ring_add, one pass over the
    # ring); the snapshot then equals the built ring
    names = [f"n{i}" for i in range(2_000)]
    ring = HashRing(names)
    ring.add("new")
    assert ring._deferred is not None and ring._snap is None
    assert_same_ring(ring, HashRing(names + ["new"]))
    assert ring._deferred is None


def test_bounded_load_sees_an_add_it_did_not_merge() -> None:
    from consistent_hash import BoundedLoad

    ring = HashRing(["a", "b"])
    b = BoundedLoad(ring)
    assert b.acquire("user:0") in ("a", "b")
    ring.add("c")  # deferred: the bounded load's snapshot is no longer the ring's
    built = HashRing(["a", "b", "c"])
    key = next(k for k in KEYS if built.get(k) == "c")
    assert b.acquire(key) == "c"
    assert ring._deferred is None
