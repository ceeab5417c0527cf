"""The router protocol, written once.

A router is a node list plus a kernel over immutable arrays: its *snapshot*, an instance of one
of the compiled core's router classes (``consistent_hash._ring``), held in ``self._core`` and
replaced with one assignment on every change, so a reader in another thread sees the old
layout or the new one, never a mix.  Everything a user calls on a router is written here over
that snapshot; a router class supplies only:

- its snapshot (built in its constructor and mutations, installed by assigning ``_core``);
- ``_state()``: the data that defines its mapping, from which ``_from_state`` rebuilds it
  (``==``, pickling and ``copy`` use it);
- ``_payload()`` and ``_from_payload(reader)``: its canonical bytes (``to_bytes``,
  ``from_bytes``, ``fingerprint``);
- ``_repr_args()``: what ``repr`` shows between the parentheses;
- class attributes: ``_kind`` (the envelope kind of ``to_bytes``), ``_replicas`` (whether the
  algorithm orders distinct nodes per key), ``_hash_shift`` (the bits the core's hashes carry
  below the router's own key hash: 32 for the 32-bit ketama hashes).

The batch calls hand keys to ``consistent_hash._containers``, the one module that knows key
containers, which feeds the compiled keys pipeline.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, overload

import numpy as np
import numpy.typing as npt

from consistent_hash import _containers, _format, _threads
from consistent_hash._hashes import HashArg, make_hasher
from consistent_hash._ring import EmptyRingError, _Hasher, _RouterBase, take_names
from consistent_hash._validate import check_n, check_nulls

__all__ = ["REPLICA_ROUTERS", "EmptyRingError", "HashedRouter", "Key", "Router",
           "as_categorical", "weights_repr"]

_R = TypeVar("_R", bound="Router")

Key = str | bytes | bytearray | memoryview | int

# Named in the error a router without replicas gives.
REPLICA_ROUTERS = "HashRing, Rendezvous, KetamaRing or TokenRing"


class Router(_RouterBase):
    """The lookup surface every router shares (not instantiated by itself)."""

    __slots__ = ("_lock", "__weakref__")

    _kind: ClassVar[int] = 0
    _replicas: ClassVar[bool] = False
    _hash_shift: ClassVar[int] = 0
    # True: the router checks single keys itself (_check_key), and every batch (_check_keys)
    _key_check: ClassVar[bool] = False

    _lock: threading.Lock

    # -- what each router supplies ------------------------------------------------------------

    def _state(self) -> tuple[Any, ...]:
        raise NotImplementedError

    @classmethod
    def _from_state(cls: type[_R], state: tuple[Any, ...]) -> _R:
        raise NotImplementedError

    def _payload(self) -> bytes:
        raise NotImplementedError

    @classmethod
    def _from_payload(cls: type[_R], r: _format.Reader, **options: Any) -> _R:
        raise NotImplementedError

    def _repr_args(self) -> str:
        raise NotImplementedError

    def _check_keys(self, keys: Any) -> None:
        """A router whose keys are narrower than the pipeline's refuses the rest here (and
        sets ``_key_check``)."""

    def _check_key(self, key: Any) -> None:
        """The same for one key (``get``): called for every key but a str or bytes when the
        router sets ``_key_check``."""

    # -- lookups ------------------------------------------------------------------------------
    # get, get_many, get_indices and replicas are the compiled base's (_RouterBase,
    # src/_fastcalls.pxi): it serves a plain key, or a small list or tuple of them, without a
    # Python frame, and hands every other call to the _slow implementation below.

    if TYPE_CHECKING:
        def get(self, key: Key) -> str:
            """The node of one key.

            Raises EmptyRingError when there are no nodes, TypeError for an unsupported key
            type.
            """

        @overload
        def get_many(self, keys: Any, *, nulls: str = ..., categorical: Literal[False] = False,
                     threads: int | None = ...) -> npt.NDArray[np.object_]: ...
        @overload
        def get_many(self, keys: Any, *, nulls: str = ..., categorical: Literal[True],
                     threads: int | None = ...) -> Any: ...
        @overload
        def get_many(self, keys: Any, *, nulls: str = ..., categorical: bool,
                     threads: int | None = ...) -> Any: ...

        def get_many(self, keys: Any, *, nulls: str = "raise", categorical: bool = False,
                     threads: int | None = None) -> Any:
            """The node of each key, as an object array of names.

            ``keys``: a list or tuple of str / bytes / int, a NumPy array (U, S, O, T or
            integer dtype), a pyarrow Array, ChunkedArray or one-column Table, a pandas
            Series, Index or one-column DataFrame, a polars Series or one-column DataFrame.
            ``nulls="none"`` maps a missing key (None, NaN, pandas.NA, an Arrow null) to None
            instead of raising.  ``categorical=True`` returns a ``pandas.Categorical``
            instead (int32-sized codes into the node names, missing keys as NaN).
            ``threads``: how many threads a large batch is split over (None: the process
            default, ``consistent_hash.get_threads()``; 1: the calling thread only); the
            result is the same for every thread count.  Every batch call takes it.
            """

        def get_indices(self, keys: Any, out: npt.NDArray[np.int32] | None = None, *,
                        nulls: str = "raise", threads: int | None = None
                        ) -> npt.NDArray[np.int32]:
            """The node of each key as an int32 index into ``nodes`` (-1 for a missing key
            with ``nulls="none"``); ``out`` receives them when given (an int32 array of the
            keys' length); ``threads`` as in ``get_many``."""

        def replicas(self, key: Key, n: int) -> list[str]:
            """The first ``min(n, len(nodes))`` distinct nodes for the key, in the
            algorithm's order (the first is ``get(key)``)."""

    def _get_many_slow(self, keys: Any, *, nulls: str = "raise", categorical: bool = False,
                       threads: int | None = None) -> Any:
        """get_many for every container and option."""
        core = self._core
        self._check_keys(keys)
        idx = _containers.route(core, keys, None, nulls=check_nulls(nulls),
                                threads=_threads.resolve(threads))
        if categorical:
            return as_categorical(idx, core.nodes)
        names: npt.NDArray[np.object_] = take_names(core.nodes, idx)
        return names

    def _get_indices_slow(self, keys: Any, out: npt.NDArray[np.int32] | None = None, *,
                          nulls: str = "raise", threads: int | None = None
                          ) -> npt.NDArray[np.int32]:
        """get_indices for every container and option."""
        n = _threads.resolve(threads)
        self._check_keys(keys)
        return _containers.route(self._core, keys, out, nulls=check_nulls(nulls), threads=n)

    def lookup(self, hashes: Any, out: npt.NDArray[np.int32] | None = None, *,
               threads: int | None = None) -> npt.NDArray[np.int32]:
        """Route keys already hashed (as ``hash_many`` gives them): int32 indices into
        ``nodes``; ``threads`` as in ``get_many``."""
        n = _threads.resolve(threads)
        return _containers.route_hashes(self._core, self._core_hashes(hashes), out, threads=n)

    def hash(self, key: Key) -> int:
        """The value a key is routed by (``lookup([hash(k)])`` routes it)."""
        self._check_keys([key])
        return int(self._core.hash(key)) >> self._hash_shift

    def hash_many(self, keys: Any, *, threads: int | None = None) -> npt.NDArray[np.uint64]:
        """The value each key is routed by: ``lookup(hash_many(keys)) == get_indices(keys)``;
        ``threads`` as in ``get_many``."""
        n = _threads.resolve(threads)
        self._check_keys(keys)
        h = _containers.hash_many(self._core.hasher, keys, threads=n)
        if self._hash_shift:
            h >>= np.uint64(self._hash_shift)
        return h

    def _core_hashes(self, hashes: Any) -> npt.NDArray[np.uint64]:
        h = _containers.as_hashes(hashes)
        if self._hash_shift:
            bits = 64 - self._hash_shift
            if h.size and int(h.max()) >> bits:
                raise ValueError(f"{type(self).__name__} key hashes are {bits}-bit: hashes "
                                 f"must be below 2**{bits}")
            h = h << np.uint64(self._hash_shift)
        return h

    # -- replicas -----------------------------------------------------------------------------

    def _replica_count(self, n: int) -> tuple[Any, int]:
        if not self._replicas:
            raise TypeError(f"{type(self).__name__} does not order distinct nodes per key, so "
                            f"it has no replicas: use {REPLICA_ROUTERS}")
        n = check_n(n)
        core = self._core
        return core, min(n, int(core.live))

    def _replicas_slow(self, key: Key, n: int) -> list[str]:
        """replicas with every check and error."""
        core, r = self._replica_count(n)
        self._check_keys([key])
        core.check_nonempty()
        return [core.nodes[i] for i in core.replica_row(key, r)]

    def replica_indices(self, keys: Any, n: int, *, nulls: str = "raise",
                        threads: int | None = None) -> npt.NDArray[np.int32]:
        """int32 array of shape (len(keys), min(n, len(nodes))): replica node indices (a row
        of -1 for a missing key with ``nulls="none"``); ``threads`` as in ``get_many``."""
        t = _threads.resolve(threads)
        core, r = self._replica_count(n)
        self._check_keys(keys)
        return _containers.replicas(core, keys, r, nulls=check_nulls(nulls), threads=t)

    def replicas_many(self, keys: Any, n: int, *, nulls: str = "raise",
                      threads: int | None = None) -> npt.NDArray[np.object_]:
        """Object array of shape (len(keys), min(n, len(nodes))): replica node names (None
        for a missing key with ``nulls="none"``); ``threads`` as in ``get_many``."""
        core = self._core
        idx = self.replica_indices(keys, n, nulls=nulls, threads=threads)
        names: npt.NDArray[np.object_] = core.nodes_array()[idx]
        return names

    # -- introspection ------------------------------------------------------------------------

    @property
    def nodes(self) -> tuple[str, ...]:
        """The node names; ``get_indices`` returns indices into this tuple."""
        nodes: tuple[str, ...] = self._core.nodes
        return nodes

    def __len__(self) -> int:
        return len(self._core.nodes)

    def __contains__(self, node: object) -> bool:
        return isinstance(node, str) and node in self._core.nodes

    def __iter__(self) -> Iterator[str]:
        return iter(self._core.nodes)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    # -- equality, copies, serialization ------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Router)
        return bool(self._state() == other._state())

    __hash__ = None  # type: ignore[assignment]

    def copy(self: _R) -> _R:
        """An independent router with the same layout (it shares the immutable snapshot)."""
        new = type(self).__new__(type(self))
        new._core = self._core
        for cls in type(self).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if slot != "__weakref__" and hasattr(self, slot):
                    value = getattr(self, slot)
                    setattr(new, slot, value.copy() if isinstance(value, (dict, list)) else value)
        new._lock = threading.Lock()
        return new

    def __copy__(self: _R) -> _R:
        return self.copy()

    def __deepcopy__(self: _R, memo: dict[int, object]) -> _R:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self._state()))

    def to_bytes(self) -> bytes:
        """Serialize the layout's defining data (a versioned, checksummed format)."""
        return _format.pack(self._kind, self._payload())

    @classmethod
    def from_bytes(cls: type[_R], data: bytes, **options: Any) -> _R:
        """Rebuild from ``to_bytes`` output; damaged or foreign data raises ValueError."""
        r = _format.Reader(_format.unpack(data, cls._kind))
        try:
            router = cls._from_payload(r, **options)
        except _format.FormatError:
            raise
        except (TypeError, ValueError, KeyError, OverflowError) as e:
            raise _format.FormatError(f"data is damaged ({e})") from None
        r.done()
        return router

    def fingerprint(self) -> str:
        """A sha256 hex digest of the layout's defining data: equal routers, equal
        fingerprints."""
        tag = f"consistent_hash.{self._fingerprint_name()}.v1\x00".encode("ascii")
        return hashlib.sha256(tag + self._payload()).hexdigest()

    @classmethod
    def _fingerprint_name(cls) -> str:
        for c in cls.__mro__:
            if c.__module__.startswith("consistent_hash"):
                return c.__name__
        return cls.__name__  # pragma: no cover


