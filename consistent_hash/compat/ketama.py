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
``"spy_weighted"``            ``{"ketama_weighted": True, "distribution":            MD5
                              "consistent ketama spy"}``: the weighted MD5 points
                              of ``"ketama_weighted"`` over the spy labels
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

``KetamaRing.from_behaviors(servers, behaviors)`` takes the pylibmc behaviors dict itself and
picks the mode and key hash as libmemcached 1.0.16 ends up with them.

Servers are ``"host:port"`` strings (``"host"`` means port 11211), optionally
``"host:port:weight"`` as pylibmc takes them, or a unix socket path (``"/run/mc.sock"``, in
the libmemcached modes: it is named by its path and hashed as libmemcached hashes it, with
port 0); their order matters (two points at the same
value go to the earlier server), as it does for the originals.  A key goes to the first point
at or after its hash, wrapping round.
"""

from __future__ import annotations

import math
import struct
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _containers, _format, _threads
from consistent_hash._address import bare_v6_port
from consistent_hash._core import POINTS_DIGEST, POINTS_HASH, compat_points
from consistent_hash._hashes import compat_hasher
from consistent_hash._ringbase import RingLayout, build_ring
from consistent_hash._router import Key, Router
from consistent_hash._validate import check_nulls, is_ip

__all__ = ["KETAMA_MODES", "REPLICA_ORDERS", "KetamaRing", "behaviors_mode", "point_counts"]

KETAMA_MODES = ("ketama_weighted", "ketama", "consistent_weighted", "spy", "libketama",
                "twemproxy", "spy_weighted")
_DEFAULT_HASH = {"ketama_weighted": "md5", "ketama": "one_at_a_time",
                 "consistent_weighted": "one_at_a_time", "spy": "one_at_a_time",
                 "libketama": "md5", "twemproxy": "md5", "spy_weighted": "md5"}
# the modes that model libmemcached (they take unix socket paths as servers)
_LIBMEMCACHED_MODES = ("ketama_weighted", "ketama", "consistent_weighted", "spy", "spy_weighted")
_KEY_HASHES = {"md5": "ketama_md5", "one_at_a_time": "one_at_a_time"}
KIND_KETAMA = _format.KINDS["KetamaRing"]
REPLICA_ORDERS = ("continuum", "server_list")
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


def _parse_server(spec: Any) -> tuple[str, str, int, int | None, str | None]:
    """(normalised "host:port", host, port, weight or None, twemproxy name or None)."""
    if not isinstance(spec, str):
        raise TypeError(f"servers must be str like 'host:port', got {type(spec).__name__!r}")
    text = spec.strip()
    if text.startswith("/"):  # a unix socket: libmemcached names it by its path, port 0
        return text, text, 0, None, None
    name = None
    if " " in text:
        text, name = text.split(None, 1)
    weight = None
    if text.startswith("["):  # [ipv6]:port[:weight]
        host, bracket, rest = text[1:].partition("]")
        # (a bracketed "/..." would be named "/...:port", which reads back as a socket path)
        if (not bracket or "[" in host or not host or host.startswith("/")
                or (":" in host and not is_ip(host, v6=True))):
            raise ValueError(f"bad server {spec!r}: expected '[IPv6 address]:port'")
        parts = rest.lstrip(":").split(":") if rest else []
    elif (v6_port := bare_v6_port(text)) is not None:
        host, port_text = v6_port  # bare "v6:port", as HashClient names it
        parts = [port_text]
    elif text.count(":") >= 2 and is_ip(text, v6=True):
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


class KetamaRing(RingLayout):
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
    replica_order : {"continuum", "server_list"}, default "continuum"
        What ``replicas`` orders after a key's server: the next distinct servers clockwise on
        the continuum, or the servers after it in the server list, wrapping round, which is
        where libmemcached writes its ``num_replicas`` copies (``from_behaviors`` picks it
        when the behaviors ask for replicas).

    Examples
    --------
    >>> ring = KetamaRing(["10.0.0.1:11211", "10.0.0.2:11211"], mode="ketama")
    >>> ring.get("user:42")
    '10.0.0.2:11211'
    """

    __slots__ = ("_mode", "_hash_name", "_specs", "_weights", "_replica_order")
    _kind = KIND_KETAMA
    # a down server leaves the continuum as libmemcached's auto eject takes it out: rebuilt
    _walk_on = False
    _hash_shift = 32  # the 32-bit key hash sits in the high half of the core's positions

    def __init__(self, servers: Iterable[str] = (), weights: Mapping[str, int] | None = None,
                 *, mode: str | None = None, hash: str | None = None,
                 replica_order: str = "continuum") -> None:
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
        if replica_order not in REPLICA_ORDERS:
            raise ValueError(f"replica_order must be one of {REPLICA_ORDERS}, got "
                             f"{replica_order!r}")
        self._mode = mode
        self._hash_name = hash
        self._replica_order = replica_order
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
        for spec in specs:
            self._check_kind(spec)
        self._install(tuple(specs), ws)

    def _check_kind(self, spec: tuple[str, str, int, str | None]) -> None:
        if spec[2] == 0 and self._mode not in _LIBMEMCACHED_MODES:
            raise ValueError(f"server {spec[0]!r} is a unix socket path, which only the "
                             f"libmemcached modes take ({', '.join(_LIBMEMCACHED_MODES)}), "
                             f"not mode={self._mode!r}")

    @classmethod
    def from_behaviors(cls, servers: Iterable[str], behaviors: Mapping[str, Any] | None = None,
                       weights: Mapping[str, int] | None = None) -> KetamaRing:
        """The ring a ``pylibmc.Client(servers, behaviors=behaviors)`` routes with.

        The behaviors are applied as pylibmc 1.6 applies them to libmemcached 1.0.16: in
        pylibmc's fixed order (``hash``, ``ketama_hash``, ``ketama``, ``ketama_weighted``,
        ``distribution``, whatever the dict's order), each changing the distribution, the
        weighted-points flag and the key hash as ``memcached_behavior_set`` does; then the
        servers are added, and a server of weight > 1 turns weighted points on.  So
        ``{"ketama_weighted": True}`` is ``mode="ketama_weighted"``, adding ``"distribution":
        "consistent ketama spy"`` is ``mode="spy_weighted"`` and adding ``"distribution":
        "consistent"`` instead gives 100 one-point labels a server hashed with MD5 (``mode=
        "ketama", hash="md5"``).  Behaviors that do not move keys (timeouts, ``cas``,
        ``ketama_hash``, which libmemcached 1.0.16 stores but never uses, ...) are accepted and
        ignored.  ValueError for a name pylibmc does not know, a value it refuses, a layout
        that is not a ketama continuum (``modula``, libmemcached's default, ``random``,
        ``virtual bucket``) and what KetamaRing does not model (a key hash other than
        ``"default"`` / ``"md5"``, ``_sort_hosts``, ``_hash_with_prefix_key``).

        ``num_replicas``: libmemcached (over the binary protocol, pylibmc ``binary=True``; the
        text protocol stores no replicas) writes a key to its server and to the
        ``num_replicas`` servers after that one *in the server list*, wrapping round, not to
        the next servers on the continuum.  With it the ring has ``replica_order=
        "server_list"``, so ``replicas(key, num_replicas + 1)`` names the servers that hold
        the key.  libmemcached keeps the value as a 32-bit unsigned int (-1 is 4294967295
        replicas, 2**32 is none), and so does this."""
        if isinstance(servers, str):
            raise TypeError("servers must be an iterable of pylibmc server strings, not a str")
        specs = [_strip_scheme(s) for s in servers]
        ws = [_parse_server(s)[3] for s in specs]
        if weights:
            named = {_parse_server(k)[0]: w for k, w in weights.items()}
            ws = [named.get(_parse_server(s)[0], w) for s, w in zip(specs, ws, strict=True)]
        mode, hash = behaviors_mode(behaviors, any(w is not None and w > 1 for w in ws))
        replicas = (_flag(behaviors, "num_replicas") & 0xFFFFFFFF
                    if behaviors and "num_replicas" in behaviors else 0)
        return cls(specs, weights, mode=mode, hash=hash,
                   replica_order="server_list" if replicas else "continuum")

    # -- replicas ---------------------------------------------------------------------------

    @property
    def replica_order(self) -> str:
        """``"continuum"`` or ``"server_list"`` (libmemcached's ``num_replicas``)."""
        return self._replica_order

    @property
    def _replicas_in_core(self) -> bool:
        # continuum: the core's order (the C replicas); server_list: _replicas_slow below
        return self._replica_order == "continuum"

    def _replicas_slow(self, key: Key, n: int) -> list[str]:
        if self._replica_order == "continuum":
            return super()._replicas_slow(key, n)
        core, r = self._replica_count(n)
        core.check_nonempty()
        nodes, first = core.nodes, int(core.replica_row(key, 1)[0])
        if not core.down:  # the servers after the key's, in server-list order
            return [nodes[(first + x) % len(nodes)] for x in range(r)]
        up = _up(core)
        at = up.index(first)
        return [nodes[up[(at + x) % len(up)]] for x in range(r)]

    def replica_indices(self, keys: Any, n: int, *, nulls: str = "raise",
                        threads: int | None = None) -> npt.NDArray[np.int32]:
        if self._replica_order == "continuum":
            return super().replica_indices(keys, n, nulls=nulls, threads=threads)
        core, r = self._replica_count(n)
        self._check_keys(keys)
        first = _containers.route(core, keys, None, nulls=check_nulls(nulls),
                                  threads=_threads.resolve(threads))
        # the servers after each key's in the list, wrapping round, past the ones marked down
        up = np.array(_up(core), dtype=np.int32)
        at = np.searchsorted(up, first)
        rows = up[(at[:, None] + np.arange(r)) % max(len(up), 1)] if len(up) else np.empty(
            (len(first), 0), dtype=np.int32)
        rows[first < 0] = -1
        return np.ascontiguousarray(rows, dtype=np.int32)

    replica_indices.__doc__ = Router.replica_indices.__doc__

    # -- building ---------------------------------------------------------------------------

    def _weighted(self, ws: list[int]) -> bool:
        if self._mode in ("ketama_weighted", "consistent_weighted", "libketama", "twemproxy",
                          "spy_weighted"):
            return True
        return any(w > 1 for w in ws)  # libmemcached switches to weighted points by itself

    def _label_prefix(self, host: str, port: int, name: str | None) -> bytes:
        if self._mode in ("spy", "spy_weighted"):
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
        # ties: the earlier server first, as the originals' stable sort
        core = build_ring(pos, own, names, compat_hasher(_KEY_HASHES[self._hash_name]))
        self._specs, self._weights = specs, {n: ws[n] for n in names}
        self._set_core(core)

    # -- changes ----------------------------------------------------------------------------

    def add(self, server: str, weight: int | None = None) -> None:
        """Append a server (as a client whose server list gained it at the end)."""
        key, host, port, w, name = _parse_server(server)
        w = (1 if w is None else w) if weight is None else weight
        _check_weight(w, key)
        self._check_kind((key, host, port, name))
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

    def ownership(self) -> dict[str, float]:
        """The exact share of the 32-bit continuum each server receives (sums to 1; a
        server marked down receives 0): arc lengths summed as integers."""
        return super().ownership()

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
        return (self._servers(), dict(self._weights), self._mode, self._hash_name,
                self._replica_order)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> KetamaRing:
        servers, weights, mode, hash, *order = state  # a pickle of before replica_order: 4
        return cls(servers, weights, mode=mode, hash=hash, replica_order=(order or [
            "continuum"])[0])

    def _payload(self) -> bytes:
        parts = [_format.pack_str(self._mode), _format.pack_str(self._hash_name),
                 _format.pack_names(self._servers())]
        parts += [struct.pack("<I", self._weights[s[0]]) for s in self._specs]
        if self._replica_order != "continuum":  # absent: the payloads of before it, unchanged
            parts.append(_format.pack_str(self._replica_order))
        return b"".join(parts)

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> KetamaRing:
        mode, hash = _format.read_str(r), _format.read_str(r)
        servers = _format.read_names(r)
        counts = r.unpack(f"{len(servers)}I")
        weights = {_parse_server(s)[0]: int(w) for s, w in zip(servers, counts, strict=True)}
        order = _format.read_str(r) if r.remaining() else "continuum"
        return cls(servers, weights, mode=mode, hash=hash, replica_order=order)

    def _repr_args(self) -> str:
        return (f"{list(self.nodes)!r}, mode={self._mode!r}"
                + ("" if self._hash_name == _DEFAULT_HASH[self._mode]
                   else f", hash={self._hash_name!r}")
                + ("" if self._replica_order == "continuum"
                   else f", replica_order={self._replica_order!r}"))


