"""See before you change: exact movement, migration plans and balance reports.

For two rings that hash keys the same way (HashRing, and any router exposing the same
``positions`` / ``owners`` / ``nodes`` layout), what moves is computed exactly from the
positions: the owner of a hash is constant between consecutive points of the two position
sets, so comparing the owners on each of those O(V) intervals gives the exact moved share and
the exact hash ranges that change owner. For other routers, the figures are estimated from a
key sample, with a confidence interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash._core import _Ring
from consistent_hash.ring import arc_shares

__all__ = ["Balance", "MigrationPlan", "Movement", "balance", "migration_plan", "movement"]

_FULL = 1 << 64
_Z95 = 1.959963984540054


@dataclass(frozen=True)
class Movement:
    """How much of the key space changes owner between two layouts.

    ``moved`` is the share of keys (exact share of the 2**64 hash space when ``exact``) whose
    node changes; ``flows`` maps (from_node, to_node) to the share moving that way;
    ``interval`` is a 95% confidence interval for an estimate (None when exact)."""

    moved: float
    flows: dict[tuple[str, str], float]
    exact: bool
    keys: int | None = None
    interval: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"moved": self.moved, "exact": self.exact, "keys": self.keys,
                "interval": list(self.interval) if self.interval else None,
                "flows": [{"from": a, "to": b, "share": s}
                          for (a, b), s in sorted(self.flows.items())]}


@dataclass(frozen=True)
class MigrationPlan:
    """The hash ranges that change owner: ``start <= hash <= end`` moves ``source -> target``.

    Ranges are sorted by start, disjoint, and adjacent ranges with the same (source, target)
    are merged. ``moves(keys)`` tells which keys a migration job must copy; ``hasher`` is the
    hash both layouts apply to keys. Hashes are 64-bit: a system whose hashes are narrower
    (ketama, nginx, HAProxy, twemproxy: 32 bits) has its hash ``h`` at ``h << 32`` here."""

    starts: npt.NDArray[np.uint64]
    ends: npt.NDArray[np.uint64]
    sources: tuple[str, ...]
    targets: tuple[str, ...]
    hasher: Any = field(repr=False)

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def ranges(self) -> list[tuple[int, int, str, str]]:
        return [(int(s), int(e), a, b) for s, e, a, b in
                zip(self.starts, self.ends, self.sources, self.targets, strict=True)]

    @property
    def moved(self) -> float:
        """The share of the hash space covered by the plan (exact)."""
        total = sum(int(e) - int(s) + 1 for s, e in zip(self.starts, self.ends, strict=True))
        return total / _FULL

    def range_index(self, hashes: Any) -> npt.NDArray[np.intp]:
        """For each uint64 hash, the index of the range holding it, or -1."""
        h = np.ascontiguousarray(hashes, dtype=np.uint64)
        if len(self.starts) == 0:
            return np.full(len(h), -1, dtype=np.intp)
        i = np.searchsorted(self.starts, h, side="right") - 1
        ok = (i >= 0) & (h <= self.ends[np.maximum(i, 0)])
        return np.where(ok, i, -1)

    def moves(self, keys: Any) -> npt.NDArray[np.bool_]:
        """Boolean mask: which of these keys change owner (and so must be copied)."""
        from consistent_hash._containers import hash_many

        return self.range_index(hash_many(self.hasher, keys)) >= 0

    def to_dict(self) -> dict[str, Any]:
        return {"moved": self.moved, "ranges": [
            {"start": s, "end": e, "from": a, "to": b} for s, e, a, b in self.ranges]}


@dataclass(frozen=True)
class Balance:
    """Load spread of a layout: share per node and summary statistics.

    ``expected_max_over_mean`` is what a layout of this kind and size typically shows (for a
    ring, 1 + sqrt(2 ln n / v) for n nodes of v vnodes), so a figure far above it flags a
    problem; for a sample it also includes the sampling noise."""

    shares: dict[str, float]
    exact: bool
    keys: int | None
    max_over_mean: float
    max_over_min: float
    cv: float
    expected_max_over_mean: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"shares": self.shares, "exact": self.exact, "keys": self.keys,
                "max_over_mean": self.max_over_mean, "max_over_min": self.max_over_min,
                "cv": self.cv, "expected_max_over_mean": self.expected_max_over_mean}


# -- exact layouts ---------------------------------------------------------------------------
#
# A router's routing state is one snapshot, its compiled core (``router._core``): nodes, the key
# hasher, the nodes marked down, and for a ring the positions with the owner each one routes
# to.  Every function here reads that snapshot once per router and nothing beside it, so what
# it reports is what the router's lookups do, down marks included.

def _snapshot(router: Any) -> Any:
    """The routing snapshot of a router of this library, or None."""
    return getattr(router, "_core", None)


def _ring_layout(core: Any) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32],
                                     tuple[str, ...]] | None:
    """(positions, routing owners, nodes) of a ring snapshot, in the core's 64-bit hash space
    (narrow hashes, ketama's 32 bits, sit in the high bits), or None for other routers."""
    if isinstance(core, _Ring):
        return core.positions, core.routing_owners, core.nodes
    return None


def _hash_params(core: Any) -> tuple[Any, ...] | None:
    hasher = getattr(core, "hasher", None)
    if hasher is None:
        return None
    return (hasher.hid, hasher.seed, hasher.func)


def _exact_pair(old: Any, new: Any) -> tuple[Any, Any] | None:
    """The two routing snapshots when they can be compared exactly (two rings whose keys hash
    alike, each with a reachable node), else None."""
    a, b = _snapshot(old), _snapshot(new)
    if _ring_layout(a) is None or _ring_layout(b) is None:
        return None
    p = _hash_params(a)
    if p is None or p != _hash_params(b) or a.live == 0 or b.live == 0:
        return None
    return a, b


def _exactly_comparable(old: Any, new: Any) -> bool:
    return _exact_pair(old, new) is not None


def _intervals(a: Any, b: Any) -> tuple[npt.NDArray[np.uint64], list[int],
                                        npt.NDArray[np.int64], npt.NDArray[np.int64],
                                        list[str]]:
    """Split the circle at every position of either ring snapshot.

    Returns (ends, lengths, old_owner, new_owner, names): interval k is (ends[k-1], ends[k]]
    and interval 0 also holds the wrap (ends[-1], 2**64); owners are indices into names."""
    po, oo, no = _ring_layout(a)  # type: ignore[misc]
    pn, on, nn = _ring_layout(b)  # type: ignore[misc]
    names = sorted(set(no) | set(nn))
    index = {n: i for i, n in enumerate(names)}
    map_old = np.array([index[n] for n in no], dtype=np.int64)
    map_new = np.array([index[n] for n in nn], dtype=np.int64)
    ends = np.union1d(po, pn)
    io = np.searchsorted(po, ends, side="left") % len(po)
    inn = np.searchsorted(pn, ends, side="left") % len(pn)
    old_owner = map_old[oo[io]]
    new_owner = map_new[on[inn]]
    lengths = np.empty(len(ends), dtype=np.uint64)
    lengths[1:] = np.diff(ends)
    with np.errstate(over="ignore"):
        lengths[0] = ends[0] - ends[-1]  # the wrap interval, mod 2**64 (0 means all of it)
    return ends, lengths.tolist(), old_owner, new_owner, names


def _check_pair(old: Any, new: Any) -> None:
    for name, r in (("old", old), ("new", new)):
        if not hasattr(r, "get_indices") or not hasattr(r, "nodes"):
            raise TypeError(f"{name} must be a router (HashRing, KetamaRing, JumpHash, ...), "
                            f"got {type(r).__name__!r}")
        if len(r.nodes) == 0:
            raise ValueError(f"{name} has no nodes")


def movement(old: Any, new: Any, keys: Any = None, *, sample: int = 200_000) -> Movement:
    """The share of keys that change owner from ``old`` to ``new``, and the flows.

    Exact (from the positions, no sampling) for two rings that hash keys the same way;
    otherwise estimated on ``keys`` (or ``sample`` generated keys) with a 95% interval."""
    _check_pair(old, new)
    pair = _exact_pair(old, new) if keys is None else None
    if pair is not None:
        ends, lengths, oo, on, names = _intervals(*pair)
        flows: dict[tuple[str, str], int] = {}
        if len(ends) and lengths[0] == 0:
            lengths[0] = _FULL
        changed = np.flatnonzero(oo != on).tolist()
        oo_l, on_l = oo.tolist(), on.tolist()
        for k in changed:
            pair = (names[oo_l[k]], names[on_l[k]])
            flows[pair] = flows.get(pair, 0) + lengths[k]
        total = sum(flows.values())
        return Movement(total / _FULL, {p: v / _FULL for p, v in flows.items()}, True)
    if keys is None:
        keys = np.char.add("key-", np.arange(sample).astype("U"))
    a = np.asarray(old.get_many(keys), dtype=object)
    b = np.asarray(new.get_many(keys), dtype=object)
    m = len(a)
    if m == 0:
        raise ValueError("keys is empty")
    diff = a != b
    pairs: dict[tuple[str, str], int] = {}
    for x, y in zip(a[diff].tolist(), b[diff].tolist(), strict=True):
        pairs[(x, y)] = pairs.get((x, y), 0) + 1
    p = float(diff.mean())
    return Movement(p, {k: v / m for k, v in pairs.items()}, False, m, _wilson(p, m))


def migration_plan(old: Any, new: Any) -> MigrationPlan:
    """The exact hash ranges whose owner changes from ``old`` to ``new`` (two rings that hash
    keys the same way), merged and sorted, with a batch test of which keys they hold."""
    _check_pair(old, new)
    pair = _exact_pair(old, new)
    if pair is None:
        for name, r in (("old", old), ("new", new)):
            core = _snapshot(r)
            if _ring_layout(core) is not None and core.live == 0:
                raise ValueError(f"{name} has every node marked down: no key can be routed")
        raise ValueError("migration_plan needs two ring layouts (HashRing, KetamaRing) with "
                         "the same hash and seed; use movement(old, new, keys) to estimate "
                         "other routers")
    ends, _, oo, on, names = _intervals(*pair)
    starts_l: list[int] = []
    ends_l: list[int] = []
    src: list[str] = []
    dst: list[str] = []
    V = len(ends)
    ends_list = ends.tolist()
    for k in np.flatnonzero(oo != on).tolist():
        a, b = names[int(oo[k])], names[int(on[k])]
        if k == 0:
            # The wrap interval: (ends[-1], 2**64 - 1] and [0, ends[0]].
            pieces = [(0, ends_list[0])]
            if ends_list[-1] < _FULL - 1:
                pieces.append((ends_list[-1] + 1, _FULL - 1))
            if V == 1:
                pieces = [(0, _FULL - 1)]
        else:
            pieces = [(ends_list[k - 1] + 1, ends_list[k])]
        for s, e in pieces:
            starts_l.append(s)
            ends_l.append(e)
            src.append(a)
            dst.append(b)
    order = sorted(range(len(starts_l)), key=starts_l.__getitem__)
    ms: list[int] = []
    me: list[int] = []
    msrc: list[str] = []
    mdst: list[str] = []
    for i in order:
        if ms and me[-1] + 1 == starts_l[i] and msrc[-1] == src[i] and mdst[-1] == dst[i]:
            me[-1] = ends_l[i]
        else:
            ms.append(starts_l[i])
            me.append(ends_l[i])
            msrc.append(src[i])
            mdst.append(dst[i])
    return MigrationPlan(np.array(ms, dtype=np.uint64), np.array(me, dtype=np.uint64),
                         tuple(msrc), tuple(mdst), pair[0].hasher)


def balance(router: Any, keys: Any = None, *, sample: int = 1_000_000) -> Balance:
    """Share per node and spread statistics: exact for a ring (from the positions), else on
    ``keys`` (or ``sample`` generated keys)."""
    if not hasattr(router, "nodes"):
        raise TypeError(f"router must be a router, got {type(router).__name__!r}")
    core = _snapshot(router)
    nodes = tuple(router.nodes if core is None else core.nodes)
    n = len(nodes)
    if n == 0:
        raise ValueError("router has no nodes")
    down: frozenset[str] = frozenset() if core is None else core.down
    if len(down) == n:
        raise ValueError("router has every node marked down: no key can be routed")
    m: int | None = None
    layout = _ring_layout(core) if keys is None else None
    if layout is not None:
        shares = np.array(arc_shares(layout[0], layout[1], n))
        exact = True
    elif keys is None and core is None and hasattr(router, "ownership"):
        shares_d = router.ownership()
        shares = np.array([shares_d[x] for x in nodes])
        exact = True
    else:
        if keys is None:
            keys = np.char.add("key-", np.arange(sample).astype("U"))
        idx = router.get_indices(keys) if core is None else _route(router, core, keys)
        m = len(idx)
        if m == 0:
            raise ValueError("keys is empty")
        shares = np.bincount(idx[idx >= 0], minlength=n) / m
        exact = False
    weights = getattr(router, "weights", None)
    w = np.array([weights[x] for x in nodes]) if isinstance(weights, dict) else np.ones(n)
    up = np.array([x not in down for x in nodes])
    fair = np.where(up, w, 0.0) / w[up].sum()  # a down node's fair share is 0
    rel = shares[up] / fair[up]  # load relative to the node's fair share, over the up nodes
    expected = _expected(router, int(up.sum()), m)
    return Balance(
        shares={x: float(s) for x, s in zip(nodes, shares, strict=True)}, exact=exact, keys=m,
        max_over_mean=float(rel.max()),
        max_over_min=float(rel.max() / rel.min()) if rel.min() > 0 else math.inf,
        cv=float(rel.std() / rel.mean()), expected_max_over_mean=expected)


def _route(router: Any, core: Any, keys: Any) -> npt.NDArray[np.int32]:
    """get_indices over one given snapshot (the one the rest of a report reads)."""
    from consistent_hash import _containers, _threads

    router._check_keys(keys)
    return _containers.route(core, keys, None, nulls=False, threads=_threads.resolve(None))


def _expected(router: Any, n: int, m: int | None) -> float | None:
    """Typical max/mean for this kind of layout (plus sampling noise for m keys)."""
    noise = 0.0 if m is None else math.sqrt(2 * math.log(max(n, 2)) * n / m)
    vnodes = getattr(router, "vnodes", None)
    custom = getattr(router, "expected_max_over_mean", None)
    if callable(custom):
        base = custom()
        return None if base is None else float(base) + noise
    if isinstance(vnodes, int) and vnodes > 0:
        return 1 + math.sqrt(2 * math.log(max(n, 2)) / vnodes) + noise
    return None if m is None else 1 + noise


def _wilson(p: float, m: int) -> tuple[float, float]:
    z = _Z95
    d = 1 + z * z / m
    c = (p + z * z / (2 * m)) / d
    h = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / d
    return (max(0.0, c - h), min(1.0, c + h))
