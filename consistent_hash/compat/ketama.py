"""KetamaRing: route keys exactly as libmemcached (pylibmc), libketama or twemproxy do.

A Memcached client can switch to this library without a cache stampede only if every key goes
to the server it went to before.  "Ketama" names several different placements, and which one
a client uses depends on flags most users never look at, so the mode is a required argument:

============================  =====================================================  ==========
mode                          what it reproduces                                     key hash
============================  =====================================================  ==========
``"ketama_weighted"``         pylibmc ``behaviors={"ketama_weighted": True}``:       MD5
                              ``floor(w / total * 40 * n)`` labels per server in
                              float32, 4 points per label's MD5
``"ketama"``                  pylibmc ``{"ketama": True}``, ``distribution=           one-at-a-
                              "consistent"`` or ``"consistent ketama"``: 100         time
                              points per server, each the key hash of its label;
                              with any weight > 1, the weighted points above (the
                              hybrid libmemcached really builds)
``"consistent_weighted"``     pylibmc ``distribution="consistent weighted"``:        one-at-a-
                              weighted MD5 points, keys by the key hash               time
``"spy"``                     ``distribution="consistent ketama spy"``: as           one-at-a-
                              ``"ketama"``, labels ``"/host:port-i"``                 time
``"libketama"``               libketama (``ketama_get_server``): its arithmetic,     MD5
                              ``floorf(pct * 40.0 * n)``, labels ``"host:port-i"``
``"twemproxy"``               twemproxy ``distribution: ketama``: float32            MD5
                              arithmetic, labels ``"host-i"`` (port 11211) or
                              ``"host:port-i"``, or ``"name-i"`` for a named server
============================  =====================================================  ==========

``hash="md5"`` or ``hash="one_at_a_time"`` overrides the key hash (pylibmc's ``"hash"``
behavior: ``{"ketama": True, "hash": "md5"}`` is ``mode="ketama", hash="md5"``; twemproxy's
``hash: one_at_a_time`` is ``mode="twemproxy", hash="one_at_a_time"``).  One-at-a-time is
Jenkins' hash over *signed* chars, as libmemcached and twemproxy compute it (bytes >= 0x80 are
sign-extended), not the textbook unsigned version.

Servers are ``"host:port"`` strings (``"host"`` means port 11211), optionally
``"host:port:weight"`` as pylibmc takes them; their order matters (two points at the same
value go to the earlier server), as it does for the originals.  A key goes to the first point
at or after its hash, wrapping round.
"""

from __future__ import annotations

import ipaddress
import math
import struct
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._hashes import compat_hasher
from consistent_hash._ring import POINTS_DIGEST, POINTS_HASH, _Ring, compat_points, sort_points
from consistent_hash._router import Router

__all__ = ["KETAMA_MODES", "KetamaRing", "point_counts"]

KETAMA_MODES = ("ketama_weighted", "ketama", "consistent_weighted", "spy", "libketama",
                "twemproxy")
_DEFAULT_HASH = {"ketama_weighted": "md5", "ketama": "one_at_a_time",
                 "consistent_weighted": "one_at_a_time", "spy": "one_at_a_time",
                 "libketama": "md5", "twemproxy": "md5"}
_KEY_HASHES = {"md5": "ketama_md5", "one_at_a_time": "one_at_a_time"}
KIND_KETAMA = 21
_MAX_WEIGHT = (1 << 32) - 1


def _f32(x: float) -> float:
    return float(np.float32(x))


def point_counts(weights: list[int], arithmetic: str) -> list[int]:
    """Points per server of a weighted ketama continuum, in the given implementation's
    arithmetic: "libmemcached" / "twemproxy" (float32: 156 instead of 160 points per server
    at some sizes, e.g. 25 equal servers), "libketama" (float32 share times a double product,
    rounded to float: 156 only at 61 and 122 equal servers), or "uhashring" (integers)."""
    n = len(weights)
    total = sum(weights)
    out = []
    for w in weights:
        if arithmetic in ("libmemcached", "twemproxy"):
            pct = np.float32(w) / np.float32(total)
            v = np.float32(np.float32(pct * np.float32(160)) / np.float32(4)) * np.float32(n)
            labels = math.floor(_f32(float(v) + 0.0000000001))
        elif arithmetic == "libketama":
            pct = np.float32(w) / np.float32(total)
            labels = math.floor(_f32(float(pct) * 40.0 * float(n)))
        elif arithmetic == "uhashring":
            labels = 40 * n * w // total
        else:
            raise ValueError(f"unknown arithmetic {arithmetic!r}")
        out.append(4 * labels)
    return out


