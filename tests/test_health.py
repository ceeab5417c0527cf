"""Health-aware routing on HashRing: mark_down / mark_up / down.

The expected routing is derived independently of the health kernel: from the ring's own
replica lists with every node up (a down node's key goes to the first up node of its replica
walk) and from a bisect model over positions and owners.
"""

from __future__ import annotations

import bisect
import copy
import pickle

import numpy as np
import pytest

from consistent_hash import EmptyRingError, HashRing

NODES = [f"n{i}" for i in range(12)]
KEYS = [f"key:{i}" for i in range(60_000)]


def _expected(ring: HashRing, down: set[str], keys: list[str]) -> list[str]:
    """First up node of each key's full replica walk, computed with every node up."""
    full = HashRing(ring.weights, vnodes=ring.vnodes, hash=ring.hash_name, seed=ring.seed)
    walks = full.replicas_many(keys, len(full))
    return [next(n for n in row if n not in down) for row in walks.tolist()]


def _bisect_model(ring: HashRing, down: set[str], key: str) -> str:
    pos = ring.positions.tolist()
    own = [ring.nodes[i] for i in ring.owners.tolist()]
    i = bisect.bisect_left(pos, ring.hash(key)) % len(pos)
    for j in range(len(pos)):
        node = own[(i + j) % len(pos)]
        if node not in down:
            return node
    raise AssertionError("all down")


def test_down_node_keys_fall_to_their_next_replica_and_nobody_else_moves() -> None:
    ring = HashRing(NODES)
    before = ring.get_many(KEYS)
    second = ring.replicas_many(KEYS, 2)[:, 1]
    positions, owners = ring.positions.copy(), ring.owners.copy()
    ring.mark_down("n4")
    after = ring.get_many(KEYS)
    moved = before != after
    assert set(before[moved]) == {"n4"} and moved.sum() == (before == "n4").sum()
    assert np.array_equal(after[moved], second[moved])
    assert "n4" not in set(after)
    # no rebuild of the layout
    assert np.array_equal(ring.positions, positions) and np.array_equal(ring.owners, owners)
    assert ring.nodes == tuple(sorted(NODES)) and len(ring) == 12 and "n4" in ring
    ring.mark_up("n4")
    assert np.array_equal(ring.get_many(KEYS), before)
    assert ring.down == frozenset()


def test_several_down_nodes_against_independent_models() -> None:
    ring = HashRing({n: 1.0 + (i % 3) for i, n in enumerate(NODES)}, vnodes=40)
    down = {"n1", "n2", "n7", "n11"}
    for n in sorted(down):
        ring.mark_down(n)
    assert ring.down == frozenset(down)
    keys = KEYS[:5000]
    want = _expected(ring, down, keys)
    assert ring.get_many(keys).tolist() == want
    assert [ring.get(k) for k in keys[:500]] == want[:500]
    assert ring.lookup(ring.hash_many(keys)).tolist() == [ring.nodes.index(n) for n in want]
    assert np.array(ring.get_indices(np.array(keys))).tolist() == [
        ring.nodes.index(n) for n in want]
    assert [_bisect_model(ring, down, k) for k in keys[:300]] == want[:300]


def test_replicas_skip_down_nodes() -> None:
    ring = HashRing(NODES)
    full = ring.replicas_many(KEYS[:2000], 12).tolist()
    ring.mark_down("n3")
    ring.mark_down("n8")
    reps = ring.replicas_many(KEYS[:2000], 12)
    assert reps.shape == (2000, 10)  # only the up nodes
    assert reps.tolist() == [[n for n in row if n not in ("n3", "n8")] for row in full]
    assert ring.replicas(KEYS[0], 3) == [n for n in full[0] if n not in ("n3", "n8")][:3]
    assert np.array_equal(ring.replicas_many(KEYS[:2000], 1)[:, 0],
                          ring.get_many(KEYS[:2000]))


def test_all_down_raises_and_recovers() -> None:
    ring = HashRing(["a", "b"])
    ring.mark_down("a")
    ring.mark_down("b")
    for call in (lambda: ring.get("k"), lambda: ring.get_many(["k"]),
                 lambda: ring.lookup(np.zeros(2, dtype=np.uint64)),
                 lambda: ring.replicas("k", 1), lambda: ring.get_indices(["k"])):
        with pytest.raises(EmptyRingError, match="down"):
            call()
    ring.mark_up("b")
    assert ring.get("k") == "b"
    assert set(ring.get_many(KEYS[:100])) == {"b"}


def test_mark_errors_and_idempotence() -> None:
    ring = HashRing(["a", "b", "c"])
    with pytest.raises(KeyError):
        ring.mark_down("zz")
    with pytest.raises(KeyError):
        ring.mark_up("zz")
    with pytest.raises(TypeError):
        ring.mark_down(3)  # type: ignore[arg-type]
    ring.mark_down("a")
    snapshot = ring.get_many(KEYS[:1000])
    ring.mark_down("a")
    ring.mark_up("b")
    assert np.array_equal(ring.get_many(KEYS[:1000]), snapshot)


