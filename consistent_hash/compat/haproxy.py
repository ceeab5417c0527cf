"""HAProxyBackend: send each key where HAProxy 2.6's ``hash-type consistent`` sends it.

A backend such as::

    backend cache
        balance hdr(X-Key)
        hash-type consistent djb2 avalanche
        server a 10.0.0.1:80 weight 2
        server b 10.0.0.2:80 id 7
        server c 10.0.0.3:80 disabled

is ``from_config(text)``, or ``HAProxyBackend(["a", "b", "c"], {"a": 2}, ids={"b": 7},
disabled=["c"], function="djb2", avalanche=True)``.  Nodes are the servers' names as written.
``get(key)`` takes the bytes HAProxy hashes: for ``balance hdr(name)`` the header's value as
``header_value`` extracts it, for ``balance url_param`` the parameter's value
(``url_param_value``), for ``balance uri`` the path before ``?`` (``uri_key``), for ``balance
hash <expr>`` the sample's bytes.

HAProxy's recipe, in short (docs/agreeing-with-haproxy.md has it in full):

- the key hash is sdbm, djb2, wt6 or crc32 over the key bytes (32 bits), then, with the
  ``avalanche`` modifier, Bob Jenkins' 32-bit integer mix of it.  ``hash-type consistent``
  with no function means sdbm *with* avalanche; naming a function drops the avalanche unless
  it is named too;
- a server of weight w (0..256) with id p gets 16 * w points
  ``avalanche(p * 4096 + j)``, j < 16 * w; a server without ``id`` takes the first free number
  from a counter that starts at 1 and steps past every server line, so deleting a line
  renumbers every later server without an explicit id (and moves their keys);
- a key goes to the point *nearest* to its hash, either side, on the 32-bit circle; at equal
  distance the point below wins.  That is the ordinary ring here: each point owns the
  hashes up to the midpoint between it and the next point;
- ``disabled`` servers and weight 0 have no points; ``backup`` servers are used only when no
  active server is left: then all keys go to the first backup server, or, with ``option
  allbackups``, are hashed over the backup servers' points.

Not modelled: ``hash-balance-factor`` (bounded loads, which depends on the requests in flight;
with none in flight it changes nothing), runtime changes made on the CLI (``set server``,
``add server``, health checks: call ``disable`` / ``enable`` / ``set_weight`` to mirror them),
slow start, and the ``path-only`` / ``check_post`` options of ``uri`` / ``url_param``.
``balance source`` hashes the client address as integers, not as a string: use
``source_hash`` / ``get_source`` for it.
"""

from __future__ import annotations

import re
import struct
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._hashes import compat_hasher
from consistent_hash._ring import haproxy_avalanche, haproxy_points
from consistent_hash._ringbase import RingLayout, build_ring
from consistent_hash.compat.config import NameNeeded

__all__ = ["FUNCTIONS", "HAProxyBackend", "assign_ids", "from_config", "header_value",
           "uri_key", "url_param_value"]

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


