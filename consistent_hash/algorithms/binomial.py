"""BinomialHash (Coluzzi et al. 2024): constant-time consistent hashing, bit-identical to the
SUPSI suite's BinomialEngine.

Kernel: ``src/_binomial.pxi`` over ``src/ch_binomial.h``.
"""

from __future__ import annotations

from typing import Any

from consistent_hash import _format
from consistent_hash._core import _Binomial, _binomial_1
from consistent_hash.algorithms._buckets import NumberedBuckets
from consistent_hash.algorithms._family import BARE_HASHER, bucket_function

__all__ = ["BinomialHash", "binomial_bucket"]

KIND_BINOMIAL = _format.KINDS["BinomialHash"]


class BinomialHash(NumberedBuckets):
    """BinomialHash (Coluzzi, Brocco, Antonucci & Leidi, "BinomialHash: A Constant Time,
    Minimal Memory Consistent Hash Algorithm", 2024) over named buckets.

    Bit-identical to ``BinomialEngine(n, hf).getBucket(key)`` of the SUPSI
    java-consistent-hashing-algorithms suite, with ``hf`` returning the key's 64-bit hash: for
    an integer key ``k``, ``hf.hash(key) = k``.  The engine's state is always that of
    ``new BinomialEngine(n)`` (its own ``addBucket`` drifts from it when grown from one bucket
    and then answers buckets past ``n``).  Nodes, keys, ``hash`` / ``seed`` and removal as in
    JumpBackHash: only the last bucket can be removed.

    Examples
    --------
    >>> bh = BinomialHash(100)
    >>> bh.get_indices([0, 1, 2, 3, 4]).tolist()
    [0, 1, 2, 3, 5]
    """

    __slots__ = ()
    _kind = KIND_BINOMIAL
    _core_cls = _Binomial


def binomial_bucket(key_hash: Any, n: int, *, threads: int | None = None) -> Any:
    """The SUPSI suite's ``BinomialEngine(n, hf).getBucket(key)`` where ``hf.hash(key)`` is
    ``key_hash`` (a Java long): the bucket in ``[0, n)``.

    ``key_hash`` as for ``jumpback_bucket`` (an int or an integer array); ``n`` from 1 to
    2**31 - 1.

    >>> binomial_bucket(2**64 - 1, 1000)
    972
    """
    return bucket_function(key_hash, n, _binomial_1, lambda c: _Binomial((), BARE_HASHER, c),
                           threads)