def test_health_survives_changes_copies_and_pickles() -> None:
    ring = HashRing(NODES)
    ring.mark_down("n2")
    ring.add("extra")
    assert ring.down == {"n2"} and "n2" not in set(ring.get_many(KEYS[:5000]))
    ring.set_weight("n5", 2.0)
    ring.set_weight("n5", 2.0)
    assert "n2" not in set(ring.get_many(KEYS[:5000]))
    for other in (ring.copy(), copy.deepcopy(ring), pickle.loads(pickle.dumps(ring))):
        assert other == ring and other.down == {"n2"}
        assert np.array_equal(other.get_many(KEYS[:3000]), ring.get_many(KEYS[:3000]))
    other = ring.copy()
    other.mark_up("n2")
    assert other != ring and ring.down == {"n2"}
    ring.remove("n2")  # removing a down node clears its mark
    assert ring.down == frozenset()
    # to_bytes carries the down marks (format version 2); an all-up ring writes version 1
    up_bytes, up_fp = ring.to_bytes(), ring.fingerprint()
    assert up_bytes[4:6] == b"\x01\x00"
    ring.mark_down("n1")
    data = ring.to_bytes()
    assert data[4:6] == b"\x02\x00"
    restored = HashRing.from_bytes(data)
    assert restored.down == {"n1"} and restored == ring
    assert restored.fingerprint() == ring.fingerprint() != up_fp
    assert np.array_equal(restored.get_many(KEYS[:3000]), ring.get_many(KEYS[:3000]))
    ring.mark_up("n1")
    assert ring.to_bytes() == up_bytes and ring.fingerprint() == up_fp


def test_every_container_routes_around_down_nodes() -> None:
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    ring = HashRing(NODES)
    ring.mark_down("n0")
    keys = KEYS[:3000]
    want = [ring.get(k) for k in keys]
    for c in (keys, np.array(keys), pa.array(keys), pd.Series(keys),
              pa.chunked_array([keys[:10], keys[10:]])):
        assert ring.get_many(c).tolist() == want
    assert "n0" not in want


def _routing_model(ring: HashRing, down: set[str]) -> np.ndarray:
    """Each position's routing owner by a plain backward walk (independent of ch_health)."""
    own = [ring.nodes[i] for i in ring.owners.tolist()]
    n = len(own)
    out = [""] * n
    first_up = next(o for o in own if o not in down)
    cur = first_up
    for i in range(n - 1, -1, -1):
        if own[i] not in down:
            cur = own[i]
        out[i] = cur
    return np.array([ring.nodes.index(o) for o in out], dtype=np.int32)


@pytest.mark.parametrize("n_down", [1, 2, 5, 8, 9, 11])
def test_few_and_many_down_route_as_the_model(n_down: int) -> None:
    # up to 8 down, the snapshot searches the layout and walks on from a down answer; more
    # down, it builds routing owners: both must route as the model, on every path
    ring = HashRing({n: 1.0 + (i % 4) for i, n in enumerate(NODES)}, vnodes=30)
    down = {NODES[(i * 7) % 12] for i in range(n_down)}
    for n in sorted(down):
        ring.mark_down(n)
    keys = KEYS[:6000]
    want = _expected(ring, down, keys)
    assert ring.get_many(keys).tolist() == want
    assert ring.get_many(keys, threads=2).tolist() == want
    assert [ring.get(k) for k in keys[:400]] == want[:400]
    hashes = ring.hash_many(keys)
    assert ring.lookup(hashes).tolist() == [ring.nodes.index(n) for n in want]
    assert np.array_equal(ring._core.routing_owners, _routing_model(ring, down))
    up = [n for n in ring.nodes if n not in down]
    reps = ring.replicas_many(keys[:500], len(up)).tolist()
    assert [row[0] for row in reps] == want[:500]
    assert all(sorted(row) == up for row in reps)
    assert ring.replicas(keys[0], 2) == reps[0][:2]
    # the edge hashes: 0, the last position (wrap) and 2**64 - 1
    edges = np.array([0, int(ring.positions[-1]), 2**64 - 1], dtype=np.uint64)
    assert ring.lookup(edges).tolist() == [
        ring.nodes.index(_bisect_model_hash(ring, down, int(h))) for h in edges]


def _bisect_model_hash(ring: HashRing, down: set[str], h: int) -> str:
    pos = ring.positions.tolist()
    own = [ring.nodes[i] for i in ring.owners.tolist()]
    i = bisect.bisect_left(pos, h) % len(pos)
    return next(own[(i + j) % len(pos)] for j in range(len(pos))
                if own[(i + j) % len(pos)] not in down)
