"""Envoy's host set (names, hash keys, weights, localities), its key hash and its bounds."""


from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any

from consistent_hash import _format
from consistent_hash._core import (
    HASH_IDS,
    _Hasher,
    hash_bytes,
)
from consistent_hash._validate import check_int

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