def _up(core: Any) -> list[int]:
    """The indices of the servers not marked down, in server-list order."""
    down = core.down
    return [i for i, n in enumerate(core.nodes) if n not in down]


def _check_weight(w: Any, server: str) -> None:
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
        raise TypeError(f"weight of {server!r} must be an int, got {type(w).__name__!r}")
    if not 1 <= w <= _MAX_WEIGHT:
        raise ValueError(f"weight of {server!r} must be between 1 and 2**32 - 1, got {w}")


# -- pylibmc behaviors ------------------------------------------------------------------------

# pylibmc 1.6.3's names (src/_pylibmcmodule.h, PylibMC_behaviors and PylibMC_callbacks), and its
# hash and distribution names with libmemcached's numbers (what pylibmc.consts exposes)
_PYLIBMC_BEHAVIORS = frozenset((
    "no_block", "tcp_nodelay", "tcp_keepalive", "hash", "ketama_hash", "ketama",
    "ketama_weighted", "distribution", "cas", "buffer_requests", "verify_keys",
    "connect_timeout", "send_timeout", "receive_timeout", "num_replicas", "auto_eject",
    "retry_timeout", "remove_failed", "failure_limit", "_io_msg_watermark",
    "_io_bytes_watermark", "_io_key_prefetch", "_hash_with_prefix_key", "_noreply",
    "_sort_hosts", "_poll_timeout", "_socket_send_size", "_socket_recv_size", "dead_timeout",
    "pickle_protocol", "namespace", "_retry_timeout"))
