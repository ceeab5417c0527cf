"""JumpHash: jump consistent hash (Lamping & Veach 2014), bit-identical to Guava.

Kernel: ``src/_jump.pxi`` over ``src/ch_jump.h``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from consistent_hash import _format
from consistent_hash._ring import _Jump, _jump_batch
from consistent_hash._ring import jump_hash as _jump_scalar
from consistent_hash._router import HashedRouter
from consistent_hash._validate import check_int, check_name, check_node
from consistent_hash.algorithms._nodes import bucket_names, bucket_repr

__all__ = ["JumpHash", "jump_hash"]

KIND_JUMP = _format.KINDS["JumpHash"]


class JumpHash(HashedRouter):
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

    def __init__(self, nodes: Iterable[str] | int = (), *,
                 hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> None:
        hasher = self._init_hasher(hash, seed)
        names = bucket_names(nodes, "JumpHash")
        if len(names) > (1 << 31) - 1:
            raise ValueError("JumpHash supports at most 2**31 - 1 buckets")
        self._set_core(_Jump(names, hasher))

    def add(self, node: str) -> None:
        """Append a bucket; only keys that now belong to it move (about 1/(n+1) of them)."""
        name = check_node(node)
        with self._lock:
            core = self._layout_core()
            if name in core.nodes:
                raise ValueError(f"node {name!r} is already in the JumpHash")
            self._set_core(_Jump(core.nodes + (name,), core.hasher))

    def remove(self, node: str) -> None:
        """Remove the last bucket (its keys spread evenly over the others).

        Raises KeyError for an absent node and ValueError for any bucket but the last: jump
        hash cannot remove it without renumbering (use MementoHash for arbitrary removal).
        """
        check_name(node)
        with self._lock:
            core = self._layout_core()
            if node not in core.nodes:
                raise KeyError(node)
            if node != core.nodes[-1]:
                raise ValueError(
                    f"JumpHash can only remove its last bucket ({core.nodes[-1]!r}); removing "
                    f"{node!r} would renumber the buckets after it and move almost every key. "
                    "Use MementoHash (the same mapping, plus arbitrary removal), Rendezvous or "
                    "Maglev to remove any node.")
            self._set_core(_Jump(core.nodes[:-1], core.hasher))

    def _state(self) -> tuple[Any, ...]:
        return (self.nodes, self._hash_param(), self.seed)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> JumpHash:
        nodes, hash, seed = state
        return cls(nodes, hash=hash, seed=seed)

    def _repr_args(self) -> str:
        return bucket_repr(self.nodes) + self._hash_repr()

    def _payload(self) -> bytes:
        return self._hash_payload() + _format.pack_names(self.nodes)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> JumpHash:
        hash_name, seed = _format.read_hash(r)
        return cls(_format.read_names(r), hash=hash_name, seed=seed)


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