# (name, weight, explicit id or None, disabled, backup)
_Server = tuple[str, int, "int | None", bool, bool]


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
        specs = tuple((n, ws[n], xid.get(n), n in dis, n in bck) for n in names)
        self._install(specs)

    # -- building ---------------------------------------------------------------------------

    @property
    def _hash_id_name(self) -> str:
        return f"haproxy_{self._function}" + ("_avalanche" if self._avalanche else "")

    def _install(self, specs: tuple[_Server, ...]) -> None:
        explicit = [s[2] for s in specs]
        dup = {i for i in explicit if i is not None and explicit.count(i) > 1}
        if dup:
            raise ValueError(f"id {min(dup)} is given to two servers")
        puids = assign_ids(explicit)
        active = [i for i, s in enumerate(specs) if s[1] > 0 and not s[3] and not s[4]]
        if not active:
            spare = [i for i, s in enumerate(specs) if s[1] > 0 and not s[3] and s[4]]
            # the first usable backup takes every key unless option allbackups
            active = spare if self._allbackups else spare[:1]
        keys32, own = haproxy_points(np.array([puids[i] for i in active], dtype=np.int64),
                                   np.array([specs[i][1] * BE_WEIGHT_SCALE for i in active],
                                            dtype=np.uint32))
        order = np.argsort(keys32, kind="stable")
        keys: npt.NDArray[np.uint64] = keys32[order].astype(np.uint64)
        own = np.array(active, dtype=np.int32)[own[order]] if len(own) else own
        if len(keys) > 1 and np.any(keys[1:] == keys[:-1]):
            k = int(np.flatnonzero(keys[1:] == keys[:-1])[0])
            a, b = specs[int(own[k])][0], specs[int(own[k + 1])][0]
            raise ValueError(f"servers {a!r} and {b!r} have a point at the same place (ids "
                             "that differ by a multiple of 2**20): HAProxy's order between "
                             "equal points is not modelled; change an id")
        # The ring's positions are each point's last winning hash (HAProxy's nearest-point
        # rule), in the points' order, so ties cannot arise (the points are distinct).
        core = build_ring(_midpoints(keys) << np.uint64(32), own, tuple(s[0] for s in specs),
                          compat_hasher(self._hash_id_name))
        self._servers = specs
        self._ids = tuple(puids)
        self._points, self._point_owners = keys, own
        self._set_core(core)

    # -- changes ----------------------------------------------------------------------------

    def _index(self, name: Any) -> int:
        for i, s in enumerate(self._servers):
            if s[0] == name:
                return i
        raise KeyError(name)

    def add(self, name: str, weight: int = 1, *, id: int | None = None, disabled: bool = False,
            backup: bool = False) -> None:
        """Append a server line (as an edited config reloaded: ids are renumbered from it)."""
        _check_name(name)
        w = _check_weight(weight, name)
        i = None if id is None else _check_id(id, name)
        with self._lock:
            if any(s[0] == name for s in self._servers):
                raise ValueError(f"server {name!r} is already in the backend")
            self._install(self._servers + ((name, w, i, bool(disabled), bool(backup)),))

    def remove(self, name: str) -> None:
        """Delete a server line.  Every later server without an explicit id is renumbered,
        as HAProxy numbers them on reload; raises KeyError if absent."""
        with self._lock:
            k = self._index(name)
            self._install(self._servers[:k] + self._servers[k + 1:])

    def _replace(self, name: str, field: int, value: Any) -> None:
        with self._lock:
            k = self._index(name)
            s = list(self._servers[k])
            s[field] = value
            self._install(self._servers[:k] + (tuple(s),) + self._servers[k + 1:])  # type: ignore[arg-type]

    def set_weight(self, name: str, weight: int) -> None:
        """Change a server's weight (0..256; ``set server be/name weight N``)."""
        self._replace(name, 1, _check_weight(weight, name))

    def _remove_down(self, name: str) -> None:
        # A down server leaves the tree, as a disabled one does; no server is renumbered.
        self.disable(name)

    def disable(self, name: str) -> None:
        """Put a server in maintenance (the ``disabled`` keyword, or the server down)."""
        self._replace(name, 3, True)

    def enable(self, name: str) -> None:
        """Take a server out of maintenance."""
        self._replace(name, 3, False)

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
        return {s[0]: s[1] for s in self._servers}

    @property
    def ids(self) -> dict[str, int]:
        """Every server's id as HAProxy numbers it (explicit or automatic)."""
        return {s[0]: i for s, i in zip(self._servers, self._ids, strict=True)}

    @property
    def explicit_ids(self) -> dict[str, int]:
        return {s[0]: s[2] for s in self._servers if s[2] is not None}

    @property
    def disabled(self) -> tuple[str, ...]:
        return tuple(s[0] for s in self._servers if s[3])

    @property
    def backup(self) -> tuple[str, ...]:
        return tuple(s[0] for s in self._servers if s[4])

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

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        owners: npt.NDArray[np.int32] = self._core.owners
        return owners

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


# -- the hdr() extraction -----------------------------------------------------------------------

_LWS = b" \t\r\n"


