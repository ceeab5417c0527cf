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
from consistent_hash._core import (
    EmptyRingError,
    _Ring,
    label_ring,
    ring_add,
    ring_drop,
)
from consistent_hash._ringbase import RingArrays, arc_shares
from consistent_hash._router import HashedRouter, weights_repr
from consistent_hash._validate import (
    MAX_TOTAL_VNODES,
    MAX_VNODES,
    check_int,
    check_name,
    check_node,
    check_ring_memory,
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


class HashRing(RingArrays, HashedRouter):
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

    __slots__ = ("_weights", "_vnodes")
    _kind = _format.KIND_HASHRING
    _replicas = True
    _walk_on = True  # a down node's keys go on to the next up node clockwise: no rebuild

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
        check_ring_memory(total)

    def _install(self, core: _Ring, weights: dict[str, float]) -> None:
        # The weights are set before the core: a reader sees the core, whose nodes match them.
        self._weights = weights
        self._set_core(core)

    def _node_count(self, core: _Ring, name: str, weight: float) -> int:
        count = vnode_count(self._vnodes, weight)
        if len(core) + count > MAX_TOTAL_VNODES:
            raise ValueError(f"weight {weight!r} would give node {name!r} {count} vnodes; the "
                             f"ring supports at most {MAX_TOTAL_VNODES} in all")
        check_ring_memory(len(core) + count)
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
            core, weights = self._layout_core(), self._weights
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
            core, weights = self._layout_core(), self._weights
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
            core, weights, new_weights = self._reweighed(node, w)
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

    def __contains__(self, node: object) -> bool:
        return node in self._weights

    def ownership(self) -> dict[str, float]:
        """The exact share of the 2**64 hash space each node receives (sums to 1; a node
        marked down receives 0)."""
        core = self._core
        return dict(zip(core.nodes, arc_shares(core.positions, core.routing_owners,
                                               len(core.nodes)), strict=True))

    def _repr_args(self) -> str:
        return f"{weights_repr(self._weights)}, vnodes={self._vnodes}{self._hash_repr()}"

    # -- state and serialization --------------------------------------------------------------

    def _state(self) -> tuple[Any, ...]:
        return (dict(self._weights), self._vnodes, self._hash_param(), self.seed)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> HashRing:
        weights, vnodes, hash, seed, *down = state  # pickles of 0.1.0 carry the down marks here
        ring = cls(weights, vnodes=vnodes, hash=hash, seed=seed)
        for node in down[0] if down else ():
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
