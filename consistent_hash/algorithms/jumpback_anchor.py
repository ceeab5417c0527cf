"""JumpBackAnchor: hash4j's jumpBackAnchorHash, any bucket removable, bit-identical.

Kernel: ``src/_jumpback_anchor.pxi`` over ``src/ch_jumpback_anchor.h``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _containers, _format, _threads
from consistent_hash._core import _Hasher, _JBAState, _JumpBackAnchor
from consistent_hash._hashes import HashArg
from consistent_hash._validate import check_int
from consistent_hash.algorithms._buckets import SlotBuckets
from consistent_hash.algorithms._family import (
    BARE_HASHER,
    BucketSet,
    key_hash_array,
    key_hash_int,
)

__all__ = ["JumpBackAnchorBuckets", "JumpBackAnchorHash"]

KIND_JUMPBACK_ANCHOR = _format.KINDS["JumpBackAnchorHash"]


class JumpBackAnchorBuckets(BucketSet):
    """hash4j's ``ConsistentHashing.jumpBackAnchorHash(splitMix64_V1())``, bit for bit, as bare
    buckets.

    ``bucket(key_hash)`` is ``getBucket(hash)`` (an int, or an integer array: an int32 array
    back, over ``threads`` threads), ``remove(b)`` is ``removeBucket(b)`` (False, changing
    nothing, unless b is working), ``add()`` is ``addBucket()`` (the last removed bucket back,
    or a new one), ``state`` is ``getState()`` and ``from_state`` is ``setState``: four
    little-endian bytes of the buckets ever used, then four a removed bucket in removal order.

    Thread-safe: every call holds the instance's lock.  ``nbytes()``: two int32 a bucket ever
    used.

    >>> jb = JumpBackAnchorBuckets()
    >>> tuple(jb.add() for _ in range(4))
    (0, 1, 2, 3)
    >>> jb.remove(1), jb.remove(1)
    (True, False)
    >>> jb.state.hex()
    '0400000001000000'
    """

    __slots__ = ()

    def __init__(self) -> None:
        self._start(_JBAState(BARE_HASHER))

    def __len__(self) -> int:
        """getNumBuckets(): the working buckets."""
        return int(self._st.a - self._st.k)

    @property
    def buckets(self) -> list[int]:
        """getBuckets(): the working buckets, ascending."""
        with self._lock:
            return [b for b in range(self._st.a) if self._st.is_working(b)]

    def bucket(self, key_hash: Any, *, threads: int | None = None) -> Any:
        """``getBucket(key_hash)``: EmptyRingError when no bucket works (hash4j:
        IllegalStateException)."""
        t = _threads.resolve(threads)
        if isinstance(key_hash, np.ndarray):
            h = key_hash_array(key_hash)
            with self._lock:
                return _containers.route_hashes(self._st, h, threads=t)
        v = key_hash_int(key_hash)
        with self._lock:
            return int(self._st.bucket1(v))

    def add(self) -> int:
        """``addBucket()``: only keys that now belong to the bucket move."""
        with self._lock:
            return int(self._st.add())

    def remove(self, b: int) -> bool:
        """``removeBucket(b)``: only b's keys move; False (nothing changes) unless b works."""
        v = check_int(b, "b", -(1 << 63), (1 << 63) - 1)
        with self._lock:
            return bool(self._st.remove(v))

    @property
    def state(self) -> bytes:
        """``getState()``."""
        with self._lock:
            return struct.pack(f"<{1 + self._st.k}i", self._st.a, *self._st.removed())

    @classmethod
    def from_state(cls, state: bytes) -> JumpBackAnchorBuckets:
        """``setState(state)``; ValueError where hash4j raises IllegalArgumentException (a
        length not 4 + 4k, a count or a bucket out of range, a bucket removed twice)."""
        if not isinstance(state, (bytes, bytearray, memoryview)):
            raise TypeError(f"state must be bytes-like, got {type(state).__name__!r}")
        b = bytes(state)
        if len(b) < 4 or len(b) % 4:
            raise ValueError(f"state must be 4 + 4k bytes, got {len(b)}")
        a, *removed = struct.unpack(f"<{len(b) // 4}i", b)
        if a < 0 or any(not 0 <= x < a for x in removed) or len(set(removed)) != len(removed):
            raise ValueError("state is not a JumpBackAnchorBuckets state (illegal state)")
        new = cls()
        new._st.set(a, removed)
        return new

    def _key(self) -> Any:
        return self.state

    def _repr_args(self) -> str:
        return f"<{len(self)} buckets of {self._st.a}>"


class JumpBackAnchorHash(SlotBuckets):
    """hash4j's JumpBackAnchor (JumpBackHash plus the memory-optimized AnchorHash's record of
    removals) over named nodes: any node can be removed.

    Buckets are named in the order given (bucket ``i`` is ``nodes[i]``; an int ``n`` names them
    ``"0" .. str(n - 1)``).  A key's 64-bit hash ``h`` (an integer key is its own hash; str and
    bytes keys are hashed with ``hash`` / ``seed``) goes to bucket ``getBucket(h)`` of hash4j's
    ``jumpBackAnchorHash(splitMix64_V1())`` after the same ``addBucket`` / ``removeBucket``
    calls, so while nothing is removed the mapping *is* JumpBackHash's.  ``remove`` takes out
    any node (only its keys move); ``add`` fills the most recently removed bucket (restoring
    exactly its keys) or appends one.  Lookup cost O(1 + ln^2(buckets ever used / working)) for
    random removals.  Memory: two int32 a bucket.  No weights, no replicas.

    >>> jba = JumpBackAnchorHash(["a", "b", "c", "d"])
    >>> jba.remove("b")
    >>> jba.add("b")
    >>> jba == JumpBackAnchorHash(["a", "b", "c", "d"])
    True
    """

    __slots__ = ()
    _kind = KIND_JUMPBACK_ANCHOR
    _empties = True

    def __init__(self, nodes: Iterable[str] | int = (), *, hash: HashArg = "xxh3",
                 seed: int = 0) -> None:
        self._init_slots(nodes, None, self._init_hasher(hash, seed))

    def _make_core(self, names: tuple[str, ...], slots: list[str | None], stack: list[int],
                   slot_node: npt.NDArray[np.int32], hasher: _Hasher) -> Any:
        return _JumpBackAnchor(names, hasher, len(slots), stack, slot_node)
