"""FlipHash (Masson & Lee 2024): constant-time range hashing, bit-identical to fliphash-rs.

Kernel: ``src/_fliphash.pxi`` over ``src/ch_fliphash.h``.
"""

from __future__ import annotations

from typing import Any

from consistent_hash import _format
from consistent_hash._core import _FlipHash, _fliphash_1
from consistent_hash._validate import check_int
from consistent_hash.algorithms._buckets import NumberedBuckets
from consistent_hash.algorithms._family import BARE_HASHER, bucket_function

__all__ = ["FlipHash", "fliphash_bucket"]

KIND_FLIPHASH = _format.KINDS["FlipHash"]


class FlipHash(NumberedBuckets):
    """FlipHash (Masson & Lee, "FlipHash: A Constant-Time Consistent Range-Hashing Algorithm",
    2024) over named buckets.

    Bit-identical to DataDog's fliphash-rs ``fliphash_64(key, ..=n - 1)`` (seed 0):
    ``get_indices`` of an integer key ``k`` with ``n`` buckets is ``fliphash_64(k, ..=n - 1)``.
    Constant time in the worst case, regular and monotone.  Nodes, keys, ``hash`` / ``seed``
    (the key hash's seed; FlipHash's own seed is 0 here, any seed through
    ``fliphash_bucket``) and removal as in JumpBackHash: only the last bucket can be removed.

    Examples
    --------
    >>> fh = FlipHash(100)
    >>> [int(i) for i in fh.get_indices([0, 1, 2, 3, 4])]   # fliphash_64(i, ..=99)
    [0, 36, 16, 97, 40]
    """

    __slots__ = ()
    _kind = KIND_FLIPHASH
    _core_cls = _FlipHash


def fliphash_bucket(key_hash: Any, n: int, seed: int = 0, *, threads: int | None = None) -> Any:
    """fliphash-rs's ``fliphash_64_with_seed(key_hash, seed, ..=n - 1)``: the bucket in
    ``[0, n)``.

    ``key_hash`` as for ``jumpback_bucket`` (an int or an integer array); ``n`` from 1 to
    2**31 - 1; ``seed`` an int from 0 to 2**64 - 1.

    >>> fliphash_bucket(10427592028180905159, 18)   # fliphash-rs's doc example, ..=17
    13
    """
    s = check_int(seed, "seed", 0, (1 << 64) - 1)

    def core(c: int) -> Any:
        return _FlipHash((), BARE_HASHER, c, s)

    return bucket_function(key_hash, n, lambda h, c: _fliphash_1(h, c - 1, s), core, threads)
