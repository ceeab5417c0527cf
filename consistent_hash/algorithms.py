"""The consistent-hashing algorithm family behind one lookup surface.

Every class here has the lookup surface of HashRing: ``get(key)``, ``get_many(keys)``,
``get_indices(keys, out=None)``, ``lookup(hashes)``, ``hash(key)``, ``hash_many(keys)``,
``nodes``, ``len``, ``in``, ``==``, ``copy()``, pickling and ``to_bytes()`` / ``from_bytes()``.
Batch calls accept every container HashRing accepts and run their loop in C (see
docs/algorithms.md for when to use which).

    JumpHash     Lamping & Veach 2014, bit-identical to Guava's Hashing.consistentHash
    Rendezvous   highest random weight, weighted by -w / ln(u) computed exactly
    Maglev       Eisenbud et al. 2016, a prime-sized lookup table
    MultiProbe   Appleton & O'Reilly 2015, one point per node and k probes per key
    MementoHash  Coluzzi et al. 2023: jump hash with arbitrary removal and restore
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ClassVar, TypeVar

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._containers import hash_many as _hash_many
from consistent_hash._containers import replicas as _route_replicas
from consistent_hash._containers import route as _route
from consistent_hash._containers import route_hashes
from consistent_hash._ring import (
    EmptyRingError,
    _Hasher,
    _Jump,
    _jump_batch,
    _Maglev,
    _Memento,
    _MultiProbe,
    _Rendezvous,
)
from consistent_hash._ring import jump_hash as _jump_scalar
from consistent_hash._validate import (
    check_int,
    check_n,
    check_node,
    check_nulls,
    check_weight,
    make_hasher,
    node_weights,
)

__all__ = ["EmptyRingError", "JumpHash", "Maglev", "MementoHash", "MultiProbe", "Rendezvous",
           "is_prime", "jump_hash"]

_T = TypeVar("_T", bound="_Algorithm")

# Kinds of the to_bytes envelope (consistent_hash._format); HashRing is 1.
KIND_JUMP = 16
KIND_RENDEZVOUS = 17
KIND_MAGLEV = 18
KIND_MULTIPROBE = 19
KIND_MEMENTO = 20

# JumpHash(n) names its buckets "0" .. str(n - 1); beyond this, use jump_hash() on bucket numbers.
MAX_NUMBERED_BUCKETS = 1 << 24


def _route_raw(core: Any, keys: Any, out: npt.NDArray[np.int32] | None, nulls: bool
               ) -> npt.NDArray[np.int32]:
    """consistent_hash._containers.route for routers that take integer keys as they are."""
    return _route(core, keys, out, nulls=nulls)


def _node_list(nodes: Any, algo: str) -> tuple[str, ...]:
    """An ordered, duplicate-free tuple of node names (weights refused)."""
    if isinstance(nodes, Mapping):
        raise TypeError(f"{algo} has no weights: pass an iterable of node names (for weighted "
                        "nodes use Rendezvous, Maglev or HashRing)")
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


def _pack_str(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def _read_str(r: _format.Reader) -> str:
    (n,) = r.unpack("I")
    try:
        return r.take(int(n)).decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("data is damaged (a name is not UTF-8)") from None


class _Algorithm:
    """The lookup surface shared by every algorithm class (not public)."""

    __slots__ = ("_core", "_hash", "_hash_name", "_lock", "__weakref__")
    _kind: ClassVar[int] = 0
    _raw_ints: ClassVar[bool] = False

    _core: Any
    _hash: str | Callable[[bytes], int]
    _hash_name: str

    def _init_hasher(self, hash: str | Callable[[bytes], int], seed: int) -> _Hasher:
        hasher, self._hash_name = make_hasher(hash, seed)
        self._hash = hash
        self._lock = threading.Lock()
        return hasher

    # -- lookups ----------------------------------------------------------------------------

    def get(self, key: str | bytes | int) -> str:
        """The node of one key.

        Raises EmptyRingError when there are no nodes, TypeError for an unsupported key type.
        """
        return self._core.get(key)  # type: ignore[no-any-return]

    def _route(self, core: Any, keys: Any, out: npt.NDArray[np.int32] | None, nulls: bool
               ) -> npt.NDArray[np.int32]:
        if self._raw_ints:
            return _route_raw(core, keys, out, nulls)
        result: npt.NDArray[np.int32] = _route(core, keys, out, nulls=nulls)
        return result

    def get_many(self, keys: Any, *, nulls: str = "raise") -> npt.NDArray[np.object_]:
        """The node of each key, as an object array of names.

        ``keys``: a list or tuple of str / bytes / int, a NumPy array (U, S, O, T or integer
        dtype), a pyarrow Array or ChunkedArray, or a pandas Series.  ``nulls="none"`` maps a
        missing key to None instead of raising.
        """
        core = self._core
        idx = self._route(core, keys, None, check_nulls(nulls))
        result: npt.NDArray[np.object_] = core.nodes_array()[idx]
        return result

    def get_indices(self, keys: Any, out: npt.NDArray[np.int32] | None = None, *,
                    nulls: str = "raise") -> npt.NDArray[np.int32]:
        """The node of each key as an int32 index into ``nodes`` (-1 for a missing key with
        ``nulls="none"``)."""
        core = self._core
        return self._route(core, keys, out, check_nulls(nulls))

    def lookup(self, hashes: Any, out: npt.NDArray[np.int32] | None = None
               ) -> npt.NDArray[np.int32]:
        """Route keys already hashed to uint64 (see ``hash_many``): int32 indices into
        ``nodes``."""
        core = self._core
        result: npt.NDArray[np.int32] = route_hashes(core, hashes, out)
        return result

    def hash(self, key: str | bytes | int) -> int:
        """The uint64 a key is routed by."""
        return self._core.hash(key)  # type: ignore[no-any-return]

    def hash_many(self, keys: Any) -> npt.NDArray[np.uint64]:
        """The uint64 each key is routed by: ``lookup(hash_many(keys)) == get_indices(keys)``."""
        return _hash_many(self._core.hasher, keys)

    # -- introspection ----------------------------------------------------------------------

    @property
    def nodes(self) -> tuple[str, ...]:
        """The node names; ``get_indices`` returns indices into this tuple."""
        return self._core.nodes  # type: ignore[no-any-return]

    @property
    def hash_name(self) -> str:
        """The hash's name: "xxh3", "xxh64", "murmur3", "md5" or "callable"."""
        return self._hash_name

    @property
    def seed(self) -> int:
        return int(self._core.hasher.seed)

    def __len__(self) -> int:
        return len(self._core.nodes)

    def __contains__(self, node: object) -> bool:
        return node in self._core.nodes

    def __iter__(self) -> Iterator[str]:
        return iter(self._core.nodes)

    # -- equality, copies, serialization ----------------------------------------------------

    def _hash_param(self) -> Any:
        return self._hash_name if self._hash_name != "callable" else self._hash

    def _params(self) -> tuple[Any, ...]:
        """Everything that defines the mapping (compared by ==, passed to the constructor)."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Algorithm)
        return (self._hash_param(), self.seed) == (other._hash_param(), other.seed) and \
            self._params() == other._params()

    __hash__ = None  # type: ignore[assignment]

    def copy(self: _T) -> _T:
        """An independent object with the same nodes and parameters (shares the immutable
        snapshot)."""
        new = object.__new__(type(self))
        for slot in _slots(type(self)):
            if slot not in ("__weakref__", "_lock") and hasattr(self, slot):
                setattr(new, slot, _copy_value(getattr(self, slot)))
        new._lock = threading.Lock()
        return new

    def __copy__(self: _T) -> _T:
        return self.copy()

    def __deepcopy__(self: _T, memo: dict[int, object]) -> _T:
        return self.copy()

    def _payload(self) -> bytes:
        raise NotImplementedError

    def _hash_payload(self) -> bytes:
        if self._hash_name == "callable":
            raise ValueError(f"a {type(self).__name__} with a custom hash callable cannot be "
                             "serialized or fingerprinted: its hash function is not data")
        name = self._hash_name.encode("ascii")
        return struct.pack("<B", len(name)) + name + struct.pack("<Q", self.seed)

    def to_bytes(self) -> bytes:
        """Serialize the parameters and nodes (a versioned, checksummed format)."""
        return _format.pack(self._kind, self._hash_payload() + self._payload())

    @classmethod
    def _read_hash(cls, r: _format.Reader) -> tuple[str, int]:
        (nlen,) = r.unpack("B")
        try:
            name = r.take(int(nlen)).decode("ascii")
        except UnicodeDecodeError:
            raise ValueError("data is damaged (hash name)") from None
        (seed,) = r.unpack("Q")
        return name, int(seed)

    def fingerprint(self) -> str:
        """A sha256 hex digest of the defining data: equal objects, equal fingerprints."""
        tag = f"consistent_hash.{type(self).__name__}.v1\x00".encode("ascii")
        return hashlib.sha256(tag + self._hash_payload() + self._payload()).hexdigest()


def _slots(cls: type) -> list[str]:
    out: list[str] = []
    for c in cls.__mro__:
        out.extend(getattr(c, "__slots__", ()))
    return out


def _copy_value(v: Any) -> Any:
    if isinstance(v, dict):
        return dict(v)
    if isinstance(v, list):
        return list(v)
    return v


def _check_from_bytes(build: Callable[[], _T]) -> _T:
    try:
        return build()
    except (TypeError, ValueError, KeyError) as e:
        raise ValueError(f"data is damaged ({e})") from None


# ---------------------------------------------------------------------------------------------
# JumpHash
# ---------------------------------------------------------------------------------------------


class JumpHash(_Algorithm):
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
    _raw_ints = True

    def __init__(self, nodes: Iterable[str] | int = (), *,
                 hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> None:
        hasher = self._init_hasher(hash, seed)
        if isinstance(nodes, (int, np.integer)) and not isinstance(nodes, (bool, np.bool_)):
            n = check_int(nodes, "nodes", 0, MAX_NUMBERED_BUCKETS)
            names: tuple[str, ...] = tuple(str(i) for i in range(n))
        else:
            names = _node_list(nodes, "JumpHash")
        if len(names) > (1 << 31) - 1:
            raise ValueError("JumpHash supports at most 2**31 - 1 buckets")
        self._core = _Jump(names, hasher)

    def add(self, node: str) -> None:
        """Append a bucket; only keys that now belong to it move (about 1/(n+1) of them)."""
        name = check_node(node)
        with self._lock:
            core = self._core
            if name in core.nodes:
                raise ValueError(f"node {name!r} is already in the JumpHash")
            self._core = _Jump(core.nodes + (name,), core.hasher)

    def remove(self, node: str) -> None:
        """Remove the last bucket (its keys spread evenly over the others).

        Raises KeyError for an absent node and ValueError for any bucket but the last: jump
        hash cannot remove it without renumbering (use MementoHash for arbitrary removal).
        """
        if not isinstance(node, str):
            raise TypeError(f"node names must be str, got {type(node).__name__!r}")
        with self._lock:
            core = self._core
            if node not in core.nodes:
                raise KeyError(node)
            if node != core.nodes[-1]:
                raise ValueError(
                    f"JumpHash can only remove its last bucket ({core.nodes[-1]!r}); removing "
                    f"{node!r} would renumber the buckets after it and move almost every key. "
                    "Use MementoHash (the same mapping, plus arbitrary removal), Rendezvous or "
                    "Maglev to remove any node.")
            self._core = _Jump(core.nodes[:-1], core.hasher)

    def _params(self) -> tuple[Any, ...]:
        return (self.nodes,)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_jump, (self.nodes, self._hash_param(), self.seed))

    def __repr__(self) -> str:
        return _repr(self, repr(list(self.nodes)) if len(self) <= 8 else f"<{len(self)} buckets>")

    def _payload(self) -> bytes:
        names = self.nodes
        return struct.pack("<I", len(names)) + b"".join(_pack_str(n) for n in names)

    @classmethod
    def from_bytes(cls, data: bytes) -> JumpHash:
        """Rebuild from ``to_bytes`` output; damaged or foreign data raises ValueError."""
        r = _format.Reader(_format.unpack(data, KIND_JUMP))
        hash_name, seed = cls._read_hash(r)
        (count,) = r.unpack("I")
        if int(count) * 4 > r.remaining():
            raise ValueError("data is damaged (node count exceeds the data)")
        names = [_read_str(r) for _ in range(int(count))]
        r.done()
        return _check_from_bytes(lambda: cls(names, hash=hash_name, seed=seed))


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


def _rebuild_jump(nodes: tuple[str, ...], hash: Any, seed: int) -> JumpHash:
    return JumpHash(nodes, hash=hash, seed=seed)


def _repr(obj: _Algorithm, shown: str, extra: str = "") -> str:
    hash_part = "" if obj.hash_name == "xxh3" else f", hash={obj.hash_name!r}"
    seed_part = "" if obj.seed == 0 else f", seed={obj.seed}"
    return f"{type(obj).__name__}({shown}{extra}{hash_part}{seed_part})"


# ---------------------------------------------------------------------------------------------
# Node sets with weights: a sorted set of names, any node added or removed, snapshots rebuilt
# ---------------------------------------------------------------------------------------------


class _WeightedSet(_Algorithm):
    """Shared by the classes whose nodes are a set of (name, weight) pairs (not public)."""

    __slots__ = ("_weights",)
    _weights: dict[str, float]
    _weighted: ClassVar[bool] = True

    def _make_core(self, names: tuple[str, ...], weights: dict[str, float], hasher: _Hasher
                   ) -> Any:
        raise NotImplementedError

    def _install(self, weights: dict[str, float], hasher: _Hasher) -> None:
        names = tuple(sorted(weights))
        ordered = {n: weights[n] for n in names}
        core = self._make_core(names, ordered, hasher)
        self._core, self._weights = core, ordered

    def set_weight(self, node: str, weight: float) -> None:
        """Change a node's weight (Maglev rebuilds its table); only that node's share changes
        hands for Rendezvous, and Maglev moves about its table's extra movement besides."""
        if not self._weighted:
            raise TypeError(f"{type(self).__name__} has no weights (use Rendezvous, Maglev or "
                            "HashRing for weighted nodes)")
        if not isinstance(node, str):
            raise TypeError(f"node names must be str, got {type(node).__name__!r}")
        w = check_weight(weight)
        with self._lock:
            if node not in self._weights:
                raise KeyError(node)
            weights = dict(self._weights)
            weights[node] = w
            self._install(weights, self._core.hasher)

    def _init_nodes(self, nodes: Any, hasher: _Hasher) -> None:
        if not self._weighted and isinstance(nodes, Mapping):
            raise TypeError(f"{type(self).__name__} has no weights: pass an iterable of node "
                            "names (for weighted nodes use Rendezvous, Maglev or HashRing)")
        self._install(node_weights(nodes), hasher)

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
            weights = dict(self._weights)
            weights[name] = w
            self._install(weights, self._core.hasher)

    def remove(self, node: str) -> None:
        """Remove a node; only its keys move.  Raises KeyError if it is absent."""
        if not isinstance(node, str):
            raise TypeError(f"node names must be str, got {type(node).__name__!r}")
        with self._lock:
            if node not in self._weights:
                raise KeyError(node)
            weights = dict(self._weights)
            del weights[node]
            self._install(weights, self._core.hasher)

    @property
    def weights(self) -> dict[str, float]:
        """A copy of the node -> weight mapping."""
        return dict(self._weights)

    def __contains__(self, node: object) -> bool:
        return node in self._weights

    def _params(self) -> tuple[Any, ...]:
        return (self._weights,)

    def _shown(self) -> str:
        ws = self._weights
        if len(ws) > 8:
            return f"<{len(ws)} nodes>"
        return repr(list(ws)) if all(w == 1.0 for w in ws.values()) else repr(ws)

    def _payload(self) -> bytes:
        parts = [struct.pack("<I", len(self._weights))]
        for node, w in self._weights.items():
            parts.append(_pack_str(node))
            parts.append(struct.pack("<d", w))
        return b"".join(parts)

    @classmethod
    def _read_weights(cls, r: _format.Reader) -> dict[str, float]:
        (count,) = r.unpack("I")
        if int(count) * 12 > r.remaining():
            raise ValueError("data is damaged (node count exceeds the data)")
        weights: dict[str, float] = {}
        for _ in range(int(count)):
            name = _read_str(r)
            (w,) = r.unpack("d")
            weights[name] = float(w)
        if len(weights) != count:
            raise ValueError("data is damaged (duplicate node names)")
        return weights


