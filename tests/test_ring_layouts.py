"""Every ring on the one base: HashRing is a RingRouter whose points are its recipe, and every
ring (HashRing, KetamaRing, TwemproxyPool, EnvoyRingHash, TokenRing, NginxUpstream,
HAProxyBackend, a RingRouter from outside) reports the exact ownership of its positions.

The references here are independent of the package: the labels hashed by the xxhash and
hashlib packages, arc lengths summed in Python integers over ``positions`` / ``owners`` (a
position owns the arc from the one before it, exclusive, to itself, inclusive; the first
also owns the wrap-around arc), the share of a modula table counted from ``2**32 = q * L + r``,
and the ring built without a node for a node marked down.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

import numpy as np
import pytest
from ringrouter_example import FastringRing

from consistent_hash import HashRing, RingRouter
from consistent_hash.compat.cassandra import TokenRing
from consistent_hash.compat.envoy import EnvoyRingHash
from consistent_hash.compat.haproxy import HAProxyBackend
from consistent_hash.compat.ketama import KETAMA_MODES, KetamaRing
from consistent_hash.compat.nginx import NginxUpstream
from consistent_hash.compat.twemproxy import TwemproxyPool

xxhash = pytest.importorskip("xxhash")


# -- HashRing is a RingRouter whose points are its recipe ---------------------------------------

@pytest.mark.parametrize("hash_name, seed", [("xxh3", 0), ("xxh3", 7), ("xxh64", 3),
                                             ("md5", 0), ("callable", 0)])
def test_hashring_points_are_its_labels_hashed(hash_name: str, seed: int) -> None:
    refs = {"xxh3": lambda b: xxhash.xxh3_64_intdigest(b, seed),
            "xxh64": lambda b: xxhash.xxh64_intdigest(b, seed),
            "md5": lambda b: int.from_bytes(hashlib.md5(b).digest()[:8], "big"),
            "callable": lambda b: int.from_bytes(hashlib.sha1(b).digest()[:8], "big")}
    ref = refs[hash_name]
    weights = {"cache-a": 1.0, "cache-b": 2.5, "ü-node": 0.01, "x": 0.37}
    if hash_name == "callable":
        ring = HashRing(weights, vnodes=40, hash=ref)
    else:
        ring = HashRing(weights, vnodes=40, hash=hash_name, seed=seed)
    if hash_name == "md5":  # the core's md5: the digest's first 8 bytes, big-endian
        assert int(ring.hash_many([b"abc"])[0]) == ref(b"abc")
    assert isinstance(ring, RingRouter)
    pairs = []
    for i, (node, w) in enumerate(ring.weights.items()):
        count = max(1, int(np.floor(40 * w + 0.5)))
        want = [ref(f"{node}#{j}".encode()) for j in range(count)]
        assert ring.points(node, w).tolist() == want
        pairs += [(p, i) for p in want]
    pairs.sort()
    assert ring.positions.tolist() == [p for p, _ in pairs]
    assert ring.owners.tolist() == [o for _, o in pairs]


def test_hashring_mutations_are_the_base_class_merges() -> None:
    """add / remove / set_weight come from RingRouter (HashRing supplies only the C label
    hashing), and each gives the ring built whole."""
    assert "add" not in HashRing.__dict__ and "remove" not in HashRing.__dict__
    assert "set_weight" not in HashRing.__dict__ and "ownership" not in HashRing.__dict__
    ring = HashRing(["a", "b", "c"])
    ring.add("d", 2.0)
    ring.set_weight("a", 0.5)
    ring.set_weight("b", 1.0001)  # the same vnode count: the snapshot kept
    ring.remove("c")
    ring.mark_down("d")
    want = HashRing({"a": 0.5, "b": 1.0001, "d": 2.0})
    want.mark_down("d")
    assert ring == want and ring.fingerprint() == want.fingerprint()
    assert np.array_equal(ring.positions, want.positions)
    with pytest.raises(ValueError, match="already"):
        ring.add("a")
    with pytest.raises(KeyError):
        ring.remove("zzz")
    assert ring.weights == {"a": 0.5, "b": 1.0001, "d": 2.0}


# -- ownership is exact, on every ring ----------------------------------------------------------

def exact_shares(positions: np.ndarray, owners: np.ndarray, nodes: tuple[str, ...],
                 space: int = 1 << 64) -> dict[str, Fraction]:
    """Arc lengths in Python integers: position i owns (p[i-1], p[i]], the first also the
    wrap-around arc (p[-1], space) + [0, p[0]]."""
    pos = [int(p) for p in positions]
    own = [int(o) for o in owners]
    total = dict.fromkeys(nodes, 0)
    for i, (p, o) in enumerate(zip(pos, own, strict=True)):
        arc = p - pos[i - 1] if i else p + space - pos[-1]
        if len(pos) == 1:
            arc = space
        total[nodes[o]] += arc
    return {n: Fraction(t, space) for n, t in total.items()}


def _rings() -> list[tuple[str, object]]:
    servers = [f"10.0.0.{i}:11211" for i in range(1, 6)]
    out: list[tuple[str, object]] = [
        ("HashRing", HashRing({"a": 1.0, "b": 2.0, "c": 0.5, "d": 1.0}, vnodes=50)),
        ("FastringRing", FastringRing({"a": 1.0, "b": 3.0, "c": 1.0})),
        ("TokenRing", TokenRing({"n1": [-(2**62), 5, 2**61], "n2": [0, 2**62],
                                 "n3": [-(2**63), 17]})),
        ("EnvoyRingHash", EnvoyRingHash({"10.1.0.1:80": 1, "10.1.0.2:80": 3,
                                         "10.1.0.3:80": 2}, minimum_ring_size=64)),
        ("TwemproxyPool", TwemproxyPool([f"{s}:{w}" for s, w in zip(servers, [1, 2, 1, 3, 1],
                                                                      strict=True)])),
        ("NginxUpstream", NginxUpstream([f"10.2.0.{i}:80" for i in range(1, 5)],
                                        consistent=True)),
        ("HAProxyBackend", HAProxyBackend([f"s{i}" for i in range(1, 5)])),
    ]
    for mode in KETAMA_MODES:
        out.append((f"KetamaRing-{mode}", KetamaRing(servers, {servers[0]: 3}, mode=mode)))
    return out


RINGS = _rings()


@pytest.mark.parametrize("name, ring", RINGS, ids=[n for n, _ in RINGS])
def test_ownership_is_the_exact_arc_share_of_the_routing_positions(name: str, ring) -> None:
    core = ring._core  # the positions the router routes by, in the core's 64-bit space
    nodes = ring.nodes
    want = exact_shares(core.positions, core.owners, nodes)
    got = ring.ownership()
    assert list(got) == list(nodes)
    assert all(got[n] == float(want[n]) for n in nodes), (got, want)
    assert sum(want.values()) == 1
    # the arcs are what lookup routes: each position and the hash just past it
    pos = core.positions
    h = np.concatenate([pos, pos + np.uint64(1)]) >> np.uint64(ring._hash_shift)
    following = np.r_[core.owners[1:], core.owners[:1]]
    assert np.array_equal(ring.lookup(h[:len(pos)]), core.owners)
    if ring._hash_shift == 0:
        distinct = np.r_[pos[1:] != pos[:-1], pos[-1] != pos[0]]
        assert np.array_equal(ring.lookup(h[len(pos):])[distinct], following[distinct])


@pytest.mark.parametrize("name, ring", RINGS, ids=[n for n, _ in RINGS])
def test_a_node_marked_down_owns_nothing_and_the_rest_own_what_it_left(name: str, ring
                                                                      ) -> None:
    node = ring.nodes[1]
    down = ring.copy()
    down.mark_down(node)
    got = down.ownership()
    assert got[node] == 0.0
    if ring._walk_on:  # its arcs go on to the next up position clockwise
        core = ring._core
        up = np.array([ring.nodes[o] != node for o in core.owners.tolist()])
        want = exact_shares(core.positions[up], core.owners[up], ring.nodes)
    else:  # rebuilt as the system rebuilds without it (HAProxy: disabled, not renumbered)
        removed = ring.copy()
        removed._remove_down(node)
        want = {n: Fraction(0) for n in ring.nodes}
        want.update(exact_shares(removed._core.positions, removed._core.owners,
                                 removed.nodes))
    assert all(got[n] == float(want[n]) for n in ring.nodes), (got, want)


@pytest.mark.parametrize("weights", [[1, 1, 1], [1, 2, 3, 4], [7], [5, 1, 1000]])
def test_a_modula_pool_owns_its_table_entries_hashes_exactly(weights: list[int]) -> None:
    servers = [f"10.0.0.{i}:11211:{w}" for i, w in enumerate(weights, 1)]
    pool = TwemproxyPool(servers, distribution="modula")
    table = pool.table
    size = len(table)
    q, r = divmod(1 << 32, size)  # entries below r are hit q + 1 times, the others q
    want = dict.fromkeys(pool.nodes, 0)
    for e, o in enumerate(table.tolist()):
        want[pool.nodes[o]] += q + (e < r)
    got = pool.ownership()
    assert got == {n: c / (1 << 32) for n, c in want.items()}
    assert sum(want.values()) == 1 << 32
    # a sample of hashes lands on each node about as often
    h = np.random.default_rng(5).integers(0, 1 << 32, size=200_000, dtype=np.uint64)
    seen = np.bincount(pool.lookup(h), minlength=len(pool.nodes)) / len(h)
    assert np.allclose(seen, [got[n] for n in pool.nodes], atol=0.01)


def test_a_modula_pool_with_a_server_down_or_ejected_owns_the_rest() -> None:
    servers = [f"10.0.0.{i}:11211:{w}" for i, w in enumerate([1, 2, 3], 1)]
    pool = TwemproxyPool(servers, distribution="modula", auto_eject_hosts=True)
    rest = TwemproxyPool(servers[:1] + servers[2:], distribution="modula")
    want = rest.ownership()
    for how in ("mark_down", "eject"):
        p = pool.copy()
        getattr(p, how)("10.0.0.2:11211")
        got = p.ownership()
        assert got["10.0.0.2:11211"] == 0.0
        assert {n: got[n] for n in rest.nodes} == want
    gone = pool.copy()
    for node in gone.nodes:
        gone.mark_down(node)
    assert gone.ownership() == dict.fromkeys(pool.nodes, 0.0)
