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

import math
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash._containers import as_hashes, route_hashes
from consistent_hash._containers import hash_many as _hash_many
from consistent_hash._containers import replicas as _route_replicas
from consistent_hash._containers import route as _route
from consistent_hash._ring import (
    HASH_IDS,
    POINTS_DIGEST,
    POINTS_HASH,
    _Hasher,
    _Ring,
    compat_points,
    sort_points,
)
from consistent_hash._validate import check_n

__all__ = ["KETAMA_MODES", "KetamaRing", "point_counts"]

KETAMA_MODES = ("ketama_weighted", "ketama", "consistent_weighted", "spy", "libketama",
                "twemproxy")
_DEFAULT_HASH = {"ketama_weighted": "md5", "ketama": "one_at_a_time",
                 "consistent_weighted": "one_at_a_time", "spy": "one_at_a_time",
                 "libketama": "md5", "twemproxy": "md5"}
_KEY_HASH_IDS = {"md5": HASH_IDS["ketama_md5"], "one_at_a_time": HASH_IDS["one_at_a_time"]}
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
    name = None
    if " " in text:
        text, name = text.split(None, 1)
    weight = None
    if text.startswith("["):  # [ipv6]:port[:weight]
        host, _, rest = text[1:].partition("]")
        parts = rest.lstrip(":").split(":") if rest else []
    else:
        host, *parts = text.split(":")
    if not host or len(parts) > 2:
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


