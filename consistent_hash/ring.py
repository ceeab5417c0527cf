"""HashRing: the consistent-hash ring with virtual nodes (the library's default scheme)."""

from __future__ import annotations

import hashlib
import math
import struct
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._containers import as_hashes, route_hashes
from consistent_hash._containers import hash_many as _hash_many
from consistent_hash._containers import replicas as _route_replicas
from consistent_hash._containers import route as _route
from consistent_hash._ring import (
    EmptyRingError,
    _Ring,
    health_ring,
    label_positions,
    merge_sorted,
    take_names,
)
from consistent_hash._validate import (
    MAX_TOTAL_VNODES,
    MAX_VNODES,
    check_int,
    check_n,
    check_node,
    check_nulls,
    check_weight,
    make_hasher,
    node_weights,
)

__all__ = ["EmptyRingError", "HashRing", "arc_shares", "as_hashes", "vnode_count"]

_MASK64 = (1 << 64) - 1
DEFAULT_MAX_LOAD_VNODES = 1 << 24


def vnode_count(vnodes: int, weight: float) -> int:
    """Vnodes of a node: max(1, floor(vnodes * weight + 0.5)) in double precision."""
    x = vnodes * weight + 0.5
    if not x <= MAX_TOTAL_VNODES:  # also catches inf and nan
        raise ValueError(f"weight {weight!r} gives {x:.3g} vnodes at vnodes={vnodes}; a ring "
                         f"holds at most {MAX_TOTAL_VNODES} (lower the weight or vnodes)")
    return max(1, math.floor(x))