def _is_ipv6(host: str) -> bool:
    try:
        ipaddress.IPv6Address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _parse_server(spec: Any) -> tuple[str, str, int, int | None, str | None]:
    """(normalised "host:port", host, port, weight or None, twemproxy name or None)."""
    if not isinstance(spec, str):
        raise TypeError(f"servers must be str like 'host:port', got {type(spec).__name__!r}")
    text = spec.strip()
    name = None
    if " " in text:
        text, name = text.split(None, 1)
    weight = None
    if text.startswith("["):  # [ipv6]:port[:weight]
        host, bracket, rest = text[1:].partition("]")
        if not bracket or "[" in host or (":" in host and not _is_ipv6(host)):
            raise ValueError(f"bad server {spec!r}: expected '[IPv6 address]:port'")
        parts = rest.lstrip(":").split(":") if rest else []
    elif text.count(":") >= 2 and _is_ipv6(text.rpartition(":")[0]):
        host, _, port_text = text.rpartition(":")  # bare "v6:port", as HashClient names it
        parts = [port_text]
    elif text.count(":") >= 2 and _is_ipv6(text):
        host, parts = text, []  # a bare IPv6 address: the default port
    else:
        host, *parts = text.split(":")
    if not host or len(parts) > 2 or any(c.isspace() for c in host):
        raise ValueError(f"bad server {spec!r}: expected 'host', 'host:port' or "
                         "'host:port:weight'")
    try:
        port = int(parts[0]) if parts and parts[0] else 11211
        if len(parts) == 2:
            weight = int(parts[1])
    except ValueError:
        raise ValueError(f"bad server {spec!r}: port and weight must be integers") from None
    if not 0 < port < 65536:
        raise ValueError(f"bad server {spec!r}: port must be in 1..65535")
    return f"{host}:{port}", host, port, weight, name


