"""HashRing against the pure-Python reference model (tests/support/model_ring.py), plus the
consistency properties of consistent hashing checked on >= 100,000 keys.

Every expected value comes from the model (xxhash / mmh3 / hashlib + bisect + Fraction) or from
plain NumPy on the ring's published arrays, never from consistent_hash internals.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from model_ring import MAX64, ModelRing, count_of

from consistent_hash import EmptyRingError, HashRing

# --------------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------------


def blake_hash(b: bytes) -> int:
    """A custom hash callable (module level, so rings using it pickle)."""
    return int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little")


TEXT = st.characters(exclude_categories=("Cs",))  # anything UTF-8 can encode
node_names = st.text(TEXT, min_size=0, max_size=8)
weights = st.floats(0.01, 5.0, allow_nan=False, allow_infinity=False)
SEED_OF = {
    "xxh3": st.integers(0, MAX64),
    "xxh64": st.integers(0, MAX64),
    "murmur3": st.integers(0, 2**32 - 1),
    "md5": st.just(0),
    blake_hash: st.just(0),
}


@st.composite
def hash_params(draw):
    h = draw(st.sampled_from(list(SEED_OF)))
    return h, draw(SEED_OF[h])


@st.composite
def configs(draw, min_nodes=1, max_nodes=6, max_vnodes=300):
    h, seed = draw(hash_params())
    vnodes = draw(st.integers(1, max_vnodes))
    names = draw(st.lists(node_names, min_size=min_nodes, max_size=max_nodes, unique=True))
    ws = {n: draw(weights) for n in names}
    return {"weights": ws, "vnodes": vnodes, "hash": h, "seed": seed}


def build(cfg):
    kw = {"vnodes": cfg["vnodes"], "hash": cfg["hash"], "seed": cfg["seed"]}
    return HashRing(dict(cfg["weights"]), **kw), ModelRing(dict(cfg["weights"]), **kw)


scalar_keys = st.one_of(
    st.text(TEXT, max_size=30),
    st.binary(max_size=40),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 2**63 - 1, -(2**63), 2**63, 2**64 - 1, 2**64, 2**64 + 5]),
)
key_lists = st.lists(scalar_keys, max_size=40)


def scaled(divisor: int) -> settings:
    """The loaded profile with fewer examples (for tests that run on 100,000+ keys)."""
    return settings(max_examples=max(3, settings.default.max_examples // divisor))


def same(arr, name):
    """Elementwise arr == name for an object array of names.  (Comparing with the bare str
    would let NumPy turn it into a fixed-width string first, which drops trailing NULs.)"""
    return arr == np.array(name, dtype=object)


def obj_array(items):
    a = np.empty(len(items), dtype=object)
    a[:] = list(items)
    return a


# --------------------------------------------------------------------------------------------
# agreement with the model
# --------------------------------------------------------------------------------------------


@given(configs())
def test_placement_matches_model(cfg):
    ring, model = build(cfg)
    assert ring.nodes == model.nodes
    assert len(ring) == len(model.weights)
    assert ring.weights == model.weights
    assert ring.positions.dtype == np.uint64 and ring.owners.dtype == np.int32
    assert ring.positions.tolist() == model.positions
    assert ring.owners.tolist() == model.owners
    assert len(ring.positions) == sum(count_of(cfg["vnodes"], w) for w in cfg["weights"].values())
    for n in cfg["weights"]:
        assert n in ring


@given(configs(), key_lists)
def test_get_hash_and_sequences_match_model(cfg, keys):
    ring, model = build(cfg)
    expected = [model.get(k) for k in keys]
    assert [ring.get(k) for k in keys] == expected
    assert [ring.hash(k) for k in keys] == [model.hash(k) for k in keys]
    assert ring.hash_many(keys).dtype == np.uint64
    assert ring.hash_many(keys).tolist() == [model.hash(k) for k in keys]
    assert ring.hash_many(tuple(keys)).tolist() == [model.hash(k) for k in keys]
    for container in (keys, tuple(keys), obj_array(keys)):
        got = ring.get_many(container)
        assert got.dtype == object and got.shape == (len(keys),)
        assert got.tolist() == expected
        idx = ring.get_indices(container)
        assert idx.dtype == np.int32
        assert [model.nodes[i] for i in idx.tolist()] == expected


@given(configs(), st.lists(st.text(TEXT, max_size=20), max_size=40), st.sampled_from(["<", ">"]))
def test_numpy_str_arrays_match_model(cfg, texts, order):
    ring, model = build(cfg)
    arr = np.array(texts, dtype=f"{order}U{max([len(t) for t in texts] + [1])}")
    # numpy hands out each element without its trailing NULs: that element is the key.
    elements = [str(x) for x in arr]
    expected = [model.get(e) for e in elements]
    assert ring.get_many(arr).tolist() == expected
    assert ring.hash_many(arr).tolist() == [model.hash(e) for e in elements]
    assert [model.nodes[i] for i in ring.get_indices(arr).tolist()] == expected
    if hasattr(np.dtypes, "StringDType"):
        sarr = np.array(texts, dtype=np.dtypes.StringDType())
        assert ring.get_many(sarr).tolist() == [model.get(t) for t in texts]


@given(configs(), st.lists(st.binary(max_size=20), max_size=40))
def test_numpy_bytes_arrays_match_model(cfg, blobs):
    ring, model = build(cfg)
    arr = np.array(blobs, dtype=f"S{max([len(b) for b in blobs] + [1])}")
    elements = [bytes(x) for x in arr]
    assert ring.get_many(arr).tolist() == [model.get(e) for e in elements]
    assert ring.hash_many(arr).tolist() == [model.hash(e) for e in elements]
    strided = arr[::2]  # a non-contiguous view
    assert ring.get_many(strided).tolist() == [model.get(bytes(x)) for x in strided]


INT_DTYPES = {
    "int64": st.integers(-(2**63), 2**63 - 1),
    ">i8": st.integers(-(2**63), 2**63 - 1),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int16": st.integers(-(2**15), 2**15 - 1),
    "int8": st.integers(-128, 127),
    "uint64": st.integers(0, MAX64),
    ">u8": st.integers(0, MAX64),
    "uint32": st.integers(0, 2**32 - 1),
    "uint16": st.integers(0, 2**16 - 1),
    "uint8": st.integers(0, 255),
}


@st.composite
def int_arrays(draw):
    dt = draw(st.sampled_from(list(INT_DTYPES)))
    vals = draw(st.lists(INT_DTYPES[dt], max_size=40))
    return np.array(vals, dtype=dt), vals


@given(configs(), int_arrays())
def test_numpy_int_arrays_match_model(cfg, arr_vals):
    arr, vals = arr_vals
    ring, model = build(cfg)
    assert ring.get_many(arr).tolist() == [model.get(v) for v in vals]
    assert ring.hash_many(arr).tolist() == [model.hash(v) for v in vals]
    assert ring.get_many(arr[::-1]).tolist() == [model.get(v) for v in vals[::-1]]


@given(configs(max_nodes=8), key_lists, st.integers(1, 10))
def test_replicas_match_model(cfg, keys, n):
    ring, model = build(cfg)
    expected = [model.replicas(k, n) for k in keys]
    assert [ring.replicas(k, n) for k in keys] == expected
    width = min(n, len(model.weights))
    many = ring.replicas_many(keys, n)
    assert many.dtype == object and many.shape == (len(keys), width)
    assert many.tolist() == expected
    idx = ring.replica_indices(keys, n)
    assert idx.dtype == np.int32 and idx.shape == (len(keys), width)
    assert [[model.nodes[i] for i in row] for row in idx.tolist()] == expected


@given(configs(max_nodes=8))
def test_ownership_matches_exact_fractions(cfg):
    ring, model = build(cfg)
    exact = model.ownership()
    got = ring.ownership()
    assert set(got) == set(exact)
    for node, share in exact.items():
        assert abs(got[node] - float(share)) <= 1e-12, node
    assert sum(exact.values()) == 1  # sanity of the model itself


@given(configs(), st.lists(st.integers(0, MAX64), max_size=50), st.randoms(use_true_random=False))
def test_lookup_matches_searchsorted(cfg, random_hashes, rnd):
    ring, model = build(cfg)
    pos = ring.positions
    picked = rnd.sample(model.positions, min(20, len(model.positions)))
    edges = [0, 1, MAX64 - 1, MAX64, model.positions[0], model.positions[-1]]
    around = [p + d for p in picked + edges for d in (-1, 0, 1) if 0 <= p + d <= MAX64]
    hashes = np.array(random_hashes + edges + around, dtype=np.uint64)
    got = ring.lookup(hashes)
    assert got.dtype == np.int32
    V = len(pos)
    assert got.tolist() == ring.owners[np.searchsorted(pos, hashes, side="left") % V].tolist()
    assert got.tolist() == [model.owners[model.index_of_hash(int(h))] for h in hashes.tolist()]


@given(configs(max_nodes=3), st.lists(st.integers(0, MAX64), min_size=1, max_size=30))
def test_lookup_accepts_python_int_lists(cfg, hashes):
    """A plain list of valid uint64 hashes is accepted (numpy alone would infer float64 for a
    mix of small values and values >= 2**63, which must not make lookup reject them)."""
    ring, model = build(cfg)
    assert ring.lookup(hashes).tolist() == [model.owners[model.index_of_hash(h)] for h in hashes]


def test_long_non_ascii_keys_match_model():
    """Keys longer than any fixed scratch buffer, ASCII and not, in every container."""
    ring, model = build({"weights": {"a": 1.0, "b": 1.0, "c": 2.0}, "vnodes": 50,
                         "hash": "xxh3", "seed": 3})
    keys = ["é" * n for n in (4095, 4096, 4097, 5000, 20000)] + ["x" * 70000, "\U0001f600" * 9000]
    expected = [model.get(k) for k in keys]
    assert [ring.get(k) for k in keys] == expected
    assert ring.get_many(keys).tolist() == expected
    assert ring.get_many(np.array(keys)).tolist() == expected
    assert ring.hash_many(np.array(keys)).tolist() == [model.hash(k) for k in keys]
    assert ring.get_many([k.encode() for k in keys]).tolist() == expected


# --------------------------------------------------------------------------------------------
# stateful: add / remove / set_weight / lookups against the model
# --------------------------------------------------------------------------------------------

POOL = ["a", "b", "node-1", "node-2", "é", "\U0001f600", "", "zz", "\uffff", "\U00010000"]


class RingMachine(RuleBasedStateMachine):
    @initialize(params=hash_params(), vnodes=st.integers(1, 40))
    def setup(self, params, vnodes):
        h, seed = params
        self.kw = {"vnodes": vnodes, "hash": h, "seed": seed}
        self.ring = HashRing(**self.kw)
        self.model = ModelRing(**self.kw)

    @rule(name=st.one_of(st.sampled_from(POOL), node_names), weight=weights)
    def add(self, name, weight):
        if name in self.model.weights:
            fp = self.snapshot()
            with pytest.raises(ValueError):
                self.ring.add(name, weight)
            assert self.snapshot() == fp
        else:
            self.ring.add(name, weight)
            self.model.add(name, weight)

    @precondition(lambda self: self.model.weights)
    @rule(data=st.data())
    def remove(self, data):
        name = data.draw(st.sampled_from(sorted(self.model.weights)))
        self.ring.remove(name)
        self.model.remove(name)

    @rule(name=st.sampled_from(POOL))
    def remove_absent(self, name):
        if name not in self.model.weights:
            fp = self.snapshot()
            with pytest.raises(KeyError):
                self.ring.remove(name)
            assert self.snapshot() == fp

    @precondition(lambda self: self.model.weights)
    @rule(data=st.data(), weight=weights)
    def set_weight(self, data, weight):
        name = data.draw(st.sampled_from(sorted(self.model.weights)))
        self.ring.set_weight(name, weight)
        self.model.set_weight(name, weight)

    @rule(keys=key_lists, n=st.integers(1, 4))
    def lookups(self, keys, n):
        if not self.model.weights:
            if not keys:  # an empty batch answers, even with no nodes
                assert self.ring.get_many(keys).shape == (0,)
                return
            with pytest.raises(EmptyRingError):
                self.ring.get_many(keys)
            return
        assert self.ring.get_many(keys).tolist() == [self.model.get(k) for k in keys]
        assert [self.ring.get(k) for k in keys] == [self.model.get(k) for k in keys]
        assert self.ring.replicas_many(keys, n).tolist() == [self.model.replicas(k, n)
                                                             for k in keys]

    def snapshot(self):
        r = self.ring
        return (r.nodes, r.weights, r.positions.tobytes(), r.owners.tobytes())

    @invariant()
    def agrees_with_model_and_fresh_ring(self):
        if not hasattr(self, "ring"):
            return
        r = self.ring
        assert r.nodes == self.model.nodes
        assert r.weights == self.model.weights
        assert r.positions.tolist() == self.model.positions
        assert r.owners.tolist() == self.model.owners
        fresh = HashRing(dict(self.model.weights), **self.kw)
        assert fresh == r
        assert fresh.nodes == r.nodes and fresh.weights == r.weights
        assert np.array_equal(fresh.positions, r.positions)
        assert np.array_equal(fresh.owners, r.owners)
        assert r.ownership() == fresh.ownership()


RingMachine.TestCase.settings = settings(
    settings.default, stateful_step_count=25,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestRingMachine = RingMachine.TestCase


# --------------------------------------------------------------------------------------------
# consistency properties on many keys
# --------------------------------------------------------------------------------------------

N_KEYS = 100_000
STR_KEYS = np.array([f"key:{i}" for i in range(N_KEYS)])
INT_KEYS = np.arange(-N_KEYS // 2, N_KEYS // 2, dtype=np.int64)
BIG_KEYS = [STR_KEYS, INT_KEYS]


@st.composite
def config_and_newcomer(draw):
    cfg = draw(configs(min_nodes=1, max_nodes=6, max_vnodes=200))
    new = draw(node_names.filter(lambda n: n not in cfg["weights"]))
    return cfg, new, draw(weights)


@scaled(5)
@given(config_and_newcomer(), st.sampled_from([0, 1]))
def test_add_moves_keys_only_to_the_new_node(cnw, which):
    cfg, new, w = cnw
    keys = BIG_KEYS[which]
    ring, _ = build(cfg)
    before = ring.get_many(keys)
    ring.add(new, w)
    after = ring.get_many(keys)
    moved = before != after
    assert np.array_equal(moved, same(after, new))  # moved <=> now on the newcomer
    # and the moved keys are exactly those whose hash falls in the newcomer's arcs
    model = ModelRing(ring.weights, vnodes=cfg["vnodes"], hash=cfg["hash"], seed=cfg["seed"])
    sample = np.flatnonzero(moved)[:50].tolist() + list(range(50))
    for i in sample:
        k = keys[i].item() if which else str(keys[i])
        assert model.get(k) == after[i]


@scaled(5)
@given(configs(min_nodes=2, max_nodes=6, max_vnodes=200), st.data())
def test_remove_moves_only_the_removed_nodes_keys(cfg, data):
    victim = data.draw(st.sampled_from(sorted(cfg["weights"])))
    ring, _ = build(cfg)
    before = ring.get_many(STR_KEYS)
    ring.remove(victim)
    after = ring.get_many(STR_KEYS)
    moved = before != after
    assert np.array_equal(moved, same(before, victim))
    assert not same(after, victim).any()


@scaled(5)
@given(configs(min_nodes=2, max_nodes=6, max_vnodes=200), st.data(), weights)
def test_set_weight_moves_keys_only_to_or_from_that_node(cfg, data, w):
    node = data.draw(st.sampled_from(sorted(cfg["weights"])))
    old_w = cfg["weights"][node]
    ring, _ = build(cfg)
    before = ring.get_many(STR_KEYS)
    ring.set_weight(node, w)
    after = ring.get_many(STR_KEYS)
    moved = before != after
    was, now = same(before, node), same(after, node)
    assert not (moved & ~was & ~now).any()
    c_old, c_new = count_of(cfg["vnodes"], old_w), count_of(cfg["vnodes"], w)
    if c_new >= c_old:  # only gains: nothing leaves the node
        assert not (moved & was).any()
    if c_new <= c_old:  # only losses: nothing arrives at the node
        assert not (moved & now).any()
    if c_new == c_old:
        assert not moved.any()
    # the result is the from-scratch ring with the new weight
    cfg2 = dict(cfg, weights=dict(cfg["weights"], **{node: w}))
    fresh, _ = build(cfg2)
    assert np.array_equal(fresh.get_many(STR_KEYS), after)


@scaled(5)
@given(configs(min_nodes=2, max_nodes=7, max_vnodes=200), st.data())
def test_order_of_adds_never_matters(cfg, data):
    ws = cfg["weights"]
    kw = {"vnodes": cfg["vnodes"], "hash": cfg["hash"], "seed": cfg["seed"]}
    reference = HashRing(dict(ws), **kw)
    order = data.draw(st.permutations(sorted(ws)))
    incremental = HashRing(**kw)
    for n in order:
        incremental.add(n, ws[n])
    # a detour: an extra node added and removed again, a weight changed and changed back
    extra = "\x00extra" if "\x00extra" not in ws else "\x00extra2"
    incremental.add(extra, 2.0)
    incremental.set_weight(order[0], 4.5)
    incremental.remove(extra)
    incremental.set_weight(order[0], ws[order[0]])
    for r in (incremental, HashRing({n: ws[n] for n in reversed(order)}, **kw)):
        assert r.nodes == reference.nodes
        assert np.array_equal(r.positions, reference.positions)
        assert np.array_equal(r.owners, reference.owners)
        assert np.array_equal(r.get_indices(STR_KEYS), reference.get_indices(STR_KEYS))
        assert r == reference
        if cfg["hash"] is not blake_hash:
            assert r.fingerprint() == reference.fingerprint()


N_SAMPLES = 200_000


@pytest.mark.parametrize("hash_name,seed,vnodes", [("xxh3", 0, 160), ("murmur3", 99, 7),
                                                   ("md5", 0, 1), ("xxh64", 2**64 - 1, 40)])
def test_ownership_sums_to_one_and_matches_sampled_shares(hash_name, seed, vnodes):
    """Sampling check of ownership().

    With N = 200,000 independent uniform hashes, the count landing on a node of exact share p
    is Binomial(N, p): its fraction has standard deviation sqrt(p (1 - p) / N) <= 0.00112.
    We allow 5 standard deviations (+ 1/N for p near 0): a false failure has probability
    < 6e-7 per node, and the RNG is seeded, so the test is deterministic anyway.  A real error
    in ownership (a wrong arc, an off-by-one vnode, the wrap arc given to the wrong node) moves a
    share by about 1 / (vnodes * nodes) or more, far above the tolerance for these layouts
    except when noted by the exact comparison below.
    """
    ws = {"a": 1.0, "b": 2.0, "c": 0.5, "d": 1.0, "é": 3.0, "f": 0.25}
    ring = HashRing(ws, vnodes=vnodes, hash=hash_name, seed=seed)
    own = ring.ownership()
    assert set(own) == set(ws)
    assert abs(sum(own.values()) - 1.0) <= 1e-12
    assert all(v >= 0 for v in own.values())
    model = ModelRing(ws, vnodes=vnodes, hash=hash_name, seed=seed).ownership()
    for n in ws:
        assert abs(own[n] - float(model[n])) <= 1e-12
    rng = np.random.default_rng(20240601)
    hashes = rng.integers(0, 2**64, size=N_SAMPLES, dtype=np.uint64, endpoint=False)
    counts = np.bincount(ring.lookup(hashes), minlength=len(ring))
    for i, n in enumerate(ring.nodes):
        p = own[n]
        tol = 5 * math.sqrt(p * (1 - p) / N_SAMPLES) + 1 / N_SAMPLES
        assert abs(counts[i] / N_SAMPLES - p) <= tol, (n, counts[i] / N_SAMPLES, p)


@pytest.mark.parametrize("hash_name", ["xxh3", "xxh64", "murmur3", "md5"])
def test_fraction_moved_8_to_9_is_the_newcomers_ownership(hash_name):
    """Going 8 -> 9 nodes moves each key whose hash falls in the newcomer's arcs, so the moved
    fraction of N = 200,000 keys is Binomial(N, p) / N with p = ownership()[new] (keys hash to
    effectively uniform positions): 5 standard deviations is < 0.0007 for p ~ 1/9."""
    ring = HashRing([f"server-{i}" for i in range(8)], hash=hash_name)
    keys = np.array([f"user:{i}" for i in range(N_SAMPLES)])
    before = ring.get_many(keys)
    ring.add("server-8")
    after = ring.get_many(keys)
    moved = float(np.mean(before != after))
    p = ring.ownership()["server-8"]
    assert abs(moved - p) <= 5 * math.sqrt(p * (1 - p) / N_SAMPLES)
    assert 0.07 < moved < 0.16  # near the ideal 1/9, i.e. not a hash % N stampede


# --------------------------------------------------------------------------------------------
# ties at equal positions
# --------------------------------------------------------------------------------------------

COLLIDE = 0x8000_0000_0000_0000
TIED = {b"alpha#0", b"beta#0", b"\xc3\xa9#1", b"z#1", b"\xef\xbf\xbf#0", b"\xf0\x90\x80\x80#0"}


def colliding_hash(b: bytes) -> int:
    """xxh3, except that a few labels all land on COLLIDE."""
    if b in TIED:
        return COLLIDE
    return xxhash.xxh3_64_intdigest(b)


@pytest.mark.parametrize(
    "pair",
    [("alpha", "beta"), ("z", "é"), ("\uffff", "\U00010000")],  # (smaller UTF-8, larger)
)
@pytest.mark.parametrize("build_how", ["ctor", "small_first", "large_first", "reweight"])
def test_equal_positions_tie_broken_by_name(pair, build_how):
    small, large = pair
    assert small.encode() < large.encode()
    others = {"gamma": 1.0, "omega": 1.0}
    kw = {"vnodes": 4, "hash": colliding_hash}
    if build_how == "ctor":
        ring = HashRing({large: 1.0, small: 1.0, **others}, **kw)
    elif build_how == "small_first":
        ring = HashRing(others, **kw)
        ring.add(small)
        ring.add(large)
    elif build_how == "large_first":
        ring = HashRing(others, **kw)
        ring.add(large)
        ring.add(small)
    else:  # the tied label is re-merged by a weight change of each node
        ring = HashRing({large: 1.0, small: 1.0, **others}, **kw)
        ring.set_weight(large, 2.0)
        ring.set_weight(small, 3.0)
        ring.set_weight(small, 1.0)
        ring.set_weight(large, 1.0)
    model = ModelRing(ring.weights, vnodes=4, hash=colliding_hash)
    pos = ring.positions.tolist()
    at = [i for i, p in enumerate(pos) if p == COLLIDE]
    assert len(at) == 2  # both vnodes stay
    owners_at = [ring.nodes[ring.owners[i]] for i in at]
    assert owners_at == [small, large]
    assert pos == model.positions and ring.owners.tolist() == model.owners
    # lookups at and just below the tied position go to the smaller name
    prev = max(p for p in pos if p < COLLIDE) if at[0] > 0 else None
    probes = [COLLIDE] + ([prev + 1] if prev is not None and prev + 1 < COLLIDE else [])
    assert [ring.nodes[i] for i in ring.lookup(np.array(probes, dtype=np.uint64))] == \
        [small] * len(probes)
    # the key whose hash is COLLIDE itself
    key = "the key"
    probe_ring = HashRing(ring.weights, vnodes=4,
                          hash=lambda b: COLLIDE if b == key.encode() else colliding_hash(b))
    assert probe_ring.get(key) == small
    assert probe_ring.replicas(key, 2) == [small, large]
    # the larger name's tied vnode owns nothing
    exact = model.ownership()
    got = ring.ownership()
    for n in ring.nodes:
        assert abs(got[n] - float(exact[n])) <= 1e-12
