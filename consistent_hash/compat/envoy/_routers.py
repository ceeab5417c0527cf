"""The two Envoy routers: ring_hash (EnvoyRingHash) and maglev (EnvoyMaglev)."""


from __future__ import annotations

import math
import struct
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import (
    POINTS_HASH,
    _MaglevTable,
    compat_points,
    envoy_maglev_table,
    hash_bytes,
)
from consistent_hash._ringbase import RingLayout, build_ring
from consistent_hash._router import Router
from consistent_hash._validate import check_int
from consistent_hash.algorithms.maglev import is_prime
from consistent_hash.compat.envoy._hosts import (
    _POINT_HASH,
    DEFAULT_MAX_RING_SIZE,
    DEFAULT_MIN_RING_SIZE,
    DEFAULT_TABLE_SIZE,
    HASH_FUNCTIONS,
    KIND_ENVOY_MAGLEV,
    KIND_ENVOY_RING,
    MAX_TABLE_SIZE,
    _check_weight,
    _Hosts,
    _key_hasher,
)

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


class EnvoyRingHash(RingLayout, _EnvoyRouter):
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
    _replicas = False  # Envoy has no replicas
    _walk_on = False  # a host marked down leaves the ring as Envoy rebuilds it from the rest

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