class _Replicas:
    """replicas / replicas_many / replica_indices for cores with a best-first order."""

    __slots__ = ()
    _core: Any

    def replicas(self, key: str | bytes | int, n: int) -> list[str]:
        """The best ``min(n, len(nodes))`` distinct nodes for the key, best first (the first
        is ``get(key)``)."""
        n = check_n(n)
        core = self._core
        core.check_nonempty()
        r = min(n, len(core.nodes))
        return [core.nodes[i] for i in core.replica_row(key, r)]

    def replica_indices(self, keys: Any, n: int) -> npt.NDArray[np.int32]:
        """int32 array of shape (len(keys), min(n, len(nodes))): replica node indices."""
        n = check_n(n)
        core = self._core
        core.check_nonempty()
        return _route_replicas(core, keys, min(n, len(core.nodes)))

    def replicas_many(self, keys: Any, n: int) -> npt.NDArray[np.object_]:
        """Object array of shape (len(keys), min(n, len(nodes))): replica node names."""
        idx = self.replica_indices(keys, n)
        result: npt.NDArray[np.object_] = self._core.nodes_array()[idx]
        return result


# ---------------------------------------------------------------------------------------------
# Rendezvous
# ---------------------------------------------------------------------------------------------


class Rendezvous(_Replicas, _WeightedSet):
    """Rendezvous (highest random weight) hashing, with weights and top-n replicas.

    The key is hashed once (``h = H(key bytes, seed)``); node ``i`` draws
    ``x_i = mix64(h ^ H(utf8(name_i), seed))`` (SplitMix64's finalizer) and the largest draw
    wins.  With weights, the node with the smallest ``-log2((x_i | 1) / 2**64) / w_i`` wins
    (the logarithmic method: node ``i`` gets a ``w_i / sum(w)`` share), with the logarithm in
    exact integer arithmetic so every platform agrees bit for bit.  Ties go to the smaller
    name.  All weights equal is the unweighted rule.

    Cost: one mix per node per key (about 1 ns each; 5 ns weighted), so it suits up to a few
    hundred nodes; above that use Maglev or a HashRing.  Adding a node moves keys only to it,
    removing one moves only its keys, a weight change moves keys only to or from that node,
    and ``replicas(key, n)`` is the top-n by the same rule.

    Examples
    --------
    >>> r = Rendezvous(["a", "b", "c"])
    >>> r.get("user:42") in r
    True
    >>> len(r.replicas("user:42", 2))
    2
    """

    __slots__ = ()
    _kind = KIND_RENDEZVOUS

    def __init__(self, nodes: Iterable[str] | Mapping[str, float] = (), *,
                 hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> None:
        self._init_nodes(nodes, self._init_hasher(hash, seed))

    def _make_core(self, names: tuple[str, ...], weights: dict[str, float], hasher: _Hasher
                   ) -> Any:
        ws = list(weights.values())
        inv = None if len(set(ws)) <= 1 else [1.0 / w for w in ws]
        return _Rendezvous(names, hasher, inv)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_rendezvous, (dict(self._weights), self._hash_param(), self.seed))

    def __repr__(self) -> str:
        return _repr(self, self._shown())

    @classmethod
    def from_bytes(cls, data: bytes) -> Rendezvous:
        """Rebuild from ``to_bytes`` output; damaged or foreign data raises ValueError."""
        r = _format.Reader(_format.unpack(data, KIND_RENDEZVOUS))
        hash_name, seed = cls._read_hash(r)
        weights = cls._read_weights(r)
        r.done()
        return _check_from_bytes(lambda: cls(weights, hash=hash_name, seed=seed))


