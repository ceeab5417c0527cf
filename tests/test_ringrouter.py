"""RingRouter, the public ring base: a ring is its points.

A ring defined in a few lines (tests/ringrouter_example.py: fastring's placement) routes
exactly as an independent model built on the xxhash package and bisect; it is in the
conformance registry, so it also passes the whole surface suite (tests/test_conformance.py)
and the seam suite (tests/test_seams.py).  Here: the model, the tie rules, the incremental
paths against full rebuilds, serialization of a ring from outside the library, and the kind
table of the byte format.
"""

from __future__ import annotations

import bisect
import pickle
import struct

import numpy as np
import pytest
from ringrouter_example import FastringRing

from consistent_hash import HashRing, RingRouter, _format
from consistent_hash.analysis import migration_plan, movement

xxhash = pytest.importorskip("xxhash")

KEYS = [f"user:{i}" for i in range(20_000)]


class Model:
    """fastring's ring from its recipe: sorted (point, node) pairs, first point >= hash."""

    def __init__(self, weights: dict[str, float], vnodes: int = 160) -> None:
        pairs = []
        for node, w in weights.items():
            for i in range(max(1, round(vnodes * w))):
                label = node.encode() + b"#" + struct.pack("<I", i)
                pairs.append((xxhash.xxh3_64_intdigest(label), node))
        pairs.sort()  # equal points: the smaller name first
        self.points = [p for p, _ in pairs]
        self.owners = [n for _, n in pairs]

    def get(self, key: str) -> str:
        i = bisect.bisect_left(self.points, xxhash.xxh3_64_intdigest(key.encode()))
        return self.owners[i % len(self.points)]


def test_a_ring_in_a_few_lines_matches_its_independent_model() -> None:
    weights = {"cache-a": 1.0, "cache-b": 2.0, "cache-c": 0.5, "ü-node": 1.0}
    ring = FastringRing(weights)
    model = Model(weights)
    assert ring.positions.tolist() == model.points
    assert ring.get_many(KEYS).tolist() == [model.get(k) for k in KEYS]
    assert [ring.get(k) for k in KEYS[:2000]] == [model.get(k) for k in KEYS[:2000]]
    # add / remove / set_weight merge the node's points in O(V): the same as a full build
    ring.add("cache-d", 1.5)
    weights["cache-d"] = 1.5
    assert ring == FastringRing(weights)
    assert ring.get_many(KEYS).tolist() == [Model(weights).get(k) for k in KEYS]
    ring.set_weight("cache-a", 3.0)
    weights["cache-a"] = 3.0
    assert ring.positions.tolist() == Model(weights).points
    ring.remove("cache-b")
    del weights["cache-b"]
    assert ring.get_many(KEYS).tolist() == [Model(weights).get(k) for k in KEYS]


def test_the_whole_surface_comes_with_the_points() -> None:
    ring = FastringRing(["a", "b", "c"], vnodes=64)
    other = FastringRing(["a", "b", "c"], vnodes=64)
    assert ring == other and ring.fingerprint() == other.fingerprint()
    assert FastringRing(["a", "b", "c"], vnodes=65).fingerprint() != ring.fingerprint()
    for copy in (ring.copy(), pickle.loads(pickle.dumps(ring)),
                 FastringRing.from_bytes(ring.to_bytes())):
        assert copy == ring and copy.vnodes == 64
        assert np.array_equal(copy.get_indices(KEYS), ring.get_indices(KEYS))
    assert repr(ring) == "FastringRing(['a', 'b', 'c'], vnodes=64)"
    assert abs(sum(ring.ownership().values()) - 1) < 1e-12
    assert ring.replicas("k", 3)[0] == ring.get("k") and len(set(ring.replicas("k", 3))) == 3
    before = ring.copy()
    ring.add("d")
    mv = movement(before, ring)
    assert mv.exact and set(mv.flows) <= {(n, "d") for n in "abc"}
    moves = migration_plan(before, ring).moves(KEYS)
    assert np.array_equal(moves, before.get_many(KEYS) != ring.get_many(KEYS))
    ring.mark_down("a")
    assert "a" not in set(ring.get_many(KEYS)) and ring.ownership()["a"] == 0
    assert FastringRing.from_bytes(ring.to_bytes()).down == {"a"}


