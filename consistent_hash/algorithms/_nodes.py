"""What the algorithm routers share: node lists, numbered buckets, and weighted node sets."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from consistent_hash import _format
from consistent_hash._core import _Hasher
from consistent_hash._router import HashedRouter, weights_repr
from consistent_hash._validate import check_int, check_name, check_node, check_weight, node_weights

__all__ = ["MAX_NUMBERED_BUCKETS", "NodeSet", "bucket_names", "node_list"]

# JumpHash(n) names its buckets "0" .. str(n - 1); beyond this, use jump_hash() on bucket numbers.
MAX_NUMBERED_BUCKETS = 1 << 24

_NO_WEIGHTS = "(for weighted nodes use Rendezvous, Maglev or HashRing)"


def node_list(nodes: Any, algo: str) -> tuple[str, ...]:
    """An ordered, duplicate-free tuple of node names (weights refused)."""
    if isinstance(nodes, Mapping):
        raise TypeError(f"{algo} has no weights: pass an iterable of node names {_NO_WEIGHTS}")
    if isinstance(nodes, (str, bytes)):
        raise TypeError("nodes must be an iterable of names, not a single "
                        f"{type(nodes).__name__}")
    try:
        names = [check_node(n) for n in nodes]
    except TypeError as e:
        if "node names" in str(e):
            raise
        raise TypeError(f"nodes must be an iterable of names, got {type(nodes).__name__!r}"
                        ) from None
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise ValueError(f"duplicate node {n!r} in nodes")
        seen.add(n)
    return tuple(names)


def bucket_names(nodes: Iterable[str] | int, algo: str) -> tuple[str, ...]:
    """Bucket names in bucket order: the names given, or "0" .. str(n - 1) for an int n."""
    if isinstance(nodes, (int, np.integer)) and not isinstance(nodes, (bool, np.bool_)):
        n = check_int(nodes, "nodes", 0, MAX_NUMBERED_BUCKETS)
        return tuple(str(i) for i in range(n))
    return node_list(nodes, algo)


def bucket_repr(names: tuple[str, ...], what: str = "buckets") -> str:
    return repr(list(names)) if len(names) <= 8 else f"<{len(names)} {what}>"


class NodeSet(HashedRouter):
    """A router over a set of (name, weight) pairs: names sorted, so the order nodes were given
    never matters; any node added or removed; the snapshot rebuilt from the set.

    A subclass supplies ``_make_core(names, weights, hasher)`` and declares its options (name,
    struct format, default) in ``_options``; state, bytes and repr follow from them."""

    __slots__ = ("_weights",)
    _weights: dict[str, float]
    _weighted: ClassVar[bool] = True
    _options: ClassVar[tuple[tuple[str, str, Any], ...]] = ()

    def _make_core(self, names: tuple[str, ...], weights: dict[str, float], hasher: _Hasher
                   ) -> Any:
        raise NotImplementedError

    def _init_nodes(self, nodes: Any, hasher: _Hasher) -> None:
        if not self._weighted and isinstance(nodes, Mapping):
            raise TypeError(f"{type(self).__name__} has no weights: pass an iterable of node "
                            f"names {_NO_WEIGHTS}")
        self._install(node_weights(nodes), hasher)

    def _install(self, weights: dict[str, float], hasher: _Hasher) -> None:
        names = tuple(sorted(weights))
        ordered = {n: weights[n] for n in names}
        core = self._make_core(names, ordered, hasher)
        self._weights = ordered
        self._set_core(core)

    def _change(self, node: str, weight: float | None) -> None:
        """Set a node's weight (None: remove it) and rebuild, under the lock."""
        weights = dict(self._weights)
        if weight is None:
            del weights[node]
        else:
            weights[node] = weight
        self._install(weights, self._core.hasher)

    # -- mutations ----------------------------------------------------------------------------

    def add(self, node: str, weight: float = 1.0) -> None:
        """Add a node; only keys that now belong to it move (to it).

        Raises ValueError if the node is already present.
        """
        name = check_node(node)
        w = check_weight(weight)
        if not self._weighted and w != 1.0:
            raise ValueError(f"{type(self).__name__} has no weights (weight must be 1.0); use "
                             "Rendezvous or Maglev for weighted nodes")
        with self._lock:
            if name in self._weights:
                raise ValueError(f"node {name!r} is already in the {type(self).__name__}")
            self._change(name, w)

    def remove(self, node: str) -> None:
        """Remove a node; only its keys move.  Raises KeyError if it is absent."""
        check_name(node)
        with self._lock:
            if node not in self._weights:
                raise KeyError(node)
            self._change(node, None)

    def set_weight(self, node: str, weight: float) -> None:
        """Change a node's weight (Maglev rebuilds its table); only that node's share changes
        hands for Rendezvous, and Maglev moves about its table's extra movement besides."""
        if not self._weighted:
            raise TypeError(f"{type(self).__name__} has no weights {_NO_WEIGHTS}")
        check_name(node)
        w = check_weight(weight)
        with self._lock:
            if node not in self._weights:
                raise KeyError(node)
            self._change(node, w)

    @property
    def weights(self) -> dict[str, float]:
        """A copy of the node -> weight mapping."""
        return dict(self._weights)

    def __contains__(self, node: object) -> bool:
        return node in self._weights

    # -- state, bytes, repr -------------------------------------------------------------------

    def _option_values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name, _, _ in self._options}

    def _nodes_arg(self) -> Any:
        return dict(self._weights) if self._weighted else list(self._weights)

    def _state(self) -> tuple[Any, ...]:
        return (self._nodes_arg(), self._option_values(), self._hash_param(), self.seed)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> Any:
        nodes, options, hash, seed = state
        return cls(nodes, **options, hash=hash, seed=seed)  # type: ignore[call-arg]

    def _payload(self) -> bytes:
        fmt = "<" + "".join(f for _, f, _ in self._options)
        body = (_format.pack_weights(self._weights) if self._weighted
                else _format.pack_names(self._weights))
        return self._hash_payload() + struct.pack(fmt, *self._option_values().values()) + body

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> Any:
        hash_name, seed = _format.read_hash(r)
        values = r.unpack("".join(f for _, f, _ in cls._options))
        opts = {name: int(v) for (name, _, _), v in zip(cls._options, values, strict=True)}
        nodes: Any = _format.read_weights(r) if cls._weighted else _format.read_names(r)
        r.done()  # damaged data is refused before a table of up to table_size is built
        return cls(nodes, **opts, hash=hash_name, seed=seed)  # type: ignore[call-arg]

    def _repr_args(self) -> str:
        extra = "".join(f", {name}={value!r}" for (name, _, default), value
                        in zip(self._options, self._option_values().values(), strict=True)
                        if value != default)
        return weights_repr(self._weights) + extra + self._hash_repr()