def header_value(raw: bytes | str, *, use_domain_only: bool = False) -> bytes | None:
    """The bytes ``balance hdr(name)`` hashes for a header whose value is ``raw``: HAProxy
    takes the first occurrence of the header, drops leading spaces and tabs, stops at the
    first comma outside a double-quoted string (a backslash escapes the next character inside
    one), and drops trailing spaces and tabs.  None when that leaves nothing (HAProxy then
    balances the request round robin instead).

    ``use_domain_only`` (``balance hdr(Host) use_domain_only``): of that value, only the
    label before the last dot (``example`` of ``www.example.com``); a value without a dot is
    kept whole."""
    b = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    i, n = 0, len(b)
    while i < n and b[i] in _LWS:
        i += 1
    j = i
    quoted = pair = False
    while j < n:
        c = b[j]
        if pair:
            pair = False
        elif quoted:
            if c == 0x5C:
                pair = True
            elif c == 0x22:
                quoted = False
        elif c == 0x22:
            quoted = True
        elif c == 0x2C:
            break
        j += 1
    while j > i and b[j - 1] in _LWS:
        j -= 1
    v = b[i:j]
    if not v:
        return None
    return _domain_only(v) if use_domain_only else v


def _domain_only(v: bytes) -> bytes:
    """HAProxy walks back from the end: at the first dot met it marks the end of the part to
    hash, then it stops where the byte before the cursor is a dot (or at the start)."""
    end = len(v)
    marked = False
    p = len(v) - 1  # HAProxy's first look is one past the value; that byte is never a dot
    n = len(v) - 1
    while n > 0:
        if marked:
            if v[p - 1] == 0x2E:
                break
        elif v[p] == 0x2E:
            end = p
            marked = True
        p -= 1
        n -= 1
    return v[p:end] if marked else v


def uri_key(uri: bytes | str, *, whole: bool = False, length: int = 0,
            depth: int | None = None) -> bytes:
    """The bytes ``balance uri [whole] [len N] [depth N]`` hashes of a request target as sent
    (``/path?query``): its first ``length`` bytes (all when 0), ending before the ``?`` unless
    ``whole``, and before the ``depth + 1``-th ``/`` when ``depth`` is given (``depth 0``
    hashes nothing: the empty string).  ``path-only`` (absolute URIs) is not modelled."""
    b = uri.encode("utf-8") if isinstance(uri, str) else bytes(uri)
    if length:
        b = b[:length]
    stop_at = None if depth is None else depth + 1
    slashes = 0
    for i, c in enumerate(b):
        if c == 0x2F:
            slashes += 1
            if slashes == stop_at:
                return b[:i]
        elif c == 0x3F and not whole:
            return b[:i]
    return b


def url_param_value(uri: bytes | str, name: bytes | str) -> bytes | None:
    """The bytes ``balance url_param NAME`` hashes of a request target: the value of the
    first ``NAME=`` parameter of the query string (case-sensitive, not URL-decoded, up to the
    next ``&``; possibly empty).  None when there is none (HAProxy then balances the request
    round robin; a POST body's parameters, ``check_post``, are not modelled)."""
    b = uri.encode("utf-8") if isinstance(uri, str) else bytes(uri)
    n = name.encode("utf-8") if isinstance(name, str) else bytes(name)
    q = b.find(b"?")
    if q < 0:
        return None
    params = b[q + 1:]
    while len(params) > len(n):
        if params[len(n)] == 0x3D and params.startswith(n):
            return params[len(n) + 1:].split(b"&", 1)[0]
        amp = params.find(b"&")
        if amp < 0:
            return None
        params = params[amp + 1:]
    return None


# -- haproxy.cfg ---------------------------------------------------------------------------------

_SECTIONS = {"global", "defaults", "frontend", "backend", "listen", "peers", "resolvers",
             "userlist", "mailers", "program", "http-errors", "ring", "cache", "fcgi-app",
             "dynamic-update"}
_HASH_BALANCE = ("hdr(", "uri", "url_param", "hash", "rdp-cookie")