def _rebuild_rendezvous(weights: dict[str, float], hash: Any, seed: int) -> Rendezvous:
    return Rendezvous(weights, hash=hash, seed=seed)


# ---------------------------------------------------------------------------------------------
# Maglev
# ---------------------------------------------------------------------------------------------

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


class Maglev(_WeightedSet):
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
        return _Maglev(names, hasher, m, [w / top for w in ws])

    @property
    def table_size(self) -> int:
        return self._table_size

    @property
    def table(self) -> npt.NDArray[np.int32]:
        """The read-only lookup table: int32[table_size] node indices."""
        return self._core.table  # type: ignore[no-any-return]

    def _params(self) -> tuple[Any, ...]:
        return (self._weights, self._table_size)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_maglev, (dict(self._weights), self._table_size, self._hash_param(),
                                  self.seed))

    def __repr__(self) -> str:
        extra = "" if self._table_size == 65537 else f", table_size={self._table_size}"
        return _repr(self, self._shown(), extra)

    def _payload(self) -> bytes:
        return struct.pack("<I", self._table_size) + super()._payload()

    @classmethod
    def from_bytes(cls, data: bytes) -> Maglev:
        """Rebuild from ``to_bytes`` output; damaged or foreign data raises ValueError."""
        r = _format.Reader(_format.unpack(data, KIND_MAGLEV))
        hash_name, seed = cls._read_hash(r)
        (m,) = r.unpack("I")
        weights = cls._read_weights(r)
        r.done()
        return _check_from_bytes(lambda: cls(weights, table_size=int(m),
                                             hash=hash_name, seed=seed))


