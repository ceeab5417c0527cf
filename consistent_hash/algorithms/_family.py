"""What the modern family's modules share (JumpBackHash, FlipHash, PowerHash, BinomialHash,
AnchorHash, DxHash, JumpBackAnchorHash; one module each; their router bases are in
``_buckets.py``): the plumbing of the bare bucket functions (``jumpback_bucket(key_hash, n)``
and its siblings) on a scalar int or an integer array, arrays going through the chunk driver
with ``threads=`` as every batch call does, and the key-hash arguments of the bucket sets.

A key hash is a 64-bit value: an int from -2**63 (a Java long, as its two's complement) to
2**64 - 1, or an integer array of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _containers, _threads
from consistent_hash._core import _Hasher
from consistent_hash._hashes import make_hasher
from consistent_hash._validate import check_int
from consistent_hash.algorithms._buckets import MAX_BUCKETS

__all__ = ["BARE_HASHER", "BucketSet", "bucket_function", "key_hash_array", "key_hash_int"]

_M64 = (1 << 64) - 1

# The cores of the bare bucket functions never hash a key; any hasher will do.
BARE_HASHER: _Hasher = make_hasher("xxh3", 0)[0]


def key_hash_int(value: Any, name: str = "key_hash") -> int:
    """A scalar 64-bit key hash: an int from -2**63 (a Java long) to 2**64 - 1, as uint64."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int or an integer array, got "
                        f"{type(value).__name__!r}")
    v = int(value)
    if not -(1 << 63) <= v <= _M64:
        raise ValueError(f"{name} must be from -2**63 to 2**64 - 1, got {v}")
    return v & _M64


def key_hash_array(arr: npt.NDArray[Any], name: str = "key_hash") -> npt.NDArray[np.uint64]:
    """A one-dimensional integer array of key hashes as contiguous uint64 (signed values as
    their two's complement, as Java longs)."""
    if arr.dtype.kind not in "ui" or arr.ndim != 1:
        raise TypeError(f"{name} must be a one-dimensional integer array, got {arr.dtype} "
                        f"with shape {arr.shape}")
    wide = np.ascontiguousarray(arr, dtype=np.int64 if arr.dtype.kind == "i" else np.uint64)
    return wide.view(np.uint64)


def bucket_function(key_hash: Any, n: Any, scalar: Callable[[int, int], int],
                    make_core: Callable[[int], Any], threads: Any) -> Any:
    """``scalar(h, n)`` for an int key hash; for an integer array, an int32 array routed by
    ``make_core(n)`` (a bare core over n numbered buckets) through the chunk driver."""
    count = check_int(n, "n", 1, MAX_BUCKETS)
    t = _threads.resolve(threads)
    if isinstance(key_hash, np.ndarray):
        return _containers.route_hashes(make_core(count), key_hash_array(key_hash), threads=t)
    return int(scalar(key_hash_int(key_hash), count))


class BucketSet:
    """What the bare bucket sets share (AnchorBuckets, DxBuckets, JumpBackAnchorBuckets): the
    compiled core's mutable state ``_st`` and the lock every call holds; equality by
    ``_key()``, ``copy`` through the state's ``copy()``."""

    __slots__ = ("_st", "_lock")
    _st: Any

    def _start(self, st: Any) -> None:
        self._st = st
        self._lock = threading.Lock()

    def _key(self) -> Any:
        raise NotImplementedError

    def _repr_args(self) -> str:
        raise NotImplementedError

    def is_working(self, b: int) -> bool:
        """Whether bucket b is working."""
        with self._lock:
            return bool(self._st.is_working(check_int(b, "b", 0, None)))

    def copy(self) -> Any:
        """An independent copy."""
        new = object.__new__(type(self))
        with self._lock:
            new._start(self._st.copy())
        return new

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, BucketSet)
        return bool(self._key() == other._key())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def nbytes(self) -> int:
        """Bytes of the state (see each class)."""
        return int(self._st.nbytes())
