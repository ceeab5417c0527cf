"""HashRing: the consistent-hash ring with virtual nodes (the library's default scheme)."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import EmptyRingError, _Ring, label_pairs, label_ring, ring_add
from consistent_hash._ringbase import RingRouter, arc_shares
from consistent_hash._router import weights_repr
from consistent_hash._validate import (
    MAX_TOTAL_VNODES,
    MAX_VNODES,
    check_int,
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


class HashRing(RingRouter):
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

    Its points (``points``) are the key hash of ``node + "#" + str(i)`` for i below its
    vnode count, hashed and merged in C; the rest of the router is ``RingRouter``'s.  Every
    mutation builds a new immutable snapshot and swaps it in with one assignment: readers in
    other threads see the old ring or the new one, never a mix.

    Examples
    --------
    >>> ring = HashRing(["cache-a", "cache-b", "cache-c"])
    >>> ring.get("user:42") in ring
    True
    >>> len(ring), ring.nodes
    (3, ('cache-a', 'cache-b', 'cache-c'))
    """

    __slots__ = ("_vnodes",)
    _kind = _format.KIND_HASHRING

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
        self._point_hasher = hasher
        self._commit(label_ring(hasher, names, counts), ordered)

    # -- the recipe ---------------------------------------------------------------------------

    def points(self, node: str, weight: float) -> npt.NDArray[np.uint64]:
        """The positions of ``node`` at ``weight``: the key hash of ``node + "#" + str(i)``
        (UTF-8) for i < ``max(1, floor(vnodes * weight + 0.5))``, in that order.  The ring
        computes exactly these in C (``label_ring``, ``ring_add``)."""
        name = check_node(node).encode("utf-8")
        count = vnode_count(self._vnodes, check_weight(weight))
        return self.hash_labels([name + b"#%d" % i for i in range(count)])

    # the merge hooks: an edit is the node's vnode count; its labels are hashed in C when it is
    # merged (alone: ring_add; with others: label_pairs, then ring_merge)

    def _edit(self, name: str, weight: Any, size: int) -> int:
        count = vnode_count(self._vnodes, weight)
        if size + count > MAX_TOTAL_VNODES:
            raise ValueError(f"weight {weight!r} would give node {name!r} {count} vnodes; the "
                             f"ring supports at most {MAX_TOTAL_VNODES} in all")
        check_ring_memory(size + count)
        return count

    def _edit_size(self, edit: Any) -> int:
        return int(edit)

    def _merge_one(self, core: _Ring, name: str, edit: Any) -> _Ring:
        return ring_add(core, name, edit)[0]

    def _edit_pairs(self, edits: list[tuple[str, Any]], index: Mapping[str, int]
                    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
        k = len(edits)
        return label_pairs(self._point_hasher, [n for n, _ in edits],
                           np.fromiter((c for _, c in edits), np.uint32, k),
                           np.fromiter((index[n] for n, _ in edits), np.int32, k))

    def _same_points(self, node: str, old: Any, new: Any) -> bool:
        return vnode_count(self._vnodes, new) == vnode_count(self._vnodes, old)

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

    # -- introspection ----------------------------------------------------------------------

    @property
    def weights(self) -> dict[str, float]:
        """A copy of the node -> weight mapping."""
        return dict(self._weights_now())

    @property
    def vnodes(self) -> int:
        return self._vnodes

    def _options(self) -> dict[str, Any]:
        return {"vnodes": self._vnodes}

    def _repr_args(self) -> str:
        return f"{weights_repr(self._weights_now())}, vnodes={self._vnodes}{self._hash_repr()}"

    # -- state and serialization --------------------------------------------------------------

    def _state(self) -> tuple[Any, ...]:
        return (dict(self._weights_now()), self._vnodes, self._hash_param(), self.seed)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> HashRing:
        weights, vnodes, hash, seed, *down = state  # pickles of 0.1.0 carry the down marks here
        ring = cls(weights, vnodes=vnodes, hash=hash, seed=seed)
        for node in down[0] if down else ():
            ring.mark_down(node)
        return ring

    def _payload(self) -> bytes:
        return (self._hash_payload() + struct.pack("<I", self._vnodes)
                + _format.pack_weights(self._weights_now()))

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
