"""NginxUpstream: the upstream, its servers and weights, and its ring of points."""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import _NginxHash, health_ring, nginx_points
from consistent_hash._hashes import compat_hasher
from consistent_hash._ringbase import RingLayout, build_ring

KIND_NGINX = _format.KINDS["NginxUpstream"]
POINTS_PER_WEIGHT = 160
_MAX_WEIGHT = 1 << 20
_MAX_TOTAL_POINTS = 1 << 26  # 67M points (800 MB); nginx's own ring would be as large


def _split(server: str) -> tuple[bytes, bytes]:
    """(host, port) as nginx splits the server text for its point hash."""
    b = server.encode("utf-8")
    if b[:5].lower() == b"unix:":
        return b[5:], b""
    j = len(b)
    while j > 0 and 0x30 <= b[j - 1] <= 0x39:
        j -= 1
    if j > 0 and b[j - 1] == 0x3A:  # ':' then digits (possibly none) to the end
        return b[:j - 1], b[j:]
    return b, b""


def _check_server(server: Any) -> str:
    if not isinstance(server, str):
        raise TypeError(f"a server must be a str as written in nginx.conf, got "
                        f"{type(server).__name__!r}")
    if not server or any(c.isspace() for c in server):
        raise ValueError(f"bad server {server!r}: expected an address as nginx.conf writes it "
                         "('127.0.0.1:8001', 'backend.local:80', 'unix:/run/app.sock')")
    try:  # plain hash never hashes the name, but to_bytes and every reader need it as UTF-8
        server.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"bad server {server!r}: not valid Unicode text (a lone surrogate)"
                         ) from None
    if server[:5].lower() == "unix:":
        if len(server) == 5:
            raise ValueError(f"bad server {server!r}: unix: needs a path")
        return server
    host, port = _split(server)
    if not host:
        raise ValueError(f"bad server {server!r}: no host")
    if port and not 0 < int(port) < 65536:
        raise ValueError(f"bad server {server!r}: port must be in 1..65535")
    if b":" in port or (server.endswith(":") and not port):
        raise ValueError(f"bad server {server!r}: invalid port")
    return server


def _check_weight(w: Any, server: str) -> int:
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
        raise TypeError(f"weight of {server!r} must be an int, got {type(w).__name__!r}")
    if not 1 <= w <= _MAX_WEIGHT:
        raise ValueError(f"weight of {server!r} must be between 1 and {_MAX_WEIGHT}, got {w}")
    return int(w)


def _parse_server_line(spec: Any) -> tuple[str, int | None, bool]:
    """``"ADDRESS [weight=N] [down] [max_fails=N] ..."`` -> (address, weight or None, down)."""
    if not isinstance(spec, str):
        raise TypeError(f"a server must be a str as written in nginx.conf, got "
                        f"{type(spec).__name__!r}")
    words = spec.split()
    if not words:
        raise ValueError("bad server '': empty")
    return _server_args(words[0], words[1:])


def _server_args(address: str, params: list[str]) -> tuple[str, int | None, bool]:
    """A server's address and parameters -> (address, weight or None, down); the errors
    name the server by its address (a config's reader adds the line)."""
    weight: int | None = None
    down = False
    for p in params:
        if p.startswith("weight="):
            v = p[7:]
            if not v.isdigit() or int(v) == 0:
                raise ValueError(f"server {address!r}: invalid parameter {p!r}")
            weight = _check_weight(int(v), address)
        elif p == "down":
            down = True
        elif p == "backup":
            raise ValueError(f"server {address!r}: nginx's hash balancer does not support "
                             "'backup' (nginx -t: balancing method does not support parameter "
                             "\"backup\")")
        elif p.startswith(("max_fails=", "max_conns=", "fail_timeout=")):
            continue  # runtime limits: a server over them is skipped as if down (mark_down)
        else:
            raise ValueError(f"server {address!r}: invalid parameter {p!r}")
    return _check_server(address), weight, down


