"""RingRouter: a consistent-hash ring is its points.

Every ring of the library (HashRing, KetamaRing, TokenRing, the load balancers' rings, the
drop-ins' snapshots) is built the same way: its recipe gives each node's points in the core's
64-bit hash space, in the order the recipe generates them; the one ring builder of the core
(``ring_points``) sorts them and applies the ring's tie rule to equal points; the snapshot is a
``_Ring`` over them.  This module holds what they share: the builder's front (``build_ring``),
the exact ``ownership()`` by arc length, and the public base ``RingRouter``, with which a
subclass that supplies only ``points(node, weight)`` gets the whole router surface:

>>> import struct
>>> class Fastring(RingRouter):
...     '''fastring's placement: xxh3_64(name + b"#" + u32_le(i)) for i < 160.'''
...     def points(self, node, weight):
...         name = node.encode()
...         return self.hash_labels([name + b"#" + struct.pack("<I", i) for i in range(160)])
>>> ring = Fastring(["a", "b", "c"])
>>> ring.get("user:42") in ring, len(ring.positions)
(True, 480)
>>> ring.add("d"); round(sum(ring.ownership().values()), 12)
1.0
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from consistent_hash import _containers, _format
from consistent_hash._core import (
    TIES_FIRST,
    TIES_KEEP,
    TIES_LAST,
    _Hasher,
    _Ring,
    ring_drop,
    ring_merge,
    ring_points,
    ring_with,
)
from consistent_hash._router import HashedRouter, Router, weights_repr
from consistent_hash._validate import check_name, check_node, check_weight, node_weights

__all__ = ["TIES", "RingArrays", "RingLayout", "RingRouter", "arc_shares", "build_ring",
           "ring_ownership"]

# The tie rules of equal points: "keep" every point, the one generated first first (the
# default: with nodes generated in name order, the smaller name wins); "first": keep only the
# first generated (nginx); "last": a run takes its last writer's owner (a dict {point: node}:
# hashring, uhashring).
TIES = {"keep": TIES_KEEP, "first": TIES_FIRST, "last": TIES_LAST}


def build_ring(positions: Any, owners: Any, nodes: tuple[str, ...], hasher: _Hasher,
               ties: str = "keep") -> _Ring:
    """The ring snapshot of points given in generation order (positions in the core's 64-bit
    space, owners indexing ``nodes``), through the core's one ring builder."""
    pos, own = ring_points(positions, owners, TIES[ties])
    return _Ring(pos, own, nodes, hasher)


def arc_shares(positions: npt.NDArray[np.uint64], owners: npt.NDArray[np.int32], n: int
               ) -> list[float]:
    """Exact share of the hash space per node index, correctly rounded to a float.

    Position i owns the arc (p[i-1], p[i]]; the first position also owns the wrap-around arc
    (p[-1], 2**64) + [0, p[0]].  Arc lengths are summed per node exactly, in two 32-bit
    halves (each half-sum fits in 64 bits), and divided by 2**64 as Python integers."""
    V = len(positions)
    if V == 0:
        return [0.0] * n
    arcs = np.empty(V, dtype=np.uint64)
    arcs[1:] = np.diff(positions)
    with np.errstate(over="ignore"):
        arcs[0] = positions[0] - positions[-1]  # the wrap arc, mod 2**64
    order = np.argsort(owners, kind="stable")
    sorted_owners = owners[order]
    starts = np.flatnonzero(np.r_[True, sorted_owners[1:] != sorted_owners[:-1]])
    lo = np.add.reduceat(arcs[order] & np.uint64(0xFFFFFFFF), starts)
    hi = np.add.reduceat(arcs[order] >> np.uint64(32), starts)
    totals = [0] * n
    for node, h, low in zip(sorted_owners[starts].tolist(), hi.tolist(), lo.tolist(),
                            strict=True):
        if node >= 0:
            totals[node] = (h << 32) + low
    if int(arcs[0]) == 0 and int(owners[0]) >= 0:  # one position value: all of the circle
        totals[int(owners[0])] += 1 << 64
    return [t / (1 << 64) for t in totals]


