"""HAProxyBackend: the backend, its servers, ids and weights, and its ring of points."""

from __future__ import annotations

import re
import struct
import threading
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import haproxy_avalanche, haproxy_points
from consistent_hash._hashes import compat_hasher
from consistent_hash._ringbase import RingLayout, build_ring

FUNCTIONS = ("sdbm", "djb2", "wt6", "crc32")
KIND_HAPROXY = _format.KINDS["HAProxyBackend"]
BE_WEIGHT_SCALE = 16       # points per unit of weight
SRV_EWGHT_RANGE = 4096     # 256 * 16: a server's point inputs are puid * 4096 + j
MAX_WEIGHT = 256
MAX_ID = (1 << 31) - 1
_NAME_RE = re.compile(r"[A-Za-z0-9_.:-]+")


def _check_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"server names must be str, got {type(name).__name__!r}")
    if not _NAME_RE.fullmatch(name):
        raise ValueError(f"bad server name {name!r}: HAProxy takes letters, digits and "
                         "'.', '-', '_', ':' only")
    return name


def _check_weight(w: Any, name: str) -> int:
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
        raise TypeError(f"weight of {name!r} must be an int, got {type(w).__name__!r}")
    if not 0 <= w <= MAX_WEIGHT:
        raise ValueError(f"weight of {name!r} must be between 0 and 256, got {w}")
    return int(w)


def _check_id(i: Any, name: str) -> int:
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"id of {name!r} must be an int, got {type(i).__name__!r}")
    if not 1 <= i <= MAX_ID:
        raise ValueError(f"id of {name!r} must be between 1 and 2**31 - 1, got {i}")
    return int(i)


def assign_ids(explicit: list[int | None]) -> list[int]:
    """HAProxy's server ids for servers in config order, ``None`` where no ``id`` is given:
    a counter starts at 1; a server without an id takes the first value >= the counter that
    no server (explicit ids, then the ids already handed out) holds; the counter then steps
    to one past that, and also steps by one past every server that has an explicit id."""
    used = {i for i in explicit if i is not None}
    out = []
    nxt = 1
    for i in explicit:
        if i is None:
            while nxt in used:
                nxt += 1
            used.add(nxt)
            out.append(nxt)
        else:
            out.append(i)
        nxt += 1
    return out


class _Server(NamedTuple):
    """One server line of the backend."""

    name: str
    weight: int
    id: int | None     # the explicit id, or None: assign_ids numbers it
    disabled: bool
    backup: bool


