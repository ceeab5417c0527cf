"""Behaviour of HashRing: wrap-around, degenerate rings, weights, replicas, copies and
serialization, key kinds and containers, read-only arrays, thread safety."""

from __future__ import annotations

import copy
import enum
import hashlib
import pickle
import threading
import time
from fractions import Fraction

import numpy as np
import pytest
import xxhash
from model_ring import MAX64, SPACE, ModelRing

from consistent_hash import HashRing

KEYS = [f"key-{i}" for i in range(5000)]


def xxh3(b: bytes, seed: int = 0) -> int:
    return xxhash.xxh3_64_intdigest(b, seed)


def searchsorted_owner(ring: HashRing, h: int) -> int:
    pos = ring.positions
    return int(ring.owners[np.searchsorted(pos, np.uint64(h), side="left") % len(pos)])


def hash_with_overrides(overrides: dict[bytes, int]):
    """xxh3, except for chosen inputs (a module-level factory, results are plain closures)."""
    def h(b: bytes) -> int:
        return overrides.get(b, xxh3(b))
    return h


# --------------------------------------------------------------------------------------------
# wrap-around and degenerate rings
# --------------------------------------------------------------------------------------------


def test_wrap_around_goes_to_first_position():
    base = HashRing(["a", "b", "c"], vnodes=10)
    top = int(base.positions[-1])
    first = base.nodes[base.owners[0]]
    hashes = np.array([top + 1, MAX64, 0, int(base.positions[0])], dtype=np.uint64)
    assert [base.nodes[i] for i in base.lookup(hashes)] == [first] * 4
    second = base.nodes[base.owners[1]]
    assert base.nodes[base.lookup(np.array([base.positions[0] + 1], np.uint64))[0]] == second
    # through keys: a custom hash that puts keys above the last position / at 0
    ring = HashRing(["a", "b", "c"], vnodes=10,
                    hash=hash_with_overrides({b"up": MAX64, b"zero": 0, b"top": top}))
    assert np.array_equal(ring.positions, base.positions)
    assert ring.get("up") == first and ring.get("zero") == first
    assert ring.get("top") == base.nodes[base.owners[-1]]
    assert ring.get_many(["up", "zero", "top"]).tolist() == [first, first,
                                                              base.nodes[base.owners[-1]]]
    assert ring.replicas("up", 3)[0] == first


def test_single_node():
    ring = HashRing(["only"])
    assert len(ring) == 1 and ring.nodes == ("only",) and "only" in ring and "x" not in ring
    assert set(ring.get_many(KEYS).tolist()) == {"only"}
    assert ring.get("anything") == "only"
    assert ring.replicas("k", 5) == ["only"]
    assert ring.replicas_many(["a", "b"], 3).tolist() == [["only"], ["only"]]
    assert list(ring.ownership()) == ["only"]
    assert ring.ownership()["only"] == pytest.approx(1.0, abs=1e-12)
    assert (ring.get_indices(KEYS) == 0).all()


def test_single_vnode_ring_exact():
    ring = HashRing(["a"], vnodes=1)
    assert ring.positions.tolist() == [xxh3(b"a#0")]
    assert ring.owners.tolist() == [0]
    assert ring.ownership() == {"a": 1.0}
    two = HashRing(["a", "b"], vnodes=1, hash="xxh64", seed=5)
    pa, pb = xxhash.xxh64_intdigest(b"a#0", 5), xxhash.xxh64_intdigest(b"b#0", 5)
    lo, hi = sorted([pa, pb])
    lo_owner, hi_owner = ("a", "b") if pa < pb else ("b", "a")
    assert two.positions.tolist() == [lo, hi]
    probes = {0: lo_owner, lo: lo_owner, lo + 1: hi_owner, hi: hi_owner,
              hi + 1: lo_owner, MAX64: lo_owner}
    got = two.lookup(np.array(list(probes), dtype=np.uint64))
    assert [two.nodes[i] for i in got] == list(probes.values())
    share_hi = Fraction(hi - lo, SPACE)
    own = two.ownership()
    assert abs(own[hi_owner] - float(share_hi)) < 1e-15
    assert abs(own[lo_owner] - float(1 - share_hi)) < 1e-15