def _words(line: str, lineno: int) -> list[str]:
    """A config line split as HAProxy splits it: blanks separate words, '#' starts a comment,
    a backslash escapes the next character, "..." and '...' quote (no variable expansion)."""
    out: list[str] = []
    cur: list[str] = []
    have = False
    i, n = 0, len(line)
    quote = ""
    while i < n:
        c = line[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"' and i + 1 < n:
                i += 1
                cur.append(line[i])
            else:
                cur.append(c)
        elif c in " \t\r\n":
            if have:
                out.append("".join(cur))
                cur, have = [], False
        elif c == "#":
            break
        elif c in "\"'":
            quote, have = c, True
        elif c == "\\" and i + 1 < n:
            i += 1
            cur.append(line[i])
            have = True
        else:
            cur.append(c)
            have = True
        i += 1
    if quote:
        raise ValueError(f"line {lineno}: unmatched quote")
    if have:
        out.append("".join(cur))
    return out


class _Section:
    def __init__(self, kind: str, name: str, lineno: int, parent: _Section | None) -> None:
        self.kind, self.name, self.lineno = kind, name, lineno
        self.balance: tuple[str, int] | None = parent.balance if parent else None
        self.hash_type: tuple[list[str], int] | None = parent.hash_type if parent else None
        self.mode: str = parent.mode if parent else "tcp"
        self.allbackups: bool = parent.allbackups if parent else False
        self.default_server: dict[str, Any] = dict(parent.default_server) if parent else {}
        self.servers: list[tuple[str, dict[str, Any], int]] = []


def _server_options(words: list[str], lineno: int, base: dict[str, Any]) -> dict[str, Any]:
    opts = dict(base)
    k = 0
    while k < len(words):
        w = words[k]
        if w in ("weight", "id"):
            if k + 1 >= len(words):
                raise ValueError(f"line {lineno}: '{w}' expects an integer argument")
            v = words[k + 1]
            if not re.fullmatch(r"[+-]?\d+", v):
                raise ValueError(f"line {lineno}: '{w}' expects an integer, got {v!r}")
            opts[w] = int(v)
            k += 2
            continue
        if w == "disabled":
            opts["disabled"] = True
        elif w == "enabled":
            opts["disabled"] = False
        elif w == "backup":
            opts["backup"] = True
        elif w == "no-backup":
            opts["backup"] = False
        k += 1
    return opts


def _parse(text: str) -> list[_Section]:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__!r}")
    sections: list[_Section] = []
    defaults: dict[str, _Section] = {}
    last_defaults: _Section | None = None
    cur: _Section | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        words = _words(line, lineno)
        if not words:
            continue
        kw = words[0]
        if kw in _SECTIONS:
            name = words[1] if len(words) > 1 and words[1] != "from" else ""
            # a proxy inherits from the last defaults section above it, a defaults section
            # from nothing; either takes the one "from" names instead
            parent = None if kw == "defaults" else last_defaults
            if "from" in words[1:]:
                k = words.index("from", 1)
                if k + 1 >= len(words) or words[k + 1] not in defaults:
                    raise ValueError(f"line {lineno}: 'from' names no defaults section "
                                     "defined above")
                parent = defaults[words[k + 1]]
            if kw in ("backend", "listen", "frontend", "defaults"):
                if kw != "defaults" and not name:
                    raise ValueError(f"line {lineno}: '{kw}' needs a name")
                cur = _Section(kw, name, lineno, parent)
                if kw == "defaults":
                    last_defaults = cur
                    if name:
                        defaults[name] = cur
                else:
                    sections.append(cur)
            else:
                cur = None
            continue
        if cur is None:
            continue
        if kw == "balance":
            if len(words) < 2:
                raise ValueError(f"line {lineno}: 'balance' needs an algorithm")
            cur.balance = (" ".join(words[1:]), lineno)
        elif kw == "hash-type":
            cur.hash_type = (words[1:], lineno)
        elif kw == "mode" and len(words) > 1:
            cur.mode = words[1]
        elif kw == "option" and words[1:2] == ["allbackups"]:
            cur.allbackups = True
        elif kw == "no" and words[1:3] == ["option", "allbackups"]:
            cur.allbackups = False
        elif kw == "default-server":
            if "id" in words[1:]:
                raise ValueError(f"line {lineno}: 'id' is not allowed on default-server")
            cur.default_server = _server_options(words[1:], lineno, cur.default_server)
        elif kw in ("server", "server-template"):
            if cur.kind == "defaults" or cur.kind == "frontend":
                raise ValueError(f"line {lineno}: '{kw}' is not allowed in a {cur.kind} "
                                 "section")
            if kw == "server-template":
                raise ValueError(f"line {lineno}: server-template is not supported: write "
                                 "the servers out")
            if len(words) < 3:
                raise ValueError(f"line {lineno}: 'server' needs a name and an address")
            try:
                _check_name(words[1])
            except ValueError as e:
                raise ValueError(f"line {lineno}: {e}") from None
            cur.servers.append((words[1], _server_options(words[3:], lineno,
                                                          cur.default_server), lineno))
    return sections


