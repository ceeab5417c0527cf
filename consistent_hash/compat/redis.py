"""Redis Cluster: key slots, slot maps and slot rebalancing.

``redis_slot(key)`` is ``CRC16/XMODEM(key) & 0x3FFF`` (16,384 slots), hashing only the key's
hash tag when it has one: the text between the first ``{`` and the first ``}`` after it, if
that text is not empty (``{user1000}.following`` and ``{user1000}.followers`` share a slot;
``foo{}{bar}`` hashes the whole key; ``foo{{bar}}zap`` hashes ``{bar``).  This is what
``CLUSTER KEYSLOT`` answers and what redis-py's ``key_slot`` computes; ``redis_slots`` does it
for a whole container of keys in C and returns uint16.

``redis_slot(key, bucket)`` takes redis-py's ``key_slot(key, bucket)`` argument (the CRC
modulo ``bucket``) and encodes a key as redis-py's ``Encoder.encode`` does before hashing it,
so it is ``RedisCluster.keyslot(key)``: str as UTF-8, bytes-like as they are, an int as its
decimal digits and a float as ``repr(key)`` (``1337.1234`` hashes ``b"1337.1234"``); bool is
refused (TypeError, where redis-py raises DataError).  The routers (``SlotMap``) and
``redis_slots`` take the keys every router takes: ints as their decimal digits, as redis-py,
but no floats (a float key is a TypeError, as for every router: pass ``repr(x)``).

A ``SlotMap`` says which node serves each slot (built from ``CLUSTER SLOTS`` ranges), routes
keys with ``get`` / ``get_many``, and plans the fewest slot moves to rebalance when nodes join
or leave.
"""

from __future__ import annotations

import binascii
import math
import struct
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from consistent_hash import _containers, _format
from consistent_hash._core import EmptyRingError, _SlotTable
from consistent_hash._hashes import compat_hasher
from consistent_hash._router import Key, Router
from consistent_hash._validate import check_name

__all__ = ["SLOTS", "SlotMap", "SlotMove", "redis_slot", "redis_slots"]

SLOTS = 16384
_HASHER = compat_hasher("redis_slot")
KIND_SLOTMAP = _format.KINDS["SlotMap"]


def redis_slot(key: Key | float, bucket: int = SLOTS) -> int:
    """The Redis Cluster slot of a key, as redis-py's ``RedisCluster.keyslot`` computes it:
    ``key_slot(Encoder.encode(key), bucket)``.  str is hashed as UTF-8, an int as its decimal
    digits, a float as its ``repr``; ``bucket`` is the number of slots the CRC is taken
    modulo (redis-py's ``key_slot`` argument).

    >>> redis_slot("123456789"), redis_slot("{user1000}.following"), redis_slot("foo{}{bar}")
    (12739, 3443, 8363)
    >>> redis_slot(1337), redis_slot(1337.1234) == redis_slot("1337.1234"), redis_slot("foo", 100)
    (4314, True, 50)
    """
    if isinstance(bucket, bool) or not isinstance(bucket, (int, np.integer)):
        raise TypeError(f"bucket must be an int, got {type(bucket).__name__!r}")
    if bucket < 1:
        raise ValueError(f"bucket must be at least 1, got {bucket}")
    if isinstance(key, float):  # redis-py's Encoder: repr() of an int or float
        key = repr(key).encode()
    if bucket == SLOTS:
        return _HASHER.hash(key)
    return _crc16(_hashed_part(_key_bytes(key))) % int(bucket)


def _key_bytes(key: Any) -> bytes:
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        return str(int(key)).encode()
    raise TypeError(f"unsupported key type {type(key).__name__!r}: keys must be str, bytes, "
                    "bytearray, memoryview, int or (for redis_slot) float")


def _hashed_part(key: bytes) -> bytes:
    """The hash tag: what lies between the first '{' and the next '}', when not empty."""
    opening = key.find(b"{")
    if opening >= 0:
        closing = key.find(b"}", opening + 1)
        if closing > opening + 1:
            return key[opening + 1 : closing]
    return key