_PYLIBMC_HASHES = {"default": 0, "md5": 1, "crc": 2, "fnv1_64": 3, "fnv1a_64": 4,
                   "fnv1_32": 5, "fnv1a_32": 6, "hsieh": 7, "murmur": 8, "jenkins": 9}
_CONSISTENT = ("consistent", "consistent ketama", "consistent ketama spy",
               "consistent weighted")
_PYLIBMC_DISTRIBUTIONS = (*_CONSISTENT, "modula", "random", "virtual bucket", "consistent max")


def _flag(behaviors: Mapping[str, Any], name: str) -> int:
    v = behaviors[name]
    if not isinstance(v, (int, np.integer)):  # pylibmc: "behavior X must be int"
        raise TypeError(f"behavior {name!r} must be an int or bool, got {type(v).__name__!r}")
    return int(v)


def behaviors_mode(behaviors: Mapping[str, Any] | None, weighted_server: bool = False
                   ) -> tuple[str, str]:
    """(mode, hash) of KetamaRing for a pylibmc behaviors dict; ``weighted_server``: some
    server has a weight > 1.  See KetamaRing.from_behaviors."""
    if behaviors is None:
        behaviors = {}
    if not isinstance(behaviors, Mapping):
        raise TypeError(f"behaviors must be a dict, got {type(behaviors).__name__!r}")
    unknown = sorted(str(k) for k in behaviors if k not in _PYLIBMC_BEHAVIORS)
    if unknown:
        raise ValueError(f"unknown behavior names: {', '.join(unknown)} (pylibmc refuses them)")
    # libmemcached's state, from memcached_create: modula, unweighted, one-at-a-time keys
    dist, weighted, key_hash = "modula", False, "default"
    if "hash" in behaviors:  # pylibmc's order: hash, ketama_hash, ketama, ketama_weighted, ...
        h = behaviors["hash"]
        if not isinstance(h, str) or h not in _PYLIBMC_HASHES:
            raise ValueError(f"behavior 'hash' must be one of {sorted(_PYLIBMC_HASHES)}, "
                             f"got {h!r}")
        key_hash = h
    if "ketama_hash" in behaviors:  # stored by libmemcached 1.0.16, never used for placement
        h = behaviors["ketama_hash"]
        if not (h in _PYLIBMC_HASHES if isinstance(h, str) else
                isinstance(h, (int, np.integer)) and int(h) in _PYLIBMC_HASHES.values()):
            raise ValueError(f"behavior 'ketama_hash' must be one of {sorted(_PYLIBMC_HASHES)},"
                             f" got {h!r}")
    if "ketama" in behaviors:
        if _flag(behaviors, "ketama"):
            dist, weighted = "consistent ketama", False
        else:
            dist = "modula"
    if "ketama_weighted" in behaviors:
        if _flag(behaviors, "ketama_weighted"):
            dist, weighted, key_hash = "consistent weighted", True, "md5"
        else:  # libmemcached: turning it off turns plain ketama on
            dist, weighted = "consistent ketama", False
    if "distribution" in behaviors:
        d = behaviors["distribution"]
        if not isinstance(d, str) or d not in _PYLIBMC_DISTRIBUTIONS:
            raise ValueError(f"behavior 'distribution' must be one of "
                             f"{list(_PYLIBMC_DISTRIBUTIONS)}, got {d!r}")
        if d == "consistent max":
            raise ValueError("distribution 'consistent max' is refused by libmemcached")
        dist = d
        if d in ("consistent", "consistent ketama"):
            weighted = False
        elif d == "consistent weighted":
            weighted = True
    for name in ("_sort_hosts", "_hash_with_prefix_key"):
        if name in behaviors and _flag(behaviors, name):
            raise ValueError(f"behavior {name!r} changes where keys go in a way KetamaRing "
                             "does not model")
    if dist not in _CONSISTENT:
        raise ValueError(f"these behaviors give libmemcached's {dist!r} distribution, not a "
                         'ketama continuum (set {"ketama": True} or {"ketama_weighted": True})')
    if key_hash not in ("default", "md5"):
        raise ValueError(f"key hash {key_hash!r}: KetamaRing models libmemcached's 'default' "
                         "(one-at-a-time) and 'md5' key hashes only")
    if weighted_server:  # memcached_server_add: weight > 1 on a consistent distribution
        weighted = True
    hash = "md5" if key_hash == "md5" else "one_at_a_time"
    if dist == "consistent ketama spy":
        return ("spy_weighted" if weighted else "spy"), hash
    if weighted:
        return ("ketama_weighted" if hash == "md5" else "consistent_weighted"), hash
    return "ketama", hash


def _strip_scheme(spec: Any) -> Any:
    """pylibmc's "tcp:" / "udp:" / "unix:" prefixes (placement does not depend on them)."""
    if isinstance(spec, str):
        for scheme in ("tcp:", "udp:", "unix:"):
            if spec.startswith(scheme):
                return spec[len(scheme):]
    return spec