def _hash_type(words: list[str], lineno: int) -> tuple[str | None, bool | None]:
    """(function, avalanche) of a hash-type line, checked as HAProxy checks it."""
    if not words or words[0] not in ("consistent", "map-based"):
        raise ValueError(f"line {lineno}: 'hash-type' only supports 'consistent' and "
                         "'map-based'")
    if words[0] != "consistent":
        raise ValueError(f"line {lineno}: hash-type {words[0]} is not consistent hashing "
                         "(only 'hash-type consistent' is reproduced)")
    if len(words) == 1:
        return None, None  # sdbm + avalanche
    if words[1] not in FUNCTIONS:
        raise ValueError(f"line {lineno}: 'hash-type' only supports 'sdbm', 'djb2', 'crc32', "
                         f"or 'wt6' hash functions, got {words[1]!r}")
    if len(words) > 2 and words[2] != "avalanche":
        raise ValueError(f"line {lineno}: 'hash-type' only supports 'avalanche' as a "
                         f"modifier, got {words[2]!r}")
    return words[1], len(words) > 2


def from_config(text: str, name: str | None = None) -> HAProxyBackend:
    """An ``HAProxyBackend`` from haproxy.cfg text: a whole file, or one ``backend`` or
    ``listen`` section.  A file with several backends (sections with ``server`` lines) needs
    ``name=``.  ``balance`` and ``hash-type`` may come from a ``defaults`` section (the last
    one above, or the one named by ``from``), as HAProxy inherits them."""
    sections = [s for s in _parse(text) if s.kind in ("backend", "listen")]
    if name is not None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__!r}")
        chosen = [s for s in sections if s.name == name]
        if not chosen:
            raise ValueError(f"no backend or listen section named {name!r}; the config has "
                             f"{', '.join(repr(s.name) for s in sections) or 'none'}")
        sec = chosen[0]
    else:
        with_servers = [s for s in sections if s.servers] or sections
        if not with_servers:
            raise ValueError("the config has no backend or listen section")
        if len(with_servers) > 1:
            raise NameNeeded("backends", [s.name for s in with_servers])
        sec = with_servers[0]
    where = f"{sec.kind} {sec.name!r} (line {sec.lineno})"
    if sec.balance is None:
        raise ValueError(f"{where} has no 'balance' line, so HAProxy balances it round robin, "
                         "not by a hash")
    algo, bline = sec.balance
    if not algo.startswith(_HASH_BALANCE) and algo.split()[0] != "source":
        raise ValueError(f"line {bline}: 'balance {algo}' does not hash a key")
    if sec.mode != "http" and algo.startswith(("hdr(", "uri", "url_param")):
        raise ValueError(f"line {bline}: 'balance {algo}' needs mode http (HAProxy falls "
                         f"back to round robin in mode {sec.mode})")
    if sec.hash_type is None:
        raise ValueError(f"{where} has no 'hash-type consistent' line: HAProxy's default is "
                         "map-based, not consistent hashing")
    function, avalanche = _hash_type(*sec.hash_type)
    names, weights, ids, dis, bck = [], {}, {}, [], []
    seen: dict[str, int] = {}
    used_ids: dict[int, int] = {}
    for sname, opts, lineno in sec.servers:
        if sname in seen:
            raise ValueError(f"line {lineno}: server {sname!r} is already defined at line "
                             f"{seen[sname]}")
        seen[sname] = lineno
        names.append(sname)
        if "weight" in opts:
            if not 0 <= opts["weight"] <= MAX_WEIGHT:
                raise ValueError(f"line {lineno}: weight of server {sname} is not within 0 "
                                 f"and 256 ({opts['weight']})")
            weights[sname] = opts["weight"]
        if "id" in opts:
            i = opts["id"]
            if not 1 <= i <= MAX_ID:
                raise ValueError(f"line {lineno}: custom id has to be > 0 (and fit 31 bits)")
            if i in used_ids:
                raise ValueError(f"line {lineno}: custom id {i} already used at line "
                                 f"{used_ids[i]}")
            used_ids[i] = lineno
            ids[sname] = i
        if opts.get("disabled"):
            dis.append(sname)
        if opts.get("backup"):
            bck.append(sname)
    return HAProxyBackend(names, weights, ids=ids, disabled=dis, backup=bck,
                          function=function, avalanche=avalanche, allbackups=sec.allbackups)
