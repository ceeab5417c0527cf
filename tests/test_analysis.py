"""consistent_hash.analysis (movement, migration_plan, balance) and consistent_hash.ringfile.

The exact figures (computed from the ring positions) are checked against brute force: keys
hashed with ``hash_many`` and routed by both rings (a binomial 5-sigma band), and random or
boundary uint64 hashes routed with ``lookup`` (the plan must agree on every single hash).
"""

from __future__ import annotations

import json
import math
import struct
import tracemalloc

import numpy as np
import pytest

from consistent_hash import HashRing, _format, ringfile
from consistent_hash.analysis import (
    Balance,
    MigrationPlan,
    Movement,
    balance,
    migration_plan,
    movement,
)

FULL = 1 << 64
MAX64 = FULL - 1
M = 200_000
KEYS = np.char.add("bf-", np.arange(M).astype("U"))  # brute-force keys, not the default sample
N8 = [f"node-{i}" for i in range(8)]


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def band(p: float, m: int) -> float:
    """Binomial 5-sigma band (plus one key of slack) for a share p estimated on m keys."""
    return 5 * math.sqrt(max(p * (1 - p), 0.0) / m) + 1.0 / m


def routed(ring: HashRing, hashes: np.ndarray) -> np.ndarray:
    return np.asarray(ring.nodes, dtype=object)[ring.lookup(hashes)]


