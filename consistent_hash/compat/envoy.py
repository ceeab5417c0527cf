"""Envoy's ``ring_hash`` and ``maglev`` load balancers, exactly: where Envoy sends a request.

A service that routes the same keys as an Envoy cluster with ``lb_policy: RING_HASH`` or
``MAGLEV`` (a header hash policy keeping a user's requests on the host that holds its state)
can predict Envoy's choice with these routers.  Both are written from Envoy's source
(``source/extensions/load_balancing_policies/{ring_hash,maglev}/``,
``.../common/thread_aware_lb_impl.cc``) and checked against every placement expectation in
Envoy's own unit tests (docs/agreeing-with-envoy.md says which files, at which commits).

Nodes are the endpoints as Envoy names them when it hashes them: the address
``"10.0.0.1:8080"`` (``"[::1]:8080"`` for IPv6), or the endpoint's ``hostname`` when
``use_hostname_for_hashing`` is set; ``hash_keys`` gives the ``envoy.lb`` ``hash_key``
metadata that, when present, is hashed instead.  Order matters for ``EnvoyRingHash`` (as in
Envoy, where the hosts' order decides how fractional shares of the ring are rounded):
give the endpoints in the order the cluster lists them.

Keys: ``get(key)`` routes a key as a header hash policy routes that header's value, by
``xxHash64(value, seed 0)``; ``lookup(hashes)`` routes the 64-bit hashes Envoy computed
(any hash policy); ``header_hash`` gives the hash of a header with several values.

``from_config(text)`` builds the router from an Envoy cluster (YAML, JSON, or a parsed dict;
a whole bootstrap with ``static_resources.clusters`` too, or an admin ``/config_dump``).
"""

from __future__ import annotations

import json
import math
import os
import socket
import struct
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._ring import (
    HASH_IDS,
    POINTS_HASH,
    _Hasher,
    _MaglevTable,
    compat_points,
    envoy_maglev_table,
    hash_bytes,
)
from consistent_hash._ringbase import build_ring
from consistent_hash._router import Router
from consistent_hash._validate import check_int
from consistent_hash.algorithms.maglev import is_prime
from consistent_hash.compat.config import NameNeeded

__all__ = ["HASH_FUNCTIONS", "EnvoyMaglev", "EnvoyRingHash", "from_config", "header_hash"]

KIND_ENVOY_RING = _format.KINDS["EnvoyRingHash"]
KIND_ENVOY_MAGLEV = _format.KINDS["EnvoyMaglev"]

HASH_FUNCTIONS = ("XX_HASH", "MURMUR_HASH_2")
_POINT_HASH = {"XX_HASH": HASH_IDS["xxh64"], "MURMUR_HASH_2": HASH_IDS["envoy_murmur2"]}

DEFAULT_MIN_RING_SIZE = 1024
DEFAULT_MAX_RING_SIZE = 8 * 1024 * 1024     # also the largest either bound may be
DEFAULT_TABLE_SIZE = 65537
MAX_TABLE_SIZE = 5000011                    # Envoy's validation bound on table_size
_U32 = (1 << 32) - 1

Locality = tuple[str, str, str]
_NO_LOCALITY: Locality = ("", "", "")


def _key_hasher() -> _Hasher:
    """Envoy's hash of a header value: xxHash64 with seed 0."""
    return _Hasher(HASH_IDS["xxh64"], 0, None)


def header_hash(values: str | bytes | Iterable[str | bytes]) -> int:
    """The hash Envoy's header hash policy gives a request: ``xxHash64(value, 0)`` for one
    value; for a header sent several times, the values sorted (as bytes) and chained,
    ``h = xxHash64(value, h)`` from ``h = 0``.  Route it with ``router.lookup([h])``."""
    if isinstance(values, (str, bytes)):
        values = [values]
    bs = sorted(v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values)
    if not bs:
        raise ValueError("values: a header hash needs at least one value")
    h = 0
    for b in bs:
        h = int(hash_bytes("xxh64", b, h))
    return h


# -- the host set: names, hash keys, weights, localities --------------------------------------

def _locality(value: Any, node: str) -> Locality:
    """A locality as (region, zone, sub_zone): a tuple of up to three str, or one str
    "region/zone/sub_zone" (missing parts empty: "/us-east-1a" is zone us-east-1a)."""
    if value is None:
        return _NO_LOCALITY
    if isinstance(value, str):
        parts = value.split("/")
    elif isinstance(value, (tuple, list)):
        parts = list(value)
    else:
        raise TypeError(f"locality of {node!r} must be a str 'region/zone/sub_zone' or a tuple "
                        f"of str, got {type(value).__name__!r}")
    if len(parts) > 3 or not all(isinstance(p, str) for p in parts):
        raise ValueError(f"locality of {node!r} must have at most 3 str parts (region, zone, "
                         f"sub_zone), got {value!r}")
    parts += [""] * (3 - len(parts))
    return (parts[0], parts[1], parts[2])


def _locality_name(loc: Locality) -> str:
    return "/".join(loc).rstrip("/")


