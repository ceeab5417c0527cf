"""MementoHash (Coluzzi et al. 2023): jump hash with arbitrary removal and restore.

Kernel: ``src/_memento.pxi`` over ``src/ch_memento.h``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import _Hasher, _Memento
from consistent_hash.algorithms._buckets import MAX_BUCKETS, SlotBuckets

__all__ = ["MementoHash"]

KIND_MEMENTO = _format.KINDS["MementoHash"]


class MementoHash(SlotBuckets):
    """MementoHash (Coluzzi et al. 2023): jump hash with arbitrary removal and restore.

    Buckets ("slots") are named as in JumpHash, and while nothing is removed the mapping *is*
    JumpHash's (integer keys used directly, other keys hashed first).  ``remove`` takes out any
    node: only its keys move, spread evenly over the others.  ``add`` fills the most recently
    freed slot (so removing a node and adding it back restores exactly its keys), or appends a
    slot when none is free; only keys that now belong to the added node move.  Removing nodes
    in one order and restoring them in another is allowed; the state is the slot list plus the
    removal order (``state``), which ``to_bytes`` / pickling carry so every client agrees.

    A lookup is a jump hash plus, for a key that lands on a removed slot, a short walk of the
    replacement memory: with up to 10% of the slots removed it costs about 1.1x a jump hash.
    Memory: one int32 per slot.

    Examples
    --------
    >>> mh = MementoHash(["a", "b", "c", "d"])
    >>> mh.remove("b")
    >>> mh.nodes
    ('a', 'c', 'd')
    >>> mh.add("b")          # back into its own slot: exactly its old keys return
    >>> mh == MementoHash(["a", "b", "c", "d"])
    True
    """

    __slots__ = ()
    _kind = KIND_MEMENTO

    def __init__(self, nodes: Iterable[str] | int = (), *,
                 hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> None:
        self._init_slots(nodes, None, self._init_hasher(hash, seed))

    def _make_core(self, names: tuple[str, ...], slots: list[str | None], removed: list[int],
                   slot_node: npt.NDArray[np.int32], hasher: _Hasher) -> _Memento:
        n = len(slots)
        if n > MAX_BUCKETS:
            raise ValueError("MementoHash supports at most 2**31 - 1 slots")
        replacers = np.full(n, -1, dtype=np.int32)
        size = n
        for b in removed:
            replacers[b] = size - 1
            size -= 1
        return _Memento(names, hasher, n, replacers, slot_node)
