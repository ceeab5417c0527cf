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

from consistent_hash import BoundedLoad, EmptyRingError, HashRing, JumpHash
from consistent_hash.algorithms import Maglev, MementoHash, MultiProbe, Rendezvous, jump_hash

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
    # bytes-like keys are what runs: a bytearray or a memoryview is hashed as its bytes
    assert ring.get(bytearray(b"user:42")) == node
    assert ring.get(memoryview(b"user:42")) == node
    assert ring.hash(memoryview(b"user:42")) == ring.hash(b"user:42")
    assert ring.replicas(bytearray(b"user:42"), 2) == ring.replicas("user:42", 2)
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


def health(ring: HashRing) -> None:
    """mark_down / mark_up / down: a down node's keys go elsewhere, and come back."""
    keys = [f"user:{i}" for i in range(200)]
    before = ring.get_many(keys)
    node = ring.nodes[0]
    ring.mark_down(node)
    assert_type(ring.down, frozenset[str])
    assert ring.down == frozenset({node})
    assert node not in ring.get_many(keys).tolist()
    assert ring.replicas("user:1", 2)[0] != node
    ring.mark_up(node)
    assert not ring.down
    assert (ring.get_many(keys) == before).all()


def algorithms() -> None:
    """JumpHash, Rendezvous, Maglev, MultiProbe and MementoHash share HashRing's surface."""
    keys = [f"user:{i}" for i in range(100)]
    jh = JumpHash(["a", "b", "c"])
    assert_type(jh, JumpHash)
    assert_type(jh.get(42), str)
    assert_type(jh.get_indices([0, 1, 2, 3]), npt.NDArray[np.int32])
    assert_type(jh.nodes, tuple[str, ...])
    assert jh.get_indices([0, 1, 2, 3, 4]).tolist() == JumpHash(3).get_indices(
        [0, 1, 2, 3, 4]).tolist()
    jh.add("d")
    jh.remove("d")
    assert_type(JumpHash.from_bytes(jh.to_bytes()), JumpHash)
    assert jump_hash(10863919174838991, 11) == 6

    rdv = Rendezvous({"a": 1.0, "b": 2.0, "c": 1.0}, seed=3)
    assert_type(rdv, Rendezvous)
    assert_type(rdv.weights, dict[str, float])
    assert_type(rdv.replicas("user:42", 2), list[str])
    assert_type(rdv.replicas_many(keys, 2), npt.NDArray[np.object_])
    assert_type(rdv.replica_indices(keys, 2), npt.NDArray[np.int32])
    rdv.set_weight("c", 0.5)
    assert rdv.replicas("user:42", 3)[0] == rdv.get("user:42")

    mg = Maglev(["a", "b", "c"], table_size=1021)
    assert_type(mg.table, npt.NDArray[np.int32])
    assert_type(mg.table_size, int)
    assert len(mg.table) == mg.table_size == 1021
    assert_type(mg.get_many(keys), npt.NDArray[np.object_])

    mp = MultiProbe(["a", "b", "c"], probes=11)
    assert_type(mp.probes, int)
    assert_type(mp.points, npt.NDArray[np.uint64])
    assert_type(mp.owners, npt.NDArray[np.int32])
    hashes = mp.hash_many(keys)
    assert_type(hashes, npt.NDArray[np.uint64])
    assert (mp.lookup(hashes) == mp.get_indices(keys)).all()

    mh = MementoHash(["a", "b", "c", "d"])
    mh.remove("b")
    assert_type(mh.slots, tuple[str | None, ...])
    assert_type(mh.state, tuple[tuple[str | None, ...], tuple[int, ...]])
    assert mh.slots == ("a", None, "c", "d")
    back = MementoHash.from_state(*mh.state)
    assert_type(back, MementoHash)
    assert back == mh
    mh.add("b")
    assert mh == MementoHash(["a", "b", "c", "d"])
    assert_type(mh.fingerprint(), str)


def bounded() -> None:
    """BoundedLoad over any router: batch assignment and live load."""
    bl = BoundedLoad(HashRing(["a", "b", "c"]), c=1.0)
    assert_type(bl, BoundedLoad)
    keys = [f"k{i}" for i in range(9)]
    names = bl.assign_many(keys)
    assert_type(names, npt.NDArray[np.object_])
    assert sorted(np.unique(names, return_counts=True)[1].tolist()) == [3, 3, 3]
    assert_type(bl.assign_indices(keys, spread=2), npt.NDArray[np.int32])
    assert_type(bl.capacities(9), dict[str, int])
    node = bl.acquire("session-1")
    assert_type(node, str)
    other = bl.acquire(bytearray(b"session-2"))
    assert_type(other, str)
    bl.release(other)
    bl.release(bl.acquire(memoryview(b"session-3")))
    assert_type(bl.loads, dict[str, int])
    assert bl.loads == {node: 1}
    bl.release(node)
    assert bl.loads == {}
    assert_type(bl.c, float)
    assert_type(bl.capacity, int | None)
    fixed = BoundedLoad(Rendezvous(["x", "y"]), capacity=2)
    assert_type(fixed.capacity, int | None)
    assert fixed.assign_many(["k1", "k2", "k3", "k4"]).tolist().count("x") == 2


def cassandra() -> None:
    """TokenRing's keys are serialized partition keys: any bytes-like object, or str."""
    from consistent_hash.compat.cassandra import TokenRing, murmur3_token

    tr = TokenRing({"n1": [0], "n2": [1 << 62]})
    node = tr.get(b"123")
    assert_type(node, str)
    assert tr.get(bytearray(b"123")) == tr.get(memoryview(b"123")) == node
    assert_type(murmur3_token(memoryview(b"123")), int)
    assert murmur3_token(bytearray(b"123")) == murmur3_token(b"123") == -7468325962851647638


def main() -> None:
    plain, weighted = build_rings()
    mutate(plain)
    for ring in (plain, weighted):
        single_lookups(ring)
        batch_lookups(ring)
        analytics_and_serialization(ring)
    health(plain)
    empty_ring()
    algorithms()
    bounded()
    cassandra()


if __name__ == "__main__":
    main()
