"""Redis Cluster slots against a real redis-server (--cluster-enabled yes: CLUSTER KEYSLOT)
and redis-py's key_slot; SlotMap from a real CLUSTER SLOTS reply; rebalancing plans."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from live_servers import HOST, redis_cluster_server  # noqa: E402

from consistent_hash import EmptyRingError, SlotMap, redis_slot, redis_slots  # noqa: E402
from consistent_hash.compat.redis import SLOTS  # noqa: E402

redis = pytest.importorskip("redis")
from redis.crc import key_slot  # noqa: E402


def _keys(n: int = 6000, seed: int = 3) -> list[bytes]:
    rnd = random.Random(seed)
    keys: list[bytes] = [b"", b"{", b"}", b"{}", b"{}x", b"x{}", b"{{}}", b"a{b}c",
                         b"{user1000}.following", b"{user1000}.followers", b"foo{}{bar}",
                         b"foo{{bar}}zap", b"foo{bar}{zap}",
                         b"123456789", b"}{", b"{a", b"a}", "{ключ}-значение".encode()]
    alphabet = b"ab{}{}xyz:/-_" + bytes(range(0x80, 0x100, 7))
    for i in range(n):
        r = i % 5
        if r == 0:
            keys.append(f"user:{rnd.getrandbits(48)}".encode())
        elif r == 1:
            keys.append(bytes(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 24))))
        elif r == 2:
            keys.append(f"{{tag{rnd.randrange(100)}}}:item:{i}".encode())
        elif r == 3:
            keys.append(f"ключ:{chr(0x4E00 + rnd.randrange(9000))}:{i}".encode())
        else:
            keys.append(bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(0, 300))))
    return keys


KEYS = _keys()


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    with redis_cluster_server() as port:
        yield port


def test_cluster_keyslot_of_every_key(server: int) -> None:
    r = redis.Redis(host=HOST, port=server)
    try:
        expected = []
        for s in range(0, len(KEYS), 1000):
            pipe = r.pipeline(transaction=False)
            for k in KEYS[s : s + 1000]:
                pipe.execute_command("CLUSTER", "KEYSLOT", k)
            expected.extend(int(x) for x in pipe.execute())
    finally:
        r.close()
    assert redis_slots(KEYS).tolist() == expected
    assert [redis_slot(k) for k in KEYS] == expected
    assert [key_slot(k) for k in KEYS] == expected
    text = [k.decode("utf-8") for k in KEYS if _utf8(k)]
    assert redis_slots(text).tolist() == [key_slot(t.encode()) for t in text]
    assert redis_slots(np.array(text)).tolist() == [key_slot(t.encode()) for t in text]
    assert redis_slots(KEYS).dtype == np.uint16


def test_cluster_slots_reply_routes_keys(server: int) -> None:
    """Give the node slot ranges, read CLUSTER SLOTS back, route keys with it."""
    r = redis.Redis(host=HOST, port=server)
    try:
        r.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 999, 5000, 16383)
        raw = r.execute_command("CLUSTER", "SLOTS")
        via_redis_py = r.cluster_slots() if hasattr(r, "cluster_slots") else None
    finally:
        r.close()
    m = SlotMap.from_cluster_slots(raw)
    node = m.nodes[0]
    assert node.endswith(f":{server}")
    assert m.ranges() == [(0, 999, node), (5000, 16383, node)]
    if isinstance(via_redis_py, dict):
        assert SlotMap.from_cluster_slots(via_redis_py) == m
    slots = redis_slots(KEYS)
    got = m.get_many(KEYS)
    served = (slots <= 999) | (slots >= 5000)
    assert set(got[served].tolist()) == {node}
    assert set(got[~served].tolist()) == {None}
    assert (m.get_indices(KEYS)[~served] == -1).all()
    with pytest.raises(LookupError) as ei:
        m.get(next(k for k, s in zip(KEYS, slots, strict=True) if 1000 <= s < 5000))
    assert not isinstance(ei.value, EmptyRingError)  # the map has a node: only this slot has none


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_known_slots() -> None:
    assert redis_slot("123456789") == 12739
    assert redis_slot("{user1000}.following") == redis_slot("{user1000}.followers") == 3443
    assert redis_slot("foo{}{bar}") == 8363
    assert redis_slot("foo{{bar}}zap") == redis_slot("{bar")
    assert redis_slot("") == 0
    assert redis_slot(12345) == redis_slot("12345")


def test_even_split_and_routing() -> None:
    m = SlotMap.even(["a", "b", "c"])
    # what redis-cli --cluster create assigns to three masters
    assert m.ranges() == [(0, 5460, "a"), (5461, 10922, "b"), (10923, 16383, "c")]
    keys = [f"k{i}" for i in range(10_000)]
    expected = [m.get_slot(key_slot(k.encode())) for k in keys]
    assert m.get_many(keys).tolist() == expected
    assert [m.get(k) for k in keys[:500]] == expected[:500]
    assert sum(m.counts().values()) == SLOTS


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 16])
def test_rebalance_moves_fewest_slots(n: int) -> None:
    names = [f"node{i}" for i in range(n)]
    m = SlotMap.even(names)
    # join: only the new node receives, exactly its target
    new, moves = m.add_node("joiner")
    counts = new.counts()
    assert max(counts.values()) - min(counts.values()) <= 1
    assert all(mv.target == "joiner" for mv in moves)
    moved = sum(mv.count for mv in moves)
    assert moved == counts["joiner"]
    assert moved == SLOTS // (n + 1)  # the extra slots stay with the nodes that hold them
    _check_moves(m, new, moves)
    # leave: only the leaver's slots move
    if n > 1:
        gone, moves = m.remove_node("node0")
        assert all(mv.source == "node0" for mv in moves)
        assert sum(mv.count for mv in moves) == m.counts()["node0"]
        c = gone.counts()
        assert max(c.values()) - min(c.values()) <= 1
        _check_moves(m, gone, moves)


def test_rebalance_uneven_and_unassigned() -> None:
    m = SlotMap([(0, 9999, "big"), (10000, 10999, "small")])  # 5384 slots unassigned
    new, moves = m.rebalance(["big", "small", "third"])
    c = new.counts()
    assert sorted(c.values()) == [5461, 5461, 5462] and c["big"] == 5462
    excess = 10000 - 5462
    assert sum(mv.count for mv in moves) == excess + 5384
    _check_moves(m, new, moves)


def _check_moves(old: SlotMap, new: SlotMap, moves: list) -> None:  # type: ignore[type-arg]
    """Applying the moves to old gives new, and every other slot stays where it was."""
    table = {s: old.get_slot(s) for s in range(SLOTS)}
    for mv in moves:
        for s in range(mv.first, mv.last + 1):
            assert table[s] == mv.source
            table[s] = mv.target
    assert all(table[s] == new.get_slot(s) for s in range(SLOTS))


def test_slotmap_errors() -> None:
    with pytest.raises(ValueError):
        SlotMap([(0, 10, "a"), (5, 20, "b")])
    with pytest.raises(ValueError):
        SlotMap([(0, 16384, "a")])
    with pytest.raises(ValueError):
        SlotMap([(10, 5, "a")])
    with pytest.raises(TypeError):
        SlotMap([(0, 5, 7)])
    m = SlotMap.even(["a"])
    with pytest.raises(ValueError):
        m.add_node("a")
    with pytest.raises(KeyError):
        m.remove_node("zz")
    import pickle

    assert pickle.loads(pickle.dumps(m)) == m
