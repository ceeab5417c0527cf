"""Cassandra: Murmur3Partitioner tokens and token rings.

``murmur3_token(key)`` is the token Cassandra's ``Murmur3Partitioner`` gives a partition key:
the first 64 bits (h1) of MurmurHash3_x64_128 with seed 0, as a signed int64, where the 1-15
byte tail is read as **sign-extended** Java bytes (so tokens differ from textbook MurmurHash3
whenever a tail byte is >= 0x80).  The server adds two rules: the empty key is
``Long.MIN_VALUE`` (the minimum token) and a hash equal to ``Long.MIN_VALUE`` becomes
``Long.MAX_VALUE``.  The Python driver's ``cassandra.murmur3.murmur3`` applies neither rule
(the empty key gives 0); its ``Murmur3Token.from_key`` applies only the second.  We follow the
server by default; ``raw=True`` gives the driver's ``murmur3`` value.  CQL does not allow an
empty partition key, so the rules differ only on values no table can hold and on one hash
value in 2**64.

Keys are the partition key's *serialized* bytes: str is taken as UTF-8 (a ``text`` key);
other types must be serialized first (a ``bigint`` is ``v.to_bytes(8, "big", signed=True)``),
so ints are refused rather than silently hashed as decimal text.

``TokenRing`` routes keys as a Cassandra ring does: a node owns the range (previous token,
its token], replicas (SimpleStrategy) are the next distinct nodes clockwise, and a joining
node can be given tokens that split the largest ranges.
"""

from __future__ import annotations

import heapq
import struct
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _containers, _format
from consistent_hash._core import first_foreign, is_null
from consistent_hash._hashes import compat_hasher
from consistent_hash._ringbase import RingLayout, build_ring
from consistent_hash._validate import check_int, check_n, check_name

__all__ = ["MAX_TOKEN", "MIN_TOKEN", "TokenRing", "murmur3_token", "murmur3_tokens"]

MIN_TOKEN = -(1 << 63)
MAX_TOKEN = (1 << 63) - 1
_FLIP: np.uint64 = np.uint64(1 << 63)
_SERVER = compat_hasher("cassandra")
_RAW = compat_hasher("cassandra_raw")
KIND_TOKENRING = _format.KINDS["TokenRing"]
# A partition key: its serialized bytes (any bytes-like object) or a text key (str).
TextKey = str | bytes | bytearray | memoryview


def _check_key(key: Any, pos: int = -1) -> None:
    if isinstance(key, (int, np.integer)) or not isinstance(key, (str, bytes, bytearray,
                                                                   memoryview)):
        where = f" at position {pos}" if pos >= 0 else ""
        raise TypeError(f"partition keys must be bytes (the serialized key) or str (a text key), "
                        f"got {type(key).__name__!r}{where}; serialize other types first, e.g. "
                        "v.to_bytes(8, 'big', signed=True) for a bigint")


def _check_keys(keys: Any) -> None:
    """Refuse int keys in any container; a missing key is left to the nulls= policy."""
    if isinstance(keys, (list, tuple)):
        i = first_foreign(keys, False)
        if i >= 0:
            for j in range(i, len(keys)):
                k = keys[j]
                if type(k) is not str and not is_null(k):
                    _check_key(k, j)
    elif isinstance(keys, np.ndarray) and keys.dtype == object and keys.ndim == 1:
        _check_keys(keys.tolist())
    elif _integer_container(keys):
        raise TypeError("partition keys must be bytes or str, got integer keys "
                        f"({_dtype_name(keys)}); serialize them first (e.g. a bigint key as 8 "
                        "big-endian bytes)")


def _dtype_name(keys: Any) -> str:
    return str(getattr(keys, "dtype", None) or getattr(keys, "type", type(keys).__name__))


def _integer_container(keys: Any) -> bool:
    """An array, Series or Arrow array of integers (whatever library it comes from)."""
    dtype = getattr(keys, "dtype", None)
    if dtype is not None:
        is_integer = getattr(dtype, "is_integer", None)  # polars
        if callable(is_integer):
            return bool(is_integer())
        if getattr(dtype, "kind", None) in ("i", "u"):  # NumPy and pandas, nullable included
            return True
        categories = getattr(dtype, "categories", None)  # a pandas categorical of integers
        return categories is not None and getattr(categories.dtype, "kind", None) in ("i", "u")
    arrow_type = getattr(keys, "type", None)  # pyarrow Array / ChunkedArray
    if arrow_type is not None:
        value_type = getattr(arrow_type, "value_type", arrow_type)  # dictionary values
        return str(value_type).startswith(("int", "uint"))
    return False


