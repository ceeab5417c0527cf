"""The routers over numbered buckets and slots: JumpHash, MementoHash and the modern family.

- ``NumberedBuckets``: n buckets named in order (bucket i is nodes[i]) that grow and shrink
  only at the end (LIFO), refusing any other removal with an error naming a router that takes
  it: JumpHash, JumpBackHash, FlipHash, PowerHash, BinomialHash.
- ``SlotBuckets``: buckets ("slots") that can be removed in any order.  The state is the slot
  list (a name, or None for a removed slot) plus the stack of removed slots, top last; ``add``
  fills the top slot, so removing a node and adding it back restores exactly its keys.  Fixed
  capacity (``FixedSlots``: AnchorHash, DxHash) or growing (MementoHash, JumpBackAnchorHash).

A subclass supplies its snapshot (``_make`` / ``_make_core``), its kind and its messages;
state, bytes, repr and the mutations follow.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any, ClassVar, TypeVar

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import _Hasher
from consistent_hash._hashes import HashArg
from consistent_hash._router import HashedRouter
from consistent_hash._validate import check_int, check_name, check_node
from consistent_hash.algorithms._nodes import bucket_names, bucket_repr, node_list

__all__ = ["MAX_BUCKETS", "FixedSlots", "NumberedBuckets", "SlotBuckets", "default_capacity"]

MAX_BUCKETS = (1 << 31) - 1

_S = TypeVar("_S", bound="SlotBuckets")


def default_capacity(n: int) -> int:
    """The capacity of an AnchorHash or DxHash built without one: the power of two at least
    twice the nodes, and at least 64."""
    return max(64, 1 << (2 * n - 1).bit_length()) if n else 64


class NumberedBuckets(HashedRouter):
    """n buckets named in order (bucket i is nodes[i]): append a bucket, remove the last.

    A subclass names its core class (``_core_cls(names, hasher, n)``, or overrides ``_make``),
    its kind, and the routers its error names for removing another bucket than the last."""

    __slots__ = ()
    _core_cls: ClassVar[Any]
    _any_removal: ClassVar[str] = (
        "JumpBackAnchorHash (JumpBackHash's mapping while nothing is removed), AnchorHash, "
        "DxHash or MementoHash")

    def __init__(self, nodes: Iterable[str] | int = (), *, hash: HashArg = "xxh3",
                 seed: int = 0) -> None:
        hasher = self._init_hasher(hash, seed)
        self._set_core(self._make(bucket_names(nodes, type(self).__name__), hasher))

    def _make(self, names: tuple[str, ...], hasher: _Hasher) -> Any:
        if len(names) > MAX_BUCKETS:
            raise ValueError(f"{type(self).__name__} supports at most 2**31 - 1 buckets")
        return self._core_cls(names, hasher, len(names))

    def add(self, node: str) -> None:
        """Append a bucket; only keys that now belong to it move (about 1/(n+1) of them).
        Raises ValueError if the node is already present."""
        name = check_node(node)
        with self._lock:
            core = self._layout_core()
            if name in core.nodes:
                raise ValueError(f"node {name!r} is already in the {type(self).__name__}")
            self._set_core(self._make(core.nodes + (name,), core.hasher))

    def remove(self, node: str) -> None:
        """Remove the last bucket (its keys spread evenly over the others).

        Raises KeyError for an absent node and ValueError for any bucket but the last: the
        algorithm cannot remove it without renumbering the buckets after it."""
        check_name(node)
        with self._lock:
            core = self._layout_core()
            if node not in core.nodes:
                raise KeyError(node)
            if node != core.nodes[-1]:
                raise ValueError(
                    f"{type(self).__name__} can only remove its last bucket "
                    f"({core.nodes[-1]!r}); removing {node!r} would renumber the buckets "
                    f"after it and move almost every key. Use {self._any_removal} to remove any "
                    "node.")
            self._set_core(self._make(core.nodes[:-1], core.hasher))

    def _state(self) -> tuple[Any, ...]:
        return (self.nodes, self._hash_param(), self.seed)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> Any:
        nodes, hash, seed = state
        return cls(nodes, hash=hash, seed=seed)

    def _repr_args(self) -> str:
        return bucket_repr(self.nodes) + self._hash_repr()

    def _payload(self) -> bytes:
        return self._hash_payload() + _format.pack_names(self.nodes)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> Any:
        hash_name, seed = _format.read_hash(r)
        return cls(_format.read_names(r), hash=hash_name, seed=seed)


_NO_SLOT = 0xFFFFFFFF


class SlotBuckets(HashedRouter):
    """Slots that hold a node name or are removed (None), and the stack of removed slots.

    Growing (MementoHash, JumpBackAnchorHash): the slots are the nodes given; ``add`` appends
    when nothing is removed, and removing the last slot with nothing removed shrinks; with
    ``_empties`` (hash4j's ConsistentJumpBackAnchorBucketSetHasher) removing the last working
    node empties the slots.  ``_fixed`` (``FixedSlots``): the slots are a fixed capacity.

    A subclass supplies ``_make_core(names, slots, stack, slot_node, hasher)``."""

    __slots__ = ("_slots", "_stack")
    _fixed: ClassVar[bool] = False
    _empties: ClassVar[bool] = False
    _slots: list[str | None]
    _stack: list[int]

    def _make_core(self, names: tuple[str, ...], slots: list[str | None], stack: list[int],
                   slot_node: npt.NDArray[np.int32], hasher: _Hasher) -> Any:
        raise NotImplementedError

    def _init_slots(self, nodes: Iterable[str] | int, capacity: Any, hasher: _Hasher) -> None:
        names = list(bucket_names(nodes, type(self).__name__))
        if not self._fixed:
            self._set_state(list(names), [], hasher)
            return
        cap = default_capacity(len(names)) if capacity is None else check_int(
            capacity, "capacity", 1, MAX_BUCKETS)
        if len(names) > cap:
            raise ValueError(f"{len(names)} nodes exceed the capacity {cap}")
        slots: list[str | None] = [*names, *([None] * (cap - len(names)))]
        self._set_state(slots, list(range(cap - 1, len(names) - 1, -1)), hasher)

    def _set_state(self, slots: list[str | None], stack: list[int], hasher: _Hasher) -> None:
        names = tuple(x for x in slots if x is not None)
        slot_node = np.full(len(slots), -1, dtype=np.int32)
        working = np.array([x is not None for x in slots], dtype=bool)
        slot_node[working] = np.arange(len(names), dtype=np.int32)
        core = self._make_core(names, slots, stack, slot_node, hasher)
        # The slots first: with nodes marked down, _set_core routes around them through a copy
        # of this router, which must see the new slots; put back if it refuses.
        old = getattr(self, "_slots", None), getattr(self, "_stack", None)
        self._slots, self._stack = slots, stack
        try:
            self._set_core(core)
        except BaseException:
            if old[0] is not None:
                self._slots, self._stack = old  # type: ignore[assignment]
            raise

    # -- mutations ----------------------------------------------------------------------------

    def add(self, node: str) -> None:
        """Add a node into the most recently removed slot (or, where the router grows, a new
        last slot); only keys that now belong to it move.  Raises ValueError if it is already
        present, or if a fixed-capacity router has no free slot."""
        name = check_node(node)
        with self._lock:
            core = self._layout_core()
            if name in core.nodes:
                raise ValueError(f"node {name!r} is already in the {type(self).__name__}")
            slots, stack = list(self._slots), list(self._stack)
            if stack:
                slots[stack.pop()] = name
            elif self._fixed:
                raise ValueError(
                    f"the {type(self).__name__} is full (capacity {len(slots)}): build a new "
                    "one with a larger capacity= (which re-places keys)")
            else:
                if len(slots) >= MAX_BUCKETS:
                    raise ValueError(f"{type(self).__name__} holds at most 2**31 - 1 slots")
                slots.append(name)
            self._set_state(slots, stack, core.hasher)

    def remove(self, node: str) -> None:
        """Remove any node; only its keys move.  Raises KeyError if it is absent."""
        check_name(node)
        with self._lock:
            core = self._layout_core()
            if node not in core.nodes:
                raise KeyError(node)
            slots, stack = list(self._slots), list(self._stack)
            b = slots.index(node)
            if self._empties and len(core.nodes) == 1:
                slots, stack = [], []  # hash4j: the last working bucket empties the set
            elif not self._fixed and not stack and b == len(slots) - 1:
                slots.pop()
            else:
                slots[b] = None
                stack.append(b)
            self._set_state(slots, stack, core.hasher)

    # -- state --------------------------------------------------------------------------------

    @property
    def slots(self) -> tuple[str | None, ...]:
        """The slot names in slot order, None for a removed (or free) slot."""
        return tuple(self._slots)

    @property
    def state(self) -> tuple[tuple[str | None, ...], tuple[int, ...]]:
        """(slots, the stack of removed slots, top last): everything that defines the mapping
        besides the hash."""
        return tuple(self._slots), tuple(self._stack)

    @classmethod
    def from_state(cls: type[_S], slots: Iterable[str | None], removed: Iterable[int], *,
                   hash: HashArg = "xxh3", seed: int = 0) -> _S:
        """Rebuild from ``state``: ``removed`` (the stack, top last) must list each slot named
        None exactly once."""
        new = cls.__new__(cls)
        hasher = new._init_hasher(hash, seed)
        sl = list(slots)
        if cls._fixed and not 1 <= len(sl) <= MAX_BUCKETS:
            raise ValueError(f"a {cls.__name__} has from 1 to 2**31 - 1 slots, got {len(sl)}")
        node_list([x for x in sl if x is not None], cls.__name__)  # names valid, no duplicates
        stack = [check_int(b, "removed slot", 0, max(len(sl) - 1, 0)) for b in removed]
        if len(set(stack)) != len(stack) or set(stack) != {i for i, x in enumerate(sl)
                                                           if x is None}:
            raise ValueError("removed must list each slot named None exactly once")
        new._set_state(sl, stack, hasher)
        return new

    def _state(self) -> tuple[Any, ...]:
        return (self.state, self._hash_param(), self.seed)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> Any:
        (slots, removed), hash, seed = state
        return cls.from_state(slots, removed, hash=hash, seed=seed)

    def _repr_args(self) -> str:
        if self._stack or self._fixed:
            return f"<{len(self)} nodes in {len(self._slots)} slots>" + self._hash_repr()
        return bucket_repr(self.nodes, "nodes") + self._hash_repr()

    def _payload(self) -> bytes:
        parts = [self._hash_payload(), struct.pack("<II", len(self._slots), len(self._stack))]
        for x in self._slots:
            parts.append(struct.pack("<I", _NO_SLOT) if x is None else _format.pack_str(x))
        parts.append(struct.pack(f"<{len(self._stack)}I", *self._stack))
        return b"".join(parts)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> Any:
        hash_name, seed = _format.read_hash(r)
        n, k = (int(v) for v in r.unpack("II"))
        if n * 4 + k * 4 > r.remaining() or k > n:
            raise _format.FormatError("data is damaged (slot count exceeds the data)")
        slots: list[str | None] = []
        for _ in range(n):
            (length,) = r.unpack("I")
            if length == _NO_SLOT:
                slots.append(None)
            else:
                try:
                    slots.append(r.take(int(length)).decode("utf-8"))
                except UnicodeDecodeError:
                    raise _format.FormatError("data is damaged (a name is not UTF-8)") from None
        stack = [int(b) for b in r.unpack(f"{k}I")]
        return cls.from_state(slots, stack, hash=hash_name, seed=seed)


class FixedSlots(SlotBuckets):
    """``capacity`` slots: the nodes fill slots 0 .. len(nodes) - 1 and the free ones are
    stacked from the last down (so ``add`` fills slot len(nodes) first); a full router refuses
    ``add``.  ``capacity`` defaults to ``default_capacity(len(nodes))``."""

    __slots__ = ()
    _fixed = True

    def __init__(self, nodes: Iterable[str] | int = (), *, capacity: int | None = None,
                 hash: HashArg = "xxh3", seed: int = 0) -> None:
        self._init_slots(nodes, capacity, self._init_hasher(hash, seed))

    @property
    def capacity(self) -> int:
        """The slots, working or free (part of the layout)."""
        return len(self._slots)