class HAProxyBackend(RingLayout):
    """A ``hash-type consistent`` backend, keys placed exactly as HAProxy 2.6 places them.

    Parameters
    ----------
    servers : iterable of str
        The server names, in the order of the ``server`` lines (the order decides the
        automatic ids and which backup server is first).
    weights : mapping name -> int, optional
        ``weight`` (0..256, default 1).
    ids : mapping name -> int, optional
        Explicit ``id`` values (1..2**31 - 1); the others are numbered as HAProxy numbers them.
    disabled, backup : iterables of names
        Servers with the ``disabled`` / ``backup`` keyword.
    function : {"sdbm", "djb2", "wt6", "crc32"}, optional
        The ``hash-type consistent <function>``.  Omitted: HAProxy's default, sdbm with
        avalanche.
    avalanche : bool, optional
        The ``avalanche`` modifier; default True when ``function`` is omitted, else False
        (as ``hash-type consistent djb2`` means djb2 without it).
    allbackups : bool
        ``option allbackups``: with no active server, hash over every backup server instead
        of sending everything to the first one.

    Examples
    --------
    >>> be = HAProxyBackend(["s1", "s2", "s3"])
    >>> be.get("user:42")
    's3'
    >>> be.ids
    {'s1': 1, 's2': 2, 's3': 3}
    """

    __slots__ = ("_servers", "_function", "_avalanche", "_allbackups", "_ids", "_points",
                 "_point_owners")
    _kind = KIND_HAPROXY
    _replicas = False
    _hash_shift = 32  # the 32-bit HAProxy hash sits in the high half of the core's positions
    _walk_on = False  # a down server leaves the tree (its neighbours' midpoints move): rebuilt

    def __init__(self, servers: Iterable[str] = (), weights: Mapping[str, int] | None = None,
                 *, ids: Mapping[str, int] | None = None, disabled: Iterable[str] = (),
                 backup: Iterable[str] = (), function: str | None = None,
                 avalanche: bool | None = None, allbackups: bool = False) -> None:
        if isinstance(servers, str):
            raise TypeError("servers must be an iterable of server names, not a str")
        if function is None:
            function = "sdbm"
            avalanche = True if avalanche is None else avalanche
        if not isinstance(function, str) or function not in FUNCTIONS:
            raise ValueError(f"function must be one of {', '.join(map(repr, FUNCTIONS))}, "
                             f"got {function!r}")
        if avalanche is None:
            avalanche = False
        if not isinstance(avalanche, bool):
            raise TypeError(f"avalanche must be a bool, got {type(avalanche).__name__!r}")
        if not isinstance(allbackups, bool):
            raise TypeError(f"allbackups must be a bool, got {type(allbackups).__name__!r}")
        names = [_check_name(s) for s in servers]
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise ValueError(f"duplicate server {n!r}")
            seen.add(n)
        ws = {n: 1 for n in names}
        for k, w in (weights or {}).items():
            if k not in ws:
                raise KeyError(f"weight given for {k!r}, which is not in servers")
            ws[k] = _check_weight(w, k)
        xid: dict[str, int] = {}
        for k, i in (ids or {}).items():
            if k not in ws:
                raise KeyError(f"id given for {k!r}, which is not in servers")
            xid[k] = _check_id(i, k)
        dis: set[str] = set()
        bck: set[str] = set()
        for arg, group, target in (("disabled", disabled, dis), ("backup", backup, bck)):
            if isinstance(group, str):
                raise TypeError(f"{arg} must be an iterable of server names, not a str")
            for k in group:
                if k not in ws:
                    raise KeyError(f"{arg} names {k!r}, which is not in servers")
                target.add(k)
        self._function, self._avalanche, self._allbackups = function, avalanche, allbackups
        self._lock = threading.Lock()
        specs = tuple(_Server(n, ws[n], xid.get(n), n in dis, n in bck) for n in names)
        self._install(specs)

    # -- building ---------------------------------------------------------------------------

    @property
    def _hash_id_name(self) -> str:
        return f"haproxy_{self._function}" + ("_avalanche" if self._avalanche else "")

    def _install(self, specs: tuple[_Server, ...]) -> None:
        explicit = [s.id for s in specs]
        dup = {i for i in explicit if i is not None and explicit.count(i) > 1}
        if dup:
            raise ValueError(f"id {min(dup)} is given to two servers")
        puids = assign_ids(explicit)
        active = [i for i, s in enumerate(specs)
                  if s.weight > 0 and not s.disabled and not s.backup]
        if not active:
            spare = [i for i, s in enumerate(specs) if s.weight > 0 and not s.disabled and s.backup]
            # the first usable backup takes every key unless option allbackups
            active = spare if self._allbackups else spare[:1]
        keys32, own = haproxy_points(np.array([puids[i] for i in active], dtype=np.int64),
                                   np.array([specs[i].weight * BE_WEIGHT_SCALE for i in active],
                                            dtype=np.uint32))
        order = np.argsort(keys32, kind="stable")
        keys: npt.NDArray[np.uint64] = keys32[order].astype(np.uint64)
        own = np.array(active, dtype=np.int32)[own[order]] if len(own) else own
        if len(keys) > 1 and np.any(keys[1:] == keys[:-1]):
            k = int(np.flatnonzero(keys[1:] == keys[:-1])[0])
            a, b = specs[int(own[k])].name, specs[int(own[k + 1])].name
            raise ValueError(f"servers {a!r} and {b!r} have a point at the same place (ids "
                             "that differ by a multiple of 2**20): HAProxy's order between "
                             "equal points is not modelled; change an id")
        # The ring's positions are each point's last winning hash (HAProxy's nearest-point
        # rule), in the points' order, so ties cannot arise (the points are distinct).
        core = build_ring(_midpoints(keys) << np.uint64(32), own, tuple(s.name for s in specs),
                          compat_hasher(self._hash_id_name))
        self._servers = specs
        self._ids = tuple(puids)
        self._points, self._point_owners = keys, own
        self._set_core(core)

    # -- changes ----------------------------------------------------------------------------

    def _index(self, name: Any) -> int:
        for i, s in enumerate(self._servers):
            if s.name == name:
                return i
        raise KeyError(name)

    def add(self, name: str, weight: int = 1, *, id: int | None = None, disabled: bool = False,
            backup: bool = False) -> None:
        """Append a server line (as an edited config reloaded: ids are renumbered from it)."""
        _check_name(name)
        w = _check_weight(weight, name)
        i = None if id is None else _check_id(id, name)
        with self._lock:
            if any(s.name == name for s in self._servers):
                raise ValueError(f"server {name!r} is already in the backend")
            self._install(self._servers + (_Server(name, w, i, bool(disabled), bool(backup)),))

    def remove(self, name: str) -> None:
        """Delete a server line.  Every later server without an explicit id is renumbered,
        as HAProxy numbers them on reload; raises KeyError if absent."""
        with self._lock:
            k = self._index(name)
            self._install(self._servers[:k] + self._servers[k + 1:])

    def _edit(self, name: str, field: str, value: Any) -> None:
        with self._lock:
            k = self._index(name)
            s = self._servers[k]._replace(**{field: value})
            self._install(self._servers[:k] + (s,) + self._servers[k + 1:])

    def set_weight(self, name: str, weight: int) -> None:
        """Change a server's weight (0..256; ``set server be/name weight N``)."""
        self._edit(name, "weight", _check_weight(weight, name))

    def _remove_down(self, name: str) -> None:
        # A down server leaves the tree, as a disabled one does; no server is renumbered.
        self.disable(name)

    def disable(self, name: str) -> None:
        """Put a server in maintenance (the ``disabled`` keyword, or the server down)."""
        self._edit(name, "disabled", True)

    def enable(self, name: str) -> None:
        """Take a server out of maintenance."""
        self._edit(name, "disabled", False)

    # -- introspection ----------------------------------------------------------------------

    @property
    def function(self) -> str:
        return self._function

    @property
    def avalanche(self) -> bool:
        return self._avalanche

    @property
    def allbackups(self) -> bool:
        return self._allbackups

    @property
    def hash_type(self) -> str:
        """The ``hash-type`` line this backend is."""
        return f"consistent {self._function}" + (" avalanche" if self._avalanche else "")

    @property
    def weights(self) -> dict[str, int]:
        return {s.name: s.weight for s in self._servers}

    @property
    def ids(self) -> dict[str, int]:
        """Every server's id as HAProxy numbers it (explicit or automatic)."""
        return {s.name: i for s, i in zip(self._servers, self._ids, strict=True)}

    @property
    def explicit_ids(self) -> dict[str, int]:
        return {s.name: s.id for s in self._servers if s.id is not None}

    @property
    def disabled(self) -> tuple[str, ...]:
        return tuple(s.name for s in self._servers if s.disabled)

    @property
    def backup(self) -> tuple[str, ...]:
        return tuple(s.name for s in self._servers if s.backup)

    @property
    def points(self) -> npt.NDArray[np.uint64]:
        """HAProxy's tree: the 32-bit points of the servers in use, ascending."""
        p: npt.NDArray[np.uint64] = self._points.copy()
        p.flags.writeable = False
        return p

    @property
    def point_owners(self) -> npt.NDArray[np.int32]:
        """The server (index into ``nodes``) of each of ``points``."""
        o: npt.NDArray[np.int32] = self._point_owners.copy()
        o.flags.writeable = False
        return o

    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """The equivalent ring, in the core's 64-bit hash space (a 32-bit hash h is h << 32):
        a hash goes to the owner of the first position >= it, wrapping round.  Each position
        is the last hash a point still wins (its midpoint with the next point)."""
        positions: npt.NDArray[np.uint64] = self._core.positions
        return positions

    def ownership(self) -> dict[str, float]:
        """The exact share of the 2**32 hashes each server receives (a server that is
        disabled or marked down receives 0)."""
        return super().ownership()

    def source_hash(self, address: str) -> int:
        """HAProxy's 32-bit hash for ``balance source`` of one client address: the IPv4
        address as a big-endian integer (IPv6: the XOR of its four big-endian 32-bit words),
        then the avalanche mix if this backend has it; the hash function plays no part.  Give
        it to ``lookup``, or use ``get_source``."""
        import ipaddress

        if not isinstance(address, str):
            raise TypeError(f"address must be a str, got {type(address).__name__!r}")
        try:
            packed = ipaddress.ip_address(address).packed
        except ValueError:
            raise ValueError(f"address must be an IPv4 or IPv6 address, got {address!r}") \
                from None
        h = 0
        for k in range(0, len(packed), 4):
            h ^= int.from_bytes(packed[k:k + 4], "big")
        return haproxy_avalanche(h) if self._avalanche else h

    def get_source(self, address: str) -> str:
        """The server ``balance source`` picks for a client address."""
        i = int(self.lookup(np.array([self.source_hash(address)], dtype=np.uint64))[0])
        return self.nodes[i]

    # -- state and serialization ------------------------------------------------------------

    def _kwargs(self) -> dict[str, Any]:
        f_default = self._function == "sdbm" and self._avalanche
        return {"weights": self.weights, "ids": self.explicit_ids,
                "disabled": list(self.disabled), "backup": list(self.backup),
                "function": None if f_default else self._function,
                "avalanche": self._avalanche, "allbackups": self._allbackups}

    def _state(self) -> tuple[Any, ...]:
        return (list(self.nodes), self._kwargs())

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> HAProxyBackend:
        names, kw = state
        return cls(names, **kw)

    def _payload(self) -> bytes:
        flags = (FUNCTIONS.index(self._function) | (4 if self._avalanche else 0)
                 | (8 if self._allbackups else 0))
        parts = [struct.pack("<B", flags), _format.pack_names(self.nodes)]
        for _, w, i, d, b in self._servers:
            parts.append(struct.pack("<HIB", w, 0 if i is None else i, d | (b << 1)))
        return b"".join(parts)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> HAProxyBackend:
        (flags,) = r.unpack("B")
        if flags >> 4 or flags & 3 >= len(FUNCTIONS):
            raise ValueError("bad flags")
        names = _format.read_names(r)
        ws, ids, dis, bck = {}, {}, [], []
        for n in names:
            w, i, f = r.unpack("HIB")
            ws[n] = int(w)
            if i:
                ids[n] = int(i)
            if f & 1:
                dis.append(n)
            if f & 2:
                bck.append(n)
            if f >> 2:
                raise ValueError("bad server flags")
        return cls(names, ws, ids=ids, disabled=dis, backup=bck, function=FUNCTIONS[flags & 3],
                   avalanche=bool(flags & 4), allbackups=bool(flags & 8))

    def _repr_args(self) -> str:
        args = [repr(list(self.nodes))]
        ws = {n: w for n, w in self.weights.items() if w != 1}
        if ws:
            args.append(repr(ws))
        for k, v in (("ids", self.explicit_ids), ("disabled", list(self.disabled)),
                     ("backup", list(self.backup))):
            if v:
                args.append(f"{k}={v!r}")
        if not (self._function == "sdbm" and self._avalanche):
            args.append(f"function={self._function!r}")
            if self._avalanche:
                args.append("avalanche=True")
        if self._allbackups:
            args.append("allbackups=True")
        return ", ".join(args)

    # -- config -----------------------------------------------------------------------------

    @classmethod
    def from_config(cls, text: str, name: str | None = None) -> HAProxyBackend:
        """The backend of a haproxy.cfg (or of one ``backend`` / ``listen`` section); see
        the module function ``from_config``."""
        from consistent_hash.compat.haproxy._config import from_config

        return from_config(text, name)


def _midpoints(keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """For sorted distinct 32-bit points, the last hash each one wins under HAProxy's rule
    (nearest point on the 2**32 circle, the lower one at equal distance): the point plus
    half (rounded down) of the gap to the next point, mod 2**32."""
    n = len(keys)
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    m = 1 << 32
    nxt = np.roll(keys, -1)
    gap = (nxt + np.uint64(m) - keys) % np.uint64(m)
    if n == 1:
        gap[:] = np.uint64(m)  # one point: it wins everything
    out: npt.NDArray[np.uint64] = (keys + gap // np.uint64(2)) % np.uint64(m)
    return out
