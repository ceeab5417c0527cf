"""Maglev hashing (Eisenbud et al. 2016): lookups are one read of a prime-sized table.

Kernel: ``src/_maglev.pxi`` over ``src/ch_maglev.h``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import _Hasher, _MaglevTable, maglev_table
from consistent_hash._validate import check_int
from consistent_hash.algorithms._nodes import NodeSet

__all__ = ["MAX_TABLE_SIZE", "Maglev", "is_prime"]

KIND_MAGLEV = _format.KINDS["Maglev"]

MAX_TABLE_SIZE = 1 << 26


def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin (exact for every n below 3.3e24)."""
    if n < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    for p in small:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _next_prime(n: int) -> int:
    while not is_prime(n):
        n += 1
    return n


def _check_table_size(value: Any) -> int:
    m: int = check_int(value, "table_size", 2, MAX_TABLE_SIZE)
    if not is_prime(m):
        raise ValueError(f"table_size must be prime, got {m} (the next prime is "
                         f"{_next_prime(m)}); 65537 suits up to ~650 nodes, and about "
                         "100 x nodes in general (see docs/algorithms.md)")
    return m



class Maglev(NodeSet):
    """Maglev hashing (Eisenbud et al. 2016): lookups are one read of a prime-sized table.

    Node ``i`` (names sorted, so the order nodes were given never matters) has the
    permutation ``(offset + j * skip) mod M`` with ``a = H(utf8(name), seed)``,
    ``offset = a mod M`` and ``skip = (a // M) mod (M - 1) + 1``; nodes take turns claiming
    their next preferred empty entry, a node of weight ``w`` taking ``w / max(w)`` turns a
    round, until all ``M`` entries are taken.  A key's entry is ``floor(h * M / 2**64)``.

    Balance: with equal weights every node owns ``floor(M/n)`` or ``ceil(M/n)`` entries, so the
    peak-to-mean load is at most about ``1 + n / M``.  Movement is *not* minimal: adding or
    removing a node also moves some entries between other nodes (measured with M = 65,537:
    about 1.6x the ideal at 100 nodes, 6.7x at 1,000).  Keep ``M`` at least ~100 x nodes, and
    prime (validated).  See docs/algorithms.md.

    Examples
    --------
    >>> mg = Maglev(["a", "b", "c"], table_size=65537)
    >>> mg.get("user:42") in mg
    True
    >>> sorted(np.bincount(mg.table).tolist())
    [21845, 21846, 21846]
    """

    __slots__ = ("_table_size",)
    _kind = KIND_MAGLEV
    _options = (("table_size", "I", 65537),)

    def __init__(self, nodes: Iterable[str] | Mapping[str, float] = (), *,
                 table_size: int = 65537, hash: str | Callable[[bytes], int] = "xxh3",
                 seed: int = 0) -> None:
        self._table_size = _check_table_size(table_size)
        self._init_nodes(nodes, self._init_hasher(hash, seed))

    def _make_core(self, names: tuple[str, ...], weights: dict[str, float], hasher: _Hasher
                   ) -> Any:
        m = self._table_size
        if len(names) > m:
            raise ValueError(f"table_size ({m}) must be at least the number of nodes "
                             f"({len(names)}); about 100 x nodes keeps the balance within 1%")
        ws = list(weights.values())
        top = max(ws) if ws else 1.0
        return _MaglevTable(names, hasher, maglev_table(hasher, names, m, [w / top for w in ws]))

    @property
    def table_size(self) -> int:
        return self._table_size

    @property
    def table(self) -> npt.NDArray[np.int32]:
        """The read-only lookup table: int32[table_size] node indices."""
        return self._core.table  # type: ignore[no-any-return]