class NginxUpstream(RingLayout):
    """An nginx ``upstream`` block balanced by ``hash $key [consistent]``.

    Parameters
    ----------
    servers : iterable of str
        The ``server`` lines' arguments in config order: ``"127.0.0.1:8001"``, or with
        parameters ``"127.0.0.1:8001 weight=3 down"`` (``max_fails=``, ``max_conns=``,
        ``fail_timeout=`` are accepted and do not change the layout).
    weights : mapping server -> int, optional
        Weights (nginx's ``weight=``, default 1), overriding those in the server strings.
    consistent : bool, default True
        ``hash $key consistent`` (a ketama-style ring) or plain ``hash $key`` (weighted modulo).
    down : iterable of str, optional
        Servers marked ``down`` (they keep their place; their keys go on to the next server).

    ``hash(key)`` is CRC-32 of the key, nginx's key hash in both modes.  ``lookup(hashes)``
    takes those 32-bit hashes; in plain mode it is exact only while no server is down (nginx's
    rehashes need the key's length, which a hash does not carry).

    Examples
    --------
    >>> up = NginxUpstream(["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"])
    >>> up.get_many(["user:42", "user:1", "user:2"]).tolist()
    ['10.0.0.3:11211', '10.0.0.1:11211', '10.0.0.1:11211']
    >>> conf = '''
    ... upstream memcached {
    ...     hash $uri;                      # plain hash: weighted modulo
    ...     server 10.0.0.1:11211;
    ...     server 10.0.0.2:11211;
    ...     server 10.0.0.3:11211;
    ... }'''
    >>> from_config(conf).get_many(["user:42", "user:1", "user:2"]).tolist()
    ['10.0.0.2:11211', '10.0.0.1:11211', '10.0.0.1:11211']
    """

    __slots__ = ("_consistent", "_servers", "_weights", "_down")
    _kind = KIND_NGINX
    _down_in_payload = True  # each server's `down` flag is in the payload, as in nginx.conf
    _hash_shift = 32  # hash(key) is CRC-32(key), carried in the top half of the core's hashes

    def __init__(self, servers: Iterable[str] = (), weights: Mapping[str, int] | None = None,
                 *, consistent: bool = True, down: Iterable[str] = ()) -> None:
        if not isinstance(consistent, bool):
            raise TypeError(f"consistent must be a bool, got {type(consistent).__name__!r}")
        if isinstance(servers, str):
            raise TypeError("servers must be an iterable of server strings, not a str")
        if isinstance(down, str):
            raise TypeError("down must be an iterable of server strings, not a str")
        self._consistent = consistent
        self._lock = threading.Lock()
        names: list[str] = []
        ws: dict[str, int] = {}
        dn: set[str] = set()
        for s in servers:
            address, w, is_down = _parse_server_line(s)
            if address in ws:
                raise ValueError(f"duplicate server {address!r} (nginx would give both the "
                                 "same points; write it once with the summed weight)")
            names.append(address)
            ws[address] = 1 if w is None else w
            if is_down:
                dn.add(address)
        if weights is not None:
            if not isinstance(weights, Mapping):
                raise TypeError(f"weights must be a mapping, got {type(weights).__name__!r}")
            for k, w in weights.items():
                if k not in ws:
                    raise KeyError(f"weight given for {k!r}, which is not in servers")
                ws[k] = _check_weight(w, k)
        for d in down:
            if d not in ws:
                raise KeyError(f"down server {d!r} is not in servers")
            dn.add(d)
        self._install(tuple(names), ws, frozenset(dn))

    @classmethod
    def from_config(cls, text: str, name: str | None = None) -> NginxUpstream:
        """The upstream of an nginx.conf (or a bare ``upstream NAME { ... }`` block); a text
        with several upstreams needs ``name=``."""
        from consistent_hash.compat.nginx._config import from_config

        return from_config(text, name)

    # -- building ---------------------------------------------------------------------------

    def _install(self, names: tuple[str, ...], ws: dict[str, int], down: frozenset[str]) -> None:
        weights = [ws[n] for n in names]
        if self._consistent:
            if POINTS_PER_WEIGHT * sum(weights) > _MAX_TOTAL_POINTS:
                raise ValueError("the weights give more points than a ring can hold "
                                 f"(160 x total weight must stay below {_MAX_TOTAL_POINTS})")
            bases = [h + b"\0" + p for h, p in map(_split, names)]
            counts = np.array([POINTS_PER_WEIGHT * w for w in weights], dtype=np.uint32)
            pos, own = nginx_points(bases, counts)
            # nginx sorts its points stably and keeps the first of equal ones
            core: Any = build_ring(pos, own, names, compat_hasher("nginx_crc32"), "first")
            if down:
                core = health_ring(core, down)
        else:
            ends = np.cumsum(np.array(weights, dtype=np.int64))
            if len(ends) and ends[-1] >= 1 << 32:
                raise ValueError("the total weight must stay below 2**32")
            mask = np.array([n in down for n in names], dtype=np.uint8)
            core = _NginxHash(names, compat_hasher("nginx_crc32_len"), ends, mask)
        self._servers, self._weights, self._down = names, dict(ws), down
        self._core = core

    # -- changes ----------------------------------------------------------------------------

    def add(self, server: str, weight: int = 1, *, down: bool = False) -> None:
        """Append a server (as a ``server`` line added at the end of the block)."""
        server = _check_server(server)
        weight = _check_weight(weight, server)
        with self._lock:
            if server in self._weights:
                raise ValueError(f"server {server!r} is already in the upstream")
            self._install(self._servers + (server,), {**self._weights, server: weight},
                          self._down | {server} if down else self._down)

    def remove(self, server: str) -> None:
        """Remove a server's line; raises KeyError if it is absent."""
        with self._lock:
            if server not in self._weights:
                raise KeyError(server)
            self._install(tuple(s for s in self._servers if s != server),
                          {s: w for s, w in self._weights.items() if s != server},
                          self._down - {server})

    def set_weight(self, server: str, weight: int) -> None:
        """Change a server's ``weight=``; raises KeyError if it is absent."""
        weight = _check_weight(weight, server)
        with self._lock:
            if server not in self._weights:
                raise KeyError(server)
            self._install(self._servers, {**self._weights, server: weight}, self._down)

    def mark_down(self, server: str) -> None:
        """Mark a server ``down`` (or failed: nginx skips a server over its ``max_fails`` the
        same way until ``fail_timeout`` passes).  Raises KeyError if it is absent."""
        self._set_down(server, True)

    def mark_up(self, server: str) -> None:
        """Bring a down server back.  Raises KeyError if it is absent."""
        self._set_down(server, False)

    def _set_down(self, server: str, down: bool) -> None:
        with self._lock:
            if server not in self._weights:
                raise KeyError(server)
            new = self._down | {server} if down else self._down - {server}
            if new != self._down:
                self._install(self._servers, self._weights, new)

    # -- introspection ----------------------------------------------------------------------

    @property
    def consistent(self) -> bool:
        return self._consistent

    @property
    def _replicas(self) -> bool:  # type: ignore[override]
        # consistent: the distinct servers clockwise, which is also the order nginx tries
        # them in when proxy_next_upstream retries a key
        return self._consistent

    @property
    def weights(self) -> dict[str, int]:
        return dict(self._weights)

    @property
    def down(self) -> frozenset[str]:
        return self._down

    @property
    def servers(self) -> list[str]:
        """The servers as ``server`` line arguments (with ``weight=`` and ``down``)."""
        out = []
        for s in self._servers:
            w = self._weights[s]
            out.append(s + (f" weight={w}" if w != 1 else "") + (" down" if s in self._down
                                                                  else ""))
        return out

    def _ring_only(self, what: str) -> None:
        if not self._consistent:
            raise AttributeError(f"{what}: plain `hash` has no ring (consistent=False)")

    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """The ring's points as the core's positions, point << 32, ascending (consistent
        only): the layout ``movement`` and ``migration_plan`` compare exactly."""
        self._ring_only("positions")
        return self._core.positions  # type: ignore[no-any-return]

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        """The server index each point routes to (a down server's points route on)."""
        self._ring_only("owners")
        if self._down:
            return self._core.routing_owners  # type: ignore[no-any-return]
        return self._core.owners  # type: ignore[no-any-return]

    @property
    def points(self) -> npt.NDArray[np.uint64]:
        """nginx's 32-bit points, ascending, equal ones merged (consistent only)."""
        pts: npt.NDArray[np.uint64] = self.positions >> np.uint64(32)
        return pts

    def ownership(self) -> dict[str, float]:
        """The exact share of the 32-bit key-hash space each server receives (consistent
        only; down servers receive 0)."""
        self._ring_only("ownership")
        return super().ownership()

    def tries(self, keys: Any) -> npt.NDArray[np.uint32]:
        """Plain ``hash`` only: how many tries nginx makes for each key (1 unless the first
        server it picks is down); above 21 nginx gives up and round-robins the key."""
        if self._consistent:
            raise TypeError("tries is for plain hash (consistent=False)")
        from consistent_hash._containers import hash_many

        return self._core.tries(hash_many(self._core.hasher, keys))[1]  # type: ignore[no-any-return]

    # -- state and serialization --------------------------------------------------------------

    def _state(self) -> tuple[Any, ...]:
        return (list(self._servers), dict(self._weights), self._consistent,
                sorted(self._down))

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> NginxUpstream:
        servers, weights, consistent, down = state
        return cls(servers, weights, consistent=consistent, down=down)

    def _payload(self) -> bytes:
        parts = [struct.pack("<B", int(self._consistent)), _format.pack_names(self._servers)]
        parts += [struct.pack("<IB", self._weights[s], int(s in self._down))
                  for s in self._servers]
        return b"".join(parts)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> NginxUpstream:
        (consistent,) = r.unpack("B")
        if consistent not in (0, 1):
            raise _format.FormatError("data is damaged (mode)")
        servers = _format.read_names(r)
        weights: dict[str, int] = {}
        down = []
        for s in servers:
            w, d = r.unpack("IB")
            weights[s] = int(w)
            if d:
                down.append(s)
        return cls(servers, weights, consistent=bool(consistent), down=down)

    def _repr_args(self) -> str:
        return (f"{list(self._servers)!r}"
                + ("" if all(w == 1 for w in self._weights.values())
                   else f", weights={self._weights!r}")
                + ("" if self._consistent else ", consistent=False")
                + (f", down={sorted(self._down)!r}" if self._down else ""))