class HashRing:
    """A consistent-hash ring with virtual nodes, weights and replicas.

    Parameters
    ----------
    nodes : iterable of str, or mapping str -> weight
        The initial nodes (weight 1.0 each for an iterable).
    vnodes : int, default 160
        Virtual nodes per unit of weight; a node of weight ``w`` gets
        ``max(1, floor(vnodes * w + 0.5))`` positions.
    hash : {"xxh3", "xxh64", "murmur3", "md5"} or callable, default "xxh3"
        The hash of vnode labels and keys; a callable takes bytes and returns an int in
        ``[0, 2**64)`` (a slow path, kept for custom schemes).
    seed : int, default 0
        Seed of the hash (64-bit for xxh3 / xxh64, 32-bit for murmur3, 0 for md5).

    Every mutation builds a new immutable snapshot and swaps it in with one assignment:
    readers in other threads see the old ring or the new one, never a mix.

    Examples
    --------
    >>> ring = HashRing(["cache-a", "cache-b", "cache-c"])
    >>> ring.get("user:42") in ring
    True
    >>> len(ring), ring.nodes
    (3, ('cache-a', 'cache-b', 'cache-c'))
    """

    __slots__ = ("_core", "_state", "_vnodes", "_hash", "_hash_name", "_lock", "_down",
                 "__weakref__")

    def __init__(
        self,
        nodes: Iterable[str] | Mapping[str, float] = (),
        *,
        vnodes: int = 160,
        hash: str | Callable[[bytes], int] = "xxh3",
        seed: int = 0,
    ) -> None:
        self._vnodes = check_int(vnodes, "vnodes", 1, MAX_VNODES)
        hasher, self._hash_name = make_hasher(hash, seed)
        self._hash = hash
        self._lock = threading.Lock()
        self._down: frozenset[str] = frozenset()
        weights = node_weights(nodes)
        names = tuple(sorted(weights))
        counts = self._counts(names, weights)
        pos, own = label_positions(hasher, [n.encode("utf-8") for n in names], counts)
        self._install(_Ring(pos, own, names, hasher), {n: weights[n] for n in names})

    # -- snapshots --------------------------------------------------------------------------

    def _counts(self, names: tuple[str, ...], weights: Mapping[str, float]
                ) -> npt.NDArray[np.uint32]:
        counts = [vnode_count(self._vnodes, weights[n]) for n in names]
        if sum(counts) > MAX_TOTAL_VNODES:
            raise ValueError(f"the ring would have {sum(counts)} vnodes; at most "
                             f"{MAX_TOTAL_VNODES} are supported (lower vnodes or the weights)")
        return np.array(counts, dtype=np.uint32)

    def _install(self, core: _Ring, weights: dict[str, float]) -> None:
        # One tuple, one assignment: a reader that takes self._state sees a consistent pair.
        self._down = self._down.intersection(weights)  # a removed node is no longer down
        if self._down:
            core = health_ring(core, self._down)
        self._state = (core, weights)
        self._core = core

    def _node_positions(self, core: _Ring, name: str, weight: float, index: int
                        ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
        count = vnode_count(self._vnodes, weight)
        if len(core.positions) + count > MAX_TOTAL_VNODES:
            raise ValueError(f"weight {weight!r} would give node {name!r} {count} vnodes; the "
                             f"ring supports at most {MAX_TOTAL_VNODES} in all")
        result: tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]] = label_positions(
            core.hasher, [name.encode("utf-8")], np.array([count], dtype=np.uint32), index)
        return result

    # -- mutation ---------------------------------------------------------------------------

    def add(self, node: str, weight: float = 1.0) -> None:
        """Add a node; only keys that now belong to it move (to it).

        Raises ValueError if the node is already present.
        """
        name = check_node(node)
        w = check_weight(weight)
        with self._lock:
            core, weights = self._state
            if name in weights:
                raise ValueError(f"node {name!r} is already in the ring")
            names = core.nodes
            r = _bisect(names, name)
            new_pos, new_own = self._node_positions(core, name, w, r)
            owners = np.array(core.owners, dtype=np.int32)
            owners[owners >= r] += 1
            pos, own = merge_sorted(core.positions, owners, new_pos, new_own)
            new_weights = dict(weights)
            new_weights[name] = w
            new_names = names[:r] + (name,) + names[r:]
            self._install(_Ring(pos, own, new_names, core.hasher),
                          {n: new_weights[n] for n in new_names})

    def remove(self, node: str) -> None:
        """Remove a node; only its keys move (each to its next node clockwise).

        Raises KeyError if the node is not present.
        """
        if not isinstance(node, str):
            raise TypeError(f"node names must be str, got {type(node).__name__!r}")
        with self._lock:
            core, weights = self._state
            if node not in weights:
                raise KeyError(node)
            names = core.nodes
            r = names.index(node)
            keep = core.owners != r
            owners = core.owners[keep]
            owners = owners - (owners > r).astype(np.int32)
            new_names = names[:r] + names[r + 1 :]
            new_weights = {n: weights[n] for n in new_names}
            self._install(_Ring(core.positions[keep], owners, new_names, core.hasher),
                          new_weights)

    def set_weight(self, node: str, weight: float) -> None:
        """Change a node's weight; keys move only to or from that node.

        Raises KeyError if the node is not present.
        """
        if not isinstance(node, str):
            raise TypeError(f"node names must be str, got {type(node).__name__!r}")
        w = check_weight(weight)
        with self._lock:
            core, weights = self._state
            if node not in weights:
                raise KeyError(node)
            new_weights = dict(weights)
            new_weights[node] = w
            if vnode_count(self._vnodes, w) == vnode_count(self._vnodes, weights[node]):
                self._install(core, new_weights)
                return
            r = core.nodes.index(node)
            keep = core.owners != r
            new_pos, new_own = self._node_positions(core, node, w, r)
            pos, own = merge_sorted(core.positions[keep], core.owners[keep], new_pos, new_own)
            self._install(_Ring(pos, own, core.nodes, core.hasher), new_weights)

    # -- lookups ----------------------------------------------------------------------------

    def get(self, key: str | bytes | int) -> str:
        """The node of one key.

        Raises EmptyRingError on an empty ring, TypeError for an unsupported key type.
        """
        return self._core.get(key)

    @overload
    def get_many(self, keys: Any, *, nulls: str = ...,
                 categorical: Literal[False] = False) -> npt.NDArray[np.object_]: ...
    @overload
    def get_many(self, keys: Any, *, nulls: str = ..., categorical: Literal[True]) -> Any: ...
    @overload
    def get_many(self, keys: Any, *, nulls: str = ..., categorical: bool) -> Any: ...

    def get_many(self, keys: Any, *, nulls: str = "raise", categorical: bool = False) -> Any:
        """The node of each key, as an object array of names.

        ``keys``: a list or tuple of str / bytes / int, a NumPy array (U, S, O, T or integer
        dtype), a pyarrow Array, ChunkedArray or one-column Table, a pandas Series or
        one-column DataFrame, a polars Series or one-column DataFrame.
        ``nulls="none"`` maps a missing key (None, NaN, pandas.NA, an Arrow null) to None
        instead of raising ValueError / TypeError.
        ``categorical=True`` returns a ``pandas.Categorical`` instead (int32-sized codes into
        the node names, missing keys as NaN): 4 bytes a key rather than a pointer.
        """
        core = self._core
        idx = _route(core, keys, None, nulls=check_nulls(nulls))
        if categorical:
            return as_categorical(idx, core.nodes)
        result: npt.NDArray[np.object_] = take_names(core.nodes, idx)
        return result

    def get_indices(self, keys: Any, out: npt.NDArray[np.int32] | None = None, *,
                    nulls: str = "raise") -> npt.NDArray[np.int32]:
        """The node of each key as an int32 index into ``ring.nodes``.

        ``nulls="none"`` gives -1 for a missing key instead of raising.
        """
        core = self._core
        return _route(core, keys, out, nulls=check_nulls(nulls))

    def lookup(self, hashes: Any, out: npt.NDArray[np.int32] | None = None
               ) -> npt.NDArray[np.int32]:
        """Route keys already hashed to uint64: int32 indices into ``ring.nodes``."""
        core = self._core
        result: npt.NDArray[np.int32] = route_hashes(core, hashes, out)
        return result

    def hash(self, key: str | bytes | int) -> int:
        """The uint64 position of a key on the ring."""
        return self._core.hasher.hash(key)

    def hash_many(self, keys: Any) -> npt.NDArray[np.uint64]:
        """The uint64 position of each key."""
        return _hash_many(self._core.hasher, keys)

    def replicas(self, key: str | bytes | int, n: int) -> list[str]:
        """The first ``min(n, len(ring))`` distinct nodes clockwise from the key."""
        n = check_n(n)
        core = self._core
        core.check_nonempty()
        r = min(n, _live(core))
        i = core.position_index(core.hasher.hash(key))
        return [core.nodes[j] for j in core.replica_table(r)[i]]

    def replica_indices(self, keys: Any, n: int) -> npt.NDArray[np.int32]:
        """int32 array of shape (len(keys), min(n, len(ring))): replica node indices."""
        n = check_n(n)
        core = self._core
        core.check_nonempty()
        return _route_replicas(core, keys, min(n, _live(core)))

    def replicas_many(self, keys: Any, n: int) -> npt.NDArray[np.object_]:
        """Object array of shape (len(keys), min(n, len(ring))): replica node names."""
        core = self._core
        idx = self.replica_indices(keys, n) if core.nodes else None
        if idx is None:
            core.check_nonempty()
        result: npt.NDArray[np.object_] = core.nodes_array()[idx]
        return result

    # -- introspection ----------------------------------------------------------------------

    @property
    def nodes(self) -> tuple[str, ...]:
        """Node names, sorted (by UTF-8 bytes, which is code-point order)."""
        return self._core.nodes

    @property
    def weights(self) -> dict[str, float]:
        """A copy of the node -> weight mapping."""
        return dict(self._state[1])

    @property
    def vnodes(self) -> int:
        return self._vnodes

    @property
    def hash_name(self) -> str:
        """The hash's name: "xxh3", "xxh64", "murmur3", "md5" or "callable"."""
        return self._hash_name

    @property
    def seed(self) -> int:
        return int(self._core.hasher.seed)

    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """Read-only uint64 array of vnode positions, ascending."""
        return self._core.positions

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        """Read-only int32 array: the node index owning each position."""
        return self._core.owners

    def __len__(self) -> int:
        return len(self._core.nodes)

    def __contains__(self, node: object) -> bool:
        return node in self._state[1]

    def __iter__(self) -> Iterator[str]:
        return iter(self._core.nodes)

    def ownership(self) -> dict[str, float]:
        """The exact share of the 2**64 hash space each node owns (sums to 1)."""
        core = self._core
        return dict(zip(core.nodes, arc_shares(core.positions, core.owners, len(core.nodes)),
                        strict=True))

    def __repr__(self) -> str:
        hash_part = "" if self._hash_name == "xxh3" else f", hash={self._hash_name!r}"
        seed_part = "" if self.seed == 0 else f", seed={self.seed}"
        ws = self._state[1]
        if all(w == 1.0 for w in ws.values()):
            shown: object = list(ws)
        else:
            shown = ws
        if len(ws) > 8:
            return (f"HashRing(<{len(ws)} nodes>, vnodes={self._vnodes}{hash_part}{seed_part})")
        return f"HashRing({shown!r}, vnodes={self._vnodes}{hash_part}{seed_part})"

    # -- equality, copies, serialization ----------------------------------------------------

    def _params(self) -> tuple[object, ...]:
        return (self._hash_name if self._hash_name != "callable" else self._hash,
                self.seed, self._vnodes)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HashRing):
            return NotImplemented
        return (self._params() == other._params() and self._state[1] == other._state[1]
                and self._down == other._down)

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> HashRing:
        """An independent ring with the same nodes, weights and parameters (shares arrays)."""
        new = HashRing.__new__(HashRing)
        new._vnodes = self._vnodes
        new._hash = self._hash
        new._hash_name = self._hash_name
        new._lock = threading.Lock()
        new._down = self._down
        core, weights = self._state
        new._install(core, dict(weights))
        return new

    def __copy__(self) -> HashRing:
        return self.copy()

    # -- health -----------------------------------------------------------------------------

    def mark_down(self, node: str) -> None:
        """Mark a node down: its keys go to their next replica (the first up node clockwise),
        no other key moves, and the positions are not rebuilt.  Lookups and replicas skip
        down nodes; ``nodes``, ``positions``, ``owners`` and ``ownership()`` still describe
        the full layout.  Marking a down node again does nothing.

        Raises KeyError if the node is not in the ring.  With every node down, lookups raise
        EmptyRingError.
        """
        self._set_down(node, True)

    def mark_up(self, node: str) -> None:
        """Bring a down node back: exactly its keys return to it.  Marking an up node up
        does nothing.  Raises KeyError if the node is not in the ring."""
        self._set_down(node, False)

    @property
    def down(self) -> frozenset[str]:
        """The nodes marked down."""
        return self._down

    def _set_down(self, node: str, down: bool) -> None:
        if not isinstance(node, str):
            raise TypeError(f"node names must be str, got {type(node).__name__!r}")
        with self._lock:
            core, weights = self._state
            if node not in weights:
                raise KeyError(node)
            if (node in self._down) == down:
                return
            old = self._down
            self._down = old | {node} if down else old - {node}
            try:
                if not self._down:  # all up again: a plain snapshot of the same arrays
                    core = _Ring(core.positions, core.owners, core.nodes, core.hasher)
                self._install(core, weights)
            except BaseException:
                self._down = old
                raise

    def __deepcopy__(self, memo: dict[int, object]) -> HashRing:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (dict(self._state[1]), self._vnodes, self._hash, self.seed,
                           sorted(self._down)))

    def _payload(self) -> bytes:
        if self._hash_name == "callable":
            raise ValueError("a ring with a custom hash callable cannot be serialized or "
                             "fingerprinted: its hash function is not data")
        name = self._hash_name.encode("ascii")
        parts = [struct.pack("<B", len(name)), name,
                 struct.pack("<QII", self.seed, self._vnodes, len(self._state[1]))]
        for node, w in self._state[1].items():
            b = node.encode("utf-8")
            parts.append(struct.pack("<I", len(b)))
            parts.append(b)
            parts.append(struct.pack("<d", w))
        return b"".join(parts)

    def to_bytes(self) -> bytes:
        """Serialize the ring's parameters and nodes (a versioned, checksummed format)."""
        return _format.pack(_format.KIND_HASHRING, self._payload())

    @classmethod
    def from_bytes(cls, data: bytes, *, max_vnodes: int = DEFAULT_MAX_LOAD_VNODES
                   ) -> HashRing:
        """Rebuild a ring from ``to_bytes`` output; damaged or foreign data raises ValueError.

        Data from elsewhere cannot make this allocate without bound: a layout of more than
        ``max_vnodes`` positions in all (default 2**24, about 200 MB) is refused before
        anything is built."""
        r = _format.Reader(_format.unpack(data, _format.KIND_HASHRING))
        (nlen,) = r.unpack("B")
        try:
            hash_name = r.take(int(nlen)).decode("ascii")
        except UnicodeDecodeError:
            raise ValueError("data is damaged (hash name)") from None
        seed, vnodes, count = r.unpack("QII")
        if int(count) * 12 > r.remaining():  # each node takes >= 12 bytes: check before looping
            raise ValueError("data is damaged (node count exceeds the data)")
        weights: dict[str, float] = {}
        for _ in range(int(count)):
            (blen,) = r.unpack("I")
            try:
                name = r.take(int(blen)).decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError("data is damaged (node name is not UTF-8)") from None
            (w,) = r.unpack("d")
            weights[name] = float(w)
        r.done()
        if len(weights) != count:
            raise ValueError("data is damaged (duplicate node names)")
        check_budget(weights, int(vnodes), max_vnodes)
        try:
            return cls(weights, vnodes=int(vnodes), hash=hash_name, seed=int(seed))
        except (TypeError, ValueError) as e:
            raise ValueError(f"data is damaged ({e})") from None

    def fingerprint(self) -> str:
        """A sha256 hex digest of the layout's defining data: equal rings, equal fingerprints."""
        return hashlib.sha256(b"consistent_hash.HashRing.v1\x00" + self._payload()).hexdigest()