def test_all_positions_equal():
    """Every vnode on one point: the smallest name owns the whole circle."""
    ring = HashRing(["b", "a", "c"], vnodes=3, hash=lambda b: 12345)
    assert ring.positions.tolist() == [12345] * 9
    assert ring.owners.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert ring.ownership() == {"a": 1.0, "b": 0.0, "c": 0.0}
    assert set(ring.get_many(KEYS[:100]).tolist()) == {"a"}
    assert ring.replicas("k", 3) == ["a", "b", "c"]


def test_one_node_many_vnodes_and_large_ring_lookups():
    one = HashRing({"solo": 1.0}, vnodes=100_000)
    expected = sorted(xxh3(b"solo#%d" % j) for j in range(100_000))
    assert one.positions.tolist() == expected
    assert set(one.get_many(KEYS).tolist()) == {"solo"}
    # a ring well past 2**16 positions: compare lookups with searchsorted
    big = HashRing({"a": 1.0, "b": 2.0, "c": 0.5}, vnodes=50_000, hash="md5")
    assert len(big.positions) == 175_000
    model = ModelRing(big.weights, vnodes=50_000, hash="md5")
    assert big.positions.tolist() == model.positions
    assert big.owners.tolist() == model.owners
    rng = np.random.default_rng(7)
    pos = big.positions
    hashes = np.concatenate([
        rng.integers(0, 2**64, 300_000, dtype=np.uint64, endpoint=False),
        pos, pos - np.uint64(1), pos[:-1] + np.uint64(1),
        np.array([0, MAX64], dtype=np.uint64)])
    expected_idx = big.owners[np.searchsorted(pos, hashes, side="left") % len(pos)]
    assert np.array_equal(big.lookup(hashes), expected_idx)
    keys = np.array(KEYS)
    assert big.get_many(keys).tolist() == [model.get(k) for k in KEYS]


@pytest.mark.parametrize("ws,vnodes", [({"only": 1.0}, 160), ({"a": 1.0, "b": 2.0, "c": 0.5}, 160),
                                       ({"a": 1.0, "b": 1.0}, 1000)])
def test_ownership_is_the_correctly_rounded_exact_share(ws, vnodes):
    """ownership() promises the exact share: each value is the float nearest the exact
    rational share (so a lone node owns exactly 1.0, and no share exceeds 1)."""
    ring = HashRing(ws, vnodes=vnodes)
    exact = ModelRing(ws, vnodes=vnodes).ownership()
    assert ring.ownership() == {n: float(exact[n]) for n in ws}


def test_weights_give_proportional_ownership():
    ws = {"w1": 1.0, "w2": 2.0, "w3": 3.0, "w4": 4.0}
    ring = HashRing(ws, vnodes=1000)
    counts = np.bincount(ring.owners, minlength=4)
    assert counts.tolist() == [1000, 2000, 3000, 4000]
    own = ring.ownership()
    total = sum(ws.values())
    # share of k vnodes among V random points has relative sd ~ 1/sqrt(k) <= 3.2%: allow 15%
    for n, w in ws.items():
        assert abs(own[n] / (w / total) - 1) < 0.15, (n, own[n])
    assert sorted(own, key=own.get) == ["w1", "w2", "w3", "w4"]
    assigned = np.bincount(ring.get_indices(np.array(KEYS * 20)), minlength=4) / (len(KEYS) * 20)
    for i, n in enumerate(ring.nodes):
        assert abs(assigned[i] - own[n]) < 0.03


@pytest.mark.parametrize("vnodes,w,count", [
    (160, 0.001, 1), (160, 0.5, 80), (160, 1.0, 160), (160, 1.003, 160), (160, 1.0031, 160),
    (160, 1.0032, 161), (160, 2.5, 400), (4, 0.625, 3), (4, 0.375, 2), (2, 1.25, 3),
    (1, 0.5, 1), (1, 1.5, 2), (1, 0.49, 1), (3, 0.01, 1)])