class RingArrays:
    """What every ring shows of its snapshot (the layout arrays) and the first step of its
    set_weight."""

    __slots__ = ()
    _core: Any
    _weights: dict[str, Any]

    def _reweighed(self, node: str, weight: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
        """Under the lock: (the layout's core, the weights, the weights with node's set to
        weight); KeyError when node is absent."""
        core, weights = self._layout_core(), self._weights  # type: ignore[attr-defined]
        if node not in weights:
            raise KeyError(node)
        new_weights = dict(weights)
        new_weights[node] = weight
        return core, weights, new_weights

    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """Read-only uint64 array of the ring's positions, ascending."""
        positions: npt.NDArray[np.uint64] = self._core.positions
        return positions

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        """Read-only int32 array: the node index owning each position."""
        owners: npt.NDArray[np.int32] = self._core.owners
        return owners


class RingLayout(RingArrays, Router):
    """What every ring router shares, whatever its recipe: the exact ownership, the layout
    arrays, a down node's keys walking on to the next up node."""

    __slots__ = ()
    _replicas = True
    _walk_on = True

    def ownership(self) -> dict[str, float]:
        """The exact share of the hash space each node receives (sums to 1; a node marked
        down receives 0): arc lengths summed as integers."""
        return ring_ownership(self._core)


def ring_ownership(core: Any) -> dict[str, float]:
    """node -> its exact share of a ring snapshot's hash space (its routing owners: a node
    marked down receives 0), by ``arc_shares``."""
    return dict(zip(core.nodes, arc_shares(core.positions, core.routing_owners,
                                           len(core.nodes)), strict=True))


class _Deferred:
    """The add() calls a RingRouter has not merged yet: the layout before the first of them,
    the nodes marked down then, and each one's checked edit."""

    __slots__ = ("down", "full", "edits", "size")

    def __init__(self, down: frozenset[str], full: _Ring) -> None:
        self.down = down
        self.full = full
        self.edits: list[tuple[str, Any]] = []
        self.size = 0  # the points the edits add


class RingRouter(RingLayout, HashedRouter):
    """A consistent-hash ring defined by its points: subclass it and define
    ``points(node, weight)``.

    Parameters
    ----------
    nodes : iterable of str, or mapping str -> weight
        The nodes (weight 1.0 each for an iterable).
    hash, seed
        The key hash, as for HashRing ("xxh3", "xxh64", "murmur3", "md5" or a callable).

    A subclass supplies ``points(node, weight)``: the node's positions, uint64 in ``[0,
    2**64)`` (an array or a sequence of ints), in the order its recipe generates them;
    ``hash_labels(labels)`` hashes byte strings with the ring's key hash, at C speed.  Class
    attributes refine the ring:

    - ``ties``: equal points from different nodes: ``"keep"`` (default; the node first in
      ``nodes`` first, so by name unless ``ordered``), ``"first"`` (only the first generated
      is kept) or ``"last"`` (the last generated owns them);
    - ``ordered``: nodes keep the order given and added ones go last (default False: nodes are
      sorted by name, so a ring depends only on its set of (node, weight) pairs);
    - ``independent``: ``points`` depends only on the node and its weight (default True), so
      ``add`` / ``remove`` / ``set_weight`` merge that node's points in O(V) instead of
      rebuilding.

    It gets the whole router surface: add / remove / set_weight / mark_down / mark_up, get /
    get_many / get_indices / lookup / replicas with every key container, ``threads=`` and
    ``nulls=``, ``==``, copy, pickle, ``to_bytes`` / ``from_bytes``, ``fingerprint``, the
    exact ``ownership()`` and the exact ``movement`` / ``migration_plan`` analysis.  A
    subclass whose constructor takes more options returns them from ``_options()`` (keyword
    arguments, JSON values) so that copies and bytes rebuild it.
    """

    __slots__ = ("_weights", "_point_hasher")
    _kind = _format.KINDS["RingRouter"]
    ties: ClassVar[str] = "keep"
    ordered: ClassVar[bool] = False
    independent: ClassVar[bool] = True

    _weights: dict[str, Any]

    def __init__(self, nodes: Iterable[str] | Mapping[str, float] = (), *,
                 hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> None:
        hasher = self._init_hasher(hash, seed)
        self._start(nodes, hasher)

    def _start(self, nodes: Any, hasher: _Hasher) -> None:
        """Build the first snapshot (a subclass constructor calls this last)."""
        if self.ties not in TIES:
            raise ValueError(f"{type(self).__name__}.ties must be one of {sorted(TIES)}, "
                             f"got {self.ties!r}")
        weights = self._node_weights(nodes)
        if not self.ordered:
            weights = {n: weights[n] for n in sorted(weights)}
        self._point_hasher = hasher
        core = self._build(tuple(weights), weights, hasher)
        self._weights = weights
        self._set_core(core)

    # -- what a subclass supplies -------------------------------------------------------------

    def points(self, node: str, weight: Any) -> Any:
        """The positions of ``node`` at ``weight``, uint64, in generation order."""
        raise NotImplementedError(f"{type(self).__name__} must define points(node, weight)")

    def _node_weights(self, nodes: Any) -> dict[str, Any]:
        return node_weights(nodes)

    def _check_weight(self, weight: Any) -> Any:
        return check_weight(weight)

    def _options(self) -> dict[str, Any]:
        """The constructor's keyword arguments beyond nodes, hash and seed."""
        return {}

    # -- building -----------------------------------------------------------------------------

    def hash_labels(self, labels: Iterable[bytes]) -> npt.NDArray[np.uint64]:
        """uint64 hashes of byte strings with this ring's key hash (for ``points``)."""
        hasher = self._point_hasher
        return _containers.hash_many(hasher, list(labels))

    def _node_points(self, node: str, weight: Any) -> npt.NDArray[np.uint64]:
        raw = self.points(node, weight)
        try:
            pts = _containers.as_hashes(raw)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{type(self).__name__}.points({node!r}, {weight!r}): "
                          f"{str(e).replace('hashes', 'points')}") from None
        return pts

    def _ring_points(self, names: tuple[str, ...], weights: Mapping[str, Any]
                     ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
        """Every node's points in generation order (node by node, in ``names`` order), with
        their owners.  A recipe whose points depend on the whole node set overrides this."""
        parts = [self._node_points(n, weights[n]) for n in names]
        if not parts:
            return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int32)
        own = np.repeat(np.arange(len(names), dtype=np.int32), [len(p) for p in parts])
        return np.concatenate(parts), own

    def _build(self, names: tuple[str, ...], weights: Mapping[str, Any], hasher: _Hasher
               ) -> _Ring:
        pos, own = self._ring_points(names, weights)
        return build_ring(pos, own, names, hasher, self.ties)

    def _merges(self) -> bool:
        return self.independent and self.ties == "keep"

    def _commit(self, core: _Ring, weights: dict[str, Any]) -> None:
        old = getattr(self, "_weights", None)
        self._weights = weights  # before the core: a reader of both sees matching nodes
        try:
            self._set_core(core)
        except BaseException:
            if old is not None:
                self._weights = old
            raise

    # The hooks of a merge (an independent recipe with ties "keep"): each edit is one pass of
    # the core over the old snapshot's arrays, never a rebuild.  An edit of add() is first
    # checked and prepared (_edit: the node's sorted points), then applied: alone by
    # _merge_one, or, when several add() calls came before the next read, all in one pass
    # (ring_merge over _edit_pairs).  HashRing overrides them to hash its vnode labels in C,
    # and _same_points to keep a snapshot whose points a new weight does not change.

    def _edit(self, name: str, weight: Any, size: int) -> Any:
        """The checked edit of adding ``name`` to a ring of ``size`` points: its points,
        sorted (raises, before anything changes, what the add must raise)."""
        return np.sort(self._node_points(name, weight))

    def _edit_size(self, edit: Any) -> int:
        """The number of points an edit adds."""
        return len(edit)

    def _merge_one(self, core: _Ring, name: str, edit: Any) -> _Ring:
        """core with the edit of node ``name`` merged in, the owners from its index on
        renumbered."""
        return ring_with(core, name, self._slot(core.nodes, name), edit)

    def _edit_pairs(self, edits: list[tuple[str, Any]], index: Mapping[str, int]
                    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
        """The points of several edits with their owners' indices in the new ring."""
        pts = [e for _, e in edits]
        own = np.repeat(np.fromiter((index[n] for n, _ in edits), np.int32, len(edits)),
                        [len(e) for e in pts])
        return np.concatenate(pts), own

    def _inserted(self, core: _Ring, name: str, weight: Any) -> _Ring:
        """core with node ``name`` inserted at ``weight``."""
        return self._merge_one(core, name, self._edit(name, weight, len(core)))

    def _slot(self, names: tuple[str, ...], name: str) -> int:
        """Where a new node goes among names: last if ordered, else in name order."""
        return len(names) if self.ordered else bisect.bisect_left(names, name)

    def _index(self, names: tuple[str, ...], node: str) -> int:
        """The index of a present node among names."""
        return names.index(node) if self.ordered else bisect.bisect_left(names, node)

    def _same_points(self, node: str, old: Any, new: Any) -> bool:
        """Whether node's points at weight ``new`` are those at ``old`` (then set_weight
        keeps the snapshot)."""
        return False

    # -- mutation -----------------------------------------------------------------------------

    def add(self, node: str, weight: Any = 1.0) -> None:
        """Add a node; only keys that now belong to it move (to it).  Raises ValueError if
        the node is already present.

        A ring that merges (``independent``, ties "keep") checks the node and prepares its
        points here, and merges them at the next read: the adds that come before it are
        merged together, in one pass over the ring, so a ring grown by many adds costs about
        what a build of it does.  Every read (a lookup, ``nodes``, the analysis, a copy, the
        bytes) sees every add made before it."""
        name = check_node(node)
        w = self._check_weight(weight)
        with self._lock:
            weights = self._weights
            if name in weights:
                raise ValueError(f"node {name!r} is already in the ring")
            if not self._merges():  # never deferred: weights is in the order of names
                core = self._layout_core()
                names = tuple(weights)
                r = self._slot(names, name)
                names = names[:r] + (name,) + names[r:]
                ws = list(weights.values())  # in the order of names (as every snapshot's)
                ws.insert(r, w)
                new_weights = dict(zip(names, ws, strict=True))
                self._commit(self._build(names, new_weights, core.hasher), new_weights)
                return
            d = self._deferred
            if d is None:
                d = _Deferred(self._snap.down, self._layout_core())
            edit = self._edit(name, w, len(d.full) + d.size)
            d.edits.append((name, edit))
            d.size += self._edit_size(edit)
            # The weights in the order of the adds: _apply_deferred puts them in the order of
            # names, and every reader of their order applies the adds first (_weights_now).
            # Readers take _snap first: until it is None they route by the ring before this
            # add; then, seeing _deferred, they wait on the lock and apply it.
            self._weights = {**weights, name: w}
            self._deferred = d
            self._snap = None

    def _apply_deferred(self) -> None:
        d: _Deferred = self._deferred
        weights = self._weights
        names = tuple(weights) if self.ordered else tuple(sorted(weights))
        if len(d.edits) == 1:
            name, edit = d.edits[0]
            new = self._merge_one(d.full, name, edit)
        else:
            index = {n: i for i, n in enumerate(names)}
            old = d.full.nodes
            remap = np.fromiter((index[n] for n in old), np.int32, len(old))
            pb, ob = self._edit_pairs(d.edits, index)
            new = ring_merge(d.full, names, remap, pb, ob)
        self._weights = {n: weights[n] for n in names}  # before the core, as _commit does
        self._set_core(new, d.down)
        self._deferred = None

    def _weights_now(self) -> dict[str, Any]:
        """The weights in the order of ``nodes`` (deferred adds applied first)."""
        if self._deferred is not None:
            self._materialize()
        return self._weights

    def remove(self, node: str) -> None:
        """Remove a node; only its keys move.  Raises KeyError if it is absent."""
        check_name(node)
        with self._lock:
            core, weights = self._layout_core(), self._weights
            if node not in weights:
                raise KeyError(node)
            new_weights = dict(weights)  # the order of names, less one
            del new_weights[node]
            if self._merges():
                new = ring_drop(core, self._index(core.nodes, node))
            else:
                new = self._build(tuple(new_weights), new_weights, core.hasher)
            self._commit(new, new_weights)

    def set_weight(self, node: str, weight: Any) -> None:
        """Change a node's weight; keys move only to or from it (for an independent recipe).
        Raises KeyError if it is absent."""
        check_name(node)
        w = self._check_weight(weight)
        with self._lock:
            core, weights, new_weights = self._reweighed(node, w)
            if self._same_points(node, weights[node], w):
                new = core
            elif self._merges():
                # its old points out and its new ones in, one pass each (the owners'
                # renumbering by the removal is undone by the insertion)
                new = self._inserted(ring_drop(core, self._index(core.nodes, node)), node, w)
            else:
                new = self._build(tuple(weights), new_weights, core.hasher)
            self._commit(new, new_weights)

    # -- introspection ------------------------------------------------------------------------

    @property
    def weights(self) -> dict[str, Any]:
        """A copy of the node -> weight mapping."""
        return dict(self._weights_now())

    def __contains__(self, node: object) -> bool:
        return node in self._weights

    def _repr_args(self) -> str:
        opts = "".join(f", {k}={v!r}" for k, v in self._options().items())
        return f"{weights_repr(self._weights_now())}{opts}{self._hash_repr()}"

    # -- state and serialization --------------------------------------------------------------

    def _state(self) -> tuple[Any, ...]:
        return (dict(self._weights_now()), self._hash_param(), self.seed, self._options())

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> RingRouter:
        weights, hash, seed, options = state
        return cls(weights, hash=hash, seed=seed, **options)

    @classmethod
    def _class_id(cls) -> str:
        return f"{cls.__module__}.{cls.__qualname__}"

    def _payload(self) -> bytes:
        opts = json.dumps(self._options(), sort_keys=True, separators=(",", ":"))
        return (_format.pack_str(self._class_id()) + self._hash_payload()
                + _format.pack_weights(self._weights_now()) + _format.pack_str(opts))

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> RingRouter:
        name = _format.read_str(r)
        if name != cls._class_id():
            raise _format.FormatError(f"data holds a {name} ring, not a {cls._class_id()}")
        hash_name, seed = _format.read_hash(r)
        weights = _format.read_weights(r)
        try:
            opts = json.loads(_format.read_str(r))
        except ValueError:
            raise _format.FormatError("data is damaged (options)") from None
        if not isinstance(opts, dict):
            raise _format.FormatError("data is damaged (options)")
        return cls(weights, hash=hash_name, seed=seed, **opts)

    @classmethod
    def _fingerprint_name(cls) -> str:
        for c in cls.__mro__:
            if c is RingRouter:  # a ring defined outside the library: its own name
                return cls._class_id()
            if c.__module__.startswith("consistent_hash"):
                return c.__name__
        return cls._class_id()  # pragma: no cover