class KetamaRing(Router):
    """A ketama continuum placed exactly as libmemcached, libketama or twemproxy place it.

    Parameters
    ----------
    servers : iterable of str
        ``"host:port"``, ``"host"`` (port 11211) or ``"host:port:weight"``; twemproxy mode also
        takes its ``"host:port:weight name"`` form.  IPv6: ``"[v6]:port[:weight]"``, or bare
        ``"v6:port"`` as pymemcache's HashClient names a server (the name the ring reports).
        Order matters, as in the originals.
    weights : mapping server -> int, optional
        Integer weights (default 1, or the weight in the server string).
    mode : str, required
        One of ``KETAMA_MODES`` (see the module docstring for which client setting each is).
    hash : {"md5", "one_at_a_time"}, optional
        The key hash, when it is not the mode's default.

    Examples
    --------
    >>> ring = KetamaRing(["10.0.0.1:11211", "10.0.0.2:11211"], mode="ketama")
    >>> ring.get("user:42")
    '10.0.0.2:11211'
    """

    __slots__ = ("_mode", "_hash_name", "_specs", "_weights")
    _kind = KIND_KETAMA
    _replicas = True
    _hash_shift = 32  # the 32-bit key hash sits in the high half of the core's positions

    def __init__(self, servers: Iterable[str] = (), weights: Mapping[str, int] | None = None,
                 *, mode: str | None = None, hash: str | None = None) -> None:
        if mode is None:
            raise TypeError("KetamaRing needs mode=: one of " + ", ".join(KETAMA_MODES) +
                            ' (pylibmc {"ketama": True} is mode="ketama"; '
                            '{"ketama_weighted": True} is mode="ketama_weighted")')
        if mode not in KETAMA_MODES:
            raise ValueError(f"mode must be one of {KETAMA_MODES}, got {mode!r}")
        if hash is None:
            hash = _DEFAULT_HASH[mode]
        elif hash == "default":  # pylibmc's name for libmemcached's default, one-at-a-time
            hash = "one_at_a_time"
        if hash not in _KEY_HASHES:
            raise ValueError(f'hash must be "md5" or "one_at_a_time", got {hash!r}')
        if mode == "ketama_weighted" and hash != "md5":
            raise ValueError('mode="ketama_weighted" always hashes keys with MD5 (libmemcached '
                             'sets it); for one-at-a-time keys use mode="consistent_weighted"')
        self._mode = mode
        self._hash_name = hash
        self._lock = threading.Lock()
        if isinstance(servers, str):
            raise TypeError("servers must be an iterable of 'host:port' strings, not a str")
        specs: list[tuple[str, str, int, str | None]] = []
        ws: dict[str, int] = {}
        for s in servers:
            key, host, port, w, name = _parse_server(s)
            if key in ws:
                raise ValueError(f"duplicate server {key!r}")
            specs.append((key, host, port, name))
            ws[key] = 1 if w is None else w
        for k, w in (weights or {}).items():
            key = _parse_server(k)[0]
            if key not in ws:
                raise KeyError(f"weight given for {k!r}, which is not in servers")
            ws[key] = w
        for key, w in ws.items():
            _check_weight(w, key)
        self._install(tuple(specs), ws)

    # -- building ---------------------------------------------------------------------------

    def _weighted(self, ws: list[int]) -> bool:
        if self._mode in ("ketama_weighted", "consistent_weighted", "libketama", "twemproxy"):
            return True
        return any(w > 1 for w in ws)  # libmemcached switches to weighted points by itself

    def _label_prefix(self, host: str, port: int, name: str | None) -> bytes:
        if self._mode == "spy":
            return f"/{host}:{port}-".encode()
        if self._mode == "libketama":
            return f"{host}:{port}-".encode()
        if self._mode == "twemproxy" and name is not None:
            return f"{name}-".encode()
        return (f"{host}-" if port == 11211 else f"{host}:{port}-").encode()

    def _install(self, specs: tuple[tuple[str, str, int, str | None], ...],
                 ws: dict[str, int]) -> None:
        names = tuple(s[0] for s in specs)
        weights = [ws[n] for n in names]
        prefixes = [self._label_prefix(h, p, nm) for _, h, p, nm in specs]
        if names and self._weighted(weights):
            arith = {"libketama": "libketama", "twemproxy": "twemproxy"}.get(self._mode,
                                                                             "libmemcached")
            counts = point_counts(weights, arith) if sum(weights) else [0] * len(weights)
            labels = np.array([c // 4 for c in counts], dtype=np.uint32)
            pos, own = compat_points(prefixes, labels, POINTS_DIGEST, 4)
        else:
            labels = np.full(len(names), 100, dtype=np.uint32)
            pos, own = compat_points(prefixes, labels, POINTS_HASH, 1,
                                     compat_hasher(_KEY_HASHES[self._hash_name]).hid)
        sort_points(pos, own)  # ties: the earlier server first, as the originals' stable sort
        core = _Ring(pos, own, names, compat_hasher(_KEY_HASHES[self._hash_name]))
        self._specs, self._weights = specs, {n: ws[n] for n in names}
        self._core = core

    # -- changes ----------------------------------------------------------------------------

    def add(self, server: str, weight: int | None = None) -> None:
        """Append a server (as a client whose server list gained it at the end)."""
        key, host, port, w, name = _parse_server(server)
        w = (1 if w is None else w) if weight is None else weight
        _check_weight(w, key)
        with self._lock:
            specs, ws = self._specs, self._weights
            if key in ws:
                raise ValueError(f"server {key!r} is already in the ring")
            self._install(specs + ((key, host, port, name),), {**ws, key: w})

    def remove(self, server: str) -> None:
        """Remove a server; raises KeyError if it is absent."""
        key = _parse_server(server)[0]
        with self._lock:
            specs, ws = self._specs, self._weights
            if key not in ws:
                raise KeyError(server)
            self._install(tuple(s for s in specs if s[0] != key),
                          {n: w for n, w in ws.items() if n != key})

    def set_weight(self, server: str, weight: int) -> None:
        """Change a server's weight; raises KeyError if it is absent."""
        key = _parse_server(server)[0]
        _check_weight(weight, key)
        with self._lock:
            specs, ws = self._specs, self._weights
            if key not in ws:
                raise KeyError(server)
            self._install(specs, {**ws, key: weight})

    # -- introspection ----------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def hash_name(self) -> str:
        return self._hash_name

    @property
    def weights(self) -> dict[str, int]:
        return dict(self._weights)

    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """The continuum's point values (32-bit, as uint64), ascending."""
        return self._core.positions >> np.uint64(32)  # type: ignore[no-any-return, unused-ignore]

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        owners: npt.NDArray[np.int32] = self._core.owners
        return owners

    def __contains__(self, server: object) -> bool:
        if not isinstance(server, str):
            return False
        try:
            return _parse_server(server)[0] in self._weights
        except (TypeError, ValueError):
            return False

    # -- state and serialization --------------------------------------------------------------

    def _servers(self) -> list[str]:
        """The servers as the constructor takes them (a twemproxy name after the address)."""
        return [s[0] if s[3] is None else f"{s[0]}:1 {s[3]}" for s in self._specs]

    def _state(self) -> tuple[Any, ...]:
        return (self._servers(), dict(self._weights), self._mode, self._hash_name)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> KetamaRing:
        servers, weights, mode, hash = state
        return cls(servers, weights, mode=mode, hash=hash)

    def _payload(self) -> bytes:
        parts = [_format.pack_str(self._mode), _format.pack_str(self._hash_name),
                 _format.pack_names(self._servers())]
        parts += [struct.pack("<I", self._weights[s[0]]) for s in self._specs]
        return b"".join(parts)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> KetamaRing:
        mode, hash = _format.read_str(r), _format.read_str(r)
        servers = _format.read_names(r)
        counts = r.unpack(f"{len(servers)}I")
        weights = {_parse_server(s)[0]: int(w) for s, w in zip(servers, counts, strict=True)}
        return cls(servers, weights, mode=mode, hash=hash)

    def _repr_args(self) -> str:
        return (f"{list(self.nodes)!r}, mode={self._mode!r}"
                + ("" if self._hash_name == _DEFAULT_HASH[self._mode]
                   else f", hash={self._hash_name!r}"))


def _check_weight(w: Any, server: str) -> None:
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
        raise TypeError(f"weight of {server!r} must be an int, got {type(w).__name__!r}")
    if not 1 <= w <= _MAX_WEIGHT:
        raise ValueError(f"weight of {server!r} must be between 1 and 2**32 - 1, got {w}")