def test_vnode_count_rule(vnodes, w, count):
    """floor(vnodes * w + 0.5), at least 1: halves round up (not to even)."""
    ring = HashRing({"n": w, "m": 1.0}, vnodes=vnodes)
    assert int((ring.owners == ring.nodes.index("n")).sum()) == count
    assert len(ring.positions) == count + vnodes


# --------------------------------------------------------------------------------------------
# replicas
# --------------------------------------------------------------------------------------------


def walk_replicas(ring: HashRing, h: int, n: int) -> list[str]:
    pos, own = ring.positions.tolist(), ring.owners.tolist()
    V = len(pos)
    start = next((i for i, p in enumerate(pos) if p >= h), 0)
    out: list[str] = []
    for step in range(V):
        name = ring.nodes[own[(start + step) % V]]
        if name not in out:
            out.append(name)
    return out[:n]


@pytest.mark.parametrize("nodes,vnodes,ns", [(5, 7, [1, 2, 3, 5, 6, 50]),
                                             (70, 3, [1, 64, 65, 70, 100]),
                                             (2, 1, [1, 2, 3])])
def test_replicas_distinct_clockwise(nodes, vnodes, ns):
    ring = HashRing([f"node-{i:03d}" for i in range(nodes)], vnodes=vnodes, hash="murmur3")
    keys = KEYS[:150]
    for n in ns:
        many = ring.replicas_many(keys, n)
        idx = ring.replica_indices(np.array(keys), n)
        assert many.shape == idx.shape == (len(keys), min(n, nodes))
        for row, row_idx, k in zip(many.tolist(), idx.tolist(), keys, strict=True):
            expected = walk_replicas(ring, ring.hash(k), n)
            assert ring.replicas(k, n) == expected
            assert row == expected
            assert [ring.nodes[i] for i in row_idx] == expected
            assert len(set(row)) == len(row) == min(n, nodes)
            assert row[0] == ring.get(k)
    assert np.array_equal(ring.replica_indices(keys, 1)[:, 0], ring.get_indices(keys))


def test_replicas_keys_stay_after_unrelated_removal():
    ring = HashRing([f"n{i}" for i in range(6)], vnodes=50)
    before = {k: ring.replicas(k, 3) for k in KEYS[:500]}
    ring.remove("n3")
    for k, reps in before.items():
        assert ring.replicas(k, 3)[: len([r for r in reps if r != "n3"])] == \
            [r for r in reps if r != "n3"]


# --------------------------------------------------------------------------------------------
# copies, pickle, serialization, fingerprint
# --------------------------------------------------------------------------------------------


def blake(b: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "big")


RING_PARAMS = [dict(vnodes=40), dict(vnodes=3, hash="xxh64", seed=2**64 - 1),
               dict(vnodes=17, hash="murmur3", seed=123), dict(vnodes=100, hash="md5"),
               dict(vnodes=9, hash=blake)]


def assert_same_ring(a: HashRing, b: HashRing):
    assert a == b and not (a != b)
    assert a.nodes == b.nodes and a.weights == b.weights and len(a) == len(b)
    assert np.array_equal(a.positions, b.positions) and np.array_equal(a.owners, b.owners)
    assert a.get_many(KEYS).tolist() == b.get_many(KEYS).tolist()
    assert [a.get(k) for k in KEYS[:200]] == [b.get(k) for k in KEYS[:200]]
    assert a.replicas_many(KEYS[:300], 3).tolist() == b.replicas_many(KEYS[:300], 3).tolist()


@pytest.mark.parametrize("params", RING_PARAMS, ids=lambda p: str(p.get("hash", "xxh3")))
def test_round_trips(params):
    ring = HashRing({"a": 1.0, "b": 0.3, "é": 2.2, "\U0001f600": 1.0}, **params)
    ring.add("late", 0.7)
    ring.set_weight("a", 1.9)
    assert_same_ring(copy.copy(ring), ring)
    assert_same_ring(copy.deepcopy(ring), ring)
    assert_same_ring(ring.copy(), ring)
    for proto in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert_same_ring(pickle.loads(pickle.dumps(ring, protocol=proto)), ring)
    if params.get("hash") is not blake:
        b = ring.to_bytes()
        assert isinstance(b, bytes)
        back = HashRing.from_bytes(b)
        assert_same_ring(back, ring)
        assert back.to_bytes() == b and back.fingerprint() == ring.fingerprint()
        rebuilt = HashRing(ring.weights, **params)
        assert rebuilt.to_bytes() == b  # canonical: equal rings, equal bytes