def _crc16(data: bytes) -> int:
    """CRC16/XMODEM (the C core's ch_crc16_xmodem; the standard library computes it too)."""
    return binascii.crc_hqx(data, 0)


def redis_slots(keys: Any) -> npt.NDArray[np.uint16]:
    """The slot of every key, as a uint16 array (any container HashRing accepts)."""
    return _containers.hash_many(_HASHER, keys).astype(np.uint16)


class SlotMove(NamedTuple):
    """Slots ``first..last`` (inclusive) move from ``source`` (None: unassigned) to ``target``."""

    first: int
    last: int
    source: str | None
    target: str

    # A property named like tuple.count (a method); public API, so mypy's override error is
    # silenced rather than the field renamed. SlotMove(...).count is the number of slots.
    @property
    def count(self) -> int:  # type: ignore[override]
        return self.last - self.first + 1


class SlotMap(Router):
    """Which node serves each of the 16,384 slots.

    Parameters
    ----------
    ranges : iterable of (first, last, node)
        Inclusive slot ranges, as ``CLUSTER SLOTS`` reports them; slots not covered are
        unassigned (a key there has no node: ``get`` raises LookupError, ``get_indices``
        gives -1, ``get_many`` gives None).

    Examples
    --------
    >>> m = SlotMap([(0, 5460, "a:6379"), (5461, 10922, "b:6379"), (10923, 16383, "c:6379")])
    >>> m.get("{user1000}.following")
    'a:6379'
    >>> new, moves = m.add_node("d:6379")
    >>> sum(mv.count for mv in moves), new.counts()["d:6379"]
    (4096, 4096)
    """

    __slots__ = ()
    _kind = KIND_SLOTMAP

    def __init__(self, ranges: Iterable[Sequence[Any]] = ()) -> None:
        table = np.full(SLOTS, -1, dtype=np.int32)
        nodes: dict[str, int] = {}
        for r in ranges:
            if len(r) != 3:
                raise ValueError(f"a slot range is (first, last, node), got {r!r}")
            first, last, node = r
            first, last = _slot(first, "first"), _slot(last, "last")
            if last < first:
                raise ValueError(f"slot range {first}..{last} is empty")
            check_name(node)
            if (table[first : last + 1] >= 0).any():
                raise ValueError(f"slot range {first}..{last} overlaps an earlier range")
            table[first : last + 1] = nodes.setdefault(node, len(nodes))
        self._set(table, tuple(nodes))

    def _set(self, table: npt.NDArray[np.int32], nodes: tuple[str, ...]) -> None:
        self._lock = threading.Lock()
        self._set_core(_SlotTable(table, nodes, _HASHER))

    @classmethod
    def _from_table(cls, table: npt.NDArray[np.int32], nodes: tuple[str, ...]) -> SlotMap:
        m = cls.__new__(cls)
        m._set(table, nodes)
        return m

    @classmethod
    def from_cluster_slots(cls, reply: Any) -> SlotMap:
        """A map from a ``CLUSTER SLOTS`` reply: the raw list
        ``[[first, last, [host, port, id, ...], replicas...], ...]`` or redis-py's
        ``cluster_slots()`` dict ``{(first, last): {"primary": (host, port), ...}}``.
        Nodes are named ``"host:port"`` (hosts given as bytes are decoded)."""
        ranges = []
        if isinstance(reply, Mapping):
            for rng, info in reply.items():
                if not isinstance(rng, tuple) or len(rng) != 2:
                    raise ValueError(f"CLUSTER SLOTS reply: a key must be a (first, last) "
                                     f"slot range, got {rng!r}")
                if isinstance(info, Mapping):
                    if "primary" not in info:
                        raise ValueError(f"CLUSTER SLOTS reply: slot range {rng!r} has no "
                                         "'primary'")
                    info = info["primary"]
                ranges.append((_slot(rng[0], "first"), _slot(rng[1], "last"),
                               _node_name(info)))
        else:
            if isinstance(reply, (str, bytes)) or not isinstance(reply, Iterable):
                raise TypeError("CLUSTER SLOTS reply must be a list of slot ranges or "
                                f"redis-py's dict, got {type(reply).__name__!r}")
            for entry in reply:
                if not isinstance(entry, Sequence) or isinstance(entry, (str, bytes)) \
                        or len(entry) < 3:
                    raise ValueError("CLUSTER SLOTS reply: an entry must be [first, last, "
                                     f"[host, port, ...], ...], got {entry!r}")
                ranges.append((_slot(entry[0], "first"), _slot(entry[1], "last"),
                               _node_name(entry[2])))
        return cls(sorted(ranges, key=lambda r: r[0]))

    @classmethod
    def even(cls, nodes: Iterable[str]) -> SlotMap:
        """Slots split into contiguous ranges the way ``redis-cli --cluster create`` splits
        them among its masters (float32 arithmetic, ranges in the given order)."""
        names = list(nodes)
        if not names:
            return cls()
        per = np.float32(SLOTS) / np.float32(len(names))
        first, cursor = 0, np.float32(0.0)
        ranges = []
        for j, node in enumerate(names):
            last = _lroundf(np.float32(np.float32(cursor + per) - np.float32(1)))
            if last > SLOTS or j == len(names) - 1:
                last = SLOTS - 1
            if last < first:
                last = first
            ranges.append((first, last, node))
            first = last + 1
            cursor = np.float32(cursor + per)
        return cls(ranges)

    # -- lookups ----------------------------------------------------------------------------

    def get(self, key: Key, /) -> str:
        """The node serving the key's slot; LookupError if the slot is unassigned
        (EmptyRingError, a LookupError, when the map has no nodes at all)."""
        s = _HASHER.hash(key)  # as the batch path: every router's keys (no floats)
        i = int(self._core.table[s])
        if i < 0:
            if not self._core.nodes:
                raise EmptyRingError("the slot map has no nodes")
            raise LookupError(f"slot {s} (of key {key!r}) is not assigned to any node")
        return self.nodes[i]

    def get_slot(self, slot: int) -> str | None:
        """The node serving a slot, or None."""
        i = int(self._core.table[_slot(slot, "slot")])
        return None if i < 0 else self.nodes[i]

    # -- introspection ----------------------------------------------------------------------

    @property
    def table(self) -> npt.NDArray[np.int32]:
        """Read-only int32[16384]: node index per slot, -1 where unassigned."""
        table: npt.NDArray[np.int32] = self._core.table
        return table

    def counts(self) -> dict[str, int]:
        """Slots per node."""
        c = np.bincount(self.table[self.table >= 0], minlength=len(self.nodes))
        return {n: int(c[i]) for i, n in enumerate(self.nodes)}

    def ranges(self) -> list[tuple[int, int, str]]:
        """Inclusive (first, last, node) ranges, as CLUSTER SLOTS lists them."""
        t = self.table
        cuts = np.flatnonzero(np.diff(t)) + 1
        starts = np.r_[0, cuts]
        ends = np.r_[cuts - 1, SLOTS - 1]
        return [(int(a), int(b), self.nodes[int(t[a])])
                for a, b in zip(starts, ends, strict=True) if t[a] >= 0]

    # -- state and serialization --------------------------------------------------------------

    def _state(self) -> tuple[Any, ...]:
        return (self.ranges(),)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> SlotMap:
        return cls(state[0])

    def _payload(self) -> bytes:
        ranges = self.ranges()
        return struct.pack("<I", len(ranges)) + b"".join(
            struct.pack("<HH", first, last) + _format.pack_str(node)
            for first, last, node in ranges)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> SlotMap:
        (count,) = r.unpack("I")
        if int(count) * 8 > r.remaining():
            raise _format.FormatError("data is damaged (range count exceeds the data)")
        ranges = []
        for _ in range(int(count)):
            first, last = r.unpack("HH")
            ranges.append((int(first), int(last), _format.read_str(r)))
        return cls(ranges)

    def _repr_args(self) -> str:
        return repr(self.ranges())

    # -- rebalancing --------------------------------------------------------------------------

    def rebalance(self, nodes: Iterable[str]) -> tuple[SlotMap, list[SlotMove]]:
        """The balanced map over ``nodes`` that moves the fewest slots, and the moves.

        Every slot ends up assigned; each node gets ``floor`` or ``ceil`` of 16384 / n slots,
        the ``ceil`` going to the nodes that hold the most already, so the number of slots moved
        (the sum of every node's excess over its target, plus unassigned slots) is the least
        possible.  A donor gives up its highest-numbered slots, so ranges stay contiguous."""
        names = list(dict.fromkeys(nodes))
        for n in names:
            check_name(n)
        if not names:
            raise ValueError("rebalance needs at least one node")
        old = self.table
        counts = self.counts()
        cur = {n: counts.get(n, 0) for n in names}
        q, r = divmod(SLOTS, len(names))
        # ceil to the r nodes holding the most now (ties: earlier in `names`)
        order = sorted(range(len(names)), key=lambda i: (-cur[names[i]], i))
        target = {names[i]: q + (1 if rank < r else 0) for rank, i in enumerate(order)}
        index = {n: i for i, n in enumerate(names)}
        new = np.full(SLOTS, -1, dtype=np.int32)
        free: list[tuple[int, str | None]] = []  # slots to hand out, with their source
        for i, n in enumerate(self.nodes):
            slots = np.flatnonzero(old == i)
            keep = target.get(n, 0)
            if n in index:
                new[slots[:keep]] = index[n]
            free.extend((int(s), n) for s in slots[keep:])
        free.extend((int(s), None) for s in np.flatnonzero(old < 0))
        free.sort()
        need = [(n, target[n] - cur[n]) for n in names if target[n] > cur[n]]
        moves: list[SlotMove] = []
        k = 0
        for n, want in need:
            for s, src in free[k : k + want]:
                new[s] = index[n]
                if moves and moves[-1].target == n and moves[-1].source == src \
                        and moves[-1].last == s - 1:
                    moves[-1] = moves[-1]._replace(last=s)
                else:
                    moves.append(SlotMove(s, s, src, n))
            k += want
        return SlotMap._from_table(new, tuple(names)), moves

    def add_node(self, node: str) -> tuple[SlotMap, list[SlotMove]]:
        """Rebalance with ``node`` joining: it receives slots, nothing else moves."""
        if node in self.nodes:
            raise ValueError(f"node {node!r} is already in the map")
        return self.rebalance([*self.nodes, node])

    def remove_node(self, node: str) -> tuple[SlotMap, list[SlotMove]]:
        """Rebalance with ``node`` leaving: only its slots move."""
        if node not in self.nodes:
            raise KeyError(node)
        return self.rebalance([n for n in self.nodes if n != node])


