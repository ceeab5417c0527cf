"""JumpHash: jump consistent hash (Lamping & Veach 2014), bit-identical to Guava.

Kernel: ``src/_jump.pxi`` over ``src/ch_jump.h``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from consistent_hash import _format
from consistent_hash._core import _Hasher, _Jump, _jump_batch
from consistent_hash._core import jump_hash as _jump_scalar
from consistent_hash._validate import check_int
from consistent_hash.algorithms._buckets import MAX_BUCKETS, NumberedBuckets

__all__ = ["JumpHash", "jump_hash"]

KIND_JUMP = _format.KINDS["JumpHash"]


class JumpHash(NumberedBuckets):
    """Jump consistent hash (Lamping & Veach 2014) over named buckets.

    Bit-identical to Guava's ``Hashing.consistentHash(long, int)``: ``get_indices`` of an
    integer key ``k`` with ``n`` buckets is ``consistentHash(k, n)`` (a negative Java long is the
    same 64 bits, ``k + 2**64``).

    Parameters
    ----------
    nodes : iterable of str, or int
        The bucket names in bucket order (bucket ``i`` is ``nodes[i]``); an int ``n`` (up to
        2**24) names the buckets ``"0" .. str(n - 1)``.  For bare bucket numbers with any
        count up to 2**31 - 1, use ``jump_hash(keys, buckets)``.
    hash, seed
        The hash of non-integer keys, as for HashRing.

    Keys: an **integer key is used directly** as the 64-bit jump key (so integer keys route
    exactly as in Guava and every other jump hash); str and bytes keys are hashed first with
    ``hash`` / ``seed``.  This means ``get(42)`` and ``get("42")`` may differ.

    Only the last bucket can be removed (``remove``): removing another would renumber the
    buckets after it and move almost every key.  For arbitrary removal use MementoHash (same
    mapping while nothing is removed), Rendezvous or Maglev.  Jump has no weights.

    Examples
    --------
    >>> jh = JumpHash(100)
    >>> [int(i) for i in jh.get_indices([0, 1, 2, 3, 4])]   # Guava's consistentHash(i, 100)
    [0, 55, 62, 8, 45]
    >>> jh = JumpHash(["a", "b", "c"])
    >>> jh.add("d")
    >>> jh.remove("d")
    >>> jh.nodes
    ('a', 'b', 'c')
    """

    __slots__ = ()
    _kind = KIND_JUMP
    _any_removal = "MementoHash (the same mapping, plus arbitrary removal), Rendezvous or Maglev"

    def _make(self, names: tuple[str, ...], hasher: _Hasher) -> _Jump:
        if len(names) > MAX_BUCKETS:
            raise ValueError("JumpHash supports at most 2**31 - 1 buckets")
        return _Jump(names, hasher)


def jump_hash(key: Any, buckets: int) -> Any:
    """Guava's ``Hashing.consistentHash(key, buckets)``: the bucket in ``[0, buckets)``.

    ``key`` is an int from -2**63 to 2**64 - 1 (a Java long, or its unsigned 64 bits) or an
    integer array (the result is then an int32 array); ``buckets`` is from 1 to 2**31 - 1.

    >>> jump_hash(10863919174838991, 11)
    6
    >>> jump_hash(np.array([0, 1, 2]), 100).tolist()
    [0, 55, 62]
    """
    n = check_int(buckets, "buckets", 1, (1 << 31) - 1)
    if isinstance(key, np.ndarray):
        if key.dtype.kind not in "ui" or key.ndim != 1:
            raise TypeError(f"keys must be a one-dimensional integer array, got {key.dtype} "
                            f"with shape {key.shape}")
        k = np.ascontiguousarray(key, dtype=np.int64 if key.dtype.kind == "i" else np.uint64)
        return _jump_batch(k.view(np.uint64), n)
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)):
        raise TypeError(f"key must be an int or an integer array, got {type(key).__name__!r}")
    v = int(key)
    if not -(1 << 63) <= v < (1 << 64):
        raise ValueError(f"key must be from -2**63 to 2**64 - 1, got {v}")
    return _jump_scalar(v & ((1 << 64) - 1), n)


