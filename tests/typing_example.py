"""A typed tour of the public API, checked with ``mypy --strict`` (tests/test_typing.py).

Every call's result goes through ``assert_type``, so a public annotation that is missing,
widened to ``Any`` or wrong fails the type check, not just a wrong call. ``main()`` is also
run by pytest, so the example cannot drift from what the library really does.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np
import numpy.typing as npt

from consistent_hash import EmptyRingError, HashRing

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # typing_extensions comes with mypy, which the test extra installs
    from typing_extensions import assert_type


def build_rings() -> tuple[HashRing, HashRing]:
    """A ring from a list of names, and a weighted one from a mapping."""
    plain = HashRing(["cache-a", "cache-b", "cache-c"])
    weighted = HashRing({"big": 2.0, "small": 0.5}, vnodes=100, hash="xxh64", seed=7)
    assert_type(plain, HashRing)
    assert_type(plain.nodes, tuple[str, ...])
    assert_type(weighted.weights, dict[str, float])
    return plain, weighted


def mutate(ring: HashRing) -> None:
    """add / set_weight / remove, each returning None."""
    ring.add("cache-d")
    ring.add("cache-e", weight=0.5)
    ring.set_weight("cache-d", 3.0)
    ring.remove("cache-e")
    assert "cache-d" in ring and "cache-e" not in ring
    assert len(ring) == 4


def single_lookups(ring: HashRing) -> None:
    """Scalar calls take str, bytes or int keys."""
    node = ring.get("user:42")
    assert_type(node, str)
    assert ring.get(b"user:42") == node
    assert_type(ring.get(42), str)
    h = ring.hash("user:42")
    assert_type(h, int)
    reps = ring.replicas("user:42", 2)
    assert_type(reps, list[str])
    assert reps[0] == node and len(set(reps)) == 2


def batch_lookups(ring: HashRing) -> None:
    """Batch calls take lists or arrays and return NumPy arrays."""
    keys = [f"user:{i}" for i in range(100)]
    names = ring.get_many(keys)
    assert_type(names, npt.NDArray[np.object_])
    idx = ring.get_indices(np.array(keys))
    assert_type(idx, npt.NDArray[np.int32])
    out = np.empty(len(keys), dtype=np.int32)
    assert_type(ring.get_indices(keys, out=out), npt.NDArray[np.int32])
    hashes = ring.hash_many(keys)
    assert_type(hashes, npt.NDArray[np.uint64])
    via_hashes = ring.lookup(hashes)
    assert_type(via_hashes, npt.NDArray[np.int32])
    assert (via_hashes == idx).all() and (out == idx).all()
    assert [ring.nodes[i] for i in idx.tolist()] == names.tolist()
    table = ring.replicas_many(keys, 2)
    assert_type(table, npt.NDArray[np.object_])
    assert table.shape == (len(keys), 2)
    assert_type(ring.replica_indices(keys, 2), npt.NDArray[np.int32])


def analytics_and_serialization(ring: HashRing) -> None:
    """ownership, to_bytes / from_bytes, fingerprint, copies."""
    shares = ring.ownership()
    assert_type(shares, dict[str, float])
    assert abs(sum(shares.values()) - 1.0) < 1e-9
    data = ring.to_bytes()
    assert_type(data, bytes)
    back = HashRing.from_bytes(data)
    assert_type(back, HashRing)
    assert back == ring
    fp = ring.fingerprint()
    assert_type(fp, str)
    assert back.fingerprint() == fp
    assert_type(ring.copy(), HashRing)
    assert pickle.loads(pickle.dumps(ring)) == ring
    assert_type(ring.positions, npt.NDArray[np.uint64])
    assert_type(ring.owners, npt.NDArray[np.int32])


def empty_ring() -> None:
    """Lookups on an empty ring raise EmptyRingError, a LookupError."""
    ring = HashRing()
    try:
        ring.get("k")
    except EmptyRingError as e:
        assert_type(e, EmptyRingError)
        assert isinstance(e, LookupError)
    else:
        raise AssertionError("an empty ring must raise EmptyRingError")


def main() -> None:
    plain, weighted = build_rings()
    mutate(plain)
    for ring in (plain, weighted):
        single_lookups(ring)
        batch_lookups(ring)
        analytics_and_serialization(ring)
    empty_ring()


if __name__ == "__main__":
    main()
