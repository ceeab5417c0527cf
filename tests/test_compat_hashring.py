"""consistent_hash.compat.hashring.HashRing against the real hashring 1.5.1, built from the
same inputs: every key must go to the same node, and every method must give the same result."""

from __future__ import annotations

import pickle
import random
from typing import Any

import hashring
import numpy as np
import pytest

from consistent_hash.compat import hashring as ours

N_KEYS = 100_000


def _keys(n: int, seed: int = 1) -> list[str]:
    rnd = random.Random(seed)
    keys = []
    for i in range(n):
        r = i % 4
        if r == 0:
            keys.append(f"user:{rnd.getrandbits(48)}")
        elif r == 1:
            keys.append("ключ-" + "".join(chr(rnd.randrange(0x20, 0x2FFF)) for _ in range(6)))
        elif r == 2:
            keys.append(str(i))
        else:
            keys.append("/".join(f"seg{rnd.randrange(99)}" for _ in range(rnd.randrange(1, 40))))
    keys.append("")
    return keys


KEYS = _keys(N_KEYS)

CONFIGS: dict[str, tuple[list[Any], dict[Any, Any] | None]] = {
    "memcache-3": (["192.168.0.246:11212", "192.168.0.247:11212", "192.168.0.249:11212"], None),
    "weights-int": ([f"node{i}" for i in range(10)], {"node1": 3, "node4": 2, "node7": 5}),
    "weights-float": ([f"n{i}" for i in range(7)], {"n0": 0.5, "n3": 2.25}),
    "many-300": ([f"shard-{i:03d}" for i in range(300)], None),   # 32-bit point collisions
    "duplicate-node": (["a", "b", "a", "c"], None),
    "int-nodes": ([1, 2, 3, 4], {2: 2}),
}


def _pair(name: str) -> tuple[Any, Any]:
    nodes, weights = CONFIGS[name]
    return hashring.HashRing(nodes, weights), ours.HashRing(nodes, weights)


@pytest.mark.parametrize("name", CONFIGS)
def test_every_key_same_node(name: str) -> None:
    ref, ring = _pair(name)
    expected = [ref.get_node(k) for k in KEYS]
    assert ring.get_many(KEYS).tolist() == expected
    assert [ring.get_node(k) for k in KEYS[::11]] == expected[::11]
    assert ring.get_many(np.array(KEYS[:20_000])).tolist() == expected[:20_000]


@pytest.mark.parametrize("name", CONFIGS)
def test_method_results(name: str) -> None:
    ref, ring = _pair(name)
    assert ring._sorted_keys == ref._sorted_keys
    assert ring.ring == ref.ring
    for k in KEYS[:3000]:
        assert ring.get_node_pos(k) == ref.get_node_pos(k)
        assert ring.gen_key(k) == ref.gen_key(k)
    for k in KEYS[: 300 if len(ring.ring_nodes()) < 50 else 20]:  # hashring walks every point
        assert list(ring.iterate_nodes(k)) == list(ref.iterate_nodes(k))
        assert list(ring.iterate_nodes(k, False)) == list(ref.iterate_nodes(k, False))
    assert ring.nodes is CONFIGS[name][0]


def test_membership_changes_by_rebuilding() -> None:
    """hashring has no add/remove: users build a new ring; ours must agree at every step."""
    rnd = random.Random(5)
    nodes = [f"10.1.0.{i}:11211" for i in range(6)]
    weights: dict[str, int] = {}
    keys = KEYS[:25_000]
    for step in range(8):
        if step % 3 == 2 and len(nodes) > 2:
            nodes.remove(rnd.choice(nodes))
        else:
            nodes.append(f"10.2.0.{step}:11211")
            weights[nodes[-1]] = rnd.randrange(1, 4)
        ref, ring = hashring.HashRing(list(nodes), dict(weights)), ours.HashRing(
            list(nodes), dict(weights))
        assert ring.get_many(keys).tolist() == [ref.get_node(k) for k in keys]


def test_empty_ring_and_zero_weights() -> None:
    ref, ring = hashring.HashRing([]), ours.HashRing([])
    assert ring.get_node("k") is ref.get_node("k") is None
    assert ring.get_node_pos("k") is ref.get_node_pos("k") is None
    assert list(ring.iterate_nodes("k")) == list(ref.iterate_nodes("k")) == [(None, None)]
    ref, ring = hashring.HashRing(["a", "b"], {"a": 0}), ours.HashRing(["a", "b"], {"a": 0})
    assert [ring.get_node(k) for k in KEYS[:2000]] == [ref.get_node(k) for k in KEYS[:2000]]
    with pytest.raises(ZeroDivisionError):
        ours.HashRing(["a"], {"a": 0})


def test_what_we_do_where_hashring_fails() -> None:
    ref, ring = _pair("memcache-3")
    with pytest.raises(AttributeError):
        ref.get_node(b"bytes-key")
    # bytes are hashed as their bytes: the same node as the same text
    assert ring.get_node(b"bytes-key") == ring.get_node("bytes-key") == ref.get_node("bytes-key")
    assert ring.get_node(1234) == ref.get_node("1234")
    back = pickle.loads(pickle.dumps(ring))
    assert back.get_many(KEYS[:5000]).tolist() == ring.get_many(KEYS[:5000]).tolist()
    with pytest.raises(TypeError):
        ring.get_node(1.5)
