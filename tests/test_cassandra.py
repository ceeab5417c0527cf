"""Cassandra tokens against the Python driver's murmur3 (cassandra-driver) on every length
0..100 with high bytes, and TokenRing ownership / replicas against the driver's SimpleStrategy
replica map."""

from __future__ import annotations

import random
from bisect import bisect_left

import numpy as np
import pytest

from consistent_hash import TokenRing, murmur3_token, murmur3_tokens
from consistent_hash.compat.cassandra import MAX_TOKEN, MIN_TOKEN

murmur3_mod = pytest.importorskip("cassandra.murmur3", reason="cassandra-driver is the reference")
metadata = pytest.importorskip("cassandra.metadata")
murmur3 = murmur3_mod.murmur3


def _byte_strings() -> list[bytes]:
    rnd = random.Random(11)
    out = []
    for n in range(0, 101):
        for kind in range(30):
            if kind < 10:
                b = bytes(rnd.getrandbits(8) for _ in range(n))           # anything
            elif kind < 20:
                b = bytes(rnd.randrange(0x80, 0x100) for _ in range(n))   # all high bytes
            else:
                b = bytes(rnd.randrange(0, 0x80) for _ in range(n))       # all low bytes
            out.append(b)
    out += [bytes([i]) for i in range(256)] + [b"\xff" * n for n in range(1, 40)]
    return out


KEYS = _byte_strings()


def test_tokens_match_the_driver() -> None:
    expected = [murmur3(k) for k in KEYS]
    assert [murmur3_token(k, raw=True) for k in KEYS] == expected
    assert murmur3_tokens(KEYS, raw=True).tolist() == expected
    # the server's rules: only the empty key differs from the driver's murmur3 here
    server = murmur3_tokens(KEYS).tolist()
    for k, s, e in zip(KEYS, server, expected, strict=True):
        assert s == (MIN_TOKEN if k == b"" else e)
        assert s == murmur3_token(k)
    # the driver's token class maps Long.MIN_VALUE to MAX (as the server) but not the empty key
    tok = metadata.Murmur3Token
    assert all(tok.from_key(k).value == murmur3_token(k) for k in KEYS if k)
    assert murmur3_tokens(KEYS).dtype == np.int64


def test_sign_extended_tail_differs_from_plain_murmur3() -> None:
    mmh3 = pytest.importorskip("mmh3")
    k = b"\xff\x80abc"  # tail bytes >= 0x80
    plain = mmh3.hash64(k, 0, signed=True)[0]
    assert murmur3_token(k) == murmur3(k) != plain
    assert murmur3_token(b"abc") == mmh3.hash64(b"abc", 0, signed=True)[0]


def test_containers_and_text_keys() -> None:
    text = [f"user-{i}-ключ" for i in range(3000)]
    enc = [t.encode() for t in text]
    expected = [murmur3(b) for b in enc]
    assert murmur3_tokens(text).tolist() == expected
    assert murmur3_tokens(np.array(text)).tolist() == expected
    assert murmur3_tokens(np.array(enc, dtype=object)).tolist() == expected
    assert murmur3_tokens(tuple(enc)).tolist() == expected
    pa = pytest.importorskip("pyarrow")
    assert murmur3_tokens(pa.array(enc, type=pa.binary())).tolist() == expected
    for bad in (5, [b"a", 5], np.arange(3)):
        with pytest.raises(TypeError, match="serialize"):
            murmur3_tokens(bad) if not isinstance(bad, int) else murmur3_token(bad)  # type: ignore[arg-type]


def _driver_replicas(tokens: dict[str, list[int]], keys: list[bytes], rf: int
                     ) -> list[list[str]]:
    tok = metadata.Murmur3Token
    owner = {tok(t): n for n, ts in tokens.items() for t in ts}
    ring = sorted(owner)
    strategy = metadata.SimpleStrategy({"replication_factor": str(rf)})
    replica_map = strategy.make_token_replica_map(owner, ring)
    out = []
    for k in keys:
        t = tok.from_key(k)
        point = bisect_left(ring, t)  # as the driver's TokenMap.get_replicas
        out.append(list(replica_map[ring[point % len(ring)]]))
    return out


