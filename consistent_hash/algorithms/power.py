"""PowerCH (Leu 2023): constant expected time consistent hashing, bit-identical to
power-consistent-hash.

Kernel: ``src/_power.pxi`` over ``src/ch_power.h``.
"""

from __future__ import annotations

from typing import Any

from consistent_hash import _format
from consistent_hash._core import _Power, _power_1
from consistent_hash.algorithms._buckets import NumberedBuckets
from consistent_hash.algorithms._family import BARE_HASHER, bucket_function

__all__ = ["PowerHash", "power_bucket"]

KIND_POWER = _format.KINDS["PowerHash"]


class PowerHash(NumberedBuckets):
    """PowerCH (Leu, "Fast Consistent Hashing in Constant Time", 2023) over named buckets.

    Bit-identical to DXist's power-consistent-hash ``PowerConsistentHasher::try_new(n)?
    .hash_u64(key)`` (its PCG32): ``get_indices`` of an integer key ``k`` with ``n`` buckets is
    ``hash_u64(k)``.  One bucket (which the reference refuses) maps every key to bucket 0.
    Nodes, keys, ``hash`` / ``seed`` and removal as in JumpBackHash: only the last bucket can
    be removed.

    Examples
    --------
    >>> ph = PowerHash(96)
    >>> [int(i) for i in ph.get_indices([0, 8, 9, 10, 11, 12, 999])]   # the crate's own test
    [0, 12, 12, 13, 15, 11, 89]
    """

    __slots__ = ()
    _kind = KIND_POWER
    _core_cls = _Power


def power_bucket(key_hash: Any, n: int, *, threads: int | None = None) -> Any:
    """power-consistent-hash's ``PowerConsistentHasher::try_new(n)?.hash_u64(key_hash)``: the
    bucket in ``[0, n)`` (n = 1, which the reference refuses, gives 0).

    ``key_hash`` as for ``jumpback_bucket`` (an int or an integer array); ``n`` from 1 to
    2**31 - 1 (the reference's u32 power of two overflows above 2**31).

    >>> power_bucket(999, 96)
    89
    """
    return bucket_function(key_hash, n, _power_1, lambda c: _Power((), BARE_HASHER, c),
                           threads)