def _rebuild_maglev(weights: dict[str, float], table_size: int, hash: Any, seed: int) -> Maglev:
    return Maglev(weights, table_size=table_size, hash=hash, seed=seed)


# ---------------------------------------------------------------------------------------------
# MultiProbe
# ---------------------------------------------------------------------------------------------

MAX_PROBES = 1024


class MultiProbe(_WeightedSet):
    """Multi-probe consistent hashing (Appleton & O'Reilly 2015): one point per node, ``probes``
    probes per key.

    Each node has a single point ``H(utf8(name), seed)`` on the ring (memory O(nodes), not
    O(nodes x vnodes)).  A key with hash ``h`` probes ``q_j = mix64(h + j * 0x9E3779B97F4A7C15)``
    for ``j < probes``; each probe's candidate is the first point clockwise, and the candidate
    nearest to its probe wins (ties to the earlier probe).  With the default 21 probes the
    peak-to-mean load is about 1.05.  Adding a node moves keys only to it; removing one moves
    only its keys.  No weights (use Rendezvous, Maglev or HashRing).  Cost: ``probes`` ring
    searches per key.

    Examples
    --------
    >>> mp = MultiProbe(["a", "b", "c"])
    >>> mp.get("user:42") in mp
    True
    """

    __slots__ = ("_probes",)
    _kind = KIND_MULTIPROBE
    _weighted = False

    def __init__(self, nodes: Iterable[str] = (), *, probes: int = 21,
                 hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> None:
        self._probes = check_int(probes, "probes", 1, MAX_PROBES)
        self._init_nodes(nodes, self._init_hasher(hash, seed))

    def _make_core(self, names: tuple[str, ...], weights: dict[str, float], hasher: _Hasher
                   ) -> Any:
        return _MultiProbe(names, hasher, self._probes)

    @property
    def probes(self) -> int:
        return self._probes

    @property
    def points(self) -> npt.NDArray[np.uint64]:
        """The nodes' points on the ring, ascending (``owners`` gives each one's node)."""
        return self._core.positions  # type: ignore[no-any-return]

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        """The node index of each point."""
        return self._core.owners  # type: ignore[no-any-return]

    def _params(self) -> tuple[Any, ...]:
        return (tuple(self._weights), self._probes)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_multiprobe, (list(self._weights), self._probes, self._hash_param(),
                                      self.seed))

    def __repr__(self) -> str:
        extra = "" if self._probes == 21 else f", probes={self._probes}"
        return _repr(self, self._shown(), extra)

    def _payload(self) -> bytes:
        names = list(self._weights)
        return struct.pack("<II", self._probes, len(names)) + b"".join(_pack_str(n)
                                                                      for n in names)

    @classmethod
    def from_bytes(cls, data: bytes) -> MultiProbe:
        """Rebuild from ``to_bytes`` output; damaged or foreign data raises ValueError."""
        r = _format.Reader(_format.unpack(data, KIND_MULTIPROBE))
        hash_name, seed = cls._read_hash(r)
        probes, count = r.unpack("II")
        if int(count) * 4 > r.remaining():
            raise ValueError("data is damaged (node count exceeds the data)")
        names = [_read_str(r) for _ in range(int(count))]
        r.done()
        return _check_from_bytes(lambda: cls(names, probes=int(probes),
                                             hash=hash_name, seed=seed))