@pytest.mark.parametrize("num_tokens,nodes", [(1, 3), (16, 6), (256, 4)])
def test_ownership_and_replicas_match_the_driver(num_tokens: int, nodes: int) -> None:
    rnd = random.Random(num_tokens * 100 + nodes)
    tokens = {f"10.0.0.{i}": [rnd.randrange(MIN_TOKEN, MAX_TOKEN) for _ in range(num_tokens)]
              for i in range(1, nodes + 1)}
    ring = TokenRing.from_tokens(tokens)
    keys = [k for k in KEYS if k] + [f"k{i}".encode() for i in range(5000)]
    for rf in (1, 2, 3):
        expected = _driver_replicas(tokens, keys, rf)
        assert ring.replicas_many(keys, rf).tolist() == expected
        assert [ring.replicas(k, rf) for k in keys[:300]] == expected[:300]
        if rf == 1:
            assert ring.get_many(keys).tolist() == [e[0] for e in expected]
            assert [ring.get(k) for k in keys[:300]] == [e[0] for e in expected[:300]]


def test_range_ownership_is_previous_token_exclusive_own_token_inclusive() -> None:
    ring = TokenRing.from_tokens({"a": [-100, 5000], "b": [0], "c": [9000]})
    assert ring.owner_of_token(-100) == "a"
    assert ring.owner_of_token(-99) == "b"
    assert ring.owner_of_token(0) == "b"
    assert ring.owner_of_token(1) == "a"
    assert ring.owner_of_token(9000) == "c"
    assert ring.owner_of_token(9001) == "a"          # wraps to the smallest token
    assert ring.owner_of_token(MIN_TOKEN) == "a"
    assert ring.ring() == [(-100, "a"), (0, "b"), (5000, "a"), (9000, "c")]
    share = ring.ownership()
    assert abs(sum(share.values()) - 1) < 1e-12 and share["a"] > 0.99


def test_allocation_splits_largest_ranges_and_moves_keys_only_to_the_joiner() -> None:
    rnd = random.Random(4)
    tokens = {f"n{i}": [rnd.randrange(MIN_TOKEN, MAX_TOKEN) for _ in range(8)] for i in range(4)}
    ring = TokenRing.from_tokens(tokens)
    keys = [f"key-{i}".encode() for i in range(20_000)]
    before = ring.get_many(keys)
    # the largest ranges before the join
    pos = sorted(t + (1 << 63) for ts in tokens.values() for t in ts)
    sizes = sorted(((p - pos[i - 1]) % (1 << 64), i) for i, p in enumerate(pos))[::-1]
    new = ring.add("joiner", num_tokens=4)
    assert len(new) == 4 and ring.tokens["joiner"] == new
    biggest = {i for _, i in sizes[:4]}
    for t in new:
        u = t + (1 << 63)
        i = bisect_left(pos, u) % len(pos)
        assert i in biggest            # each new token lies in one of the 4 largest ranges
    after = ring.get_many(keys)
    moved = before != after
    assert set(after[moved]) == {"joiner"}
    ring.remove("joiner")
    assert ring.get_many(keys).tolist() == before.tolist()
    assert TokenRing().allocate_tokens(4) == [MIN_TOKEN, -(1 << 62), 0, 1 << 62]


def test_errors() -> None:
    with pytest.raises(ValueError, match="claimed by both"):
        TokenRing.from_tokens({"a": [1], "b": [1]})
    with pytest.raises(ValueError):
        TokenRing.from_tokens({"a": [1 << 63]})
    with pytest.raises(ValueError):
        TokenRing.from_tokens({"a": []})
    ring = TokenRing.from_tokens({"a": [1]})
    with pytest.raises(ValueError):
        ring.add("a", [2])
    with pytest.raises(KeyError):
        ring.remove("b")
    import pickle

    assert pickle.loads(pickle.dumps(ring)).tokens == ring.tokens
