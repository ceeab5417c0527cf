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
- every new layout snapshot through ``_set_core(core)``, which keeps the nodes marked down
  down (see "down marks" below);
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
from consistent_hash._core import (
    EmptyRingError,
    _Hasher,
    _Remap,
    _Ring,
    _RouterBase,
    health_ring,
    remapped_ring,
    take_names,
)
from consistent_hash._hashes import HashArg, make_hasher
from consistent_hash._validate import check_n, check_name, check_nulls

__all__ = ["REPLICA_ROUTERS", "EmptyRingError", "HashedRouter", "Key", "Router",
           "as_categorical", "weights_repr"]

_R = TypeVar("_R", bound="Router")

Key = str | bytes | bytearray | memoryview | int

# Named in the error a router without replicas gives.
REPLICA_ROUTERS = "HashRing, Rendezvous, KetamaRing, TokenRing or NginxUpstream"


class Router(_RouterBase):
    """The lookup surface every router shares (not instantiated by itself)."""

    # _core (the routing snapshot: every lookup and every consumer reads this one) is
    # _RouterBase's, in C, where get / replicas / get_many / get_indices read it.
    __slots__ = ("_full", "_lock", "__weakref__")

    _kind: ClassVar[int] = 0
    _replicas: ClassVar[bool] = False
    _hash_shift: ClassVar[int] = 0
    # A down node's keys go on along the ring to the first up owner (the layout's positions
    # kept, one O(V) pass): for rings whose removal of a node only drops its positions.
    # Otherwise the layout is rebuilt without the down nodes by the router's own removal.
    _walk_on: ClassVar[bool] = False
    # The router's payload carries its down marks itself (to_bytes adds no block for them).
    _down_in_payload: ClassVar[bool] = False

    _core: Any  # the routing snapshot: every lookup and every consumer reads this one
    _full: Any  # the layout's snapshot with every node up (mutations start from it)
    # True: the router checks single keys itself (_check_key), and every batch (_check_keys)
    _key_check: ClassVar[bool] = False

    _lock: threading.Lock | threading.RLock  # an RLock where edits are deferred (RingRouter)

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
    # get, get_many, get_indices, replicas and lookup are the compiled base's (_RouterBase,
    # src/_fastcalls.pxi): it serves a plain key, a small list or tuple of them, or a small
    # uint64 array of hashes, without a Python frame, and hands every other call to the _slow
    # implementation below.

    if TYPE_CHECKING:
        def get(self, key: Key, /) -> str:
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

        def lookup(self, hashes: Any, out: npt.NDArray[np.int32] | None = None, *,
                   threads: int | None = None) -> npt.NDArray[np.int32]:
            """Route keys already hashed (as ``hash_many`` gives them): int32 indices into
            ``nodes``; ``threads`` as in ``get_many``."""

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

    def _lookup_slow(self, hashes: Any, out: npt.NDArray[np.int32] | None = None, *,
                     threads: int | None = None) -> npt.NDArray[np.int32]:
        """lookup for every input and option."""
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

    # -- down marks: the routing state beside the layout --------------------------------------

    def _set_core(self, core: Any, down: frozenset[str] | None = None) -> None:
        """Install a new layout snapshot (every node up in it): the nodes marked down stay
        down (``down``, by default the routing snapshot's), a node no longer in the layout is
        no longer down.  Raises before anything is assigned, so a mutation that fails here
        leaves the router as it was."""
        if down is None:
            old = self._core
            down = frozenset() if old is None else old.down
        if down:
            down = frozenset(n for n in down if n in core.nodes)
        routed = self._routed(core, down) if down else core
        self._full = core
        self._core = routed

    def _layout_core(self) -> Any:
        """The layout's snapshot with every node up (deferred edits applied)."""
        core = self._core
        full = getattr(self, "_full", None)
        return core if full is None else full

    def _materialize(self) -> Any:
        """The routing snapshot, once the deferred edits (``_deferred``) are applied: the
        first read after them lands here (from ``_core``, in C or in Python)."""
        with self._lock:  # an RLock: a mutation holding it may read _core too
            if self._snap is None and self._deferred is not None:
                self._apply_deferred()
            return self._snap

    def _apply_deferred(self) -> None:
        """Apply ``_deferred`` (the lock held): only a router that defers edits has any."""
        raise NotImplementedError  # pragma: no cover

    def _routed(self, full: Any, down: frozenset[str]) -> Any:
        """The routing snapshot of layout ``full`` with ``down`` marked down: every key routed
        exactly as with those nodes removed, their indices kept."""
        if self._walk_on and isinstance(full, _Ring):
            return health_ring(full, down)
        if len(down) == len(full.nodes):
            if isinstance(full, _Ring):
                return health_ring(full, down)
            return _Remap(full, full.nodes, down, dead=True)
        inner = self._without(full, down)._core
        if isinstance(inner, _Ring):
            return remapped_ring(inner, full.nodes, down)
        return _Remap(inner, full.nodes, down)

    def _without(self: _R, full: Any, down: frozenset[str]) -> _R:
        """A private copy of this router over layout ``full``, the ``down`` nodes removed by
        its own ``remove`` (in name order, so the result depends only on the set)."""
        tmp = self.copy()
        tmp._full = tmp._core = full
        for node in sorted(down):
            try:
                tmp._remove_down(node)
            except ValueError as e:
                raise ValueError(f"{type(self).__name__} cannot route around {node!r}: {e}"
                                 ) from None
        return tmp

    def _remove_down(self, node: str) -> None:
        """Remove ``node`` as a down mark needs it (the router's own ``remove``)."""
        remove = getattr(self, "remove", None)
        if remove is None:
            raise TypeError(f"{type(self).__name__} has no node removal, so it cannot mark a "
                            "node down")
        remove(node)

    @property
    def down(self) -> frozenset[str]:
        """The nodes marked down."""
        return self._core.down  # type: ignore[no-any-return]

    def mark_down(self, node: str) -> None:
        """Mark a node down: every key routes as if the node were removed (on a ring: its keys
        go to their next replica, the first up node clockwise; no other key moves), while the
        node keeps its place in ``nodes`` and its weight.  Marking a down node again does
        nothing.  ``movement``, ``migration_plan``, ``balance``, pickle, ``to_bytes`` and the
        fingerprint all see the marks.

        Raises KeyError if the node is absent, ValueError where the algorithm cannot route
        around that node (JumpHash: only its last bucket).  With every node down, lookups
        raise EmptyRingError."""
        self._set_down(node, True)

    def mark_up(self, node: str) -> None:
        """Bring a down node back: routing is again as if it had never been down.  Marking an
        up node up does nothing.  Raises KeyError if the node is absent."""
        self._set_down(node, False)

    def _set_down(self, node: str, down: bool) -> None:
        check_name(node)
        with self._lock:
            core = self._core
            if node not in core.nodes:
                raise KeyError(node)
            if (node in core.down) == down:
                return
            new = core.down | {node} if down else core.down - {node}
            full = self._layout_core()
            self._core = self._routed(full, new) if new else full

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
        return bool(self._state() == other._state() and self.down == other.down)

    __hash__ = None  # type: ignore[assignment]

    def copy(self: _R) -> _R:
        """An independent router with the same layout (it shares the immutable snapshot)."""
        new = type(self).__new__(type(self))
        new._core = self._core
        for cls in type(self).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if slot not in ("__weakref__", "__dict__") and hasattr(self, slot):
                    value = getattr(self, slot)
                    setattr(new, slot, value.copy() if isinstance(value, (dict, list)) else value)
        if hasattr(self, "__dict__"):  # a subclass defined outside the library, without slots
            new.__dict__.update({k: v.copy() if isinstance(v, (dict, list)) else v
                                 for k, v in self.__dict__.items()})
        new._lock = threading.RLock()
        return new

    def __copy__(self: _R) -> _R:
        return self.copy()

    def __deepcopy__(self: _R, memo: dict[int, object]) -> _R:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        down = self.down
        if down:
            return (_rebuild, (type(self), self._state(), sorted(down)))
        return (_rebuild, (type(self), self._state()))

    def _down_marks(self) -> list[str]:
        """The down marks to_bytes and the fingerprint carry beside the payload."""
        return [] if self._down_in_payload else sorted(self.down)

    def to_bytes(self) -> bytes:
        """Serialize the routing state: the layout's defining data and the nodes marked down
        (a versioned, checksummed format; a router with nothing down writes version 1)."""
        return _format.pack(self._kind, self._payload(), self._down_marks())

    @classmethod
    def from_bytes(cls: type[_R], data: bytes, **options: Any) -> _R:
        """Rebuild from ``to_bytes`` output; damaged or foreign data raises ValueError."""
        payload, down = _format.unpack_state(data, cls._kind)
        r = _format.Reader(payload)
        try:
            router = cls._from_payload(r, **options)
            r.done()
            for node in down:
                if node not in router.nodes:
                    raise _format.FormatError(f"data is damaged (down node {node!r} is not "
                                              "in the layout)")
                router.mark_down(node)
        except _format.FormatError:
            raise
        except (TypeError, ValueError, KeyError, OverflowError) as e:
            raise _format.FormatError(f"data is damaged ({e})") from None
        return router

    def fingerprint(self) -> str:
        """A sha256 hex digest of the layout's defining data: equal routers, equal
        fingerprints."""
        tag = f"consistent_hash.{self._fingerprint_name()}.v1\x00".encode("ascii")
        down = self._down_marks()
        extra = _format.pack_down(down) if down else b""
        return hashlib.sha256(tag + self._payload() + extra).hexdigest()

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
        self._lock = threading.RLock()
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


def _rebuild(cls: type[_R], state: tuple[Any, ...], down: Any = ()) -> _R:
    router = cls._from_state(state)
    for node in down:
        router.mark_down(node)
    return router


def as_categorical(indices: npt.NDArray[np.int32], nodes: tuple[str, ...]) -> Any:
    """A pandas Categorical from node indices (-1 -> NaN)."""
    try:  # pandas is untyped: see the note on its import in _containers.py
        import pandas as pd  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise ImportError("categorical=True needs pandas: pip install pandas") from None
    return pd.Categorical.from_codes(indices, categories=pd.Index(nodes, dtype=object),
                                     validate=False)