class _Other(RingRouter):
    def points(self, node: str, weight: float) -> list[int]:
        return [int(x) for x in self.hash_labels([node.encode() + b"-%d" % i
                                                   for i in range(16)])]


def test_rings_from_outside_are_told_apart() -> None:
    """Two rings of other classes never load as each other, nor share a fingerprint."""
    a, b = _Other(["x", "y"]), FastringRing(["x", "y"])
    assert a.fingerprint() != b.fingerprint()
    with pytest.raises(ValueError, match="FastringRing ring, not a"):
        _Other.from_bytes(b.to_bytes())
    assert _Other.from_bytes(a.to_bytes()) == a


def test_points_are_checked() -> None:
    class Bad(RingRouter):
        def points(self, node: str, weight: float) -> list[int]:
            return [-1]

    with pytest.raises(ValueError, match=r"Bad.points\('a', 1.0\).*non-negative|in \[0"):
        Bad(["a"])

    class Wrong(RingRouter):
        def points(self, node: str, weight: float) -> list[str]:
            return ["x"]

    with pytest.raises(TypeError, match=r"Wrong.points\('a', 1.0\)"):
        Wrong(["a"])

    class Unset(RingRouter):
        pass

    with pytest.raises(NotImplementedError, match="must define points"):
        Unset(["a"])
    with pytest.raises(ValueError, match="ties must be one of"):
        type("T", (_Other,), {"ties": "both"})(["a"])


@pytest.mark.parametrize("ties", ["keep", "first", "last"])
def test_tie_rules_against_a_dict_model(ties: str) -> None:
    """Nodes share points on purpose: each tie rule matches its plain-Python meaning, and
    add / remove (rebuilding, or merging for "keep") give the freshly built ring."""

    class Shared(RingRouter):
        ordered = True

        def points(self, node: str, weight: float) -> list[int]:
            k = int(node[1:])
            return [(j * 1000) << 40 for j in range(k, k + 4)]  # n1: 1..4, n2: 2..5, ...

    Shared.ties = ties
    names = ["n3", "n1", "n2"]
    ring = Shared(names)
    table: dict[int, list[str]] = {}
    for n in names:  # generation order: the order given (ordered = True)
        for p in ring.points(n, 1.0):
            table.setdefault(p, []).append(n)
    want_pos, want_own = [], []
    for p in sorted(table):
        owners = table[p]
        if ties == "keep":
            want_pos += [p] * len(owners)
            want_own += owners
        elif ties == "first":
            want_pos.append(p)
            want_own.append(owners[0])
        else:
            want_pos += [p] * len(owners)
            want_own += [owners[-1]] * len(owners)
    assert ring.positions.tolist() == want_pos
    assert [ring.nodes[o] for o in ring.owners.tolist()] == want_own
    ring.add("n4")
    assert ring == Shared(names + ["n4"])
    assert ring.positions.tolist() == Shared(names + ["n4"]).positions.tolist()
    assert ring.owners.tolist() == Shared(names + ["n4"]).owners.tolist()
    ring.remove("n1")
    fresh = Shared(["n3", "n2", "n4"])
    assert ring.owners.tolist() == fresh.owners.tolist() and ring.nodes == fresh.nodes


def test_every_router_kind_has_its_own_number() -> None:
    numbers = list(_format.KINDS.values())
    assert len(numbers) == len(set(numbers))
    assert all(0 < k < 1 << 16 for k in numbers)
    from routers import ROUTERS

    for spec in ROUTERS:
        cls = spec.cls
        assert _format.KINDS[cls.__name__ if cls.__module__.startswith("consistent_hash")
                             else "RingRouter"] == cls._kind, cls
    assert HashRing._kind == 1  # the first kind ever written: never renumbered