def test_copy_is_independent():
    ring = HashRing(["a", "b", "c"], vnodes=20)
    snapshot = ring.get_many(KEYS)
    c = ring.copy()
    c.add("d")
    c.remove("a")
    c.set_weight("b", 3.0)
    assert ring.nodes == ("a", "b", "c") and ring.weights == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert np.array_equal(ring.get_many(KEYS), snapshot)
    assert ring != c
    ring.add("z")
    assert "z" not in c


def test_equality_semantics():
    a = HashRing({"a": 1.0, "b": 2.0})
    assert a == HashRing({"b": 2.0, "a": 1.0})
    assert a != HashRing({"a": 1.0, "b": 2.0}, vnodes=161)
    assert a != HashRing({"a": 1.0, "b": 2.0}, seed=1)
    assert a != HashRing({"a": 1.0, "b": 2.0}, hash="xxh64")
    assert a != HashRing({"a": 1.0, "b": 1.0})
    assert a != HashRing({"a": 1.0})
    assert a != "not a ring"


def fingerprint_variants():
    base = dict(nodes={"a": 1.0, "b": 2.0}, vnodes=50, hash="xxh3", seed=0)
    yield "base", base
    yield "vnodes", dict(base, vnodes=51)
    yield "seed", dict(base, seed=1)
    yield "hash", dict(base, hash="xxh64")
    yield "murmur", dict(base, hash="murmur3")
    yield "md5", dict(base, hash="md5")
    yield "weight", dict(base, nodes={"a": 1.0, "b": 2.0000001})
    yield "name", dict(base, nodes={"a": 1.0, "c": 2.0})
    yield "extra", dict(base, nodes={"a": 1.0, "b": 2.0, "c": 1.0})
    yield "fewer", dict(base, nodes={"a": 1.0})
    yield "empty", dict(base, nodes={})


def test_fingerprint_equal_for_equal_rings_and_different_otherwise():
    prints = {}
    for label, p in fingerprint_variants():
        kw = {k: v for k, v in p.items() if k != "nodes"}
        r = HashRing(p["nodes"], **kw)
        fp = r.fingerprint()
        assert isinstance(fp, str) and fp == HashRing(dict(p["nodes"]), **kw).fingerprint()
        prints[label] = fp
    assert len(set(prints.values())) == len(prints), prints
    # built by different call sequences: the same fingerprint
    r = HashRing(vnodes=50)
    r.add("b", 5.0)
    r.add("x")
    r.add("a")
    r.remove("x")
    r.set_weight("b", 2.0)
    assert r.fingerprint() == prints["base"]
    r.set_weight("b", 2.5)
    assert r.fingerprint() != prints["base"]


# --------------------------------------------------------------------------------------------
# keys: kinds and containers
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ring():
    return HashRing({"a": 1.0, "b": 1.5, "c": 0.5, "é": 1.0}, vnodes=64)


