"""MementoHash (Coluzzi et al. 2023): jump hash with arbitrary removal and restore.

Kernel: ``src/_memento.pxi`` over ``src/ch_memento.h``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from consistent_hash import _format
from consistent_hash._ring import _Hasher, _Memento
from consistent_hash._router import HashedRouter
from consistent_hash._validate import check_int, check_name, check_node
from consistent_hash.algorithms._nodes import bucket_names, bucket_repr, node_list

__all__ = ["MementoHash"]

KIND_MEMENTO = _format.KINDS["MementoHash"]


class MementoHash(HashedRouter):
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

    __slots__ = ("_slots", "_removed")
    _kind = KIND_MEMENTO
    _slots: list[str | None]
    _removed: list[int]

    def __init__(self, nodes: Iterable[str] | int = (), *,
                 hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> None:
        hasher = self._init_hasher(hash, seed)
        self._set_state(list(bucket_names(nodes, "MementoHash")), [], hasher)

    def _set_state(self, slots: list[str | None], removed: list[int], hasher: _Hasher) -> None:
        n = len(slots)
        if n > (1 << 31) - 1:
            raise ValueError("MementoHash supports at most 2**31 - 1 slots")
        replacers = np.full(n, -1, dtype=np.int32)
        size = n
        for b in removed:
            replacers[b] = size - 1
            size -= 1
        names = tuple(x for x in slots if x is not None)
        slot_node = np.full(n, -1, dtype=np.int32)
        working = np.array([x is not None for x in slots], dtype=bool)
        slot_node[working] = np.arange(len(names), dtype=np.int32)
        core = _Memento(names, hasher, n, replacers, slot_node)
        self._slots, self._removed = slots, removed
        self._set_core(core)

    def add(self, node: str) -> None:
        """Add a node into the most recently freed slot (or a new last slot); only keys that
        now belong to it move.  Raises ValueError if it is already present."""
        name = check_node(node)
        with self._lock:
            if name in self._core.nodes:
                raise ValueError(f"node {name!r} is already in the MementoHash")
            slots, removed = list(self._slots), list(self._removed)
            if removed:
                slots[removed.pop()] = name
            else:
                slots.append(name)
            self._set_state(slots, removed, self._core.hasher)

    def remove(self, node: str) -> None:
        """Remove any node; only its keys move.  Raises KeyError if it is absent."""
        check_name(node)
        with self._lock:
            if node not in self._core.nodes:
                raise KeyError(node)
            slots, removed = list(self._slots), list(self._removed)
            b = slots.index(node)
            if not removed and b == len(slots) - 1:
                slots.pop()  # the last slot with nothing removed: jump hash shrinks
            else:
                slots[b] = None
                removed.append(b)
            self._set_state(slots, removed, self._core.hasher)

    @property
    def slots(self) -> tuple[str | None, ...]:
        """The slot names in jump-hash order, None for a removed slot."""
        return tuple(self._slots)

    @property
    def state(self) -> tuple[tuple[str | None, ...], tuple[int, ...]]:
        """(slots, removal order): everything that defines the mapping besides the hash."""
        return tuple(self._slots), tuple(self._removed)

    @classmethod
    def from_state(cls, slots: Iterable[str | None], removed: Iterable[int], *,
                   hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> MementoHash:
        """Rebuild from ``state``: the removed slots (in removal order) must be exactly the
        slots named None."""
        new = cls.__new__(cls)
        hasher = new._init_hasher(hash, seed)
        sl = list(slots)
        names = [x for x in sl if x is not None]
        node_list(names, "MementoHash")  # validates the names, no duplicates
        rem = [check_int(b, "removed slot", 0, max(len(sl) - 1, 0)) for b in removed]
        if len(set(rem)) != len(rem) or set(rem) != {i for i, x in enumerate(sl) if x is None}:
            raise ValueError("removed must list each slot named None exactly once")
        new._set_state(sl, rem, hasher)
        return new

    def _state(self) -> tuple[Any, ...]:
        return (self.state, self._hash_param(), self.seed)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> MementoHash:
        (slots, removed), hash, seed = state
        return cls.from_state(slots, removed, hash=hash, seed=seed)

    def _repr_args(self) -> str:
        if self._removed:
            return f"<{len(self)} nodes in {len(self._slots)} slots>" + self._hash_repr()
        return bucket_repr(self.nodes, "nodes") + self._hash_repr()

    def _payload(self) -> bytes:
        parts = [self._hash_payload(), struct.pack("<II", len(self._slots), len(self._removed))]
        for x in self._slots:
            parts.append(b"\xff\xff\xff\xff" if x is None else _format.pack_str(x))
        parts.append(struct.pack(f"<{len(self._removed)}I", *self._removed))
        return b"".join(parts)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> MementoHash:
        hash_name, seed = _format.read_hash(r)
        n, k = (int(v) for v in r.unpack("II"))
        if n * 4 + k * 4 > r.remaining() or k > n:
            raise _format.FormatError("data is damaged (slot count exceeds the data)")
        slots: list[str | None] = []
        for _ in range(n):
            (length,) = r.unpack("I")
            if length == 0xFFFFFFFF:
                slots.append(None)
            else:
                try:
                    slots.append(r.take(int(length)).decode("utf-8"))
                except UnicodeDecodeError:
                    raise _format.FormatError("data is damaged (a name is not UTF-8)") from None
        removed = [int(b) for b in r.unpack(f"{k}I")]
        return cls.from_state(slots, removed, hash=hash_name, seed=seed)