def _signed(u: int) -> int:
    return u - (1 << 64) if u >= (1 << 63) else u


def murmur3_token(key: TextKey, *, raw: bool = False) -> int:
    """The Murmur3Partitioner token of a partition key (signed 64-bit).

    ``raw=True``: the value of the Python driver's ``cassandra.murmur3.murmur3`` (no empty-key
    or ``Long.MIN_VALUE`` rule).

    >>> murmur3_token(b"123"), murmur3_token(b"")
    (-7468325962851647638, -9223372036854775808)
    """
    _check_key(key)
    return _signed(int((_RAW if raw else _SERVER).hash(key)) ^ (1 << 63))


def murmur3_tokens(keys: Any, *, raw: bool = False) -> npt.NDArray[np.int64]:
    """The token of every key as an int64 array (any container HashRing accepts)."""
    _check_keys(keys)
    u = _containers.hash_many(_RAW if raw else _SERVER, keys)
    return (u ^ _FLIP).view(np.int64)


def _token(t: object, what: str = "token") -> int:
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(t).__name__!r}")
    t = int(t)
    if not MIN_TOKEN <= t <= MAX_TOKEN:
        raise ValueError(f"{what} must be a signed 64-bit integer, got {t}")
    return t


class TokenRing(RingLayout):
    """A Cassandra token ring: each node owns (previous token, its token].

    Parameters
    ----------
    tokens : mapping node -> iterable of int
        Each node's tokens (signed 64-bit, as ``nodetool ring`` / ``system.peers`` list them).

    Examples
    --------
    >>> ring = TokenRing.from_tokens({"a": [-100, 5000], "b": [0], "c": [9000]})
    >>> ring.owner_of_token(-100), ring.owner_of_token(-99), ring.owner_of_token(9001)
    ('a', 'b', 'a')
    >>> ring.replicas_of_token(1, 2)
    ['a', 'c']
    """

    __slots__ = ("_tokens",)
    _kind = KIND_TOKENRING  # a ring (RingLayout): a down node's ranges go to their next
    # replica, the tokens stay

    def __init__(self, tokens: Mapping[str, Iterable[int]] | None = None) -> None:
        self._lock = threading.Lock()
        self._install(self._normalise(tokens or {}))

    @classmethod
    def from_tokens(cls, tokens: Mapping[str, Iterable[int]]) -> TokenRing:
        return cls(tokens)

    @staticmethod
    def _normalise(tokens: Mapping[str, Iterable[int]]) -> dict[str, list[int]]:
        if not isinstance(tokens, Mapping):
            raise TypeError("tokens must be a mapping node -> iterable of tokens, got "
                            f"{type(tokens).__name__!r}")
        out: dict[str, list[int]] = {}
        seen: dict[int, str] = {}
        for node, ts in tokens.items():
            check_name(node)
            if isinstance(ts, (int, np.integer)):
                ts = [ts]  # type: ignore[list-item]  # one bare token; np.integer is not int
            lst = sorted({_token(t, f"token of {node!r}") for t in ts})
            if not lst:
                raise ValueError(f"node {node!r} has no tokens")
            for t in lst:
                if t in seen:
                    raise ValueError(f"token {t} is claimed by both {seen[t]!r} and {node!r}")
                seen[t] = node
            out[node] = lst
        return out

    def _install(self, tokens: dict[str, list[int]]) -> None:
        names = tuple(tokens)
        pos = np.array([t for n in names for t in tokens[n]], dtype=np.int64).view(np.uint64) \
            ^ _FLIP if names else np.empty(0, np.uint64)
        own = np.repeat(np.arange(len(names), dtype=np.int32),
                        [len(tokens[n]) for n in names]).astype(np.int32)
        core = build_ring(pos, own, names, _SERVER)  # tokens are distinct: no ties
        self._tokens = tokens
        self._set_core(core)

    # -- lookups ----------------------------------------------------------------------------

    _key_check = True  # no int keys: get and the batch calls check them first

    def _check_key(self, key: Any) -> None:
        _check_key(key)

    def _check_keys(self, keys: Any) -> None:
        _check_keys(keys)

    def token(self, key: TextKey) -> int:
        return murmur3_token(key)

    def owner_of_token(self, token: int) -> str:
        """The node owning a token: the one with the smallest token >= it, wrapping."""
        core = self._core
        node: str = core.nodes[core.index_of_hash(_token(token) + (1 << 63))]
        return node

    def replicas_of_token(self, token: int, n: int) -> list[str]:
        """SimpleStrategy replicas: the owner, then the next distinct nodes clockwise."""
        n = check_n(n)
        core = self._core
        core.check_nonempty()
        r = min(n, int(core.live))
        i = core.position_index(_token(token) + (1 << 63))
        return [core.nodes[j] for j in core.replica_table(r)[i]]

    # -- changes ----------------------------------------------------------------------------

    def allocate_tokens(self, num_tokens: int = 16) -> list[int]:
        """Tokens for a joining node: each splits the largest remaining range at its middle.

        (The largest-range rule this library promises; it is not Cassandra's replication-aware
        ``allocate_tokens_for_keyspace`` allocator, whose choices depend on the keyspace.)
        On an empty ring the tokens are evenly spaced from the minimum token."""
        k = check_int(num_tokens, "num_tokens", 1, 1 << 16)
        pos = [int(p) for p in self._core.positions]
        if not pos:
            return sorted(_signed((i * ((1 << 64) // k)) ^ (1 << 63)) for i in range(k))
        # ranges (prev, p] as (-(size), prev, p) on the unsigned circle
        heap = []
        for i, p in enumerate(pos):
            prev = pos[i - 1]
            size = (p - prev) % (1 << 64) or (1 << 64)
            heap.append((-size, prev, p))
        heapq.heapify(heap)
        new = []
        for _ in range(k):
            neg, prev, p = heapq.heappop(heap)
            size = -neg
            if size < 2:
                raise ValueError("the ring has no range left to split")
            mid = (prev + size // 2) % (1 << 64)
            new.append(mid)
            heapq.heappush(heap, (-(size // 2), prev, mid))
            heapq.heappush(heap, (-(size - size // 2), mid, p))
        return sorted(_signed(u ^ (1 << 63)) for u in new)

    def add(self, node: str, tokens: Iterable[int] | None = None, *, num_tokens: int = 16
            ) -> list[int]:
        """Add a node with the given tokens, or with ``num_tokens`` tokens that split the
        largest ranges; returns its tokens.  Only keys in the ranges it takes move, to it."""
        with self._lock:
            if node in self._tokens:
                raise ValueError(f"node {node!r} is already in the ring")
            ts = list(tokens) if tokens is not None else self.allocate_tokens(num_tokens)
            new = self._normalise({**self._tokens, node: ts})
            self._install(new)
            return new[node]

    def remove(self, node: str) -> None:
        """Remove a node: its ranges go to the next nodes clockwise."""
        with self._lock:
            if node not in self._tokens:
                raise KeyError(node)
            self._install({n: t for n, t in self._tokens.items() if n != node})

    # -- introspection ----------------------------------------------------------------------

    @property
    def tokens(self) -> dict[str, list[int]]:
        """node -> its sorted tokens."""
        return {n: list(t) for n, t in self._tokens.items()}

    def ring(self) -> list[tuple[int, str]]:
        """(token, node) pairs in token order."""
        core = self._core
        toks = (core.positions ^ _FLIP).view(np.int64).tolist()
        return [(t, core.nodes[o]) for t, o in zip(toks, core.owners.tolist(), strict=True)]

    def ownership(self) -> dict[str, float]:
        """Each node's exact share of the token range (as ``nodetool status`` "Owns"); a node
        marked down receives 0 (its ranges go to their next replicas)."""
        return super().ownership()

    def __contains__(self, node: object) -> bool:
        return node in self._tokens

    # -- state and serialization --------------------------------------------------------------

    def _state(self) -> tuple[Any, ...]:
        return (self.tokens,)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> TokenRing:
        return cls(state[0])

    def _payload(self) -> bytes:
        parts = [struct.pack("<I", len(self._tokens))]
        for node, ts in self._tokens.items():
            parts += [_format.pack_str(node), struct.pack(f"<I{len(ts)}q", len(ts), *ts)]
        return b"".join(parts)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> TokenRing:
        (count,) = r.unpack("I")
        if int(count) * 8 > r.remaining():
            raise _format.FormatError("data is damaged (node count exceeds the data)")
        tokens: dict[str, list[int]] = {}
        for _ in range(int(count)):
            node = _format.read_str(r)
            (k,) = r.unpack("I")
            if int(k) * 8 > r.remaining():
                raise _format.FormatError("data is damaged (token count exceeds the data)")
            tokens[node] = [int(t) for t in r.unpack(f"{k}q")]
        if len(tokens) != count:
            raise _format.FormatError("data is damaged (duplicate node names)")
        return cls(tokens)

    def _repr_args(self) -> str:
        return f"<{len(self)} nodes, {len(self._core.positions)} tokens>"