def test_every_container_kind_agrees(ring):
    strs = KEYS[:3000] + ["", "é", "\U0001f600x", "a\x00b"]
    expected = [ring.get(k) for k in strs]
    model = ModelRing(ring.weights, vnodes=64)
    assert expected == [model.get(k) for k in strs]
    obj = np.empty(len(strs), dtype=object)
    obj[:] = strs
    containers = {
        "list": strs, "tuple": tuple(strs), "object": obj, "U": np.array(strs),
        "U_wide": np.array(strs, dtype="U40"), "U_big_endian": np.array(strs, dtype=">U40"),
        "U_strided": np.array([s for s in strs for _ in range(2)])[::2],
        "bytes_list": [s.encode() for s in strs], "bytearray_list": [bytearray(s.encode())
                                                                      for s in strs],
        "memoryview_list": [memoryview(s.encode()) for s in strs],
        "S": np.array([s.encode() for s in strs], dtype=object).astype("S"),
    }
    if hasattr(np.dtypes, "StringDType"):
        containers["T"] = np.array(strs, dtype=np.dtypes.StringDType())
    for name, c in containers.items():
        assert ring.get_many(c).tolist() == expected, name
        assert [ring.nodes[i] for i in ring.get_indices(c)] == expected, name
        assert ring.hash_many(c).tolist() == [ring.hash(k) for k in strs], name
        assert ring.replicas_many(c, 2)[:, 0].tolist() == expected, name
    ints = list(range(-1500, 1500)) + [2**63 - 1, -(2**63)]
    int_expected = [model.get(str(i)) for i in ints]
    for dt in ("int64", "int32", "<i8", ">i8"):
        if dt == "int32":
            arr = np.array(ints[:-2], dtype=dt)
            exp = int_expected[:-2]
        else:
            arr, exp = np.array(ints, dtype=dt), int_expected
        assert ring.get_many(arr).tolist() == exp, dt
    assert ring.get_many(ints).tolist() == int_expected
    assert ring.get_many(np.array([2**64 - 1, 2**63], dtype=np.uint64)).tolist() == \
        [model.get(str(2**64 - 1)), model.get(str(2**63))]


def test_bytes_and_str_keys(ring):
    for s in ["abc", "", "é", "日本語", "\U0001f600", "a\x00", "x" * 10_000]:
        b = s.encode("utf-8")
        h = ring.hash(s)
        assert h == xxh3(b)
        assert ring.hash(b) == ring.hash(bytearray(b)) == ring.hash(memoryview(b)) == h
        assert ring.get(s) == ring.get(b) == ring.get(bytearray(b)) == ring.get(memoryview(b))
    m = memoryview(b"abcdef")[::2]  # non-contiguous: its bytes are b"ace"
    assert ring.hash(m) == xxh3(b"ace")
    assert ring.get_many([m]).tolist() == [ring.get("ace")]
    # str keys are UTF-8, not latin-1 / UTF-16 / UTF-32
    assert ring.hash("é") != xxh3("é".encode("latin-1"))
    assert ring.hash(b"\xff") == xxh3(b"\xff")


class Color(enum.IntEnum):
    RED = 7


@pytest.mark.parametrize("k", [0, 1, -1, 42, -42, 2**31, 2**63 - 1, -(2**63), 2**63,
                               2**64 - 1, 2**64, 2**64 + 5, -(2**64 + 5), 10**40, -(10**40)])
def test_int_keys_equal_their_decimal_str(ring, k):
    s = str(k)
    assert ring.hash(k) == xxh3(s.encode("ascii"))
    assert ring.get(k) == ring.get(s)
    assert ring.get_many([k, s, k]).tolist() == [ring.get(s)] * 3
    assert ring.hash_many([k]).tolist() == [xxh3(s.encode())]
    assert ring.replicas(k, 3) == ring.replicas(s, 3)


def test_int_subclass_key_is_its_decimal_value(ring):
    assert ring.hash(Color.RED) == xxh3(b"7")
    assert ring.get_many([Color.RED]).tolist() == [ring.get("7")]


def test_numpy_fixed_width_trailing_nuls_follow_numpy(ring):
    arr = np.array(["ab\x00", "ab", "a\x00b", "\x00", "", "ab\x00\x00"], dtype="U6")
    elements = [arr[i] for i in range(len(arr))]
    assert elements[0] == "ab" and elements[3] == ""  # numpy's own semantics
    assert ring.get_many(arr).tolist() == [ring.get(str(e)) for e in elements]
    assert ring.hash_many(arr).tolist() == [xxh3(str(e).encode()) for e in elements]
    assert ring.hash_many(arr)[2] == xxh3(b"a\x00b")  # interior NUL kept
    sarr = np.array([b"ab\x00", b"ab", b"a\x00b", b"\x00"], dtype="S5")
    assert ring.hash_many(sarr).tolist() == [xxh3(bytes(e)) for e in sarr]
    assert ring.hash_many(sarr)[0] == xxh3(b"ab")
    # in a list or object array a trailing NUL is part of the key
    assert ring.hash_many(["ab\x00"]).tolist() == [xxh3(b"ab\x00")]
    obj = np.array(["ab\x00"], dtype=object)
    assert ring.hash_many(obj).tolist() == [xxh3(b"ab\x00")]