class _Hosts:
    """The hosts of one priority, in cluster order, with what Envoy needs of each."""

    __slots__ = ("names", "keys", "weights", "localities", "locality_weights")

    def __init__(self, names: tuple[str, ...], keys: tuple[str, ...], weights: tuple[int, ...],
                 localities: tuple[Locality, ...],
                 locality_weights: dict[Locality, int] | None) -> None:
        self.names, self.keys, self.weights = names, keys, weights
        self.localities, self.locality_weights = localities, locality_weights

    @classmethod
    def build(cls, hosts: Any, hash_keys: Any, localities: Any,
              locality_weights: Any) -> _Hosts:
        if isinstance(hosts, (str, bytes)):
            raise TypeError("hosts must be an iterable of endpoint names ('10.0.0.1:80' or "
                            f"hostnames) or a mapping name -> weight, not a single "
                            f"{type(hosts).__name__}")
        if isinstance(hosts, Mapping):
            items: list[tuple[Any, Any]] = list(hosts.items())
        else:
            try:
                items = [(h, 1) for h in hosts]
            except TypeError:
                raise TypeError("hosts must be an iterable of endpoint names or a mapping "
                                f"name -> weight, got {type(hosts).__name__!r}") from None
        names: list[str] = []
        weights: list[int] = []
        for name, w in items:
            if not isinstance(name, str):
                raise TypeError(f"host names must be str, got {type(name).__name__!r}")
            if not name:
                raise ValueError("host names must not be empty (Envoy hashes a non-empty key)")
            name.encode("utf-8")
            if name in names:
                raise ValueError(f"duplicate host {name!r} in hosts")
            names.append(name)
            weights.append(_check_weight(w, f"weight of host {name!r}"))
        if sum(weights) > _U32:
            raise ValueError("the hosts' weights must sum to at most 2**32 - 1 (Envoy refuses "
                             "larger sums)")
        keys = list(names)
        for node, key in _mapping(hash_keys, "hash_keys").items():
            if node not in names:
                raise KeyError(f"hash_keys names {node!r}, which is not in hosts")
            if not isinstance(key, str):
                raise TypeError(f"hash key of {node!r} must be a str, got "
                                f"{type(key).__name__!r}")
            if key:  # Envoy falls back to the name for an empty hash_key
                keys[names.index(node)] = key
        if len(set(keys)) != len(keys):
            dup = sorted({k for k in keys if keys.count(k) > 1})
            raise ValueError(f"hosts hash the same key {dup[0]!r}: Envoy would order them by "
                             "memory address, so their placement cannot be predicted")
        locs = [_NO_LOCALITY] * len(names)
        for node, loc in _mapping(localities, "localities").items():
            if node not in names:
                raise KeyError(f"localities names {node!r}, which is not in hosts")
            locs[names.index(node)] = _locality(loc, node)
        lw: dict[Locality, int] | None = None
        if locality_weights is not None:
            lw = {}
            for loc, w in _mapping(locality_weights, "locality_weights").items():
                key_loc = _locality(loc, "locality_weights")
                if key_loc in lw:
                    raise ValueError(f"locality {loc!r} appears twice in locality_weights")
                lw[key_loc] = check_int(w, f"weight of locality {loc!r}", 0, _U32)
            if sum(lw.values()) > _U32:
                raise ValueError("locality weights must sum to at most 2**32 - 1")
            for node, loc in zip(names, locs, strict=True):
                if loc not in lw:
                    raise ValueError(f"host {node!r} is in locality {_locality_name(loc)!r}, "
                                     "which locality_weights does not weigh")
        return cls(tuple(names), tuple(keys), tuple(weights), tuple(locs), lw)

    def normalized(self) -> list[tuple[int, float]]:
        """Envoy's normalized host weights, in Envoy's order: (host index, weight).

        Flat: w / sum(w).  Locality-weighted: localities in (region, zone, sub_zone) order,
        those of weight 0 left out, each host w * (lw / sum(lw)) / (sum of w in its locality),
        in the double arithmetic Envoy uses (normalizeWeights, thread_aware_lb_impl.cc)."""
        if self.locality_weights is None:
            total = sum(self.weights)
            return [(i, w * 1.0 / total) for i, w in enumerate(self.weights)]
        lw = self.locality_weights
        present = sorted(set(self.localities))
        lsum = sum(lw[loc] for loc in present)
        out: list[tuple[int, float]] = []
        if lsum == 0:
            return out
        for loc in present:
            if lw[loc] == 0:
                continue
            members = [i for i, x in enumerate(self.localities) if x == loc]
            share = float(lw[loc]) / lsum
            total = sum(self.weights[i] for i in members)
            out.extend((i, self.weights[i] * share / total) for i in members)
        return out

    # -- changes, state ---------------------------------------------------------------------

    def with_host(self, name: str, weight: int, key: str | None, locality: Any) -> _Hosts:
        loc = _locality(locality, name)
        return _Hosts.build(
            {**dict(zip(self.names, self.weights, strict=True)), name: weight},
            {**self._key_map(), **({name: key} if key else {})},
            {**self._loc_map(), name: loc}, self.locality_weights)

    def without(self, name: str) -> _Hosts:
        i = self.names.index(name)
        keep = [j for j in range(len(self.names)) if j != i]
        return _Hosts(tuple(self.names[j] for j in keep), tuple(self.keys[j] for j in keep),
                      tuple(self.weights[j] for j in keep),
                      tuple(self.localities[j] for j in keep), self.locality_weights)

    def reweighted(self, name: str, weight: int) -> _Hosts:
        ws = list(self.weights)
        ws[self.names.index(name)] = weight
        if sum(ws) > _U32:
            raise ValueError("the hosts' weights must sum to at most 2**32 - 1")
        return _Hosts(self.names, self.keys, tuple(ws), self.localities, self.locality_weights)

    def _key_map(self) -> dict[str, str]:
        return {n: k for n, k in zip(self.names, self.keys, strict=True) if k != n}

    def _loc_map(self) -> dict[str, Locality]:
        return {n: x for n, x in zip(self.names, self.localities, strict=True)
                if x != _NO_LOCALITY}

    def state(self) -> tuple[Any, ...]:
        lw = None if self.locality_weights is None else sorted(self.locality_weights.items())
        return (self.names, self.keys, self.weights, self.localities, lw)

    def payload(self) -> bytes:
        parts = [struct.pack("<I", len(self.names))]
        for n, k, w, loc in zip(self.names, self.keys, self.weights, self.localities,
                                strict=True):
            parts += [_format.pack_str(n), _format.pack_str(k), struct.pack("<I", w)]
            parts += [_format.pack_str(p) for p in loc]
        if self.locality_weights is None:
            parts.append(struct.pack("<B", 0))
        else:
            items = sorted(self.locality_weights.items())
            parts.append(struct.pack("<BI", 1, len(items)))
            for loc, w in items:
                parts += [_format.pack_str(p) for p in loc] + [struct.pack("<I", w)]
        return b"".join(parts)

    @classmethod
    def read(cls, r: _format.Reader) -> dict[str, Any]:
        (count,) = r.unpack("I")
        if int(count) * 24 > r.remaining():
            raise _format.FormatError("data is damaged (host count exceeds the data)")
        hosts: dict[str, int] = {}
        keys: dict[str, str] = {}
        locs: dict[str, Locality] = {}
        for _ in range(int(count)):
            n, k = _format.read_str(r), _format.read_str(r)
            (w,) = r.unpack("I")
            loc = (_format.read_str(r), _format.read_str(r), _format.read_str(r))
            if n in hosts:
                raise _format.FormatError("data is damaged (duplicate hosts)")
            hosts[n], keys[n], locs[n] = int(w), k, loc
        (flag,) = r.unpack("B")
        lw: dict[Locality, int] | None = None
        if flag == 1:
            (m,) = r.unpack("I")
            if int(m) * 16 > r.remaining():
                raise _format.FormatError("data is damaged (locality count)")
            lw = {}
            for _ in range(int(m)):
                loc = (_format.read_str(r), _format.read_str(r), _format.read_str(r))
                (w,) = r.unpack("I")
                lw[loc] = int(w)
        elif flag != 0:
            raise _format.FormatError("data is damaged (locality flag)")
        return {"hosts": hosts, "hash_keys": keys, "localities": locs,
                "locality_weights": lw}