class KetamaRing:
    """A ketama continuum placed exactly as libmemcached, libketama or twemproxy place it.

    Parameters
    ----------
    servers : iterable of str
        ``"host:port"``, ``"host"`` (port 11211) or ``"host:port:weight"``; twemproxy mode also
        takes its ``"host:port:weight name"`` form.  Order matters, as in the originals.
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

    __slots__ = ("_mode", "_hash_name", "_hasher", "_lock", "_state", "__weakref__")

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
        if hash not in _KEY_HASH_IDS:
            raise ValueError(f'hash must be "md5" or "one_at_a_time", got {hash!r}')
        if mode == "ketama_weighted" and hash != "md5":
            raise ValueError('mode="ketama_weighted" always hashes keys with MD5 (libmemcached '
                             'sets it); for one-at-a-time keys use mode="consistent_weighted"')
        self._mode = mode
        self._hash_name = hash
        self._hasher = _Hasher(_KEY_HASH_IDS[hash], 0, None)
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
            pos, own = compat_points(prefixes, labels, POINTS_HASH, 1, self._hasher.hid)
        sort_points(pos, own)  # ties: the earlier server first, as the originals' stable sort
        core = _Ring(pos, own, names, self._hasher)
        self._state = (core, specs, {n: ws[n] for n in names})

    # -- changes ----------------------------------------------------------------------------

    def add(self, server: str, weight: int | None = None) -> None:
        """Append a server (as a client whose server list gained it at the end)."""
        key, host, port, w, name = _parse_server(server)
        w = (1 if w is None else w) if weight is None else weight
        _check_weight(w, key)
        with self._lock:
            core, specs, ws = self._state
            if key in ws:
                raise ValueError(f"server {key!r} is already in the ring")
            self._install(specs + ((key, host, port, name),), {**ws, key: w})

    def remove(self, server: str) -> None:
        """Remove a server; raises KeyError if it is absent."""
        key = _parse_server(server)[0]
        with self._lock:
            core, specs, ws = self._state
            if key not in ws:
                raise KeyError(server)
            self._install(tuple(s for s in specs if s[0] != key),
                          {n: w for n, w in ws.items() if n != key})

    def set_weight(self, server: str, weight: int) -> None:
        """Change a server's weight; raises KeyError if it is absent."""
        key = _parse_server(server)[0]
        _check_weight(weight, key)
        with self._lock:
            core, specs, ws = self._state
            if key not in ws:
                raise KeyError(server)
            self._install(specs, {**ws, key: weight})

    # -- lookups ----------------------------------------------------------------------------

    def get(self, key: str | bytes | int) -> str:
        """The server of one key (str is hashed as UTF-8, int as its decimal digits)."""
        return self._state[0].get(key)

    def get_many(self, keys: Any) -> npt.NDArray[np.object_]:
        """The server of each key, as an object array (any container HashRing accepts)."""
        core = self._state[0]
        result: npt.NDArray[np.object_] = core.nodes_array()[_route(core, keys, hint=False)]
        return result

    def get_indices(self, keys: Any, out: npt.NDArray[np.int32] | None = None
                    ) -> npt.NDArray[np.int32]:
        """int32 index into ``ring.nodes`` of each key's server."""
        core = self._state[0]
        return _route(core, keys, out, hint=False)

    def lookup(self, hashes: Any) -> npt.NDArray[np.int32]:
        """Route keys already hashed: the 32-bit key hashes (as ``hash`` gives them)."""
        h = as_hashes(hashes)
        if h.size and int(h.max()) >> 32:
            raise ValueError("ketama key hashes are 32-bit: values must be below 2**32")
        result: npt.NDArray[np.int32] = route_hashes(self._state[0], h << np.uint64(32))
        return result

    def hash(self, key: str | bytes | int) -> int:
        """The 32-bit key hash the client computes for a key."""
        return int(self._hasher.hash(key)) >> 32  # ring positions hold it in the high half

    def hash_many(self, keys: Any) -> npt.NDArray[np.uint64]:
        """The 32-bit key hash of every key (as uint64)."""
        # np.uint64(...) is Any in numpy's stubs for Python 3.10 only, hence unused-ignore.
        return _hash_many(self._hasher, keys) >> np.uint64(32)  # type: ignore[no-any-return, unused-ignore]

    def replicas(self, key: str | bytes | int, n: int) -> list[str]:
        """The first ``min(n, len(ring))`` distinct servers clockwise from the key."""
        n = check_n(n)
        core = self._state[0]
        core.check_nonempty()
        r = min(n, len(core.nodes))
        i = core.position_index(core.hasher.hash(key))
        return [core.nodes[j] for j in core.replica_table(r)[i]]

    def replica_indices(self, keys: Any, n: int) -> npt.NDArray[np.int32]:
        n = check_n(n)
        core = self._state[0]
        core.check_nonempty()
        return _route_replicas(core, keys, min(n, len(core.nodes)))

    def replicas_many(self, keys: Any, n: int) -> npt.NDArray[np.object_]:
        core = self._state[0]
        result: npt.NDArray[np.object_] = core.nodes_array()[self.replica_indices(keys, n)]
        return result

    # -- introspection ----------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def hash_name(self) -> str:
        return self._hash_name

    @property
    def nodes(self) -> tuple[str, ...]:
        """Servers as "host:port", in ring order (the order they were given and added)."""
        return self._state[0].nodes

    @property
    def weights(self) -> dict[str, int]:
        return dict(self._state[2])

    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """The continuum's point values (32-bit, as uint64), ascending."""
        return self._state[0].positions >> np.uint64(32)  # type: ignore[no-any-return, unused-ignore]

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        return self._state[0].owners

    def __len__(self) -> int:
        return len(self._state[0].nodes)

    def __contains__(self, server: object) -> bool:
        if not isinstance(server, str):
            return False
        try:
            return _parse_server(server)[0] in self._state[2]
        except (TypeError, ValueError):
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._state[0].nodes)

    def __repr__(self) -> str:
        return (f"KetamaRing({list(self.nodes)!r}, mode={self._mode!r}"
                + ("" if self._hash_name == _DEFAULT_HASH[self._mode]
                   else f", hash={self._hash_name!r}") + ")")

    def __reduce__(self) -> tuple[Any, ...]:
        specs = self._state[1]
        servers = [s[0] if s[3] is None else f"{s[0]}:1 {s[3]}" for s in specs]
        return (_rebuild, (servers, dict(self._state[2]), self._mode, self._hash_name))


def _rebuild(servers: list[str], weights: dict[str, int], mode: str, hash: str) -> KetamaRing:
    return KetamaRing(servers, weights, mode=mode, hash=hash)


def _check_weight(w: Any, server: str) -> None:
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
        raise TypeError(f"weight of {server!r} must be an int, got {type(w).__name__!r}")
    if not 1 <= w <= _MAX_WEIGHT:
        raise ValueError(f"weight of {server!r} must be between 1 and 2**32 - 1, got {w}")
