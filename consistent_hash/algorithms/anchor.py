"""AnchorHash (Mendelson et al. 2021): any bucket removable, bit-identical to cpp-anchorhash.

Kernel: ``src/_anchor.pxi`` over ``src/ch_anchor.h``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import EmptyRingError, _Anchor, _AnchorState, _Hasher
from consistent_hash._validate import check_int
from consistent_hash.algorithms._buckets import MAX_BUCKETS, FixedSlots
from consistent_hash.algorithms._family import BucketSet, key_hash_array, key_hash_int

__all__ = ["AnchorBuckets", "AnchorHash"]

KIND_ANCHOR = _format.KINDS["AnchorHash"]


def _anchor_state(capacity: int, stack: list[int]) -> _AnchorState:
    """The anchor of ``capacity`` buckets after removing ``stack`` in order from a full one
    (the state is a function of the two: AnchorHashQre(a, w) is a full anchor with a - 1 ..
    w removed)."""
    st = _AnchorState(capacity, capacity)
    st.remove_many(np.array(stack, dtype=np.uint32))
    return st


class AnchorBuckets(BucketSet):
    """cpp-anchorhash's ``AnchorHashQre(capacity, working)``, bit for bit, as bare buckets.

    ``bucket(key1, key2)`` is ``ComputeBucket(key1, key2)``, ``remove(b)`` is
    ``UpdateRemoval(b)`` and ``add()`` is ``UpdateNewBucket()`` (it restores the most recently
    removed bucket and returns it).  The buckets are ``0 .. capacity - 1``; ``working`` of them
    (``0 .. working - 1``) work at the start.

    Where the reference misbehaves this one does not: ``working = 0`` is a valid start (the
    reference never returns from its constructor), a lookup with no bucket working raises
    EmptyRingError (the reference answers its last removed bucket), and removing a removed
    bucket or adding to a full anchor raises ValueError (the reference corrupts its state).

    Thread-safe: every call holds the instance's lock.  ``nbytes()``: A, K, W, L and the
    removal stack, a uint32 each per bucket.

    >>> ab = AnchorBuckets(8, 6)
    >>> ab.bucket(1, 2)
    1
    >>> ab.remove(1)
    >>> ab.bucket(1, 2)
    4
    >>> ab.add(), ab.bucket(1, 2)
    (1, 1)
    """

    __slots__ = ()

    def __init__(self, capacity: int, working: int) -> None:
        a = check_int(capacity, "capacity", 1, MAX_BUCKETS)
        self._start(_AnchorState(a, check_int(working, "working", 0, a)))

    @property
    def capacity(self) -> int:
        return int(self._st.a)

    @property
    def working(self) -> int:
        """How many buckets work."""
        return int(self._st.n)

    @property
    def removed(self) -> tuple[int, ...]:
        """The stack of removed buckets, bottom first (``add`` restores the last)."""
        with self._lock:
            return tuple(int(b) for b in self._st.removed())

    def __len__(self) -> int:
        return self.working

    def bucket(self, key1: Any, key2: Any) -> Any:
        """``ComputeBucket(key1, key2)``: two uint64 ints (a negative int as its two's
        complement), or two integer arrays of one length (an int32 array back)."""
        if isinstance(key1, np.ndarray) or isinstance(key2, np.ndarray):
            k1 = key_hash_array(np.asarray(key1), "key1")
            k2 = key_hash_array(np.asarray(key2), "key2")
            if k1.shape != k2.shape:
                raise ValueError(f"key1 and key2 differ in length ({k1.shape[0]} and "
                                 f"{k2.shape[0]})")
            out: npt.NDArray[np.int32] = np.empty(k1.shape[0], dtype=np.int32)
            with self._lock:
                if k1.shape[0]:
                    self._nonempty()
                self._st.batch(k1, k2, out)
            return out
        a, b = key_hash_int(key1, "key1"), key_hash_int(key2, "key2")
        with self._lock:
            self._nonempty()
            return int(self._st.bucket1(a, b))

    def _nonempty(self) -> None:
        if self._st.n == 0:
            raise EmptyRingError("the AnchorBuckets has no working bucket")

    def remove(self, b: int) -> None:
        """``UpdateRemoval(b)``: only b's keys move.  ValueError unless b is working."""
        v = check_int(b, "b", 0, None)
        with self._lock:
            if not self._st.is_working(v):
                raise ValueError(f"bucket {v} is not a working bucket of the AnchorBuckets")
            self._st.remove(v)

    def add(self) -> int:
        """``UpdateNewBucket()``: restores the most recently removed bucket and returns it;
        only keys that now belong to it move.  ValueError when none is removed (full)."""
        with self._lock:
            if self._st.r == 0:
                raise ValueError(f"the AnchorBuckets is full (capacity {self._st.a}): no "
                                 "removed bucket to restore")
            return int(self._st.add())

    def _key(self) -> Any:
        return self.capacity, self.removed

    def _repr_args(self) -> str:
        return f"capacity={self.capacity}, working={self.working}"


class AnchorHash(FixedSlots):
    """AnchorHash (Mendelson, Vargaftik, Barabash, Lorenz, Keslassy & Orda, "AnchorHash: A
    Scalable Consistent Hash", 2021) over named nodes: any node can be removed.

    The anchor has ``capacity`` slots; ``nodes`` fill slots ``0 .. len(nodes) - 1`` in the
    order given and the rest are free (stacked so that ``add`` fills slot ``len(nodes)``
    first).  A key's 64-bit hash ``h`` (an integer key is its own hash; str and bytes keys are
    hashed with ``hash`` / ``seed``) goes to slot ``ComputeBucket(h, 0)`` of cpp-anchorhash's
    ``AnchorHashQre(capacity, len(nodes))`` after the same removals.  ``remove`` takes out any
    node (only its keys move) and ``add`` fills the most recently freed slot (so removing a
    node and adding it back restores exactly its keys); a full anchor refuses ``add``.

    ``capacity`` defaults to the power of two at least twice the nodes (at least 64); it is
    part of the layout (``to_bytes`` carries it), and ``add`` beyond it needs a new router.
    Memory: two uint32 a slot for lookups.  No weights, no replicas.

    >>> ah = AnchorHash(["a", "b", "c", "d"])
    >>> ah.remove("b")
    >>> ah.add("b")          # back into its own slot: exactly its old keys return
    >>> ah == AnchorHash(["a", "b", "c", "d"])
    True
    """

    __slots__ = ()
    _kind = KIND_ANCHOR

    def _make_core(self, names: tuple[str, ...], slots: list[str | None], stack: list[int],
                   slot_node: npt.NDArray[np.int32], hasher: _Hasher) -> Any:
        return _Anchor(names, hasher, _anchor_state(len(slots), stack), slot_node)