def test_nodes_weights_len_contains():
    ring = HashRing({"b": 2, "a": 1, "é": 0.5, "Z": 1})
    assert ring.nodes == ("Z", "a", "b", "é")  # sorted by UTF-8 bytes
    assert ring.weights == {"Z": 1.0, "a": 1.0, "b": 2.0, "é": 0.5}
    w = ring.weights
    w["a"] = 99.0
    assert ring.weights["a"] == 1.0  # a copy
    assert len(ring) == 4 and "é" in ring and "e" not in ring and 5 not in ring


# --------------------------------------------------------------------------------------------
# read-only arrays
# --------------------------------------------------------------------------------------------


def test_positions_and_owners_cannot_be_written():
    ring = HashRing(["a", "b", "c"], vnodes=8)
    routed = ring.get_many(KEYS).tolist()
    for arr in (ring.positions, ring.owners):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 1
        with pytest.raises(ValueError):
            arr[:] = 0
    assert ring.get_many(KEYS).tolist() == routed


def test_positions_and_owners_cannot_be_made_writeable():
    ring = HashRing(["a", "b", "c"], vnodes=8)
    for arr in (ring.positions, ring.owners):
        with pytest.raises(ValueError):
            arr.flags.writeable = True


def test_positions_layout():
    ring = HashRing(["a", "b", "c"], vnodes=50)
    pos = ring.positions
    assert pos.dtype == np.uint64 and pos.flags.c_contiguous and pos.ndim == 1
    assert (np.diff(pos.astype(object)) >= 0).all()
    assert ring.owners.dtype == np.int32 and ring.owners.shape == pos.shape


# --------------------------------------------------------------------------------------------
# threads
# --------------------------------------------------------------------------------------------


def test_concurrent_get_many_sees_whole_snapshots():
    base = {f"n{i}": 1.0 for i in range(6)}
    keys = np.array([f"t{i}" for i in range(40_000)])
    ring = HashRing(base, vnodes=100)
    # the states the writer cycles through, and each one's answer from a fresh ring
    steps = [("add", "x1", 1.0), ("add", "x2", 2.0), ("set", "n0", 3.0), ("remove", "x1", 0),
             ("set", "n0", 1.0), ("remove", "x2", 0)]
    states, ws = [], dict(base)
    for op, n, w in steps:
        if op == "remove":
            del ws[n]
        else:
            ws[n] = w
        states.append(dict(ws))
    assert states[-1] == base
    answers = [HashRing(s, vnodes=100).get_many(keys) for s in states]
    assert len({a.tobytes() for a in answers}) == len(answers)  # all distinct

    stop = threading.Event()
    errors: list[str] = []
    seen: list[set[int]] = [set() for _ in range(4)]

    def reader(t: int):
        try:
            while not stop.is_set():
                got = ring.get_many(keys)
                matches = [i for i, a in enumerate(answers) if np.array_equal(got, a)]
                if not matches:
                    errors.append("result matches no snapshot")
                    return
                seen[t].add(matches[0])
                own = ring.ownership()
                if abs(sum(own.values()) - 1) > 1e-9:
                    errors.append("ownership of a torn snapshot")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=reader, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    mutations = 0
    deadline = time.monotonic() + 1.5
    try:
        while time.monotonic() < deadline and not errors:
            for op, n, w in steps:
                if op == "add":
                    ring.add(n, w)
                elif op == "set":
                    ring.set_weight(n, w)
                else:
                    ring.remove(n)
                mutations += 1
    finally:
        stop.set()
        for th in threads:
            th.join(10)
    assert not errors, errors[:3]
    assert mutations >= len(steps)
    assert all(seen), "every reader finished at least one lookup"
    assert ring.weights == base