def _mapping(value: Any, name: str) -> dict[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping, got {type(value).__name__!r}")
    return dict(value)


def _check_weight(w: Any, what: str) -> int:
    return check_int(w, what, 1, _U32)


# -- the two routers ---------------------------------------------------------------------------

class _EnvoyRouter(Router):
    __slots__ = ("_hosts",)
    _hosts: _Hosts

    def _rebuild(self, hosts: _Hosts) -> None:
        raise NotImplementedError

    def _params(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def add(self, host: str, weight: int = 1, *, hash_key: str | None = None,
            locality: Any = None) -> None:
        """Add an endpoint after the others (as a cluster whose endpoint list gained it at
        the end).  ValueError if present."""
        with self._lock:
            if isinstance(host, str) and host in self._hosts.names:
                raise ValueError(f"host {host!r} is already in the cluster")
            self._rebuild(self._hosts.with_host(host, weight, hash_key, locality))

    def remove(self, host: str) -> None:
        """Remove an endpoint; KeyError if absent."""
        with self._lock:
            if host not in self._hosts.names:
                raise KeyError(host)
            self._rebuild(self._hosts.without(host))

    def set_weight(self, host: str, weight: int) -> None:
        """Change an endpoint's load_balancing_weight; KeyError if absent."""
        w = _check_weight(weight, f"weight of host {host!r}")
        with self._lock:
            if host not in self._hosts.names:
                raise KeyError(host)
            self._rebuild(self._hosts.reweighted(host, w))

    @property
    def weights(self) -> dict[str, int]:
        return dict(zip(self._hosts.names, self._hosts.weights, strict=True))

    @property
    def hash_keys(self) -> dict[str, str]:
        """The string Envoy hashes for each host (its name unless a hash_key was given)."""
        return dict(zip(self._hosts.names, self._hosts.keys, strict=True))

    def _state(self) -> tuple[Any, ...]:
        return (self._params(), self._hosts.state())

    def _repr_args(self) -> str:
        h = self._hosts
        nodes: Any = list(h.names) if all(w == 1 for w in h.weights) else self.weights
        text = f"<{len(h.names)} hosts>" if len(h.names) > 8 else repr(nodes)
        extra = "".join(f", {k}={v!r}" for k, v in self._option_repr())
        if h.locality_weights is not None:
            extra += ", locality_weights=..."
        return text + extra

    def _option_repr(self) -> list[tuple[str, Any]]:
        raise NotImplementedError


class EnvoyRingHash(_EnvoyRouter):
    """Envoy's ``ring_hash`` load balancer: a host set placed on a ring exactly as Envoy
    builds it, a 64-bit hash routed to the first ring entry at or after it (wrapping).

    Parameters
    ----------
    hosts : iterable of str, or mapping str -> int
        The endpoints in cluster order: their address ``"ip:port"`` (what Envoy hashes by
        default) or hostname (with ``use_hostname_for_hashing``), with their
        ``load_balancing_weight`` (default 1).
    minimum_ring_size, maximum_ring_size : int
        ``ring_hash_lb_config`` bounds (defaults 1,024 and 8,388,608).
    hash_function : {"XX_HASH", "MURMUR_HASH_2"}
        The hash of the ring entries (keys are always hashed by the hash policy's xxHash64).
    hash_keys : mapping host -> str, optional
        ``metadata.filter_metadata["envoy.lb"].hash_key`` of endpoints that have one.
    localities, locality_weights : optional
        With ``locality_weights`` (locality -> weight, from each ``LocalityLbEndpoints``'s
        ``load_balancing_weight``), locality-weighted balancing (``locality_weighted_lb_config``);
        ``localities`` maps a host to its locality, "region/zone/sub_zone" or a tuple.

    Examples
    --------
    >>> ring = EnvoyRingHash(["127.0.0.1:80", "127.0.0.1:81"], minimum_ring_size=3)
    >>> ring.ring_size, ring.hashes_per_host
    (4, {'127.0.0.1:80': 2, '127.0.0.1:81': 2})
    >>> ring.nodes[ring.lookup([0])[0]]
    '127.0.0.1:80'
    """

    __slots__ = ("_min", "_max", "_hash_function", "_counts")
    _kind = KIND_ENVOY_RING

    def __init__(self, hosts: Iterable[str] | Mapping[str, int] = (), *,
                 minimum_ring_size: int = DEFAULT_MIN_RING_SIZE,
                 maximum_ring_size: int = DEFAULT_MAX_RING_SIZE,
                 hash_function: str = "XX_HASH", hash_keys: Mapping[str, str] | None = None,
                 localities: Mapping[str, Any] | None = None,
                 locality_weights: Mapping[Any, int] | None = None) -> None:
        self._min = check_int(minimum_ring_size, "minimum_ring_size", 1, DEFAULT_MAX_RING_SIZE)
        self._max = check_int(maximum_ring_size, "maximum_ring_size", 1, DEFAULT_MAX_RING_SIZE)
        if self._min > self._max:
            raise ValueError(f"ring hash: minimum_ring_size ({self._min}) > maximum_ring_size "
                             f"({self._max})")
        if hash_function not in HASH_FUNCTIONS:
            raise ValueError(f"hash_function must be one of {HASH_FUNCTIONS}, got "
                             f"{hash_function!r}")
        self._hash_function = hash_function
        self._lock = threading.Lock()
        self._rebuild(_Hosts.build(hosts, hash_keys, localities, locality_weights))

    def _rebuild(self, hosts: _Hosts) -> None:
        norm = hosts.normalized()
        counts = ring_counts([w for _, w in norm], self._min, self._max)
        order = np.array([i for i, _ in norm], dtype=np.int32)
        prefixes = [(hosts.keys[i] + "_").encode("utf-8") for i, _ in norm]
        pos, gen = compat_points(prefixes, np.array(counts, dtype=np.uint32), POINTS_HASH, 1,
                                 _POINT_HASH[self._hash_function])
        own = order[gen] if len(gen) else gen
        # ties (equal 64-bit hashes: never seen) keep the generation order
        core = build_ring(pos, own, hosts.names, _key_hasher())
        per = dict.fromkeys(hosts.names, 0)
        for (i, _), c in zip(norm, counts, strict=True):
            per[hosts.names[i]] = c
        self._hosts, self._counts = hosts, per
        self._set_core(core)

    # -- introspection ----------------------------------------------------------------------

    @property
    def minimum_ring_size(self) -> int:
        return self._min

    @property
    def maximum_ring_size(self) -> int:
        return self._max

    @property
    def hash_function(self) -> str:
        return self._hash_function

    @property
    def ring_size(self) -> int:
        """Entries on the ring (Envoy's ``ring_hash_lb.size`` gauge)."""
        return int(self._core.positions.shape[0])

    @property
    def hashes_per_host(self) -> dict[str, int]:
        """Ring entries per host (min and max are Envoy's ``min_hashes_per_host`` /
        ``max_hashes_per_host`` gauges)."""
        return dict(self._counts)

    @property
    def positions(self) -> npt.NDArray[np.uint64]:
        """The ring entries' hashes, ascending."""
        pos: npt.NDArray[np.uint64] = self._core.positions
        return pos

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        """The host (index into ``nodes``) of each ring entry."""
        own: npt.NDArray[np.int32] = self._core.owners
        return own

    # -- state ------------------------------------------------------------------------------

    def _params(self) -> tuple[Any, ...]:
        return (self._min, self._max, self._hash_function)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> EnvoyRingHash:
        (mn, mx, hf), (names, keys, weights, locs, lw) = state
        return cls(dict(zip(names, weights, strict=True)), minimum_ring_size=mn,
                   maximum_ring_size=mx, hash_function=hf,
                   hash_keys=dict(zip(names, keys, strict=True)),
                   localities=dict(zip(names, locs, strict=True)),
                   locality_weights=None if lw is None else dict(lw))

    def _payload(self) -> bytes:
        return (struct.pack("<QQ", self._min, self._max)
                + _format.pack_str(self._hash_function) + self._hosts.payload())

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> EnvoyRingHash:
        mn, mx = r.unpack("QQ")
        hf = _format.read_str(r)
        kw = _Hosts.read(r)
        return cls(kw["hosts"], minimum_ring_size=int(mn), maximum_ring_size=int(mx),
                   hash_function=hf, hash_keys=kw["hash_keys"], localities=kw["localities"],
                   locality_weights=kw["locality_weights"])

    def _option_repr(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        if self._min != DEFAULT_MIN_RING_SIZE:
            out.append(("minimum_ring_size", self._min))
        if self._max != DEFAULT_MAX_RING_SIZE:
            out.append(("maximum_ring_size", self._max))
        if self._hash_function != "XX_HASH":
            out.append(("hash_function", self._hash_function))
        return out


def ring_counts(weights: list[float], minimum_ring_size: int,
                maximum_ring_size: int) -> list[int]:
    """Ring entries per host for Envoy's normalized weights (in Envoy's host order):
    ``scale = min(ceil(min_w * minimum) / min_w, maximum)``; walking the hosts, the target
    ``t += scale * w`` and the host takes entries while the running count is below ``t``."""
    if not weights:
        return []
    min_w = min(1.0, *weights)
    scale = min(math.ceil(min_w * minimum_ring_size) / min_w, float(maximum_ring_size))
    current = 0.0
    target = 0.0
    out = []
    for w in weights:
        target += scale * w
        i = 0
        while current < target:
            i += 1
            current += 1.0
        out.append(i)
    return out


class EnvoyMaglev(_EnvoyRouter):
    """Envoy's ``maglev`` load balancer: its lookup table built exactly as Envoy builds it,
    a 64-bit hash routed to ``table[hash % table_size]``.

    Parameters
    ----------
    hosts : iterable of str, or mapping str -> int
        The endpoints (address ``"ip:port"`` or hostname), with their weights.  Envoy sorts
        them by hash key first, so their order does not matter.
    table_size : int
        ``maglev_lb_config.table_size``: a prime (default 65,537; at most 5,000,011).
    hash_keys, localities, locality_weights
        As for ``EnvoyRingHash``.

    Examples
    --------
    >>> mg = EnvoyMaglev(["127.0.0.1:90", "127.0.0.1:91"], table_size=7)
    >>> mg.nodes
    ('127.0.0.1:90', '127.0.0.1:91')
    >>> mg.table.tolist()  # the index into nodes of each table entry
    [0, 1, 0, 1, 0, 1, 0]
    """

    __slots__ = ("_table_size",)
    _kind = KIND_ENVOY_MAGLEV

    def __init__(self, hosts: Iterable[str] | Mapping[str, int] = (), *,
                 table_size: int = DEFAULT_TABLE_SIZE, hash_keys: Mapping[str, str] | None = None,
                 localities: Mapping[str, Any] | None = None,
                 locality_weights: Mapping[Any, int] | None = None) -> None:
        m = check_int(table_size, "table_size", 2, MAX_TABLE_SIZE)
        if not is_prime(m):
            raise ValueError(f"table_size must be prime (Envoy: 'The table size of maglev must "
                             f"be prime number'), got {m}")
        self._table_size = m
        self._lock = threading.Lock()
        self._rebuild(_Hosts.build(hosts, hash_keys, localities, locality_weights))

    def _rebuild(self, hosts: _Hosts) -> None:
        m = self._table_size
        norm = hosts.normalized()
        entries = sorted(((hosts.keys[i].encode("utf-8"), i, w) for i, w in norm))
        offsets = [int(hash_bytes("xxh64", k, 0)) % m for k, _, _ in entries]
        skips = [int(hash_bytes("xxh64", k, 1)) % (m - 1) + 1 for k, _, _ in entries]
        table = envoy_maglev_table(m, offsets, skips, [w for _, _, w in entries],
                                   [i for _, i, _ in entries])
        core = _MaglevTable(hosts.names, _key_hasher(), table, modulo=True,
                            what="Maglev table")
        self._hosts = hosts
        self._set_core(core)

    @property
    def table_size(self) -> int:
        return self._table_size

    @property
    def table(self) -> npt.NDArray[np.int32]:
        """The read-only lookup table: the host (index into ``nodes``) of each slot."""
        t: npt.NDArray[np.int32] = self._core.table
        return t

    @property
    def entries_per_host(self) -> dict[str, int]:
        """Table slots per host (min and max are Envoy's ``min_entries_per_host`` /
        ``max_entries_per_host`` gauges, except for a single host, which the newest Envoy
        keeps in a one-entry table)."""
        counts = np.bincount(self.table, minlength=len(self.nodes)) if len(self.table) else (
            np.zeros(len(self.nodes), dtype=np.int64))
        return {n: int(c) for n, c in zip(self.nodes, counts.tolist(), strict=True)}

    def _params(self) -> tuple[Any, ...]:
        return (self._table_size,)

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> EnvoyMaglev:
        (m,), (names, keys, weights, locs, lw) = state
        return cls(dict(zip(names, weights, strict=True)), table_size=m,
                   hash_keys=dict(zip(names, keys, strict=True)),
                   localities=dict(zip(names, locs, strict=True)),
                   locality_weights=None if lw is None else dict(lw))

    def _payload(self) -> bytes:
        return struct.pack("<Q", self._table_size) + self._hosts.payload()

    @classmethod
    def _from_payload(cls, r: _format.Reader, **options: Any) -> EnvoyMaglev:
        (m,) = r.unpack("Q")
        kw = _Hosts.read(r)
        return cls(kw["hosts"], table_size=int(m), hash_keys=kw["hash_keys"],
                   localities=kw["localities"], locality_weights=kw["locality_weights"])

    def _option_repr(self) -> list[tuple[str, Any]]:
        return [] if self._table_size == DEFAULT_TABLE_SIZE else [
            ("table_size", self._table_size)]


# -- from an Envoy cluster config ---------------------------------------------------------------

_RING_TYPE = "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash"
_MAGLEV_TYPE = "envoy.extensions.load_balancing_policies.maglev.v3.Maglev"
_HEALTHY = (None, "UNKNOWN", "HEALTHY", 0, 1)


def _parse(text: Any) -> Any:
    if isinstance(text, (Mapping, list)):
        return text
    if isinstance(text, os.PathLike):
        with open(text, encoding="utf-8") as f:
            text = f.read()
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    if not isinstance(text, str):
        raise TypeError("text must be the config as a str (YAML or JSON), bytes, a path, or "
                        f"an already parsed dict, got {type(text).__name__!r}")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass  # YAML flow style, perhaps
    try:
        import yaml  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise ImportError("reading a YAML Envoy config needs pyyaml: pip install "
                          "'consistent-hash-ring[yaml]' (JSON needs nothing)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"text is neither JSON nor YAML Envoy can read: {e}") from None


# A mapping with one of these is a cluster (snake_case, as _snake leaves the keys).
_CLUSTER_FIELDS = ("name", "lb_policy", "load_balancing_policy", "load_assignment",
                   "eds_cluster_config", "ring_hash_lb_config", "maglev_lb_config",
                   "common_lb_config")
_NO_CLUSTER = ("the config holds no Envoy cluster (expected a cluster, a list of clusters, a "
               "CDS response's resources, a bootstrap's static_resources.clusters or an admin "
               "/config_dump)")


def _clusters(doc: Any) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, str]]:
    """The clusters of a document; the ones it names but cannot give (an admin /config_dump's
    EDS clusters without their endpoints) and the ones that serve no traffic (its warming
    clusters), each with why."""
    if isinstance(doc, list):
        return _entries(doc, "the list of clusters"), {}, {}
    if not isinstance(doc, Mapping):
        raise ValueError(_NO_CLUSTER)
    if "configs" in doc:
        return _dump_clusters(doc["configs"])
    if "static_resources" in doc:
        return _entries(_section(doc["static_resources"], "static_resources").get("clusters"),
                        "static_resources.clusters"), {}, {}
    for key in ("clusters", "resources"):
        if key in doc and isinstance(doc[key], list):
            return _entries(doc[key], key), {}, {}
    if not any(k in doc for k in _CLUSTER_FIELDS):
        raise ValueError(_NO_CLUSTER)
    return [dict(doc)], {}, {}


def _dump_clusters(configs: Any
                   ) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, str]]:
    """An admin /config_dump (envoy.admin.v3.ConfigDump): the clusters serving traffic, static
    and dynamic active (ClustersConfigDump; the bootstrap's static clusters without one), an
    EDS cluster's endpoints taken from the EndpointsConfigDump (``?include_eds``)."""
    clusters: list[dict[str, Any]] = []
    boot: list[dict[str, Any]] = []
    no_endpoints: dict[str, str] = {}
    warming: dict[str, str] = {}
    assignments: dict[str, dict[str, Any]] = {}
    dumped = False
    for entry in _entries(configs, "configs"):
        kind = str(entry.get("@type", "")).rsplit(".", 1)[-1]
        if kind == "ClustersConfigDump":
            dumped = True
            for key in ("static_clusters", "dynamic_active_clusters", "dynamic_warming_clusters"):
                for e in _entries(entry.get(key), key):
                    c = _section(e.get("cluster"), f"an entry of {key}: cluster")
                    if key == "dynamic_warming_clusters":
                        warming[str(c.get("name", ""))] = (
                            "is still warming in this /config_dump: it serves no traffic yet")
                    else:
                        clusters.append(c)
        elif kind == "EndpointsConfigDump":
            for key in ("static_endpoint_configs", "dynamic_endpoint_configs"):
                for e in _entries(entry.get(key), key):
                    la = _section(e.get("endpoint_config"), f"an entry of {key}: endpoint_config")
                    assignments[str(la.get("cluster_name", ""))] = la
        elif kind == "BootstrapConfigDump":
            static = _section(_section(entry.get("bootstrap"), "bootstrap").get(
                "static_resources"), "bootstrap.static_resources")
            boot = _entries(static.get("clusters"), "bootstrap.static_resources.clusters")
    out = []
    for c in clusters if dumped else boot:
        c = {k: v for k, v in c.items() if k != "@type"}
        if "load_assignment" not in c:
            eds = _section(c.get("eds_cluster_config"), "eds_cluster_config")
            service = str(eds.get("service_name") or c.get("name", ""))
            if service in assignments:
                c["load_assignment"] = assignments[service]
            elif eds or c.get("type") == "EDS":
                no_endpoints[str(c.get("name", ""))] = (
                    f"takes its endpoints from EDS (service {service!r}) and this /config_dump "
                    "holds none for it: fetch /config_dump?include_eds")
                continue
        out.append(c)
    return out, no_endpoints, warming