class HashedRouter(Router):
    """A router whose keys go through a public key hash (``hash=``, ``seed=``)."""

    __slots__ = ("_hash", "_hash_name")

    _hash: HashArg
    _hash_name: str

    def _init_hasher(self, hash: HashArg, seed: int) -> _Hasher:
        hasher, self._hash_name = make_hasher(hash, seed)
        self._hash = hash
        self._lock = threading.Lock()
        return hasher

    @property
    def hash_name(self) -> str:
        """The hash's name: "xxh3", "xxh64", "murmur3", "md5" or "callable"."""
        return self._hash_name

    @property
    def seed(self) -> int:
        return int(self._core.hasher.seed)

    def _hash_param(self) -> HashArg:
        """The hash= argument that rebuilds this router: the name, or the callable."""
        return self._hash_name if self._hash_name != "callable" else self._hash

    def _hash_payload(self) -> bytes:
        if self._hash_name == "callable":
            raise ValueError(f"a {type(self).__name__} with a custom hash callable cannot be "
                             "serialized or fingerprinted: its hash function is not data")
        return _format.pack_hash(self._hash_name, self.seed)

    def _hash_repr(self) -> str:
        hash_part = "" if self._hash_name == "xxh3" else f", hash={self._hash_name!r}"
        return hash_part + ("" if self.seed == 0 else f", seed={self.seed}")


def weights_repr(weights: dict[str, float]) -> str:
    """How a repr shows a node set: the names when every weight is 1, else the mapping, and
    only a count past 8 nodes."""
    if len(weights) > 8:
        return f"<{len(weights)} nodes>"
    return repr(list(weights)) if all(w == 1.0 for w in weights.values()) else repr(weights)


def _rebuild(cls: type[_R], state: tuple[Any, ...]) -> _R:
    return cls._from_state(state)


def as_categorical(indices: npt.NDArray[np.int32], nodes: tuple[str, ...]) -> Any:
    """A pandas Categorical from node indices (-1 -> NaN)."""
    try:  # pandas is untyped: see the note on its import in _containers.py
        import pandas as pd  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise ImportError("categorical=True needs pandas: pip install pandas") from None
    return pd.Categorical.from_codes(indices, categories=pd.Index(nodes, dtype=object),
                                     validate=False)