def brute_force(old: HashRing, new: HashRing, keys=KEYS):
    """(moved fraction, {(from, to): fraction}) by routing every key through both rings."""
    h = old.hash_many(keys)
    assert np.array_equal(h, new.hash_many(keys))
    a, b = routed(old, h), routed(new, h)
    diff = a != b
    m = len(h)
    names = sorted(set(old.nodes) | set(new.nodes))
    code = {n: i for i, n in enumerate(names)}
    ca = np.array([code[x] for x in a[diff]], dtype=np.int64)
    cb = np.array([code[x] for x in b[diff]], dtype=np.int64)
    pairs, counts = np.unique(ca * len(names) + cb, return_counts=True)
    flows = {(names[p // len(names)], names[p % len(names)]): c / m
             for p, c in zip(pairs.tolist(), counts.tolist(), strict=True)}
    return float(diff.mean()), flows


def changed(ring: HashRing, fn) -> HashRing:
    new = ring.copy()
    fn(new)
    return new


def weight(node: str, w: float):
    return lambda r: r.set_weight(node, w)


def several(r: HashRing) -> None:
    r.remove("node-0")
    r.remove("node-1")
    r.add("extra-a", 2.0)
    r.add("extra-b", 0.5)
    r.set_weight("node-4", 1.5)


CASES = {
    "join": lambda: (HashRing(N8), HashRing(N8 + ["node-8"])),
    "leave": lambda: (HashRing(N8), HashRing([n for n in N8 if n != "node-3"])),
    "join-via-add": lambda: (HashRing(N8), changed(HashRing(N8), lambda r: r.add("new", 1.0))),
    "weight-up": lambda: (HashRing(N8), changed(HashRing(N8), weight("node-2", 3.0))),
    "weight-down": lambda: (HashRing(N8), changed(HashRing(N8), weight("node-5", 0.25))),
    "several": lambda: (HashRing(N8), changed(HashRing(N8), several)),
    "vnodes-change": lambda: (HashRing(N8, vnodes=100), HashRing(N8, vnodes=200)),
    "md5-join": lambda: (HashRing(N8, hash="md5"), HashRing(N8 + ["node-8"], hash="md5")),
    "murmur3-seed-leave": lambda: (HashRing(N8, hash="murmur3", seed=12345),
                                   HashRing(N8[1:], hash="murmur3", seed=12345)),
    "xxh64-maxseed-join": lambda: (HashRing(N8, hash="xxh64", seed=MAX64),
                                   HashRing(N8 + ["z"], hash="xxh64", seed=MAX64)),
    "xxh3-seed-several": lambda: (HashRing(N8, seed=99),
                                  changed(HashRing(N8, seed=99), several)),
    "identical": lambda: (HashRing(N8), HashRing(N8)),
    "disjoint": lambda: (HashRing(N8), HashRing([f"other-{i}" for i in range(6)])),
    "half-shared": lambda: (HashRing(N8), HashRing(N8[4:] + [f"other-{i}" for i in range(4)])),
    "single-a-to-b": lambda: (HashRing(["a"]), HashRing(["b"])),
    "single-a-to-ab": lambda: (HashRing(["a"]), HashRing(["a", "b"])),
    "ab-to-single-a": lambda: (HashRing(["a", "b"]), HashRing(["a"])),
    "one-vnode-a-to-ab": lambda: (HashRing(["a"], vnodes=1), HashRing(["a", "b"], vnodes=1)),
    "one-vnode-swap": lambda: (HashRing(["a", "b"], vnodes=1),
                               HashRing(["a", "c"], vnodes=1)),
}


@pytest.fixture(params=sorted(CASES), scope="module")
def case(request):
    old, new = CASES[request.param]()
    return request.param, old, new, movement(old, new), migration_plan(old, new)


def probe_hashes(old: HashRing, new: HashRing, plan: MigrationPlan, seed: int = 0) -> np.ndarray:
    """Random uint64 hashes plus every boundary: range starts/ends +-1, positions +-1, 0, max."""
    rng = np.random.default_rng(seed)
    rand = rng.integers(0, FULL, size=M, dtype=np.uint64, endpoint=False)
    edges = [0, 1, MAX64 - 1, MAX64]
    for s, e, _, _ in plan.ranges:
        edges += [s, e, s - 1, e + 1]
    for p in np.concatenate([old.positions, new.positions]).tolist():
        edges += [p - 1, p, p + 1]
    edges = [x for x in edges if 0 <= x <= MAX64]
    return np.concatenate([rand, np.array(edges, dtype=np.uint64)])


# --------------------------------------------------------------------------------------------
# exact movement against brute force
# --------------------------------------------------------------------------------------------


def test_exact_movement_matches_key_brute_force(case):
    name, old, new, mv, _ = case
    assert isinstance(mv, Movement)
    assert mv.exact is True and mv.keys is None and mv.interval is None
    assert 0.0 <= mv.moved <= 1.0
    assert math.isclose(sum(mv.flows.values()), mv.moved, rel_tol=1e-12, abs_tol=1e-15)
    for (a, b), s in mv.flows.items():
        assert a != b and a in old.nodes and b in new.nodes and s > 0
    p, flows = brute_force(old, new)
    assert abs(p - mv.moved) <= band(mv.moved, M), (name, p, mv.moved)
    for pair in set(flows) | set(mv.flows):
        exact = mv.flows.get(pair, 0.0)
        # A pair seen in brute force must exist exactly (no flow is ever invented by sampling).
        assert pair in mv.flows, (name, pair, flows[pair])
        assert abs(flows.get(pair, 0.0) - exact) <= band(exact, M), (name, pair)


def test_plan_agrees_with_lookup_on_every_hash(case):
    name, old, new, _, plan = case
    h = probe_hashes(old, new, plan)
    a, b = routed(old, h), routed(new, h)
    moved = a != b
    idx = plan.range_index(h)
    assert idx.shape == h.shape
    bad = np.flatnonzero(moved != (idx >= 0))
    assert len(bad) == 0, (name, [int(x) for x in h[bad[:5]]])
    sources = np.asarray(plan.sources, dtype=object)
    targets = np.asarray(plan.targets, dtype=object)
    assert np.array_equal(sources[idx[moved]], a[moved])
    assert np.array_equal(targets[idx[moved]], b[moved])


def test_plan_ranges_sorted_disjoint_merged(case):
    name, old, new, mv, plan = case
    rs = plan.ranges
    assert len(plan) == len(rs) == len(plan.sources) == len(plan.targets)
    for s, e, a, b in rs:
        assert 0 <= s <= e <= MAX64
        assert a != b and a in old.nodes and b in new.nodes
    for (_, e1, a1, b1), (s2, _, a2, b2) in zip(rs, rs[1:], strict=False):
        assert e1 < s2, (name, "ranges overlap or are unsorted")
        assert not (e1 + 1 == s2 and (a1, b1) == (a2, b2)), (name, "unmerged neighbours")
    assert plan.moved == mv.moved
    # The flows are exactly the plan's ranges summed per (from, to).
    per_pair: dict[tuple[str, str], int] = {}
    for s, e, a, b in rs:
        per_pair[(a, b)] = per_pair.get((a, b), 0) + (e - s + 1)
    assert {k: v / FULL for k, v in per_pair.items()} == mv.flows
    d = plan.to_dict()
    assert d["moved"] == plan.moved and len(d["ranges"]) == len(plan)
    assert [(r["start"], r["end"], r["from"], r["to"]) for r in d["ranges"]] == rs
    json.dumps(d)
    json.dumps(mv.to_dict())


def test_plan_moves_is_exactly_the_changed_keys(case):
    name, old, new, _, plan = case
    expect = old.get_many(KEYS) != new.get_many(KEYS)
    got = plan.moves(KEYS)
    assert got.dtype == np.bool_ and np.array_equal(got, expect), name
    # other key kinds: str list, bytes, ints
    for keys in ([f"user:{i}" for i in range(3000)], [f"b{i}".encode() for i in range(3000)],
                 list(range(3000)), np.arange(3000, dtype=np.uint64)):
        assert np.array_equal(plan.moves(keys), old.get_many(keys) != new.get_many(keys))


# --------------------------------------------------------------------------------------------
# specific layouts
# --------------------------------------------------------------------------------------------


def test_identical_rings_move_nothing():
    for old, new in [(HashRing(N8), HashRing(N8)),
                     (HashRing(N8), changed(HashRing(N8), weight("node-1", 1.002))),
                     (HashRing(["solo"], vnodes=1), HashRing(["solo"], vnodes=1))]:
        mv, plan = movement(old, new), migration_plan(old, new)
        assert mv.moved == 0.0 and mv.flows == {} and mv.exact
        assert len(plan) == 0 and plan.ranges == [] and plan.moved == 0.0
        assert not plan.moves(KEYS[:1000]).any()
        assert (plan.range_index(np.array([0, 5, MAX64], dtype=np.uint64)) == -1).all()


def test_disjoint_node_sets_move_everything():
    old, new = HashRing(N8), HashRing([f"other-{i}" for i in range(5)])
    mv, plan = movement(old, new), migration_plan(old, new)
    assert mv.moved == 1.0
    assert sum(e - s + 1 for s, e, _, _ in plan.ranges) == FULL
    assert plan.ranges[0][0] == 0 and plan.ranges[-1][1] == MAX64
    # every flow goes from an old node to a new one; per source it sums to the old share
    own = old.ownership()
    for n in N8:
        out = sum(s for (a, _), s in mv.flows.items() if a == n)
        assert math.isclose(out, own[n], rel_tol=1e-9)
    assert plan.moves(KEYS).all()


def test_partially_shared_nodes_move_about_one_minus_shared():
    old = HashRing(N8)
    new = HashRing(N8[4:] + [f"other-{i}" for i in range(4)])
    mv = movement(old, new)
    shared = set(old.nodes) & set(new.nodes)
    stay_max = min(sum(old.ownership()[n] for n in shared),
                   sum(new.ownership()[n] for n in shared))
    assert 1 - stay_max - 1e-12 <= mv.moved < 1.0
    # staying keys are only the shared nodes' keys: brute force on what did not move
    h = new.hash_many(KEYS)
    a, b = routed(old, h), routed(new, h)
    assert set(a[a == b].tolist()) <= shared


def test_single_node_full_circle():
    a, b = HashRing(["a"]), HashRing(["b"])
    mv, plan = movement(a, b), migration_plan(a, b)
    assert mv.moved == 1.0 and mv.flows == {("a", "b"): 1.0}
    assert plan.ranges == [(0, MAX64, "a", "b")]
    a1, b1 = HashRing(["a"], vnodes=1), HashRing(["b"], vnodes=1)
    assert migration_plan(a1, b1).ranges == [(0, MAX64, "a", "b")]
    assert movement(a1, b1).moved == 1.0
    bal = balance(HashRing(["a"], vnodes=1))
    assert bal.shares == {"a": 1.0} and bal.max_over_mean == 1.0 and bal.cv == 0.0


@pytest.mark.parametrize("seed", range(24))
def test_one_vnode_rings_wrap_cases(seed):
    """Rings of one position per node: the moved arc often wraps past 2**64 - 1 to 0."""
    old = HashRing(["a", "b"], vnodes=1, seed=seed)
    new = HashRing(["a", "b", "c"], vnodes=1, seed=seed)
    mv, plan = movement(old, new), migration_plan(old, new)
    assert math.isclose(mv.moved, new.ownership()["c"], rel_tol=1e-12)
    assert set(b for _, b in mv.flows) == {"c"}
    h = probe_hashes(old, new, plan, seed)[-400:]  # the boundary probes (and some random ones)
    h = np.concatenate([h, np.array([0, 1, MAX64], dtype=np.uint64)])
    moved = routed(old, h) != routed(new, h)
    assert np.array_equal(moved, plan.range_index(h) >= 0)
    back = migration_plan(new, old)
    assert back.moved == plan.moved and back.starts.tolist() == plan.starts.tolist()


def test_flows_only_touch_the_changed_node():
    old = HashRing(N8)
    for new, node, direction in [(HashRing(N8 + ["node-8"]), "node-8", "to"),
                                 (HashRing(N8[:-1]), "node-7", "from"),
                                 (changed(old, weight("node-2", 2.0)), "node-2", "to"),
                                 (changed(old, weight("node-2", 0.5)), "node-2", "from")]:
        mv = movement(old, new)
        assert mv.flows, node
        for a, b in mv.flows:
            assert (b if direction == "to" else a) == node
    # a leave moves exactly the departed node's share
    assert math.isclose(movement(old, HashRing(N8[:-1])).moved, old.ownership()["node-7"],
                        rel_tol=1e-12)


def test_exact_movement_on_large_rings():
    # (its speed: bench/, not a clock here)
    names = [f"n{i}" for i in range(500)]
    old, new = HashRing(names), HashRing(names[1:] + ["fresh-1", "fresh-2"])
    mv, plan = movement(old, new), migration_plan(old, new)
    assert plan.moved == mv.moved > 0
    # the departed node's whole share moves, and the newcomers' shares arrive
    assert mv.moved >= old.ownership()["n0"] - 1e-12
    assert math.isclose(sum(f for (a, b), f in mv.flows.items() if a == "n0"),
                        old.ownership()["n0"], rel_tol=1e-9)


# --------------------------------------------------------------------------------------------
# sampled estimates
# --------------------------------------------------------------------------------------------


class ModuloRouter:
    """A non-ring router: hash % n (no positions, so only sampled figures are possible)."""

    def __init__(self, n: int) -> None:
        self.nodes = tuple(f"m{i}" for i in range(n))
        self._h = HashRing(["x"])

    def get_indices(self, keys):
        return (self._h.hash_many(keys) % np.uint64(len(self.nodes))).astype(np.int32)

    def get_many(self, keys):
        return np.asarray(self.nodes, dtype=object)[self.get_indices(keys)]


@pytest.mark.parametrize("variant", ["hash", "seed", "hash-and-seed"])
def test_different_hash_or_seed_falls_back_to_sampling(variant):
    kw = {"hash": {"hash": "md5"}, "seed": {"seed": 7},
          "hash-and-seed": {"hash": "murmur3", "seed": 3}}[variant]
    old, new = HashRing(N8), HashRing(N8 + ["node-8"], **kw)
    mv = movement(old, new)
    assert mv.exact is False and mv.keys == 200_000
    lo, hi = mv.interval
    assert lo <= mv.moved <= hi and 0 < hi - lo < 0.01
    # brute force on independent keys: well within the estimate's precision
    a, b = old.get_many(KEYS), new.get_many(KEYS)
    p = float(np.mean(a != b))
    assert abs(p - mv.moved) <= band(p, M) + band(mv.moved, mv.keys)
    assert lo - 5 * (hi - lo) <= p <= hi + 5 * (hi - lo)
    assert math.isclose(sum(mv.flows.values()), mv.moved, rel_tol=1e-12)
    with pytest.raises(ValueError, match="same hash"):
        migration_plan(old, new)


def test_sample_interval_contains_exact_value():
    old, new = HashRing(N8), HashRing(N8 + ["node-8"])
    exact = movement(old, new)
    est = movement(old, new, KEYS)
    assert est.exact is False and est.keys == M
    p, flows = brute_force(old, new)
    assert est.moved == p  # the estimate on given keys is the brute-force fraction itself
    assert flows.keys() == est.flows.keys()
    for k in flows:
        assert math.isclose(flows[k], est.flows[k], rel_tol=1e-12)
    lo, hi = est.interval
    assert lo <= exact.moved <= hi
    # Wilson half-width is about 1.96 standard errors
    se = math.sqrt(p * (1 - p) / M)
    assert math.isclose((hi - lo) / 2, 1.96 * se, rel_tol=0.05)


def test_non_ring_router_is_estimated():
    mv = movement(ModuloRouter(8), ModuloRouter(9))
    assert mv.exact is False and mv.keys == 200_000
    assert abs(mv.moved - 8 / 9) < 0.01
    lo, hi = mv.interval
    assert lo <= mv.moved <= hi
    mixed = movement(HashRing([f"m{i}" for i in range(8)]), ModuloRouter(8), KEYS[:50_000])
    assert mixed.exact is False and mixed.keys == 50_000 and 0.7 < mixed.moved < 0.95
    with pytest.raises(ValueError):
        migration_plan(ModuloRouter(8), ModuloRouter(9))
    with pytest.raises(ValueError):
        migration_plan(HashRing(N8), ModuloRouter(8))


# --------------------------------------------------------------------------------------------
# balance
# --------------------------------------------------------------------------------------------


def stats(shares: dict[str, float], weights: dict[str, float] | None = None):
    s = np.array([shares[n] for n in sorted(shares)])
    w = np.ones(len(s)) if weights is None else np.array([weights[n] for n in sorted(shares)])
    rel = s / (w / w.sum())
    return rel.max(), rel.max() / rel.min(), float(np.std(rel) / np.mean(rel))


@pytest.mark.parametrize("ring", [
    HashRing(N8), HashRing(N8, vnodes=10, hash="md5"), HashRing(N8[:3], vnodes=1, seed=5),
    HashRing({"a": 1.0, "b": 2.0, "c": 0.5}), HashRing([f"n{i}" for i in range(40)], vnodes=50),
], ids=["8x160", "md5-10", "3x1", "weighted", "40x50"])
def test_exact_balance(ring):
    b = balance(ring)
    assert isinstance(b, Balance) and b.exact is True and b.keys is None
    assert b.shares == ring.ownership()
    assert list(b.shares) == list(ring.nodes)
    assert math.isclose(sum(b.shares.values()), 1.0, rel_tol=1e-12)
    mx, mxmn, cv = stats(b.shares, ring.weights)
    assert math.isclose(b.max_over_mean, mx, rel_tol=1e-9)
    assert math.isclose(b.max_over_min, mxmn, rel_tol=1e-9)
    assert math.isclose(b.cv, cv, rel_tol=1e-9, abs_tol=1e-12)
    assert b.max_over_mean >= 1.0 and b.max_over_min >= b.max_over_mean
    n = len(ring)
    assert math.isclose(b.expected_max_over_mean, 1 + math.sqrt(2 * math.log(max(n, 2))
                                                                / ring.vnodes), rel_tol=1e-12)
    json.dumps(b.to_dict())


def test_sampled_balance_within_noise():
    ring = HashRing(N8, vnodes=40)
    exact = ring.ownership()
    b = balance(ring, KEYS)
    assert b.exact is False and b.keys == M
    idx = ring.get_indices(KEYS)
    counts = np.bincount(idx, minlength=len(ring))
    for i, n in enumerate(ring.nodes):
        assert b.shares[n] == counts[i] / M
        assert abs(b.shares[n] - exact[n]) <= band(exact[n], M), n
    mx, mxmn, cv = stats(b.shares)
    assert math.isclose(b.max_over_mean, mx, rel_tol=1e-9)
    assert math.isclose(b.max_over_min, mxmn, rel_tol=1e-9)
    assert math.isclose(b.cv, cv, rel_tol=1e-9)
    # the expectation includes sampling noise on top of the ring's own spread
    assert b.expected_max_over_mean > balance(ring).expected_max_over_mean
    # a non-ring router is sampled from generated keys
    bm = balance(ModuloRouter(8))
    assert bm.exact is False and bm.keys == 1_000_000
    assert all(abs(s - 1 / 8) <= band(1 / 8, 1_000_000) for s in bm.shares.values())
    assert bm.max_over_mean <= bm.expected_max_over_mean


def test_expected_bound_is_roughly_right():
    observed, expected = [], []
    for seed in range(20):
        b = balance(HashRing([f"host-{seed}-{i}" for i in range(8)], vnodes=160, seed=seed))
        observed.append(b.max_over_mean)
        expected.append(b.expected_max_over_mean)
    assert len(set(expected)) == 1
    exp = expected[0]
    below = sum(o < exp for o in observed)
    assert below >= 15, (observed, exp)
    # ... and not a uselessly loose bound: typical excess is a sizeable part of the bound's
    excess = np.mean([o - 1 for o in observed])
    assert 0.3 * (exp - 1) < excess < exp - 1, (excess, exp)


# --------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["ring", None, 42, ["a", "b"], object()])
def test_non_router_arguments_raise_type_error(bad):
    ring = HashRing(N8)
    with pytest.raises(TypeError):
        movement(bad, ring)
    with pytest.raises(TypeError):
        movement(ring, bad)
    with pytest.raises(TypeError):
        migration_plan(ring, bad)
    with pytest.raises(TypeError):
        migration_plan(bad, ring)
    with pytest.raises(TypeError):
        balance(bad)


def test_empty_rings_raise_value_error():
    ring = HashRing(N8)
    for args in [(HashRing(), ring), (ring, HashRing()), (HashRing(), HashRing())]:
        with pytest.raises(ValueError):
            movement(*args)
        with pytest.raises(ValueError):
            migration_plan(*args)
    with pytest.raises(ValueError):
        balance(HashRing())
    with pytest.raises(ValueError):
        movement(ring, HashRing(N8[:4]), [])
    with pytest.raises(ValueError):
        balance(ring, [])


# --------------------------------------------------------------------------------------------
# ring files
# --------------------------------------------------------------------------------------------


ROUND_TRIP = [
    HashRing(N8),
    HashRing({"a": 1.0, "b": 2.5, "c": 0.125}, vnodes=64, hash="md5"),
    HashRing(["x", "y"], vnodes=7, hash="murmur3", seed=2**32 - 1),
    HashRing({"café": 1.0, "日本": 3.0, "with space": 0.5}, hash="xxh64", seed=MAX64),
    HashRing(["only"], vnodes=1),
]


@pytest.mark.parametrize("ring", ROUND_TRIP, ids=range(len(ROUND_TRIP)))
def test_ringfile_round_trip(ring, tmp_path):
    path = tmp_path / "ring.json"
    ringfile.save(ring, path)
    assert [p.name for p in tmp_path.iterdir()] == ["ring.json"]  # no temporary left behind
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == ringfile.FORMAT == "consistent_hash.ring"
    assert doc["version"] == 1 and doc["kind"] == "HashRing"
    assert doc["fingerprint"] == ring.fingerprint()
    assert doc["nodes"] == ring.weights and doc["vnodes"] == ring.vnodes
    assert doc["hash"] == ring.hash_name and doc["seed"] == ring.seed
    back = ringfile.load(path)
    assert back == ring and back.fingerprint() == ring.fingerprint()
    assert np.array_equal(back.positions, ring.positions)
    assert np.array_equal(back.owners, ring.owners)
    assert np.array_equal(back.get_many(KEYS[:5000]), ring.get_many(KEYS[:5000]))
    again = ringfile.loads(ringfile.dumps(ring))
    assert again == ring
    assert ringfile.loads(ringfile.dumps(ring).encode("utf-8")) == ring
    assert movement(ring, back).moved == 0.0


def test_ringfile_refuses_non_hashring():
    with pytest.raises(TypeError):
        ringfile.dumps(ModuloRouter(3))


def edited(doc_text: str, fn) -> str:
    doc = json.loads(doc_text)
    fn(doc)
    return json.dumps(doc)


def _set(key, value):
    def f(d):
        d[key] = value
    return f


def _node(name, w):
    def f(d):
        d["nodes"][name] = w
    return f


@pytest.mark.parametrize("edit", [
    _node("node-3", 2.0), _node("node-3", 1.0000001), _node("added", 1.0),
    lambda d: d["nodes"].pop("node-0"), _set("seed", 1), _set("vnodes", 161),
    _set("hash", "md5"), _set("fingerprint", "0" * 64),
    lambda d: d.update(nodes={k + "x": v for k, v in d["nodes"].items()}),
], ids=["weight", "weight-tiny", "add", "remove", "seed", "vnodes", "hash", "fingerprint",
        "rename"])
def test_ringfile_fingerprint_mismatch(edit):
    text = ringfile.dumps(HashRing(N8))
    with pytest.raises(ValueError, match="fingerprint"):
        ringfile.loads(edited(text, edit))


def test_ringfile_edited_on_disk_is_refused(tmp_path):
    path = tmp_path / "r.json"
    ringfile.save(HashRing({"a": 1.0, "b": 1.0}), path)
    path.write_text(path.read_text().replace('"b": 1.0', '"b": 3.0'))
    with pytest.raises(ValueError, match="fingerprint"):
        ringfile.load(path)


@pytest.mark.parametrize("edit,match", [
    (_set("format", "something.else"), "not a ring file"),
    (lambda d: d.pop("format"), "not a ring file"),
    (_set("version", 2), "version"),
    (_set("version", "1"), "version"),
    (_set("kind", "KetamaRing"), "kind"),
    (_set("nodes", ["a", "b"]), "nodes"),
    (lambda d: d.pop("fingerprint"), "fingerprint"),
    (lambda d: d.pop("vnodes"), "vnodes"),
    (lambda d: d.pop("hash"), "hash"),
    (_set("hash", 3), "hash"),
    (_set("hash", "sha1"), "hash"),
    (_set("vnodes", "160"), "vnodes"),
    (_set("vnodes", True), "vnodes"),
    (_set("vnodes", 0), "vnodes"),
    (_set("seed", -1), "seed"),
    (_node("node-1", 0), "weight"),
    (_node("node-1", True), "weight"),
    (_node("node-1", "2"), "weight"),
])
def test_ringfile_bad_fields(edit, match):
    text = ringfile.dumps(HashRing(N8))
    with pytest.raises(ValueError, match=match):
        ringfile.loads(edited(text, edit))


@pytest.mark.parametrize("text", [
    "", "{", "not json", "[]", "null", "42", '"consistent_hash.ring"', b"\xff\xfe{}",
    "[" * 100_000 + "]" * 100_000,
], ids=["empty", "brace", "words", "list", "null", "number", "string", "bad-utf8", "deep"])
def test_ringfile_invalid_documents(text):
    with pytest.raises(ValueError):
        ringfile.loads(text)


def test_ringfile_too_large_text_refused():
    with pytest.raises(ValueError, match="larger"):
        ringfile.loads(" " * (ringfile.MAX_FILE_BYTES + 1))


def crafted(nodes: dict, vnodes=160) -> str:
    return json.dumps({"format": "consistent_hash.ring", "version": 1, "kind": "HashRing",
                       "hash": "xxh3", "seed": 0, "vnodes": vnodes, "nodes": nodes,
                       "fingerprint": "0" * 64})


@pytest.fixture
def no_ring_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """ringfile may not construct a ring: a refusal must come before any building (what a
    crafted file would otherwise cost in time and memory; checked without a clock)."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the ring file was built before it was refused")
    monkeypatch.setattr(ringfile, "HashRing", refuse)


def test_ringfile_huge_node_count_refused_before_building(no_ring_built: None) -> None:
    text = crafted({f"n{i}": 1 for i in range(ringfile.MAX_NODES + 1)})
    with pytest.raises(ValueError, match="limit"):
        ringfile.loads(text)


@pytest.mark.parametrize("nodes,vnodes", [
    ({"a": 1e6}, 160),                                   # 1.6e8 vnodes from one weight
    ({"a": 1e300}, 160),
    ({f"n{i}": 1.0 for i in range(40)}, 1_000_000),      # 4e7 vnodes from the vnodes field
    ({f"n{i}": 1.0 for i in range(200_000)}, 160),       # 3.2e7 vnodes from the node count
], ids=["weight", "weight-1e300", "vnodes", "count"])
def test_ringfile_vnode_budget_refused_before_building(nodes, vnodes, no_ring_built):
    text = crafted(nodes, vnodes)
    with pytest.raises(ValueError, match="vnodes"):
        ringfile.loads(text)


def test_ringfile_within_the_budget_is_built(no_ring_built: None) -> None:
    """The fixture above catches a build: a file within every limit reaches it."""
    with pytest.raises(AssertionError, match="built before"):
        ringfile.loads(crafted({"a": 1.0, "b": 2.0}))


def payload(hash_name: str, seed: int, vnodes: int, weights: dict, count: int | None = None):
    name = hash_name.encode("ascii")
    parts = [struct.pack("<B", len(name)), name,
             struct.pack("<QII", seed, vnodes, len(weights) if count is None else count)]
    for node, w in weights.items():
        b = node.encode("utf-8")
        parts += [struct.pack("<I", len(b)), b, struct.pack("<d", w)]
    return _format.pack(_format.KIND_HASHRING, b"".join(parts))


def test_crafted_payload_builder_matches_to_bytes():
    ring = HashRing({"a": 1.0, "b": 2.0}, vnodes=33, hash="xxh64", seed=5)
    data = payload("xxh64", 5, 33, {"a": 1.0, "b": 2.0})
    assert data == ring.to_bytes()
    assert HashRing.from_bytes(data) == ring


@pytest.mark.parametrize("data", [
    payload("xxh3", 0, 160, {"a": 1.0, "b": 1e12}),
    payload("xxh3", 0, 160, {"a": 1e300}),
    payload("xxh3", 0, 2**32 - 1, {"a": 1.0}),
    payload("xxh3", 0, 1_000_000, {f"n{i}": 1.0 for i in range(100)}),
    payload("xxh3", 0, 160, {"a": 1.0}, count=2**32 - 1),
], ids=["weight-1e12", "weight-1e300", "vnodes-u32max", "vnodes-budget", "count"])
def test_from_bytes_huge_layout_refused_before_building(data):
    # before building: what the refusal allocated (NumPy's arrays included, which tracemalloc
    # sees) is a few kilobytes, where the layout would be gigabytes; no clock
    tracemalloc.start()
    try:
        with pytest.raises(ValueError):
            HashRing.from_bytes(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_tracemalloc_sees_a_layout_being_built():
    """The bound above can fail: building a ring of 16,000 positions is traced."""
    tracemalloc.start()
    try:
        HashRing.from_bytes(HashRing([f"n{i}" for i in range(100)]).to_bytes())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak > 16_000 * 8, peak


def test_from_bytes_damage_detected():
    data = bytearray(HashRing(N8).to_bytes())
    data[20] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        HashRing.from_bytes(bytes(data))


@pytest.mark.parametrize("mode", ["ketama_weighted", "ketama", "twemproxy"])
def test_exact_analysis_of_ketama_rings_matches_the_keys(mode: str) -> None:
    # KetamaRing's positions are its 32-bit point values; the exact analysis must compare
    # them where the core compares keys (the high 32 bits), or it finds nothing moving.
    from consistent_hash import KetamaRing

    servers = [f"10.0.0.{i}:11211" for i in range(1, 7)]
    old, new = KetamaRing(servers[:5], mode=mode), KetamaRing(servers, mode=mode)
    keys = [f"user:{i}" for i in range(20_000)]
    actual = old.get_many(keys) != new.get_many(keys)
    plan = migration_plan(old, new)
    assert np.array_equal(plan.moves(keys), actual)
    m = movement(old, new)
    assert m.exact and abs(m.moved - actual.mean()) < 0.02
    assert m.moved == pytest.approx(plan.moved)