def _snake(doc: Any) -> Any:
    """Protobuf JSON's lowerCamelCase field names (``lbPolicy``) as the snake_case ones
    (``lb_policy``) Envoy equally accepts; metadata keys are left as written."""
    if isinstance(doc, list):
        return [_snake(x) for x in doc]
    if not isinstance(doc, Mapping):
        return doc
    out: dict[str, Any] = {}
    for k, v in doc.items():
        key = k if not isinstance(k, str) or k.startswith("@") else "".join(
            "_" + ch.lower() if ch.isupper() else ch for ch in k)
        out[key] = v if key in ("filter_metadata", "typed_filter_metadata") else _snake(v)
    return out


def _uint(value: Any, what: str) -> int:
    """A protobuf wrapped integer as YAML / JSON give it (int, or a decimal str)."""
    if isinstance(value, Mapping) and "value" in value:
        value = value["value"]
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an unsigned integer, got {value!r}")
    return value


def _address_name(address: Mapping[str, Any], cluster: str) -> str:
    """The address as Envoy's Address::asString() writes it."""
    if "pipe" in address:
        return str(address["pipe"]["path"])
    sa = address.get("socket_address")
    if not isinstance(sa, Mapping):
        raise ValueError(f"cluster {cluster!r}: an endpoint address needs socket_address or pipe")
    host = str(sa.get("address", ""))
    if "named_port" in sa:
        raise ValueError(f"cluster {cluster!r}: named_port endpoints are not supported")
    port = _uint(sa.get("port_value", 0), "port_value")
    for fam in (socket.AF_INET, socket.AF_INET6):
        try:
            canon = socket.inet_ntop(fam, socket.inet_pton(fam, host))
        except OSError:
            continue
        return f"{canon}:{port}" if fam == socket.AF_INET else f"[{canon}]:{port}"
    raise ValueError(
        f"cluster {cluster!r}: endpoint address {host!r} is not an IP address; Envoy hashes "
        "the address it resolves, which cannot be known here: set use_hostname_for_hashing "
        "and give each endpoint a hostname, or list IP addresses")