def _rebuild_multiprobe(nodes: list[str], probes: int, hash: Any, seed: int) -> MultiProbe:
    return MultiProbe(nodes, probes=probes, hash=hash, seed=seed)


# ---------------------------------------------------------------------------------------------
# MementoHash
# ---------------------------------------------------------------------------------------------


class MementoHash(_Algorithm):
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
    _raw_ints = True
    _slots: list[str | None]
    _removed: list[int]

    def __init__(self, nodes: Iterable[str] | int = (), *,
                 hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> None:
        hasher = self._init_hasher(hash, seed)
        if isinstance(nodes, (int, np.integer)) and not isinstance(nodes, (bool, np.bool_)):
            n = check_int(nodes, "nodes", 0, MAX_NUMBERED_BUCKETS)
            names: tuple[str, ...] = tuple(str(i) for i in range(n))
        else:
            names = _node_list(nodes, "MementoHash")
        self._set_state(list(names), [], hasher)

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
        self._core, self._slots, self._removed = core, slots, removed

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
        if not isinstance(node, str):
            raise TypeError(f"node names must be str, got {type(node).__name__!r}")
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
        _node_list(names, "MementoHash")  # validates the names, no duplicates
        rem = [check_int(b, "removed slot", 0, max(len(sl) - 1, 0)) for b in removed]
        if len(set(rem)) != len(rem) or set(rem) != {i for i, x in enumerate(sl) if x is None}:
            raise ValueError("removed must list each slot named None exactly once")
        new._set_state(sl, rem, hasher)
        return new

    def _params(self) -> tuple[Any, ...]:
        return self.state

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_memento, (list(self._slots), list(self._removed), self._hash_param(),
                                   self.seed))

    def __repr__(self) -> str:
        if self._removed:
            return _repr(self, f"<{len(self)} nodes in {len(self._slots)} slots>")
        return _repr(self, repr(list(self.nodes)) if len(self) <= 8 else f"<{len(self)} nodes>")

    def _payload(self) -> bytes:
        parts = [struct.pack("<II", len(self._slots), len(self._removed))]
        for x in self._slots:
            parts.append(b"\xff\xff\xff\xff" if x is None else _pack_str(x))
        parts.append(struct.pack(f"<{len(self._removed)}I", *self._removed))
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes) -> MementoHash:
        """Rebuild from ``to_bytes`` output; damaged or foreign data raises ValueError."""
        r = _format.Reader(_format.unpack(data, KIND_MEMENTO))
        hash_name, seed = cls._read_hash(r)
        n, k = (int(v) for v in r.unpack("II"))
        if n * 4 + k * 4 > r.remaining() or k > n:
            raise ValueError("data is damaged (slot count exceeds the data)")
        slots: list[str | None] = []
        for _ in range(n):
            (length,) = r.unpack("I")
            if length == 0xFFFFFFFF:
                slots.append(None)
            else:
                try:
                    slots.append(r.take(int(length)).decode("utf-8"))
                except UnicodeDecodeError:
                    raise ValueError("data is damaged (a name is not UTF-8)") from None
        removed = [int(b) for b in r.unpack(f"{k}I")]
        r.done()
        return _check_from_bytes(lambda: cls.from_state(slots, removed, hash=hash_name,
                                                        seed=seed))


def _rebuild_memento(slots: list[str | None], removed: list[int], hash: Any, seed: int
                     ) -> MementoHash:
    return MementoHash.from_state(slots, removed, hash=hash, seed=seed)