def check_budget(weights: Mapping[str, Any], vnodes: Any, max_vnodes: int) -> None:
    """Refuse, before building anything, a layout from untrusted data that is too large."""
    total = 0.0
    for w in weights.values():
        if not isinstance(w, (int, float)) or isinstance(w, bool) or not math.isfinite(w):
            return  # the constructor raises the precise error
        total += max(1.0, vnodes * w + 0.5) if isinstance(vnodes, int) else 0.0
    if total > max_vnodes:
        raise ValueError(f"the layout would have about {total:.3g} vnodes, more than "
                         f"max_vnodes={max_vnodes}; pass a larger max_vnodes if you trust it")


def as_categorical(indices: npt.NDArray[np.int32], nodes: tuple[str, ...]) -> Any:
    """A pandas Categorical from node indices (-1 -> NaN)."""
    try:  # pandas is untyped: see the note on its import in _containers.py
        import pandas as pd  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise ImportError("categorical=True needs pandas: pip install pandas") from None
    return pd.Categorical.from_codes(indices, categories=pd.Index(nodes, dtype=object),
                                     validate=False)


def _rebuild(weights: dict[str, float], vnodes: int, hash: Any, seed: int,
             down: Iterable[str] = ()) -> HashRing:
    ring = HashRing(weights, vnodes=vnodes, hash=hash, seed=seed)
    for node in down:
        ring.mark_down(node)
    return ring