@pytest.mark.parametrize("start", [8_100, 8_192 - 160 - 1, 16_384 - 100, 20_000])
def test_prefix_index_after_add_and_remove_is_the_built_one(start: int) -> None:
    # add / remove shift the old ring's prefix index instead of rebuilding it; it must equal
    # the index computed from the positions (here with NumPy) after every change, also when
    # the ring crosses a size where the index's bit count k changes (8,192, 16,384 positions).
    rng = np.random.default_rng(start)
    nodes = [f"n{i}" for i in range(start // 100)]
    ring = HashRing(nodes, vnodes=100)
    weights = [0.01, 0.5, 1.0, 1.6, 3.0]
    for step in range(12):
        if step % 3 == 2 and len(ring.nodes) > 1:
            ring.remove(ring.nodes[int(rng.integers(len(ring.nodes)))])
        else:
            ring.add(f"x{step}", float(rng.choice(weights)))
        core = ring._core
        pos = ring.positions
        idx = core.prefix_index
        k = int(np.log2(len(idx) - 1))
        tops = pos >> np.uint64(64 - k)
        expected = np.searchsorted(tops, np.arange(len(idx), dtype=np.uint64), side="left")
        assert np.array_equal(idx, expected.astype(np.uint32)), step
        h = rng.integers(0, 2**64, size=2_000, dtype=np.uint64, endpoint=False)
        h = np.concatenate([h, pos[::7], pos[::7] + np.uint64(1)])
        want = ring.owners[np.searchsorted(pos, h, side="left") % len(pos)]
        assert np.array_equal(ring.lookup(h), want), step


def _fresh_prefix(pos: np.ndarray, k: int) -> np.ndarray:
    tops = pos >> np.uint64(64 - k)
    return np.searchsorted(tops, np.arange((1 << k) + 1, dtype=np.uint64),
                           side="left").astype(np.uint32)


@pytest.mark.parametrize("base, vnodes", [(100, 160), (1, 4)])
def test_ring_with_and_ring_drop_give_the_prefix_index_built_afresh(base: int, vnodes: int
                                                                     ) -> None:
    """ring_with / ring_drop shift the old prefix index when its size stays (100 nodes: k = 14
    before and after) and build it afresh when it changes (4 -> 164 positions); either way it
    equals the index computed from the new positions, and the snapshot equals the ring built
    whole."""
    from consistent_hash._ring import label_positions, ring_drop, ring_with

    ring = HashRing([f"n{i}" for i in range(base)], vnodes=vnodes)
    core = ring._core
    r = int(np.searchsorted(np.array(core.nodes), "new"))
    pb, _ = label_positions(core.hasher, [b"new"], np.array([160], dtype=np.uint32), r)
    added = ring_with(core, "new", r, np.sort(pb))
    whole = HashRing({**ring.weights, "new": 160 / vnodes}, vnodes=vnodes)._core
    for snap, want in ((added, whole), (ring_drop(added, r), core)):
        assert snap.nodes == want.nodes
        assert np.array_equal(snap.positions, want.positions)
        assert np.array_equal(snap.owners, want.owners)
        k = int(np.log2(len(snap.prefix_index) - 1))
        assert np.array_equal(snap.prefix_index, _fresh_prefix(snap.positions, k))
        assert np.array_equal(snap.prefix_index, want.prefix_index)
    with pytest.raises(ValueError, match="ascending"):
        ring_with(core, "new", r, pb[::-1].copy() if pb[0] < pb[-1] else pb)
    with pytest.raises(IndexError):
        ring_with(core, "new", len(core.nodes) + 1, np.sort(pb))


@pytest.mark.parametrize("changes", [[("n3", 2.5), ("n3", 0.4), ("n0", 3.0), ("n49", 0.01),
                                      ("n49", 1.0)], [("n7", 9.0), ("n7", 1.0)]])
def test_set_weight_gives_the_ring_built_with_those_weights(changes: list[tuple[str, float]]
                                                           ) -> None:
    ring = HashRing({f"n{i}": 1.0 for i in range(50)})
    for node, weight in changes:
        ring.set_weight(node, weight)
        built = HashRing(ring.weights)
        assert np.array_equal(ring.positions, built.positions)
        assert np.array_equal(ring.owners, built.owners)
        assert np.array_equal(ring._core.prefix_index, built._core.prefix_index)
        assert ring.fingerprint() == built.fingerprint()
