"""The hot path's machinery against independent references: the route layout's search (and its
exact fallback) against np.searchsorted, the ring builder's sort against np.lexsort, rings grown
by add() against the ring built at once, the per-request and small-batch calls of the compiled
base against the pipeline, and the pool's worker placement (results against threads=1, the
workers' CPU masks read from /proc, the setting and its environment variable)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import xxhash

from consistent_hash import HashRing, KetamaRing, _ring, set_thread_placement
from consistent_hash._ring import label_positions, ring_add, sort_pairs

MASK64 = (1 << 64) - 1


def searchsorted_owners(ring: HashRing, h: np.ndarray) -> np.ndarray:
    pos = ring.positions
    return ring.owners[np.searchsorted(pos, h, side="left") % len(pos)]


def forced(positions: dict[bytes, int]):
    """xxh3, except for the labels given (a hash callable placing chosen vnodes)."""
    def h(b: bytes) -> int:
        return positions.get(b, xxhash.xxh3_64_intdigest(b))
    return h


# -- the route layout -----------------------------------------------------------------------------

@pytest.mark.parametrize("nodes", [1, 2, 100, 3000, 140_000])
def test_route_layout_ties_in_the_high_bits_take_the_exact_search(nodes: int) -> None:
    # The route words keep a position's bits above the owner bits; positions that differ from a
    # key's hash only below them must still be decided on the full 64 bits.
    b = max(1, (nodes - 1).bit_length())
    rng = np.random.default_rng(nodes)
    base = [int(x) << b for x in rng.integers(1, 1 << (60 - b), size=6)]
    labels = {}
    names = [f"n{i}" for i in range(nodes)]
    for j, p in enumerate(base):  # a run of positions inside one 2^b block, of several owners
        for t, off in enumerate((0, 1, 3, (1 << b) - 2)):
            labels[f"{names[(j + t) % nodes]}#{j % 3}".encode()] = p + min(off, (1 << b) - 1)
    top = ((MASK64 >> b) << b)  # the block of all ones above b, where the pad words sit
    labels[f"{names[0]}#1".encode()] = top + 1
    ring = HashRing(names, vnodes=4, hash=forced(labels))
    probes = []
    for p in [*base, top, 0]:
        probes += [p - 1, p, p + 1, p + 2, p + 3, p + 4, p + (1 << b) - 1, p + (1 << b)]
    probes += [MASK64, MASK64 - 1, top, top + 1, top + 2]
    h = np.array([x & MASK64 for x in probes], dtype=np.uint64)
    assert np.array_equal(ring.lookup(h, threads=1), searchsorted_owners(ring, h))
    got = [ring._core.index_of_hash(int(x)) for x in h]
    assert got == searchsorted_owners(ring, h).tolist()


@pytest.fixture(params=["lines", "search"])
def big_form(request: pytest.FixtureRequest) -> Iterator[str]:
    """Rings past the direct table with a line table (of at most 65,535 nodes, once built) and
    with the search alone (the hook off, as for wider owners)."""
    old = _ring._direct_lines(request.param == "lines")
    try:
        yield request.param
    finally:
        _ring._direct_lines(old)


@pytest.mark.parametrize("nodes", [1, 7, 300, 70_000, 140_000])
def test_lookup_matches_searchsorted_at_every_size(big_form: str, nodes: int) -> None:
    # 70,000 x 4 positions is past 2^16 (a key's words may span two lines), 140,000 x 4 past
    # 2^19 (the batch prefetches 64 keys ahead instead of 16); 300 x 160 has a line table
    # (built during the batches below) unless the hook is off
    ring = HashRing([f"n{i}" for i in range(nodes)], vnodes=4 if nodes > 1000 else 160)
    rng = np.random.default_rng(nodes)
    pos = ring.positions
    h = np.concatenate([rng.integers(0, 2**64, 50_000, dtype=np.uint64, endpoint=False),
                        pos[::11], pos[::13] + np.uint64(1), pos[::17] - np.uint64(1),
                        np.array([0, 1, MASK64], dtype=np.uint64)])
    want = searchsorted_owners(ring, h)
    assert np.array_equal(ring.lookup(h, threads=1), want)
    assert np.array_equal(ring.lookup(h[:5], threads=1), want[:5])  # below the prefetch depth
    for m in (16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 130, 200, 2049):
        # batches around each depth D and 2D: the keys ahead run out before the batch does
        assert np.array_equal(ring.lookup(h[-m:], threads=1), want[-m:]), m
    assert ring._core.direct_table_lines == (big_form == "lines" and nodes == 300)
    if ring._core.direct_table_lines:  # built here if the batches did not reach its threshold
        assert ring._core.direct_table is not None and ring._core.direct_table_built
        assert np.array_equal(ring.lookup(h, threads=1), want)
        for m in (1, 63, 64, 65, 127, 128, 129, 2049):  # around the runs of 64 and the prefetch
            assert np.array_equal(ring.lookup(h[-m:], threads=1), want[-m:]), m


# -- the direct table of a small ring -------------------------------------------------------------

def _owner_bits(nodes: int) -> int:
    return (nodes - 1).bit_length() if nodes > 1 else 0


@pytest.fixture(params=["pairs", "single"])
def table_form(request: pytest.FixtureRequest) -> Iterator[str]:
    """Direct tables whose words may hold two positions, and tables of single words (the hook
    off, or a ring whose owners are too wide for pairs); every SIMD form reads both."""
    old = _ring._direct_pairs(request.param == "pairs")
    try:
        yield request.param
    finally:
        _ring._direct_pairs(old)


def _split_bits(nodes: int, tk: int, pairs: bool) -> int:
    b = _owner_bits(nodes)
    return min((63 - 3 * b) // 2 if pairs else 63 - 2 * b, 64 - tk)


def _pairs_expected(nodes: int, tk: int) -> bool:
    """The form ch_search.h documents: pairs where splits of 12 bits fit, unless the hook is
    off (whatever the SIMD level: every kernel reads both forms)."""
    return _ring._direct_pairs() and _split_bits(nodes, tk, True) >= 12


def _table_words(pos: np.ndarray, own: np.ndarray, nodes: int, tk: int, pairs: bool
                 ) -> np.ndarray:
    """The table as ch_search.h documents it, from the sorted positions and routing owners.
    Single words: split | o_le | o_gt | 0 for a bucket of one position, the next position's
    owner twice under an all-ones split for an empty one, the word 1 for a bucket of two or
    more.  Pairs: split1 | split2 | 0... | o_c | o_b | o_a | 0 (split1 in the top bits), a bucket's two positions' splits and
    owners and the next position's owner (all ones and that owner where a bucket has fewer),
    the word 1 for three or more."""
    b = _owner_bits(nodes)
    tb = _split_bits(nodes, tk, pairs)
    u = np.uint64
    bucket = (pos >> np.uint64(64 - tk)).astype(np.int64)
    count = np.bincount(bucket, minlength=1 << tk)
    first = np.searchsorted(bucket, np.arange(1 << tk), side="left")  # first position in it
    after = np.searchsorted(bucket, np.arange(1 << tk), side="right")  # first of a later one
    nxt = own[after % len(pos)].astype(np.uint64)
    if pairs:
        def split_of(i: np.ndarray) -> np.ndarray:
            return (pos[i] << u(tk)) >> u(64 - tb)

        s1 = np.full(1 << tk, (1 << tb) - 1, dtype=u)
        s2, oa, ob = s1.copy(), nxt.copy(), nxt.copy()
        some = (count == 1) | (count == 2)
        s1[some] = split_of(first[some])
        oa[some] = own[first[some]].astype(u)
        two = count == 2
        s2[two] = split_of(first[two] + 1)
        ob[two] = own[first[two] + 1].astype(u)
        words = ((s1 << u(64 - tb)) | (s2 << u(64 - 2 * tb)) | (nxt << u(1 + 2 * b)) | (ob << u(1 + b))
                 | (oa << u(1)))
        words[count >= 3] = 1
        return np.asarray(words, dtype=np.uint64)
    split = np.full(1 << tk, (1 << tb) - 1, dtype=np.uint64)
    o_le = nxt.copy()
    one = count == 1
    split[one] = (pos[first[one]] << np.uint64(tk)) >> np.uint64(64 - tb)
    o_le[one] = own[first[one]].astype(np.uint64)
    words = (split << np.uint64(1 + 2 * b)) | (o_le << np.uint64(1 + b)) | (nxt << np.uint64(1))
    words[count >= 2] = 1
    return np.asarray(words, dtype=np.uint64)


def _adversarial(pos: np.ndarray, tk: int, tb: int, rng: np.random.Generator) -> np.ndarray:
    """Keys at, just below and just above every position; keys whose top tk + tb bits are a
    position's but which differ below them; every bucket's first and last hash (the last one's
    bits equal an empty bucket's all-ones split); and random keys."""
    u = np.uint64
    low = (u(1) << u(64 - tk - tb)) - u(1)
    edges = (np.arange(1 << tk, dtype=np.uint64) << u(64 - tk))
    return np.concatenate([pos, pos - u(1), pos + u(1), pos ^ low, pos & ~low, pos | low,
                           edges, edges - u(1), rng.integers(0, 2**64, 20_000, dtype=np.uint64),
                           np.array([0, 1, MASK64], dtype=np.uint64)])


# (nodes, vnodes): 1 and 2 positions, 16,000 (the hot path's ring), 32,640 and 32,768 (the
# largest with a table), 32,769 (none), 20,000 nodes of one vnode (15 owner bits: a split of
# 33 bits), 100 nodes of 330 (a table of 2^17 words)
SIZES = [(1, 1), (2, 1), (1, 7), (100, 160), (204, 160), (256, 128), (32_769, 1), (20_000, 1),
         (100, 330)]


@pytest.mark.parametrize("nodes,vnodes", SIZES)
def test_direct_table_is_its_documented_layout(table_form: str, nodes: int, vnodes: int
                                               ) -> None:
    ring = HashRing([f"n{i}" for i in range(nodes)], vnodes=vnodes)
    core = ring._core
    n = len(ring.positions)
    t = core.direct_table
    if n > 32_768:  # the line table's (below)
        assert core.direct_table_lines
        return
    tk = max(n - 1, 0).bit_length() + 2  # the power of two at least 4n
    assert t.dtype == np.uint64 and len(t) == 1 << tk and t.nbytes <= 1 << 20
    assert 32 * n <= t.nbytes <= max(64 * n, 32)  # the memory the README states
    assert not t.flags.writeable
    pairs = _pairs_expected(nodes, tk)
    assert core.direct_table_pairs == pairs
    if table_form == "pairs" and nodes <= 8192:
        assert pairs  # owners of up to 13 bits
    assert np.array_equal(t, _table_words(ring.positions, core.routing_owners, nodes, tk, pairs))


@pytest.mark.parametrize("nodes,vnodes", SIZES)
def test_direct_table_lookups_match_searchsorted(simd: str, table_form: str, nodes: int,
                                                 vnodes: int) -> None:
    ring = HashRing([f"n{i}" for i in range(nodes)], vnodes=vnodes)
    pos = ring.positions
    n = len(pos)
    tk = max(n - 1, 0).bit_length() + 2
    tb = _split_bits(nodes, tk, ring._core.direct_table_pairs)
    h = _adversarial(pos, tk, tb, np.random.default_rng(n))
    want = searchsorted_owners(ring, h)
    assert np.array_equal(ring.lookup(h[:1], threads=1), want[:1])  # before the table: search
    assert ring._core.direct_table is not None  # built now
    assert ring._core.direct_table_lines == (n > 32_768)
    assert np.array_equal(ring.lookup(h, threads=1), want)
    assert np.array_equal(ring.lookup(h, threads=2), want)
    # batch lengths around the 8 lanes, the runs of 64 the AVX2 kernel notes hard keys in and
    # of 256 the AVX-512 one does, and its prefetch of the keys 32-40 ahead
    for m in (1, 2, 7, 8, 9, 15, 16, 17, 39, 40, 41, 63, 64, 65, 104, 127, 128, 129, 255, 256,
              257, 263, 512, 515):
        for start in (0, len(h) - m):
            assert np.array_equal(ring.lookup(h[start:start + m], threads=1),
                                  want[start:start + m]), (m, start)
    one = [ring._core.index_of_hash(int(x)) for x in h[::7]]  # the per-request route
    assert one == want[::7].tolist()
    keys = [f"k{i}" for i in range(3000)]
    assert ring.get_many(keys).tolist() == [ring.get(k) for k in keys] == \
        [ring.nodes[i] for i in searchsorted_owners(
            ring, np.array([xxhash.xxh3_64_intdigest(k.encode()) for k in keys], np.uint64))]


def test_direct_table_is_built_on_first_use_and_answers_alike() -> None:
    # A snapshot builds its table once it has been asked for 2**(tk + 1) keys (per request,
    # in small batches or large ones), so a membership change does not pay for one; the
    # answers before and after are the same, and every new snapshot starts without one.
    ring = HashRing([f"n{i}" for i in range(100)], vnodes=160)  # 16,000 positions, tk = 16
    threshold = 2 << 16
    rng = np.random.default_rng(5)
    h = rng.integers(0, 2**64, threshold, dtype=np.uint64)
    keys = [f"k{i}" for i in range(3000)]
    core = ring._core
    assert not core.direct_table_built
    before = ring.lookup(h[:threshold - 3000 - 40], threads=1)
    names_before = [ring.get(k) for k in keys]  # 3,000 per-request keys count too
    small_before = [ring.get_indices(keys[i:i + 10]).tolist() for i in range(0, 30, 10)]
    assert not core.direct_table_built  # 10 keys short
    ring.lookup(h[:100], threads=1)
    assert core.direct_table_built
    assert np.array_equal(ring.lookup(h[:threshold - 3000 - 40], threads=1), before)
    assert [ring.get(k) for k in keys] == names_before
    assert [ring.get_indices(keys[i:i + 10]).tolist() for i in range(0, 30, 10)] == small_before
    ring.add("new")
    ring.get("x")
    assert ring._core is not core and not ring._core.direct_table_built
    ring.remove("new")
    assert not ring._core.direct_table_built
    assert np.array_equal(ring.lookup(h, threads=2), searchsorted_owners(ring, h))
    assert ring._core.direct_table_built  # one large batch is enough
    assert [ring.get(k) for k in keys] == names_before


@pytest.mark.parametrize("nodes", [100, 250])  # a direct table, a line table
def test_direct_table_published_while_batches_run(nodes: int) -> None:
    # Threads routing batches through one snapshot while its table is built and published:
    # each batch sees no table or the whole one, so every answer is the search's.
    ring = HashRing([f"n{i}" for i in range(nodes)], vnodes=160)
    h = np.random.default_rng(9).integers(0, 2**64, 200_000, dtype=np.uint64)
    want = searchsorted_owners(ring, h)
    errors: list[str] = []
    start = threading.Barrier(3)

    def worker() -> None:
        start.wait()
        for _ in range(20):
            if not np.array_equal(ring.lookup(h[:5000], threads=1), want[:5000]):
                errors.append("mismatch")

    ts = [threading.Thread(target=worker) for _ in range(2)]
    for t in ts:
        t.start()
    start.wait()
    ring.lookup(h, threads=1)  # 200,000 keys: past the threshold, built here
    for t in ts:
        t.join()
    assert ring._core.direct_table_built and not errors


def test_direct_table_buckets_of_several_positions_and_equal_splits(simd: str, table_form: str
                                                                    ) -> None:
    # Positions placed by hand: several in one bucket (word 1), two in one (a pair's word, or
    # 1), pairs equal in the split bits and differing only below them, a position at a
    # bucket's first and at its last hash, and one at 2^64 - 1; every probe is decided exactly.
    names = [f"n{i}" for i in range(5)]
    tk = (5 * 3 - 1).bit_length() + 2  # 15 positions: a table of 2^6 words
    top = 64 - tk
    labels = {}
    spots = [(3 << top) + 5, (3 << top) + 9, (3 << top) + (1 << 40),  # three in one bucket
             (7 << top) + (1 << 30), (7 << top) + (1 << 30) + 1,  # equal in the split bits
             (9 << top), (11 << top) - 1,  # a bucket's first hash, another's last
             (20 << top) + 12345, MASK64, (40 << top) + (1 << 50), (41 << top) + 77,
             (50 << top) + 1, (60 << top) + 3, (30 << top) + (1 << 20),
             (30 << top) + (1 << 45)]  # two in one bucket
    for j, p in enumerate(spots):
        labels[f"{names[j % 5]}#{j // 5}".encode()] = p
    ring = HashRing(names, vnodes=3, hash=forced(labels))
    assert sorted(ring.positions.tolist()) == sorted(spots)
    t = ring._core.direct_table
    assert len(t) == 1 << tk and t[3] == 1
    assert (t[30] != 1) == ring._core.direct_table_pairs == _pairs_expected(5, tk)
    u = np.uint64
    pos = ring.positions
    h = np.concatenate([pos, pos - u(1), pos + u(1), pos + u(2),
                        np.arange(1 << tk, dtype=u) << u(top),
                        (np.arange(1, (1 << tk) + 1, dtype=u) << u(top)) - u(1)])
    want = searchsorted_owners(ring, h)
    assert np.array_equal(ring.lookup(h, threads=1), want)
    assert [ring._core.index_of_hash(int(x)) for x in h] == want.tolist()


def _routes_around_down_nodes(ring: HashRing, down: int, probes: Any,
                              table_check: Any = None) -> None:
    """Mark nodes n0, n2, ... down: lookups (1 and 2 threads) and the per-request route answer
    the routing owners' searchsorted on probes(core, positions) and never a down node;
    table_check(core, positions) then, and mark_up restores the first table and answers."""
    before = ring._core.direct_table.copy()
    for i in range(down):
        ring.mark_down(f"n{i * 2}")
    core = ring._core
    pos = ring.positions
    h = probes(core, pos)
    want = core.routing_owners[np.searchsorted(pos, h, side="left") % len(pos)]
    assert np.array_equal(ring.lookup(h, threads=1), want)
    assert np.array_equal(ring.lookup(h, threads=2), want)
    assert [core.index_of_hash(int(x)) for x in h[::5]] == want[::5].tolist()
    assert not set(want.tolist()) & {ring.nodes.index(f"n{i * 2}") for i in range(down)}
    if table_check is not None:
        table_check(core, pos)
    for i in range(down):
        ring.mark_up(f"n{i * 2}")
    assert np.array_equal(ring._core.direct_table, before)
    assert np.array_equal(ring.lookup(h, threads=1), searchsorted_owners(ring, h))


@pytest.mark.parametrize("down", [1, 3, 50])
def test_direct_table_routes_around_down_nodes(simd: str, table_form: str, down: int) -> None:
    # a few down (the health ring searches the true owners and walks on) and many (routing
    # owners of their own, the table built from them); mark_up restores the first table
    _routes_around_down_nodes(
        HashRing([f"n{i}" for i in range(100)], vnodes=160), down,
        lambda core, pos: _adversarial(pos, 16, _split_bits(100, 16, core.direct_table_pairs),
                                       np.random.default_rng(down)))


# -- the line table of a larger ring --------------------------------------------------------------

def _line_bits(n: int) -> int:
    return n.bit_length() - 3  # floor(log2 n) - 2: 4 to 8 positions a line


def _line_table(pos: np.ndarray, own: np.ndarray, tk: int) -> np.ndarray:
    """The line table as ch_search.h documents it, from the sorted positions and routing
    owners: line B holds the positions whose top tk bits are B, in order (up to 15), as the 16
    bits below those xor 0x8000, then 0x7FFF in every slot left; then their owners, then the
    owner of the first position of a later line (wrapping to position 0) in every slot left.
    A line of 16 or more positions: 0x7FFF and owner 0xFFFF in every slot."""
    u = np.uint64
    nb = 1 << tk
    line = (pos >> u(64 - tk)).astype(np.int64)
    first = np.searchsorted(line, np.arange(nb), side="left")
    after = np.searchsorted(line, np.arange(nb), side="right")
    count = after - first
    f = np.full((nb, 16), 0x7FFF, dtype=np.uint16)
    o = np.repeat(own[after % len(pos)].astype(np.uint16)[:, None], 16, axis=1)
    slot = np.arange(len(pos)) - first[line]
    fits = count[line] <= 15
    f[line[fits], slot[fits]] = (((pos[fits] >> u(48 - tk)) & u(0xFFFF)) ^ u(0x8000))
    o[line[fits], slot[fits]] = own[fits]
    o[count >= 16] = 0xFFFF
    return np.concatenate([f, o], axis=1)


def _line_probes(pos: np.ndarray, tk: int, rng: np.random.Generator) -> np.ndarray:
    """Keys at, just below and just above every position; keys sharing a position's top tk + 16
    bits but differing below them (the search decides those); every line's first and last
    hash; random keys."""
    u = np.uint64
    low = (u(1) << u(48 - tk)) - u(1)
    edges = np.arange(1 << tk, dtype=u) << u(64 - tk)
    return np.concatenate([pos, pos - u(1), pos + u(1), pos ^ low, pos & ~low, pos | low,
                           (pos & ~low) - u(1), (pos | low) + u(1), edges, edges - u(1),
                           rng.integers(0, 2**64, 20_000, dtype=u),
                           np.array([0, 1, MASK64], dtype=u)])


# (nodes, vnodes): 32,769 positions (the smallest ring with lines: 2^13 of them, 4 a line),
# 40,000, 65,535 nodes of one vnode (the widest owners a line holds), 1.6 M (the hot path's
# big ring, 2^18 lines of 6.1)
LINE_SIZES = [(32_769, 1), (250, 160), (65_535, 1), (10_000, 160)]


@pytest.mark.parametrize("nodes,vnodes", LINE_SIZES)
def test_line_table_is_its_documented_layout(nodes: int, vnodes: int) -> None:
    ring = HashRing([f"n{i}" for i in range(nodes)], vnodes=vnodes)
    core = ring._core
    n = len(ring.positions)
    tk = _line_bits(n)
    assert core.direct_table_lines and not core.direct_table_pairs
    t = core.direct_table
    assert t.dtype == np.uint16 and t.shape == (1 << tk, 32) and not t.flags.writeable
    assert t.ctypes.data % 64 == 0  # a line is a cache line
    assert 8 * n < t.nbytes <= 16 * n  # the memory the README states
    assert np.array_equal(t, _line_table(ring.positions, core.routing_owners, tk))


@pytest.mark.parametrize("nodes,vnodes", LINE_SIZES[:3])
def test_line_table_lookups_match_searchsorted(simd: str, nodes: int, vnodes: int) -> None:
    ring = HashRing([f"n{i}" for i in range(nodes)], vnodes=vnodes)
    pos = ring.positions
    h = _line_probes(pos, _line_bits(len(pos)), np.random.default_rng(len(pos)))
    want = searchsorted_owners(ring, h)
    assert np.array_equal(ring.lookup(h[:1], threads=1), want[:1])  # before the table: search
    assert ring._core.direct_table is not None  # built now
    assert np.array_equal(ring.lookup(h, threads=1), want)
    assert np.array_equal(ring.lookup(h, threads=2), want)
    for m in (1, 2, 63, 64, 65, 127, 128, 129, 191, 192, 193, 1000):
        for start in (0, len(h) - m):  # runs of 64, the prefetch 64 keys ahead running out
            assert np.array_equal(ring.lookup(h[start:start + m], threads=1),
                                  want[start:start + m]), (m, start)
    assert [ring._core.index_of_hash(int(x)) for x in h[::7]] == want[::7].tolist()
    keys = [f"k{i}" for i in range(3000)]
    assert ring.get_many(keys).tolist() == [ring.get(k) for k in keys] == \
        [ring.nodes[i] for i in searchsorted_owners(
            ring, np.array([xxhash.xxh3_64_intdigest(k.encode()) for k in keys], np.uint64))]


def test_line_table_full_lines_ties_and_duplicates(simd: str) -> None:
    # Every position placed by hand: lines of 15 positions (every slot but the last), of 16
    # and 40 (full: every key to the search), two positions at one value, positions equal in
    # their top tk + 16 bits, the first line's first hash, the last line's last hash (2^64 -
    # 1), and an empty line at the end (its keys wrap to position 0); the rest uniform.
    names = [f"n{i}" for i in range(330)]
    n = 330 * 100
    tk = _line_bits(n)
    top = 64 - tk
    rng = np.random.default_rng(11)
    spots = [int(x) for x in rng.integers(0, 2**64 - (4 << top), n, dtype=np.uint64)]
    spots = [p for p in spots if (p >> top) not in (5, 9, 13, 17)]
    special = ([(5 << top) + 1000 * i for i in range(15)] + [(9 << top) + 7 * i for i in range(16)]
               + [(13 << top) + (1 << 20) * i for i in range(40)]
               + [(17 << top) + 99, (17 << top) + 99, (17 << top) + (5 << (top - 16)) + 1,
                  (17 << top) + (5 << (top - 16)) + 3, 0, MASK64])
    spots = special + spots[:n - len(special)]
    labels = {f"{names[j % 330]}#{j // 330}".encode(): p for j, p in enumerate(spots)}
    ring = HashRing(names, vnodes=100, hash=forced(labels))
    pos = ring.positions
    assert len(pos) == n and sorted(pos.tolist()) == sorted(spots)
    t = ring._core.direct_table
    assert ring._core.direct_table_lines and t.shape == (1 << tk, 32)
    assert np.array_equal(t, _line_table(pos, ring._core.routing_owners, tk))
    assert t[5, 15] == 0x7FFF and (t[5, :15] != 0x7FFF).all()  # 15 positions
    assert (t[9, 16:] == 0xFFFF).all() and (t[13, 16:] == 0xFFFF).all()  # full
    u = np.uint64
    h = np.concatenate([_line_probes(pos, tk, rng),
                        np.array([(b << top) + d for b in (5, 9, 13, 17) for d in
                                  range(0, 3000, 7)], dtype=u)])
    want = searchsorted_owners(ring, h)
    assert np.array_equal(ring.lookup(h, threads=1), want)
    assert [ring._core.index_of_hash(int(x)) for x in h] == want.tolist()


def test_no_line_table_past_65535_nodes_or_with_the_hook_off() -> None:
    ring = HashRing([f"n{i}" for i in range(65_536)], vnodes=1)  # owners of 16 bits
    assert ring._core.direct_table is None and not ring._core.direct_table_lines
    h = np.random.default_rng(3).integers(0, 2**64, 300_000, dtype=np.uint64)
    assert np.array_equal(ring.lookup(h, threads=1), searchsorted_owners(ring, h))
    old = _ring._direct_lines(False)
    try:
        ring = HashRing([f"n{i}" for i in range(250)], vnodes=160)
        assert ring._core.direct_table is None and not ring._core.direct_table_lines
        assert np.array_equal(ring.lookup(h, threads=1), searchsorted_owners(ring, h))
    finally:
        _ring._direct_lines(old)
    ring.add("x")  # a new snapshot, its form set now: lines
    assert ring._core.direct_table_lines


def test_line_table_is_built_on_first_use() -> None:
    # 40,000 positions, 2^13 lines: built once a snapshot has been asked for 2^16 keys
    ring = HashRing([f"n{i}" for i in range(250)], vnodes=160)
    core = ring._core
    threshold = 1 << 16
    h = np.random.default_rng(6).integers(0, 2**64, threshold, dtype=np.uint64)
    want = searchsorted_owners(ring, h)
    keys = [f"k{i}" for i in range(2000)]
    assert np.array_equal(ring.lookup(h[:threshold - 2000 - 10], threads=1),
                          want[:threshold - 2000 - 10])
    names = [ring.get(k) for k in keys]
    assert not core.direct_table_built  # 10 keys short
    assert np.array_equal(ring.lookup(h, threads=1), want)
    assert core.direct_table_built
    assert [ring.get(k) for k in keys] == names


@pytest.mark.parametrize("down", [1, 3, 100])
def test_line_table_routes_around_down_nodes(simd: str, down: int) -> None:
    # as the direct table's; a sparse snapshot (a few down) reads the table of the true owners
    # and walks on from a down one, a dense one the table of its routing owners
    def table_check(core: Any, pos: np.ndarray) -> None:
        owners = core.routing_owners if down == 100 else core.owners
        assert core.direct_table_lines
        assert np.array_equal(core.direct_table, _line_table(pos, owners, _line_bits(len(pos))))

    _routes_around_down_nodes(
        HashRing([f"n{i}" for i in range(250)], vnodes=160), down,
        lambda core, pos: _line_probes(pos, _line_bits(len(pos)), np.random.default_rng(down)),
        table_check)


# -- NumPy S rows ---------------------------------------------------------------------------------

@pytest.mark.parametrize("w", [1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40])
def test_fixed_bytes_rows_of_every_width_and_length(w: int) -> None:
    # Keys of every length 0..w, with NULs inside them (kept) and after them (dropped, as NumPy
    # drops them), in arrays of 1 row up to many (the trim reads a row a word at a time, from
    # its end), against each key's bytes hashed by xxhash and searched by np.searchsorted.
    rng = np.random.default_rng(w)
    keys: list[bytes] = []
    for length in range(w + 1):
        for _ in range(6):
            b = bytearray(rng.integers(1, 256, length, dtype=np.uint8).tobytes())
            if length > 2 and rng.random() < 0.5:
                b[int(rng.integers(0, length - 1))] = 0  # a NUL inside the key
            keys.append(bytes(b))
    order = rng.permutation(len(keys))
    keys = [keys[i] for i in order]
    ring = HashRing([f"n{i}" for i in range(100)])
    arr = np.array(keys, dtype=f"S{w}")
    assert arr.tolist() == [k.rstrip(b"\0") for k in keys]  # what NumPy keeps of each
    want = searchsorted_owners(ring, np.array(
        [xxhash.xxh3_64_intdigest(k) for k in arr.tolist()], dtype=np.uint64))
    assert np.array_equal(ring.get_indices(arr, threads=1), want)
    for m in range(1, min(len(arr), 70)):  # the last rows of arrays of every short length
        assert np.array_equal(ring.get_indices(arr[:m], threads=1), want[:m]), m
        assert np.array_equal(ring.get_indices(arr[-m:], threads=1), want[-m:]), m
    reps = 70_000 // len(arr) + 1  # long enough to be cut into chunks, split over two threads
    assert np.array_equal(ring.get_indices(np.tile(arr, reps), threads=2), np.tile(want, reps))


@pytest.mark.parametrize("container", ["S8", "S12", "S16", "S20", "S24", "S31", "S32", "S40",
                                       "arrow", "large arrow"])
def test_xxh3_groups_of_one_class_and_of_several(container: str, simd: str) -> None:
    # NumPy S rows are hashed in groups of 256 keys: lengths first, then the group class by
    # class (4-8, 9-16, 17-32, the rest), or in one straight loop when every length of the
    # group falls in one class (Arrow's spans, one at a time, are held to the same keys).
    # Runs of each kind, not aligned to the groups, each long enough to hold whole groups
    # wherever they are cut, with the shortest and longest length of each class, and groups
    # that a single key makes mixed.  Rows of 8-32 bytes have an AVX2 form (a 32-byte load a
    # row, which the last rows of the array, where it would pass the end, do without): every
    # width from one short of a word to past the load, each cut so the array ends anywhere.
    # Keys hold NUL bytes inside (NumPy keeps them; only trailing ones are dropped).
    rng = np.random.default_rng(len(container))
    w = int(container[1:]) if container.startswith("S") else 40

    def run(n: int, lo: int, hi: int, nul: bool = False) -> list[bytes]:
        lo, hi = min(lo, w), min(hi, w)
        keys = [rng.integers(1, 256, int(rng.integers(lo, hi + 1)), dtype=np.uint8)
                for _ in range(n)]
        if nul:  # a NUL inside each key that has room for one
            for k in keys:
                if len(k) > 1:
                    k[int(rng.integers(0, len(k) - 1))] = 0
        return [k.tobytes() for k in keys]

    keys = (run(600, 9, 16) + run(520, 17, 32) + run(1, 3, 3) + run(600, 12, 12)
            + run(520, 16, 16) + run(520, 17, 17) + run(520, 32, 32) + run(255, 9, 9)
            + run(1, 33, 40) + run(520, 4, 8) + run(600, 0, 40) + run(300, 0, 40, nul=True)
            + run(511, 17, 32) + run(40, 0, 40))
    ring = HashRing([f"n{i}" for i in range(100)])
    if container.startswith("S"):
        arr = np.array(keys, dtype=container)
        kept = arr.tolist()  # NumPy drops trailing NULs
        assert any(b"\0" in k for k in kept)
    else:
        pa = pytest.importorskip("pyarrow")
        arr = pa.array(keys, pa.large_binary() if container == "large arrow" else pa.binary())
        kept = keys
    hashes = np.array([xxhash.xxh3_64_intdigest(k) for k in kept], dtype=np.uint64)
    want = searchsorted_owners(ring, hashes)
    assert np.array_equal(ring.get_indices(arr, threads=1), want)
    n = len(keys)
    for start, stop in ((0, n), (1, n), (255, n), (256, n), (257, n), (1000, n),
                        (0, n - 1), (3, n - 2), (0, n - 3), (5, 6), (7, 9), (0, 300)):
        a = arr[start:stop]  # the groups cut elsewhere, the array ending elsewhere
        assert np.array_equal(ring.hash_many(a), hashes[start:stop]), (start, stop)
        assert np.array_equal(ring.get_indices(a, threads=1), want[start:stop]), (start, stop)
    if container.startswith("S"):  # the rows split between two threads (chunks of 2,048)
        old = _ring._set_parallel_min(1)
        try:
            assert np.array_equal(ring.get_indices(arr, threads=2), want)
            assert np.array_equal(ring.hash_many(arr, threads=2), hashes)
        finally:
            _ring._set_parallel_min(old)


def test_xxh3_lists_of_one_class_and_of_several(simd: str) -> None:
    # A list is hashed in groups of 128 keys, filed by class (9-16 bytes, 17-32, the rest)
    # as the objects are read, or (AVX2) gathered and filed 8 at a time; keys that are not a
    # compact ASCII str or bytes (non-ASCII str, int, bytearray) are hashed one at a time
    # where they stand and filed nowhere.  Runs of each class, groups that one key makes
    # mixed, and such keys among them, cut to start and end anywhere; against xxhash.
    rng = np.random.default_rng(7)
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"

    def run(n: int, lo: int, hi: int, kind: str = "str") -> list[Any]:
        out: list[Any] = []
        for _ in range(n):
            k = "".join(rng.choice(list(letters), int(rng.integers(lo, hi + 1))))
            out.append(k.encode() if kind == "bytes" else k)
        return out

    others: list[Any] = ["é" * 9, "ключ-17-байт", 12345678901, bytearray(b"bytearray key 18"),
                         -7, "\u20ac" * 20, memoryview(b"a memoryview")]
    keys = (run(300, 9, 16) + run(260, 17, 32) + run(1, 3, 3) + run(300, 12, 12)
            + run(260, 16, 16, "bytes") + run(260, 17, 17) + run(260, 32, 32) + run(127, 9, 9)
            + run(1, 33, 60) + run(260, 4, 8) + run(300, 0, 60) + run(255, 17, 32, "bytes")
            + run(40, 0, 40))
    for at in (5, 128, 131, 700, 701, 702, 1500, 2000, 2500):  # among the runs
        keys[at:at] = [others[at % len(others)]]
    keys[900:900] = others

    def raw(k: Any) -> bytes:
        if isinstance(k, str):
            return k.encode()
        if isinstance(k, (bytes, bytearray, memoryview)):
            return bytes(k)
        return str(int(k)).encode()

    hashes = np.array([xxhash.xxh3_64_intdigest(raw(k)) for k in keys], dtype=np.uint64)
    ring = HashRing([f"n{i}" for i in range(100)])
    want = searchsorted_owners(ring, hashes)
    n = len(keys)
    for start, stop in ((0, n), (1, n), (127, n), (128, n), (129, n), (0, n - 1), (3, 40),
                        (7, 9), (890, 910)):
        assert np.array_equal(ring.hash_many(keys[start:stop], threads=1),
                              hashes[start:stop]), (start, stop)
        assert np.array_equal(ring.get_indices(keys[start:stop], threads=1),
                              want[start:stop]), (start, stop)


# -- the builder's sort ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [3, 1000, 70_000, 300_000, 2_100_000])  # 2.1 M: a second pass of 13 bits
@pytest.mark.parametrize("kind", ["uniform", "small", "ties"])
def test_sort_pairs_is_a_lexsort(n: int, kind: str) -> None:
    rng = np.random.default_rng(n)
    if kind == "uniform":
        keys = rng.integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
    elif kind == "small":  # a degenerate custom hash: every key in one bucket of the top bits
        keys = rng.integers(0, 5000, n).astype(np.uint64)
    else:
        keys = rng.integers(0, 2**64, max(1, n // 4), dtype=np.uint64, endpoint=False)[
            rng.integers(0, max(1, n // 4), n)]
    vals = rng.integers(0, 1 << 30, n).astype(np.int32)
    order = np.lexsort((vals, keys))
    k, v = keys.copy(), vals.copy()
    sort_pairs(k, v)
    assert np.array_equal(k, keys[order]) and np.array_equal(v, vals[order])


def _assert_layout_of(ring: HashRing, pos: np.ndarray, own: np.ndarray) -> None:
    """The ring's positions and owners are the labels' (pos, own) sorted by (position, owner)
    (np.lexsort), and its prefix index the first position of each top-k bucket."""
    order = np.lexsort((own, pos))
    assert np.array_equal(ring.positions, pos[order])
    assert np.array_equal(ring.owners, own[order])
    k = int(np.log2(len(ring._core.prefix_index) - 1))
    tops = pos[order] >> np.uint64(64 - k)
    idx = np.searchsorted(tops, np.arange(2**k + 1, dtype=np.uint64)).astype(np.uint32)
    assert np.array_equal(ring._core.prefix_index, idx)


def test_large_layout_is_the_sorted_labels() -> None:
    names = sorted(f"node-{i}" for i in range(2000))  # 320,000 positions: the radix path;
    # sorted, as a ring numbers its nodes
    ring = HashRing(names)
    pos = np.array([xxhash.xxh3_64_intdigest(f"{n}#{j}".encode()) for n in names
                    for j in range(160)], dtype=np.uint64)
    own = np.repeat(np.arange(len(names), dtype=np.int32), 160)
    _assert_layout_of(ring, pos, own)
    p2, o2 = label_positions(ring._core.hasher, [n.encode() for n in names],
                             np.full(len(names), 160, dtype=np.uint32))
    assert np.array_equal(p2, ring.positions) and np.array_equal(o2, ring.owners)


@pytest.mark.parametrize("spread", ["clustered", "ties"])
def test_large_layout_of_a_poor_custom_hash(spread: str) -> None:
    # A custom hash that crowds positions under equal top bits (groups past 32 pairs: the sort
    # falls back to sorting them group by group) or makes exact ties, on a ring past 2^16
    # positions (the radix path, writing the prefix index and the route layout as it goes).
    def poor(b: bytes) -> int:
        d = int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little")
        return d % 5000 if spread == "clustered" else (d % 20_000) << 44

    names = sorted(f"node-{i}" for i in range(500))  # 80,000 positions
    ring = HashRing(names, hash=poor)
    pos = np.array([poor(f"{n}#{j}".encode()) for n in names for j in range(160)],
                   dtype=np.uint64)
    own = np.repeat(np.arange(len(names), dtype=np.int32), 160)
    _assert_layout_of(ring, pos, own)
    rng = np.random.default_rng(5)
    keys = np.concatenate([pos, pos + np.uint64(1), rng.integers(0, 2**64, 20_000,
                                                                 dtype=np.uint64)])
    assert np.array_equal(ring.lookup(keys), searchsorted_owners(ring, keys))


# -- growing a ring ------------------------------------------------------------------------------

def _same(a: HashRing, b: HashRing) -> None:
    assert a == b and a.fingerprint() == b.fingerprint()
    assert np.array_equal(a.positions, b.positions)
    assert np.array_equal(a.owners, b.owners)
    assert np.array_equal(a._core.prefix_index, b._core.prefix_index)


@pytest.mark.parametrize("order", ["sorted", "reversed", "shuffled"])
def test_a_ring_grown_by_add_is_the_ring_built_at_once(order: str) -> None:
    names = [f"n{i}" for i in range(150)]
    weights = {n: (0.5 + (i % 4) * 0.5) for i, n in enumerate(names)}
    seq = sorted(names) if order == "sorted" else sorted(names, reverse=True)
    if order == "shuffled":
        seq = list(np.random.default_rng(1).permutation(names))
    ring = HashRing()
    for n in seq:
        ring.add(n, weights[n])
    _same(ring, HashRing(weights))


def test_growth_with_lookups_removals_and_weights_between() -> None:
    rng = np.random.default_rng(2)
    keys = [f"k{i}" for i in range(3000)]
    ring, model = HashRing(["a", "b"]), {"a": 1.0, "b": 1.0}
    for step in range(120):
        op = rng.integers(0, 10)
        if op < 6 or len(model) < 2:
            name = f"x{step}"
            w = float(rng.choice([0.25, 1.0, 2.0]))
            ring.add(name, w)
            model[name] = w
        elif op < 8:
            name = sorted(model)[int(rng.integers(len(model)))]
            ring.remove(name)
            del model[name]
        else:
            name = sorted(model)[int(rng.integers(len(model)))]
            w = float(rng.choice([0.5, 3.0]))
            ring.set_weight(name, w)
            model[name] = w
        if step % 7 == 0:  # a lookup now and then, against the ring built at once
            built = HashRing(model)
            assert ring.get_many(keys).tolist() == built.get_many(keys).tolist()
    _same(ring, HashRing(model))


def test_ring_add_chains_snapshots_without_changing_them() -> None:
    core = HashRing(["a", "c"])._core
    one, r1 = ring_add(core, "b", 160)
    two, r2 = ring_add(one, "d", 160)
    assert (r1, r2) == (1, 3)
    assert one.nodes == ("a", "b", "c") and two.nodes == ("a", "b", "c", "d")
    assert np.array_equal(two.positions, HashRing(["a", "b", "c", "d"]).positions)
    assert np.array_equal(one.positions, HashRing(["a", "b", "c"]).positions)
    assert len(one) == 480 and len(two) == 640


# -- the compiled base's calls against the pipeline ----------------------------------------------

def _all_routers():
    sys.path.insert(0, os.path.dirname(__file__))
    from routers import NODES, ROUTERS
    return [(s.name, s.make(NODES), s) for s in ROUTERS]


@pytest.mark.parametrize("name,router,spec", _all_routers(), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_small_batches_and_get_are_the_pipelines(name: str, router, spec) -> None:
    keys: list[object] = [f"key{i}" for i in range(40)] + [b"bytes", "ünïcode", "x" * 300]
    if spec.int_keys != "refused":
        keys += [0, -1, 7, 2**62, 2**64 - 1, 2**70] if spec.int_keys == "hashed" else [5, 2**63]
    for n in (1, 2, 10, len(keys)):
        batch = keys[:n]
        slow = router._get_indices_slow(batch)
        assert router.get_indices(batch).tolist() == slow.tolist()
        assert router.get_indices(tuple(batch)).tolist() == slow.tolist()
        assert router.get_many(batch).tolist() == router._get_many_slow(batch).tolist()
        assert [router.get(k) for k in batch] == router.get_many(batch).tolist()
        # KetamaRing's server-list order is its own Python replicas, not the compiled one
        if spec.replicas and getattr(router, "replica_order", "continuum") == "continuum":
            assert [router.replicas(k, 2) for k in batch] == \
                [router._replicas_slow(k, 2) for k in batch]
        hashes = router.hash_many(batch)  # the router's own hashes (narrower for some)
        assert router.lookup(hashes).tolist() == router._lookup_slow(hashes).tolist() == \
            router.get_indices(batch).tolist()


@pytest.fixture(params=[True, False], ids=["C-API table", "np.empty"])
def np_arrays(request: pytest.FixtureRequest) -> Iterator[bool]:
    """The small batches' arrays made through NumPy's C-API table, and with np.empty."""
    old = _ring._np_arrays_in_c(request.param)
    try:
        if request.param and not _ring._np_arrays_in_c():
            pytest.skip("this NumPy's C-API table is not one ch_nparray.h knows")
        yield request.param
    finally:
        _ring._np_arrays_in_c(old)


def test_small_batch_arrays_are_numpys_own(np_arrays: bool) -> None:
    # the arrays a small batch returns are plain, owning, writeable NumPy arrays, equal to the
    # pipeline's; the names are the ring's own str objects, each reference counted once per
    # item (a miscount shows in sys.getrefcount over many calls, or crashes at the end)
    ring = HashRing([f"n{i}" for i in range(100)])
    keys = [f"user:{i}" for i in range(37)]
    want = ring._get_indices_slow(keys)
    for n in (1, 2, 10, 37):
        a = ring.get_indices(keys[:n])
        assert type(a) is np.ndarray and a.dtype == np.int32 and a.shape == (n,)
        assert a.flags.c_contiguous and a.flags.writeable and a.flags.owndata and a.base is None
        assert np.array_equal(a, want[:n])
        a[:] = -5  # its own memory
        assert np.array_equal(ring.get_indices(keys[:n]), want[:n])
        names = ring.get_many(keys[:n])
        assert type(names) is np.ndarray and names.dtype == object and names.flags.owndata
        assert all(x is ring.nodes[i] for x, i in zip(names.tolist(), want[:n].tolist()))
    name = ring.nodes[int(want[0])]
    before = sys.getrefcount(name)
    kept = [ring.get_many(keys[:1]) for _ in range(1000)]
    assert sys.getrefcount(name) == before + 1000
    del kept
    for _ in range(1000):
        ring.get_many(keys[:1])
    assert sys.getrefcount(name) == before
    out, nodes = ring.get_many(keys[:3]), list(ring.nodes)
    del ring  # the arrays keep what they hold
    assert out.tolist() == [nodes[i] for i in want[:3].tolist()]


@pytest.fixture
def recycling() -> Iterator[None]:
    """The small batches' arrays made through the C-API table, recycled (ch_nparray.h)."""
    old_c, old_r = _ring._np_arrays_in_c(True), _ring._np_recycling(True)
    try:
        if not _ring._np_arrays_in_c():
            pytest.skip("this NumPy's C-API table is not one ch_nparray.h knows")
        if not _ring._np_recycling():
            pytest.skip("no recycling here: a free-threaded build, or an array head it "
                        "does not know")
        yield
    finally:
        _ring._np_arrays_in_c(old_c)
        _ring._np_recycling(old_r)


@pytest.mark.parametrize("call", ["get_indices", "lookup"])
def test_small_results_are_given_out_again_only_when_let_go(call: str, recycling: None
                                                             ) -> None:
    # a result array of 1-16 keys that its caller let go (no reference, view, memoryview or
    # weak reference left, and still the array it was made) is given out again with every
    # value written anew; one held, or changed in any way, never is
    ring = HashRing([f"n{i}" for i in range(100)])
    keys = [f"user:{i}" for i in range(200)]
    want = ring._get_indices_slow(keys)
    src: Any = keys if call == "get_indices" else ring.hash_many(keys)
    f = getattr(ring, call)

    def run(i: int, n: int = 1) -> np.ndarray:
        return f(src[i:i + n])

    for n in (1, 2, 3, 16):
        a = run(0, n)
        made = id(a)
        del a
        b = run(n, n)
        assert id(b) == made  # given out again...
        assert np.array_equal(b, want[n:2 * n])  # ...with the new keys' values
        assert b.flags.writeable and b.flags.owndata and b.base is None
        del b
    a = run(0, 17)  # past CH_NP_SPARE: never kept
    made = id(a)
    held = run(17, 17)
    assert id(held) != made and np.array_equal(held, want[17:34])
    # held results are never written again, however many calls follow
    kept = [run(i) for i in range(100)]
    assert len({id(k) for k in kept}) == 100
    assert np.array_equal(np.concatenate(kept), want[:100])
    # a first key's node that later keys do not share, so a result written again shows
    j = next(i for i in range(1, 200) if want[i] != want[0])

    def let_go(change: Any) -> None:
        a = run(0)
        kept = change(a)
        del a
        b = run(j)
        assert b.dtype == np.int32 and b.shape == (1,) and b.flags.writeable
        assert b.flags.owndata and b.flags.c_contiguous and np.array_equal(b, want[j:j + 1])
        return kept

    v = let_go(lambda a: a[:])
    assert np.array_equal(v, want[:1])
    m = let_go(memoryview)
    assert m.tolist() == want[:1].tolist()
    w = let_go(weakref.ref)
    assert w() is None or np.array_equal(w(), want[:1])

    def as_float(a: np.ndarray) -> None:
        a.dtype = np.float32

    def as_matrix(a: np.ndarray) -> None:
        a.shape = (1, 1)

    def read_only(a: np.ndarray) -> None:
        a.flags.writeable = False

    def resized(a: np.ndarray) -> None:
        a.resize(9, refcheck=False)

    for change in (as_float, as_matrix, read_only, resized):
        let_go(change)
    # and without recycling, the same values
    _ring._np_recycling(False)
    assert not _ring._np_recycling()
    for i in range(20):
        assert np.array_equal(run(i, 3), want[i:i + 3])


def test_small_batch_errors_are_the_pipelines() -> None:
    ring = HashRing(["a", "b"])
    for bad in ([None], ["a", None], ["a", 1.5], [True]):
        with pytest.raises(TypeError) as fast:
            ring.get_indices(bad)
        with pytest.raises(TypeError) as slow:
            ring._get_indices_slow(bad)
        assert str(fast.value) == str(slow.value)
    assert ring.get_many([None, "a"], nulls="none").tolist() == [None, ring.get("a")]
    with pytest.raises(ValueError, match="nulls"):
        ring.get_many(["a"], nulls="nope")
    with pytest.raises(TypeError, match="threads"):
        ring.get_indices(["a"], threads=True)
    with pytest.raises(TypeError, match="out"):
        ring.get_indices(["a"], out=[0])


def test_small_lookups_are_the_slow_paths(np_arrays: bool) -> None:
    # lookup's fast path takes a C-contiguous native uint64 NumPy array of 1-1024 hashes with
    # no out= and a plain threads=; every other input goes to _lookup_slow, so results and
    # errors are that path's, and the array it returns is a plain owning one
    ring = HashRing([f"n{i}" for i in range(100)])
    rng = np.random.default_rng(3)
    h = rng.integers(0, 2**64, 3000, dtype=np.uint64)
    want = searchsorted_owners(ring, h)
    for n in (1, 2, 7, 1023, 1024, 1025, 3000):
        a = ring.lookup(h[:n])
        assert type(a) is np.ndarray and a.dtype == np.int32 and a.shape == (n,)
        assert a.flags.c_contiguous and a.flags.writeable and a.flags.owndata
        assert np.array_equal(a, want[:n])
    inputs = [h[:50:2], h[:50].astype(">u8"), h[:50].astype(np.int64) & np.int64(2**62),
              h[:50].view(np.int64), h[:0], h[:50].reshape(5, 10), h[:50].tolist(),
              h[:50].view(np.matrix), np.array([1.5]), h[:50].astype(np.uint32),
              np.asfortranarray(h[:50]), h[49::-1]]
    for x in inputs:
        try:
            slow = ring._lookup_slow(x)
        except (TypeError, ValueError) as e:
            with pytest.raises(type(e)) as fast:
                ring.lookup(x)
            assert str(fast.value) == str(e)
        else:
            assert np.array_equal(ring.lookup(x), slow), x
    for threads in (True, 0, -1, "2"):
        with pytest.raises((TypeError, ValueError)) as fast:
            ring.lookup(h[:5], threads=threads)
        with pytest.raises(type(fast.value)) as slow:
            ring._lookup_slow(h[:5], threads=threads)
        assert str(fast.value) == str(slow.value)
    out = np.empty(5, np.int32)
    assert ring.lookup(h[:5], out) is out and np.array_equal(out, want[:5])
    with pytest.raises(TypeError, match="out"):
        ring.lookup(h[:5], out=[0] * 5)
    empty = HashRing([])
    with pytest.raises(Exception) as fast:
        empty.lookup(h[:3])
    with pytest.raises(type(fast.value)):
        empty._lookup_slow(h[:3])


# -- the pool's placement -----------------------------------------------------------------------

LINUX_2CPU = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="worker placement is Linux's, and needs two usable CPUs")


def _cpus(text: str) -> frozenset[int]:
    """A Cpus_allowed_list ("0-3,6") as a set."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


def _allowed_sets() -> set[frozenset[int]]:
    """The CPU sets of this process's threads, from /proc."""
    out = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        out.add(_cpus(line.split(":", 1)[1].strip()))
        except FileNotFoundError:  # pragma: no cover - a thread that just ended
            pass
    return out


@pytest.fixture
def split_every_batch():
    """Every batch of two keys or more split over the pool (the threshold at 1), placement
    back to what it was afterwards."""
    old_min = _ring._set_parallel_min(1)
    old = set_thread_placement(True)
    try:
        yield
    finally:
        set_thread_placement(old)
        _ring._set_parallel_min(old_min)


@pytest.mark.parametrize("placement", [True, False])
def test_results_under_placement_are_the_serial_ones(split_every_batch, placement: bool) -> None:
    set_thread_placement(placement)
    rng = np.random.default_rng(6)
    str_keys = [f"user:{i}" for i in rng.integers(0, 10**9, 30_011)]
    inputs = {"list of str": str_keys, "tuple of str": tuple(str_keys),
              "NumPy S": np.array(str_keys, dtype="S"), "NumPy U": np.array(str_keys),
              "int64": rng.integers(-(2**62), 2**62, 30_011)}
    h = rng.integers(0, 2**64, 30_011, dtype=np.uint64, endpoint=False)
    ketama = KetamaRing([f"10.0.0.{i}:11211" for i in range(40)], mode="ketama")
    for router in (HashRing([f"n{i}" for i in range(300)]), ketama):
        for name, keys in inputs.items():
            one = router.get_indices(keys, threads=1)
            runs = _ring._parallel_runs()
            for t in (2, 3, 8):
                assert np.array_equal(router.get_indices(keys, threads=t), one), (name, t)
            assert _ring._parallel_runs() >= runs + 3, f"{name}: never split over threads"
            assert router.get_many(keys[:777], threads=2).tolist() == \
                router.get_many(keys[:777], threads=1).tolist()
        hr = h >> np.uint64(32) if router is ketama else h  # ketama's hashes are 32-bit
        assert np.array_equal(router.lookup(hr, threads=2), router.lookup(hr, threads=1))
    ring = HashRing([f"n{i}" for i in range(300)])
    assert np.array_equal(ring.lookup(h, threads=2), searchsorted_owners(ring, h))


def test_results_under_placement_from_many_threads(split_every_batch) -> None:
    ring = HashRing([f"n{i}" for i in range(100)])
    keys = np.array([f"k{i}" for i in range(50_000)], dtype="S")
    want = ring.get_indices(keys, threads=1)
    bad: list[str] = []

    def work(t: int) -> None:
        for i in range(20):
            set_thread_placement(bool((i + t) % 3))  # toggled while other calls are in flight
            if not np.array_equal(ring.get_indices(keys, threads=2), want):
                bad.append(f"thread {t} call {i}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not bad and not any(th.is_alive() for th in threads)


@LINUX_2CPU
def test_placement_keeps_workers_off_the_callers_cpu_and_turns_off(split_every_batch) -> None:
    ring = HashRing([f"n{i}" for i in range(50)])
    keys = np.array([f"k{i}" for i in range(200_000)], dtype="S")
    full = frozenset(os.sched_getaffinity(0))
    one = ring.get_indices(keys, threads=1)
    assert np.array_equal(ring.get_indices(keys, threads=2), one)
    # the worker may run on every usable CPU but one (the one the caller was on)
    assert any(len(full - s) == 1 and s < full for s in _allowed_sets())
    assert set_thread_placement(False) is True
    assert _allowed_sets() == {full}  # put back at once, before any call
    assert np.array_equal(ring.get_indices(keys, threads=2), one)
    assert _allowed_sets() == {full}
    assert set_thread_placement(True) is False
    assert np.array_equal(ring.get_indices(keys, threads=2), one)
    assert any(len(full - s) == 1 and s < full for s in _allowed_sets())


@pytest.mark.parametrize("bad", [1, 0, None, "yes", 1.0, np.int8(1)])
def test_set_thread_placement_refuses_what_is_not_a_bool(bad: object) -> None:
    old = set_thread_placement(True)
    try:
        with pytest.raises(TypeError, match=r"^on must be a bool, got"):
            set_thread_placement(bad)  # type: ignore[arg-type]
        assert set_thread_placement(True) is True  # unchanged by the refused call
    finally:
        set_thread_placement(old)


def test_set_thread_placement_takes_numpy_bools_and_returns_the_old_setting() -> None:
    old = set_thread_placement(np.bool_(False))
    try:
        assert set_thread_placement(True) is False
        assert set_thread_placement(np.True_) is True
    finally:
        set_thread_placement(old)


_PROBE = """
import os, warnings
warnings.simplefilter("error", RuntimeWarning)  # one at import: reported below
try:
    import numpy as np
    from consistent_hash import HashRing, set_thread_placement
except RuntimeWarning as e:
    print("warning", e)
    raise SystemExit(0)
r = HashRing(["a", "b", "c"])
r.get_indices(np.array([b"k%d" % i for i in range(300_000)]), threads=2)
masks = set()
for tid in os.listdir("/proc/self/task"):
    for line in open(f"/proc/self/task/{tid}/status"):
        if line.startswith("Cpus_allowed_list:"):
            masks.add(line.split(":")[1].strip())
print(set_thread_placement(True), len(masks))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("value,want", [
    (None, "True"), ("", "True"), ("1", "True"), (" 1 ", "True"), ("0", "False"),
    (" 0\n", "False"), ("off", "warning"), ("2", "warning"), ("false", "warning")])
def test_the_environment_variable(value: str | None, want: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CONSISTENT_HASH_PLACEMENT"}
    if value is not None:
        env["CONSISTENT_HASH_PLACEMENT"] = value
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    words = out.stdout.split()
    if want == "warning":
        assert words[0] == "warning" and "CONSISTENT_HASH_PLACEMENT" in out.stdout, out.stdout
        assert repr(value) in out.stdout
        return
    assert words[0] == want, out.stdout
    if len(os.sched_getaffinity(0)) >= 2:  # on: the worker's mask differs from the caller's
        assert int(words[1]) == (2 if want == "True" else 1), out.stdout


def _int_keys() -> list[int]:
    """Integers of every decimal length (1 to 20 characters with the sign), both signs, and the
    edges of each path: 8 and 16 digits (one and two words), the 17-character fallback,
    compact (one-digit) ints and the int64 / uint64 limits."""
    rng = np.random.default_rng(21)
    keys = [0, 1, -1, 9, -9, 10, -10, 2**30 - 1, 2**30, -(2**30), -(2**30) - 1,
            2**63 - 1, -(2**63), 2**63, 2**64 - 1]
    for d in range(1, 21):
        lo, hi = 10 ** (d - 1), 10**d
        keys += [lo, lo - 1, hi - 1, -lo, -(hi - 1), -(lo - 1)]
        draws = [int(x) for x in rng.integers(lo, min(hi, 2**64 - 1), size=60, dtype=np.uint64)]
        keys += draws + [-x for x in draws]
    return sorted({k for k in keys if -(2**63) <= k < 2**64})


@pytest.mark.parametrize("seed", [0, 777, 2**64 - 1])
def test_int_keys_hash_as_their_decimal_on_every_path(seed: int) -> None:
    """get(int), a list of ints, NumPy int64 and uint64 arrays: the XXH3 of str(key), which
    the digits-in-registers path computes without writing the string (xxhash is the judge)."""
    keys = _int_keys()
    ring = HashRing([f"node-{i}" for i in range(37)], seed=seed)
    want = {k: ring.nodes[i] for k, i in zip(
        keys, ring.lookup(np.array([xxhash.xxh3_64_intdigest(str(k).encode(), seed)
                                    for k in keys], dtype=np.uint64)), strict=True)}
    assert [ring.get(k) for k in keys] == [want[k] for k in keys]
    assert list(ring.get_many(keys)) == [want[k] for k in keys]
    signed = [k for k in keys if k < 2**63]
    assert list(ring.get_many(np.array(signed, dtype=np.int64))) == [want[k] for k in signed]
    unsigned = [k for k in keys if k >= 0]
    assert list(ring.get_many(np.array(unsigned, dtype=np.uint64))) == [want[k] for k in unsigned]


def test_int_decimals_of_every_digit_pair_in_every_place() -> None:
    """The eight-digit groups are made a digit pair at a time from the top (src/ch_keys.h,
    ch__dec8_word): every pair 00-99 in each of the four places of a group, next to 00 and 99
    pairs, the edges where a pair carries into the next, in the low and the high group of a
    16-digit key and alone, and 200,000 random keys of 1 to 16 digits: XXH3 of str(key) from
    xxhash on each (a list of ints, an int64 array and get alike)."""
    rng = np.random.default_rng(8)
    group = {d * 100**p + fill for d in range(100) for p in range(4)
             for fill in (0, 99_999_999 - 99 * 100**p)}
    group |= {a * 10**k - 1 for a in range(1, 100) for k in range(1, 7)}
    keys = sorted(group) + [g * 10**8 + 12_345_678 for g in sorted(group)[::7]]
    keys += [87_654_321 * 10**8 + g for g in sorted(group)[::7]]
    keys += [int(x) for x in rng.integers(0, 10**16, 100_000) // 10 ** rng.integers(0, 16, 100_000)]
    keys += [int(x) for x in rng.integers(-(10**15), 0, 100_000)]
    ring = HashRing([f"node-{i}" for i in range(11)])
    want = np.array([xxhash.xxh3_64_intdigest(str(k).encode()) for k in keys], dtype=np.uint64)
    assert np.array_equal(ring.hash_many(keys, threads=1), want)
    assert np.array_equal(ring.hash_many(np.array(keys, dtype=np.int64), threads=1), want)
    idx = ring.lookup(want, threads=1)
    assert [ring.get(k) for k in keys[::50]] == [ring.nodes[i] for i in idx[::50]]


RAW_INT_ROUTERS = ["JumpHash", "MementoHash", "AnchorHash", "DxHash", "JumpBackHash",
                   "JumpBackAnchorHash", "FlipHash", "BinomialHash", "PowerHash"]


@pytest.mark.parametrize("name", RAW_INT_ROUTERS)
def test_raw_int_keys_take_their_own_value_on_get(name: str) -> None:
    """A router whose int keys are their own 64-bit value reads a small int from its header in
    get (no Python call); every int, compact or not, at the 2**63 and 2**64 edges, negative
    (two's complement) or an int subclass, routes as lookup() of that value, and an int past
    64 bits still raises."""
    import enum

    import consistent_hash

    cls = getattr(consistent_hash, name)
    r = cls([f"n{i}" for i in range(23)])

    class Level(enum.IntEnum):
        HIGH = 2**40 + 7

    keys: list[int] = [k for k in _int_keys() if k < 2**64] + [
        2**63 - 1, 2**63, 2**64 - 1, -(2**63), -1, 0, 1, 2**30 - 1, 2**30, -(2**30)]
    want = r.lookup(np.array([k % 2**64 for k in keys], dtype=np.uint64))
    assert [r.get(k) for k in keys] == [r.nodes[i] for i in want]
    assert r.get(Level.HIGH) == r.get(2**40 + 7)
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError, match="64 bits"):
            r.get(bad)
    with pytest.raises(TypeError):
        r.get(True)


@pytest.mark.parametrize("hash", ["xxh64", "murmur3", "md5"])
def test_int_keys_route_as_their_decimal_with_every_hash(hash: str) -> None:
    """With a hash other than XXH3, an int key's decimal is written (as words, stored whole)
    and hashed: every length from 1 to 20 digits and both signs route as str(key) does, whose
    bytes are read as they are, on get, a list and the NumPy integer arrays."""
    keys = _int_keys()
    ring = HashRing([f"node-{i}" for i in range(37)], hash=hash)
    want = [ring.get(str(k)) for k in keys]
    assert [ring.get(k) for k in keys] == want
    assert list(ring.get_many(keys)) == want
    signed = [(k, w) for k, w in zip(keys, want, strict=True) if k < 2**63]
    assert list(ring.get_many(np.array([k for k, _ in signed], dtype=np.int64))) == [
        w for _, w in signed]
    unsigned = [(k, w) for k, w in zip(keys, want, strict=True) if k >= 0]
    assert list(ring.get_many(np.array([k for k, _ in unsigned], dtype=np.uint64))) == [
        w for _, w in unsigned]


def test_compat_rings_route_an_int_key_as_its_decimal() -> None:
    from consistent_hash.compat.haproxy import HAProxyBackend
    from consistent_hash.compat.nginx import NginxUpstream
    from consistent_hash.compat.twemproxy import TwemproxyPool

    keys = _int_keys()
    servers = [f"10.0.0.{i}:11211" for i in range(1, 12)]
    for r in (NginxUpstream(servers), KetamaRing(servers, mode="ketama"), HAProxyBackend(servers),
              TwemproxyPool(servers)):
        want = [r.get(str(k)) for k in keys]
        assert [r.get(k) for k in keys] == want, type(r).__name__
        assert list(r.get_many(keys)) == want, type(r).__name__