def _live(core: _Ring) -> int:
    """Nodes a lookup can reach: all of them, less any marked down."""
    return int(getattr(core, "live", len(core.nodes)))


def _bisect(names: tuple[str, ...], name: str) -> int:
    lo, hi = 0, len(names)
    while lo < hi:
        mid = (lo + hi) // 2
        if names[mid] < name:
            lo = mid + 1
        else:
            hi = mid
    return lo


def arc_shares(positions: npt.NDArray[np.uint64], owners: npt.NDArray[np.int32], n: int
               ) -> list[float]:
    """Exact share of the hash space per node index, correctly rounded to a float.

    Position i owns the arc (p[i-1], p[i]]; the first position also owns the wrap-around arc
    (p[-1], 2**64) + [0, p[0]].  Arc lengths are summed per node exactly, in two 32-bit
    halves (each half-sum fits in 64 bits), and divided by 2**64 as Python integers."""
    V = len(positions)
    if V == 0:
        return [0.0] * n
    arcs = np.empty(V, dtype=np.uint64)
    arcs[1:] = np.diff(positions)
    with np.errstate(over="ignore"):
        arcs[0] = positions[0] - positions[-1]  # the wrap arc, mod 2**64
    order = np.argsort(owners, kind="stable")
    sorted_owners = owners[order]
    starts = np.flatnonzero(np.r_[True, sorted_owners[1:] != sorted_owners[:-1]])
    lo = np.add.reduceat(arcs[order] & np.uint64(0xFFFFFFFF), starts)
    hi = np.add.reduceat(arcs[order] >> np.uint64(32), starts)
    totals = [0] * n
    for node, h, low in zip(sorted_owners[starts].tolist(), hi.tolist(), lo.tolist(),
                            strict=True):
        totals[node] = (h << 32) + low
    if int(arcs[0]) == 0:  # every position equal: the first owner holds the whole circle
        totals[int(owners[0])] += 1 << 64
    return [t / (1 << 64) for t in totals]
