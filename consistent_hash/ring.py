"""HashRing: the consistent-hash ring with virtual nodes (the library's default scheme)."""

from __future__ import annotations

import bisect
import math
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._ring import (
    EmptyRingError,
    _Ring,
    health_ring,
    label_ring,
    ring_add,
    ring_drop,
)
from consistent_hash._router import HashedRouter, weights_repr
from consistent_hash._validate import (
    MAX_TOTAL_VNODES,
    MAX_VNODES,
    check_int,
    check_name,
    check_node,
    check_weight,
    node_weights,
)

__all__ = ["EmptyRingError", "HashRing", "arc_shares", "vnode_count"]

DEFAULT_MAX_LOAD_VNODES = 1 << 24


def vnode_count(vnodes: int, weight: float) -> int:
    """Vnodes of a node: max(1, floor(vnodes * weight + 0.5)) in double precision."""
    x = vnodes * weight + 0.5
    if not x <= MAX_TOTAL_VNODES:  # also catches inf and nan
        raise ValueError(f"weight {weight!r} gives {x:.3g} vnodes at vnodes={vnodes}; a ring "
                         f"holds at most {MAX_TOTAL_VNODES} (lower the weight or vnodes)")
    return max(1, math.floor(x))


class HashRing(HashedRouter):
    """A consistent-hash ring with virtual nodes, weights and replicas.

    Parameters
    ----------
    nodes : iterable of str, or mapping str -> weight
        The initial nodes (weight 1.0 each for an iterable).
    vnodes : int, default 160
        Virtual nodes per unit of weight; a node of weight ``w`` gets
        ``max(1, floor(vnodes * w + 0.5))`` positions.
    hash : {"xxh3", "xxh64", "murmur3", "md5"} or callable, default "xxh3"
        The hash of vnode labels and keys; a callable takes bytes and returns an int in
        ``[0, 2**64)`` (a slow path, kept for custom schemes).
    seed : int, default 0
        Seed of the hash (64-bit for xxh3 / xxh64, 32-bit for murmur3, 0 for md5).

    Every mutation builds a new immutable snapshot and swaps it in with one assignment:
    readers in other threads see the old ring or the new one, never a mix.

    Examples
    --------
    >>> ring = HashRing(["cache-a", "cache-b", "cache-c"])
    >>> ring.get("user:42") in ring
    True
    >>> len(ring), ring.nodes
    (3, ('cache-a', 'cache-b', 'cache-c'))
    """

    __slots__ = ("_weights", "_vnodes", "_down")
    _kind = _format.KIND_HASHRING
    _replicas = True

    def __init__(
        self,
        nodes: Iterable[str] | Mapping[str, float] = (),
        *,
        vnodes: int = 160,
        hash: str | Callable[[bytes], int] = "xxh3",
        seed: int = 0,
    ) -> None:
        self._vnodes = check_int(vnodes, "vnodes", 1, MAX_VNODES)
        hasher = self._init_hasher(hash, seed)
        self._down: frozenset[str] = frozenset()
        weights = node_weights(nodes)
        names = tuple(sorted(weights))
        if len(set(weights.values())) <= 1:  # one weight: one count, and the dict in one call
            w = next(iter(weights.values()), 1.0)
            counts = np.full(len(names), vnode_count(self._vnodes, w), dtype=np.uint32)
            ordered = dict.fromkeys(names, w)
        else:
            ordered = {n: weights[n] for n in names}
            counts = self._counts(names, ordered)
        self._check_total(counts)
        self._install(label_ring(hasher, names, counts), ordered)

    # -- snapshots --------------------------------------------------------------------------

    def _counts(self, names: tuple[str, ...], weights: Mapping[str, float]
                ) -> npt.NDArray[np.uint32]:
        # vnode_count's arithmetic, one array operation for all nodes (the same doubles)
        w = np.fromiter((weights[n] for n in names), dtype=np.float64, count=len(names))
        with np.errstate(over="ignore"):  # inf is refused below, as vnode_count does
            x = self._vnodes * w + 0.5
        bad = ~(x <= MAX_TOTAL_VNODES)
        if bad.any():
            vnode_count(self._vnodes, float(w[int(np.argmax(bad))]))  # raises its error
        counts: npt.NDArray[np.uint32] = np.maximum(np.floor(x), 1.0).astype(np.uint32)
        return counts

    @staticmethod
    def _check_total(counts: npt.NDArray[np.uint32]) -> None:
        total = int(counts.sum(dtype=np.uint64))
        if total > MAX_TOTAL_VNODES:
            raise ValueError(f"the ring would have {total} vnodes; at most "
                             f"{MAX_TOTAL_VNODES} are supported (lower vnodes or the weights)")

    def _install(self, core: _Ring, weights: dict[str, float]) -> None:
        # The weights are set before the core: a reader sees the core, whose nodes match them.
        if self._down:
            self._down = self._down.intersection(weights)  # a removed node is no longer down
        if self._down:
            core = health_ring(core, self._down)
        self._weights = weights
        self._core = core

    def _node_count(self, core: _Ring, name: str, weight: float) -> int:
        count = vnode_count(self._vnodes, weight)
        if len(core) + count > MAX_TOTAL_VNODES:
            raise ValueError(f"weight {weight!r} would give node {name!r} {count} vnodes; the "
                             f"ring supports at most {MAX_TOTAL_VNODES} in all")
        return count

    # -- mutation ---------------------------------------------------------------------------
    # Each is one pass of the core over the old snapshot's arrays (ring_add / ring_drop: the
    # runs between the changed positions copied whole, the owners renumbered, the route
    # layout and the prefix index written on the way), never a rebuild.

    def add(self, node: str, weight: float = 1.0) -> None:
        """Add a node; only keys that now belong to it move (to it).

        Raises ValueError if the node is already present.
        """
        name = check_node(node)
        w = check_weight(weight)
        with self._lock:
            core, weights = self._core, self._weights
            if name in weights:
                raise ValueError(f"node {name!r} is already in the ring")
            new, r = ring_add(core, name, self._node_count(core, name, w))
            ws = list(weights.values())  # in the order of names (every snapshot's weights are)
            ws.insert(r, w)
            self._install(new, dict(zip(new.nodes, ws, strict=True)))

    def remove(self, node: str) -> None:
        """Remove a node; only its keys move (each to its next node clockwise).

        Raises KeyError if the node is not present.
        """
        check_name(node)
        with self._lock:
            core, weights = self._core, self._weights
            if node not in weights:
                raise KeyError(node)
            new_weights = dict(weights)  # the order of names, less one
            del new_weights[node]
            self._install(ring_drop(core, bisect.bisect_left(core.nodes, node)), new_weights)

    def set_weight(self, node: str, weight: float) -> None:
        """Change a node's weight; keys move only to or from that node.

        Raises KeyError if the node is not present.
        """
        check_name(node)
        w = check_weight(weight)
        with self._lock:
            core, weights = self._core, self._weights
            if node not in weights:
                raise KeyError(node)
            new_weights = dict(weights)
            new_weights[node] = w
            if vnode_count(self._vnodes, w) == vnode_count(self._vnodes, weights[node]):
                self._install(core, new_weights)
                return
            # The node's old positions out and its new ones in, one pass each (the owners'
            # renumbering by the removal is undone by the insertion).
            without = ring_drop(core, bisect.bisect_left(core.nodes, node))
            new, _ = ring_add(without, node, self._node_count(without, node, w))
            self._install(new, new_weights)

    # -- introspection ----------------------------------------------------------------------

    @property
    def weights(self) -> dict[str, float]:
        """A copy of the node -> weight mapping."""
        return dict(self._weights)

    @property
    def vnodes(self) -> int:
        return self._vnodes

    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """Read-only uint64 array of vnode positions, ascending."""
        positions: npt.NDArray[np.uint64] = self._core.positions
        return positions

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        """Read-only int32 array: the node index owning each position."""
        owners: npt.NDArray[np.int32] = self._core.owners
        return owners

    def __contains__(self, node: object) -> bool:
        return node in self._weights

    def ownership(self) -> dict[str, float]:
        """The exact share of the 2**64 hash space each node owns (sums to 1)."""
        core = self._core
        return dict(zip(core.nodes, arc_shares(core.positions, core.owners, len(core.nodes)),
                        strict=True))

    def _repr_args(self) -> str:
        return f"{weights_repr(self._weights)}, vnodes={self._vnodes}{self._hash_repr()}"

    # -- state and serialization --------------------------------------------------------------

    def _state(self) -> tuple[Any, ...]:
        return (dict(self._weights), self._vnodes, self._hash_param(), self.seed,
                sorted(self._down))

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> HashRing:
        weights, vnodes, hash, seed, down = state
        ring = cls(weights, vnodes=vnodes, hash=hash, seed=seed)
        for node in down:
            ring.mark_down(node)
        return ring

    def _payload(self) -> bytes:
        return (self._hash_payload() + struct.pack("<I", self._vnodes)
                + _format.pack_weights(self._weights))

    @classmethod
    def _from_payload(cls, r: _format.Reader, *,  # type: ignore[override]
                      max_vnodes: int = DEFAULT_MAX_LOAD_VNODES) -> HashRing:
        hash_name, seed = _format.read_hash(r)
        (vnodes,) = r.unpack("I")
        weights = _format.read_weights(r)
        check_budget(weights, int(vnodes), max_vnodes)
        return cls(weights, vnodes=int(vnodes), hash=hash_name, seed=seed)

    @classmethod
    def from_bytes(cls, data: bytes, *,  # type: ignore[override]
                   max_vnodes: int = DEFAULT_MAX_LOAD_VNODES) -> HashRing:
        """Rebuild a ring from ``to_bytes`` output; damaged or foreign data raises ValueError.

        Data from elsewhere cannot make this allocate without bound: a layout of more than
        ``max_vnodes`` positions in all (default 2**24, about 200 MB) is refused before
        anything is built."""
        return super().from_bytes(data, max_vnodes=max_vnodes)

    # -- health -----------------------------------------------------------------------------

    def mark_down(self, node: str) -> None:
        """Mark a node down: its keys go to their next replica (the first up node clockwise),
        no other key moves, and the positions are not rebuilt.  Lookups and replicas skip
        down nodes; ``nodes``, ``positions``, ``owners`` and ``ownership()`` still describe
        the full layout.  Marking a down node again does nothing.

        Raises KeyError if the node is not in the ring.  With every node down, lookups raise
        EmptyRingError.
        """
        self._set_down(node, True)

    def mark_up(self, node: str) -> None:
        """Bring a down node back: exactly its keys return to it.  Marking an up node up
        does nothing.  Raises KeyError if the node is not in the ring."""
        self._set_down(node, False)

    @property
    def down(self) -> frozenset[str]:
        """The nodes marked down."""
        return self._down

    def _set_down(self, node: str, down: bool) -> None:
        check_name(node)
        with self._lock:
            core, weights = self._core, self._weights
            if node not in weights:
                raise KeyError(node)
            if (node in self._down) == down:
                return
            old = self._down
            self._down = old | {node} if down else old - {node}
            try:
                if not self._down:  # all up again: a plain snapshot of the same arrays
                    core = _Ring(core.positions, core.owners, core.nodes, core.hasher)
                self._install(core, weights)
            except BaseException:
                self._down = old
                raise



def check_budget(weights: Mapping[str, Any], vnodes: Any, max_vnodes: int) -> None:
    """Refuse, before building anything, a layout from untrusted data that is too large."""
    total = 0.0
    for w in weights.values():
        if not isinstance(w, (int, float)) or isinstance(w, bool) or not math.isfinite(w):
            return  # the constructor raises the precise error
        total += max(1.0, vnodes * w + 0.5) if isinstance(vnodes, int) else 0.0
    if total > max_vnodes:
        raise _format.FormatError(f"the layout would have about {total:.3g} vnodes, more than "
                         f"max_vnodes={max_vnodes}; pass a larger max_vnodes if you trust it")


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
        totals[node] = (h << 32) + low
    if int(arcs[0]) == 0:  # every position equal: the first owner holds the whole circle
        totals[int(owners[0])] += 1 << 64
    return [t / (1 << 64) for t in totals]
