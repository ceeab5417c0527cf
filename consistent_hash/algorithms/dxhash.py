"""DxHash (Dong et al. 2023): any bucket removable in one bit a slot, bit-identical to
ChaosD/DxHash wherever it answers.

Kernel: ``src/_dxhash.pxi`` over ``src/ch_dxhash.h``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _containers, _format, _threads
from consistent_hash._core import _Dx, _DxState, _Hasher
from consistent_hash._validate import check_int
from consistent_hash.algorithms._buckets import MAX_BUCKETS, FixedSlots
from consistent_hash.algorithms._family import BARE_HASHER, BucketSet

__all__ = ["DxBuckets", "DxHash"]

KIND_DXHASH = _format.KINDS["DxHash"]

_M32 = 0xFFFFFFFF


def _key_u32(key: Any) -> int:
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)):
        raise TypeError(f"key must be an int or an integer array, got {type(key).__name__!r}")
    v = int(key)
    if not 0 <= v <= _M32:
        raise ValueError(f"key must be from 0 to 2**32 - 1, got {v}")
    return v


def _keys_u32(keys: npt.NDArray[Any]) -> npt.NDArray[np.uint64]:
    if keys.dtype.kind not in "ui" or keys.ndim != 1:
        raise TypeError(f"keys must be a one-dimensional integer array, got {keys.dtype} with "
                        f"shape {keys.shape}")
    if keys.size and (int(keys.min()) < 0 or int(keys.max()) > _M32):
        raise ValueError("keys must be from 0 to 2**32 - 1")
    return np.ascontiguousarray(keys, dtype=np.uint64)


def dx_bits(slots: list[Any]) -> npt.NDArray[np.uint64]:
    """The working bits of slots (bit b of word b >> 6 set when slot b holds a node), the same
    words on every byte order."""
    flags = np.array([x is not None for x in slots], dtype=bool)
    pad = -len(flags) % 64 or (64 if not len(flags) else 0)
    packed = np.packbits(np.concatenate([flags, np.zeros(pad, dtype=bool)]), bitorder="little")
    return packed.view("<u8").astype(np.uint64)


class DxBuckets(BucketSet):
    """ChaosD/DxHash's ``DxHash(capacity, working)``, bit for bit wherever the reference
    answers, as bare slots.

    ``bucket(key)`` is ``getNodeID(key, &probes)`` for a uint32 key (or an integer array of
    them, an int32 array back, over ``threads`` threads); ``probes(key)`` its numHash;
    ``remove(b)`` is ``updateRemoval(b)``; ``add()`` is ``updateAddition()``, which grows a full
    set to the least power of two above its working count (re-placing keys, as the reference
    does) and returns the slot it set.  Slots ``0 .. working - 1`` work at the start.

    Where the reference gives up (after 4 x capacity probes getNodeID answers -1, "no node";
    updateAddition then writes slot 0xFFFFFFFF, past its bit vector), this one goes on: the
    first slot of the wanted kind at or after its last probe, circularly.  Removing a slot that
    is not working raises ValueError (the reference ignores it); a lookup with no slot working
    raises EmptyRingError.

    Thread-safe: every call holds the instance's lock.  ``nbytes()``: one bit a slot.

    >>> dx = DxBuckets(8, 8)
    >>> dx.bucket(42)
    6
    >>> dx.remove(6)
    >>> dx.bucket(42), dx.probes(42)
    (2, 3)
    >>> dx.add(), dx.bucket(42)
    (6, 6)
    """

    __slots__ = ()

    def __init__(self, capacity: int, working: int) -> None:
        size = check_int(capacity, "capacity", 1, MAX_BUCKETS)
        self._start(_DxState(BARE_HASHER, size, check_int(working, "working", 0, size)))

    @property
    def capacity(self) -> int:
        """The slots (the reference's getSize())."""
        return int(self._st.size)

    @property
    def working(self) -> int:
        return int(self._st.working)

    def __len__(self) -> int:
        return self.working

    def bucket(self, key: Any, *, threads: int | None = None) -> Any:
        """``getNodeID(key)``: the working slot of a uint32 key, or an int32 array of them for
        an integer array of keys (computed over ``threads`` threads, as every batch call)."""
        t = _threads.resolve(threads)
        if isinstance(key, np.ndarray):
            k = _keys_u32(key)
            with self._lock:
                return _containers.route_hashes(self._st, k, threads=t)
        v = _key_u32(key)
        with self._lock:
            self._st.check_nonempty()
            return int(self._st.probe1(v)[0])

    def probes(self, key: Any) -> int:
        """getNodeID's numHash for the key: the slots probed (counted as the reference counts
        them, up to its limit of 4 x capacity)."""
        v = _key_u32(key)
        with self._lock:
            self._st.check_nonempty()
            return int(self._st.probe1(v)[1])

    def reference_answers(self, key: Any) -> bool:
        """Whether the reference's getNodeID answers this key (False: it says "no node")."""
        v = _key_u32(key)
        with self._lock:
            return bool(self._st.reference_finds(v))

    def reference_can_add(self) -> bool:
        """Whether the reference's updateAddition finds a free slot now (False: it writes slot
        0xFFFFFFFF, past its bit vector)."""
        with self._lock:
            if self._st.working == self._st.size:
                return True  # it grows first, and the grown half is all free
            return bool(self._st.reference_finds(1228, 0))

    def remove(self, b: int) -> None:
        """``updateRemoval(b)``: only b's keys move.  ValueError unless b is working."""
        v = check_int(b, "b", 0, None)
        with self._lock:
            if not self._st.is_working(v):
                raise ValueError(f"slot {v} is not a working slot of the DxBuckets")
            self._st.remove(v)

    def add(self) -> int:
        """``updateAddition()``: sets a free slot and returns it (growing a full set first);
        only keys that now belong to it move, unless it grew."""
        with self._lock:
            if int(self._st.grows()) > MAX_BUCKETS:
                raise ValueError("DxBuckets holds at most 2**31 - 1 slots: it cannot grow")
            return int(self._st.add())

    def _key(self) -> Any:
        return self.capacity, self._st.bits.tobytes()

    def _repr_args(self) -> str:
        return f"capacity={self.capacity}, working={self.working}"


class DxHash(FixedSlots):
    """DxHash (Dong, Wang et al., "DxHash: A Memory-Saving Consistent Hashing Algorithm", 2023)
    over named nodes: any node can be removed, one bit of state a slot.

    ``capacity`` slots; ``nodes`` fill slots ``0 .. len(nodes) - 1`` in the order given and the
    rest are free, stacked so that ``add`` fills slot ``len(nodes)`` first.  A key's 64-bit hash
    ``h`` (an integer key is its own hash; str and bytes keys are hashed with ``hash`` /
    ``seed``) goes to the slot of ``getNodeID(h mod 2**32)`` of ChaosD/DxHash's
    ``DxHash(capacity, ...)`` with the same slots working (and, where the reference would answer
    "no node", to the first working slot after its last probe).  ``remove`` takes out any node
    (only its keys move); ``add`` fills the most recently freed slot, so removing a node and
    adding it back restores exactly its keys (the reference's updateAddition instead probes for
    any free slot, and grows a full set, re-placing every key); a full DxHash refuses ``add``.

    ``capacity`` defaults to the power of two at least twice the nodes (at least 64; a power of
    two makes each probe a mask instead of a division); it is part of the layout.  No weights,
    no replicas.

    >>> dh = DxHash(["a", "b", "c", "d"])
    >>> dh.remove("b")
    >>> dh.add("b")
    >>> dh == DxHash(["a", "b", "c", "d"])
    True
    """

    __slots__ = ()
    _kind = KIND_DXHASH

    def _make_core(self, names: tuple[str, ...], slots: list[str | None], stack: list[int],
                   slot_node: npt.NDArray[np.int32], hasher: _Hasher) -> Any:
        return _Dx(names, hasher, len(slots), dx_bits(slots), slot_node)