def _section(value: Any, what: str, cname: str | None = None) -> dict[str, Any]:
    """A nested mapping of the config (None: empty); anything else is a ValueError naming it
    (and its cluster, ``cname``, inside one)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        where = "" if cname is None else f"cluster {cname!r}: "
        raise ValueError(f"{where}{what} must be a mapping, got {type(value).__name__!r}")
    return dict(value)


def _entries(value: Any, what: str, cname: str | None = None) -> list[dict[str, Any]]:
    """A nested list of mappings of the config (None: empty)."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        where = "" if cname is None else f"cluster {cname!r}: "
        raise ValueError(f"{where}{what} must be a list, got {type(value).__name__!r}")
    return [_section(v, f"an entry of {what}", cname) for v in value]


def _policy(c: Mapping[str, Any], cname: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(kind, the ring hash / maglev options, the consistent hashing + locality options)."""
    common = _section(c.get("common_lb_config"), "common_lb_config", cname)
    lbp = _section(c.get("load_balancing_policy"), "load_balancing_policy", cname)
    if lbp:
        policies = _entries(lbp.get("policies"), "load_balancing_policy.policies", cname)
        if not policies:
            raise ValueError(f"cluster {cname!r}: load_balancing_policy has no policies")
        tec = _section(policies[0].get("typed_extension_config"), "typed_extension_config", cname)
        typed = _section(tec.get("typed_config"), "typed_config", cname)
        t = str(typed.pop("@type", "")).rsplit("/", 1)[-1]
        if t not in (_RING_TYPE, _MAGLEV_TYPE):
            raise ValueError(f"cluster {cname!r}: its first load balancing policy is "
                             f"{t or tec.get('name')!r}, not ring hash or maglev")
        if "consistent_hashing_lb_config" in typed or t != _RING_TYPE:
            chc = _section(typed.get("consistent_hashing_lb_config"),
                           "consistent_hashing_lb_config", cname)
        else:  # RingHash's deprecated fields count only without consistent_hashing_lb_config
            chc = {"use_hostname_for_hashing": typed.get("use_hostname_for_hashing"),
                   "hash_balance_factor": typed.get("hash_balance_factor")}
        extra = {"locality_weighted": "locality_weighted_lb_config" in typed, **chc}
        return ("ring_hash" if t == _RING_TYPE else "maglev"), typed, extra
    policy = c.get("lb_policy", "ROUND_ROBIN")
    extra = {"locality_weighted": "locality_weighted_lb_config" in common,
             **_section(common.get("consistent_hashing_lb_config"),
                         "consistent_hashing_lb_config", cname)}
    if policy == "RING_HASH":
        return ("ring_hash", _section(c.get("ring_hash_lb_config"), "ring_hash_lb_config", cname),
                extra)
    if policy == "MAGLEV":
        return "maglev", _section(c.get("maglev_lb_config"), "maglev_lb_config", cname), extra
    raise ValueError(f"cluster {cname!r} has lb_policy {policy!r}: only RING_HASH and MAGLEV "
                     "(or a ring_hash / maglev load_balancing_policy) are reproduced")


def from_config(text: Any, name: str | None = None) -> EnvoyRingHash | EnvoyMaglev:
    """The router of an Envoy cluster with ring hash or Maglev load balancing.

    ``text``: one cluster, a list of clusters, a CDS response (``resources``), a whole
    bootstrap (``static_resources.clusters``) or an admin ``/config_dump`` (its static and
    dynamic active clusters, an EDS cluster's endpoints from its ``EndpointsConfigDump``:
    fetch it with ``?include_eds``), as YAML (needs pyyaml), JSON, or a parsed dict; with
    several clusters, ``name`` picks one (``config.NameNeeded``, a ValueError, lists them
    otherwise).

    Read: ``lb_policy: RING_HASH | MAGLEV`` with ``ring_hash_lb_config`` /
    ``maglev_lb_config`` and ``common_lb_config`` (``locality_weighted_lb_config``,
    ``consistent_hashing_lb_config.use_hostname_for_hashing``), or the newer
    ``load_balancing_policy`` whose first policy is the RingHash / Maglev extension;
    endpoints from ``load_assignment``: address, ``hostname``, ``load_balancing_weight``,
    locality and its weight, the ``envoy.lb`` ``hash_key`` metadata, and the lowest priority
    present (the one a fully healthy cluster routes to).  Refused with a ValueError, because
    the choice would then depend on live state: ``hash_balance_factor`` (bounded loads),
    endpoints whose ``health_status`` is not HEALTHY / UNKNOWN, non-IP addresses without
    ``use_hostname_for_hashing``."""
    found, no_endpoints, warming = _clusters(_snake(_parse(text)))
    clusters = [_snake(c) for c in found]
    names = [str(c.get("name", "")) for c in clusters]
    if name is None and len(names) + len(no_endpoints) == 1:
        name = (names or list(no_endpoints))[0]
    if name is not None:
        why = {**warming, **no_endpoints}
        if name in why and name not in names:
            raise ValueError(f"cluster {name!r} {why[name]}")
        if name not in names:
            raise ValueError(f"no cluster named {name!r}; the config has: "
                             + (", ".join(map(repr, names)) or "no clusters"))
        c = clusters[names.index(name)]
    elif not names and not no_endpoints:
        raise ValueError("the config has no clusters" + "".join(
            f"; cluster {n!r} {why}" for n, why in warming.items()))
    else:
        raise NameNeeded("clusters", names + list(no_endpoints))
    cname = str(c.get("name", ""))
    kind, opts, extra = _policy(c, cname)
    if extra.get("hash_balance_factor") not in (None, 0, "0"):
        raise ValueError(f"cluster {cname!r} sets hash_balance_factor: with bounded loads Envoy "
                         "moves requests off busy hosts by their live load, which no config "
                         "can predict")
    use_hostname = bool(extra.get("use_hostname_for_hashing"))
    groups = _entries(_section(c.get("load_assignment"), "load_assignment", cname)
                      .get("endpoints"), "load_assignment.endpoints", cname)
    prios = [_uint(g.get("priority", 0), "priority") for g in groups]
    low = min((p for p, g in zip(prios, groups, strict=True) if g.get("lb_endpoints")),
              default=0)
    hosts: dict[str, int] = {}
    keys: dict[str, str] = {}
    locs: dict[str, Locality] = {}
    lw: dict[Locality, int] = {}
    for g, p in zip(groups, prios, strict=True):
        if p != low:
            continue
        lo = _section(g.get("locality"), "locality", cname)
        loc = (str(lo.get("region", "")), str(lo.get("zone", "")), str(lo.get("sub_zone", "")))
        weight = _uint(g["load_balancing_weight"], "locality load_balancing_weight") if (
            g.get("load_balancing_weight") is not None) else 0
        if loc in lw:
            raise ValueError(f"cluster {cname!r}: locality {_locality_name(loc)!r} is listed "
                             "twice at one priority")
        lw[loc] = weight
        for e in _entries(g.get("lb_endpoints"), "lb_endpoints", cname):
            if e.get("health_status") not in _HEALTHY:
                raise ValueError(
                    f"cluster {cname!r}: an endpoint has health_status "
                    f"{e.get('health_status')!r}; Envoy's choice then depends on its panic "
                    "threshold and priority spill-over: drop the endpoint from the config to "
                    "see the cluster without it")
            ep = _section(e.get("endpoint"), "endpoint", cname)
            if use_hostname:
                node = str(ep.get("hostname") or "")
                if not node:
                    raise ValueError(f"cluster {cname!r}: use_hostname_for_hashing is set but "
                                     "an endpoint has no hostname")
            else:
                node = _address_name(_section(ep.get("address"), "address", cname), cname)
            if node in hosts:
                raise ValueError(f"cluster {cname!r}: endpoint {node!r} is listed twice")
            hosts[node] = _uint(e.get("load_balancing_weight", 1), "load_balancing_weight")
            md = _section(_section(_section(e.get("metadata"), "metadata", cname).get(
                "filter_metadata"), "filter_metadata", cname).get("envoy.lb"), "envoy.lb", cname)
            if isinstance(md.get("hash_key"), str) and md["hash_key"]:
                keys[node] = md["hash_key"]
            locs[node] = loc
    loc_weights = lw if extra.get("locality_weighted") else None
    if kind == "ring_hash":
        hf = opts.get("hash_function", "XX_HASH")
        hf = {0: "XX_HASH", 1: "MURMUR_HASH_2"}.get(hf, hf)
        return EnvoyRingHash(
            hosts, hash_keys=keys, localities=locs, locality_weights=loc_weights,
            minimum_ring_size=_uint(opts.get("minimum_ring_size", DEFAULT_MIN_RING_SIZE),
                                    "minimum_ring_size"),
            maximum_ring_size=_uint(opts.get("maximum_ring_size", DEFAULT_MAX_RING_SIZE),
                                    "maximum_ring_size"),
            hash_function=hf)
    return EnvoyMaglev(hosts, hash_keys=keys, localities=locs, locality_weights=loc_weights,
                       table_size=_uint(opts.get("table_size", DEFAULT_TABLE_SIZE),
                                        "table_size"))
