"""JumpBackHash (Ertl 2025): O(1) jump hash, bit-identical to hash4j's.

Kernel: ``src/_jumpback.pxi`` over ``src/ch_jumpback.h``.
"""

from __future__ import annotations

from typing import Any

from consistent_hash import _format
from consistent_hash._core import _JumpBack, _jumpback_1
from consistent_hash.algorithms._buckets import NumberedBuckets
from consistent_hash.algorithms._family import BARE_HASHER, bucket_function

__all__ = ["JumpBackHash", "jumpback_bucket"]

KIND_JUMPBACK = _format.KINDS["JumpBackHash"]


class JumpBackHash(NumberedBuckets):
    """JumpBackHash (Ertl, "JumpBackHash: Say Goodbye to the Modulo Operation to Distribute
    Keys Uniformly to Buckets", 2025) over named buckets.

    Bit-identical to hash4j's ``ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider
    .splitMix64_V1()).getBucket(hash, n)``: ``get_indices`` of an integer key ``k`` with ``n``
    buckets is ``getBucket(k, n)`` (a negative Java long is the same 64 bits).  Jump hash's
    balance and monotonicity in expected constant time, without floating point or division.

    Parameters
    ----------
    nodes : iterable of str, or int
        The bucket names in bucket order (bucket ``i`` is ``nodes[i]``); an int ``n`` (up to
        2**24) names them ``"0" .. str(n - 1)``.  For bare bucket numbers with any count up to
        2**31 - 1, use ``jumpback_bucket(key_hash, n)``.
    hash, seed
        The hash of non-integer keys, as for HashRing: an **integer key is used directly** as
        the 64-bit hash; str and bytes keys are hashed first.

    Only the last bucket can be removed (``remove``); for arbitrary removal use
    JumpBackAnchorHash (the same mapping while nothing is removed), AnchorHash, DxHash or
    MementoHash.  No weights, no replicas.

    Examples
    --------
    >>> jb = JumpBackHash(100)
    >>> [int(i) for i in jb.get_indices([0, 1, 2, 3, 4])]   # hash4j's getBucket(i, 100)
    [25, 33, 30, 13, 50]
    """

    __slots__ = ()
    _kind = KIND_JUMPBACK
    _core_cls = _JumpBack


def jumpback_bucket(key_hash: Any, n: int, *, threads: int | None = None) -> Any:
    """hash4j's JumpBackHash ``getBucket(key_hash, n)``: the bucket in ``[0, n)``.

    ``key_hash`` is an int from -2**63 to 2**64 - 1 (a Java long, or its unsigned 64 bits) or a
    one-dimensional integer array (the result is then an int32 array, computed over ``threads``
    threads as every batch call); ``n`` is from 1 to 2**31 - 1.

    >>> jumpback_bucket(0, 100)
    25
    >>> import numpy as np
    >>> jumpback_bucket(np.array([1, 2, 3]), 100).tolist()
    [33, 30, 13]
    """
    return bucket_function(key_hash, n, _jumpback_1, lambda c: _JumpBack((), BARE_HASHER, c),
                           threads)