def _slot(v: Any, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an int slot, got {type(v).__name__!r}")
    if not 0 <= v < SLOTS:
        raise ValueError(f"{name} must be a slot in 0..16383, got {v}")
    return int(v)


def _node_name(primary: Any) -> str:
    """"host:port" of a CLUSTER SLOTS node entry [host, port, ...] (host str or bytes, port
    an int, as redis-py reports them)."""
    if not isinstance(primary, Sequence) or isinstance(primary, (str, bytes)) \
            or len(primary) < 2:
        raise ValueError(f"CLUSTER SLOTS reply: a node must be [host, port, ...], got "
                         f"{primary!r}")
    host, port = primary[0], primary[1]
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        raise TypeError(f"CLUSTER SLOTS reply: a host must be str or bytes, got "
                        f"{type(host).__name__!r}")
    if isinstance(port, bool) or not isinstance(port, (int, np.integer)):
        raise TypeError(f"CLUSTER SLOTS reply: a port must be an int, got "
                        f"{type(port).__name__!r}")
    if not 0 <= port <= 65535:
        raise ValueError(f"CLUSTER SLOTS reply: port {port} is not in 0..65535")
    return f"{host}:{int(port)}"


def _lroundf(x: np.float32) -> int:
    """C lroundf: round half away from zero."""
    v = float(x)
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
