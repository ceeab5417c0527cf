"""A drop-in replacement for ``hashring.HashRing`` (hashring 1.5.1): change one import.

    from hashring import HashRing                          # before
    from consistent_hash.compat.hashring import HashRing   # after

hashring (the Python 3 fork of the 2008 ``hash_ring``) places ``floor(40 * n * w / total)``
labels ``f"{node}-{j}"`` per node and takes only **three** little-endian 32-bit words of each
label's MD5 (120 points per node, not libketama's 160); a key goes to the first point strictly
greater than the first little-endian word of ``md5(key)``, wrapping round.  This class builds
the same points in C and keeps the same answers: ``get_node``, ``get_node_pos``,
``iterate_nodes``, ``gen_key``, and the ``ring``, ``nodes`` and ``weights`` attributes.

Where we differ, only where hashring fails: hashring raises AttributeError for any key that
is not a str (it calls ``key.encode``); here bytes keys are hashed as their bytes and int keys
as their decimal digits (str keys, the only ones hashring can route, are placed identically).
It adds batch lookups (``get_many``, ``get_indices``).  Bug-compatible
on purpose: ``iterate_nodes`` ignores ``distinct`` (hashring always de-duplicates, by
``str(node)``) and skips nodes that are falsy, as hashring does.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _core
from consistent_hash._containers import route as _route
from consistent_hash._hashes import compat_hasher
from consistent_hash._ringbase import build_ring
from consistent_hash._threads import resolve as _threads

__all__ = ["HashRing"]

_HASHER = compat_hasher("ketama_md5_next")


class HashRing:
    """A consistent-hash ring placed exactly as hashring 1.5.1 places it.

    :param nodes: a list of objects that have a proper ``__str__`` representation.
    :param weights: a dict node -> weight; a node not in it weighs 1.
    """

    def __init__(self, nodes: Any, weights: dict[Any, Any] | None = None) -> None:
        self.nodes = nodes
        if not weights:
            weights = {}
        self.weights = weights
        self._generate_circle()

    def _generate_circle(self) -> None:
        """Generates the circle."""
        nodes = list(self.nodes)
        total_weight = 0
        for node in nodes:
            total_weight += self.weights.get(node, 1)
        factors = []
        for node in nodes:
            weight: Any = self.weights.get(node) if node in self.weights else 1
            factors.append(max(0, int(math.floor((40 * len(nodes) * weight) / total_weight))))
        pos, gen = _core.compat_points([f"{node}-".encode() for node in nodes],
                                 np.array(factors, dtype=np.uint32), _core.POINTS_DIGEST, 3)
        # Points are generated node by node in list order; a point two nodes share belongs to
        # the later writer (hashring's ring is a dict).  A node listed twice is one node.
        unique: dict[Any, int] = {}
        for node in nodes:
            unique.setdefault(node, len(unique))
        to_unique = np.array([unique[n] for n in nodes] or [0], dtype=np.int32)
        self._core = build_ring(pos, to_unique[gen], tuple(unique), _HASHER, "last")

    # -- hashring's interface ----------------------------------------------------------------

    def get_node(self, string_key: Any) -> Any:
        """Given a string key a corresponding node in the hash ring is returned.

        If the hash ring is empty, `None` is returned.
        """
        core = self._core
        if len(core) == 0:
            return None
        return core.get(string_key)

    def get_node_pos(self, string_key: Any) -> int | None:
        """The index in the sorted points of the point the key goes to (None if empty)."""
        core = self._core
        if len(core) == 0:
            return None
        return int(core.position_index(core.hasher.hash(string_key)))

    def iterate_nodes(self, string_key: Any, distinct: bool = True
                      ) -> Generator[Any, None, None]:
        """Given a string key it returns the nodes as a generator that can hold the key.

        The generator iterates one time through the ring starting at the correct position.
        (As in hashring, the nodes are always distinct, by ``str(node)``, and falsy nodes are
        skipped, whatever ``distinct`` says.)
        """
        core = self._core
        if len(core) == 0:
            yield None, None
            return
        pos = self.get_node_pos(string_key)
        assert pos is not None
        seen: set[str] = set()
        for i in _core.walk_distinct(core, pos, len(core.nodes)):
            node = core.nodes[i]
            s = str(node)
            if s in seen:
                continue
            seen.add(s)
            if node:
                yield node

    def gen_key(self, key: Any) -> int:
        """Given a string key it returns a long value, its place on the hash ring."""
        b_key = self._hash_digest(key)
        return self._hash_val(b_key, lambda x: x)

    def _hash_val(self, b_key: Sequence[int], entry_fn: Callable[[int], int]) -> int:
        return ((b_key[entry_fn(3)] << 24) | (b_key[entry_fn(2)] << 16)
                | (b_key[entry_fn(1)] << 8) | b_key[entry_fn(0)])

    def _hash_digest(self, key: Any) -> bytearray:
        if isinstance(key, str):
            data = key.encode("utf-8")
        elif isinstance(key, (bytes, bytearray, memoryview)):
            data = bytes(key)
        elif isinstance(key, int) and not isinstance(key, bool):
            data = str(key).encode("ascii")
        else:
            raise TypeError(f"unsupported key type {type(key).__name__!r}: keys must be str, "
                            "bytes or int")
        return bytearray(hashlib.md5(data).digest())

    @property
    def _sorted_keys(self) -> list[int]:
        # 32-bit points, held in the high half of the ring positions
        return (self._core.positions >> np.uint64(32)).tolist()  # type: ignore[no-any-return]

    @property
    def ring(self) -> dict[int, Any]:
        """point -> node, as hashring's ``ring`` dict."""
        core = self._core
        nodes = core.nodes
        return {p: nodes[o] for p, o in zip(self._sorted_keys, core.owners.tolist(),
                                            strict=True)}

    # -- ours --------------------------------------------------------------------------------

    def get_indices(self, keys: Any, *, threads: int | None = None) -> npt.NDArray[np.int32]:
        """int32 index into ``ring_nodes()`` of each key's node, at C speed; ``threads`` as in
        ``HashRing.get_many``."""
        core = self._core
        return _route(core, keys, hint=False, threads=_threads(threads))

    def get_many(self, keys: Any, *, threads: int | None = None) -> npt.NDArray[np.object_]:
        """Object array: ``get_node(key)`` of each key."""
        core = self._core
        result: npt.NDArray[np.object_] = core.nodes_array()[
            self.get_indices(keys, threads=threads)]
        return result

    def ring_nodes(self) -> tuple[Any, ...]:
        """The distinct nodes, in the order ``get_indices`` numbers them."""
        return self._core.nodes

    def __reduce__(self) -> tuple[Any, ...]:
        return (HashRing, (self.nodes, self.weights))
