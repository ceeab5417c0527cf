"""Integrations with the clients users route through.

pymemcache
----------
``HashClient`` takes a ``hasher`` class with ``add_node``, ``remove_node`` and ``get_node``;
:class:`RingHasher` is one backed by :class:`~consistent_hash.HashRing`, so a pool of memcached
servers grows or shrinks by moving only the keys it must::

    from pymemcache.client.hash import HashClient
    from consistent_hash.integrations import RingHasher
    client = HashClient([("10.0.0.1", 11211), ("10.0.0.2", 11211)], hasher=RingHasher)

HashClient names each server ``"host:port"`` (an IPv6 host without brackets: ``"::1:11211"``)
or, for a unix socket, by its path, and calls ``hasher()`` with no arguments; to set the
ring's parameters pass ``functools.partial(RingHasher, vnodes=100)``.  Both hashers return
HashClient's names unchanged, whatever the server kind. Every client that
uses the same parameters and server list routes every key to the same server.

:class:`KetamaHasher` is backed by :class:`~consistent_hash.KetamaRing` instead, so a
pymemcache client places keys exactly where a libmemcached (pylibmc) client in the given mode
does: the two can share a pool while an application moves from one client to the other::

    client = HashClient(servers, hasher=functools.partial(KetamaHasher, mode="ketama_weighted"))

Servers are added in HashClient's order, which is the order of its server list; a ketama
layout depends on that order only for point ties, as libmemcached's does.  A unix socket is
hashed as libmemcached hashes it (its path, port 0) and an IPv6 server as pylibmc's
``"[::1]:11211"``, so those agree with pylibmc too.

:class:`ModuloHasher` routes by ``hash(key) % N``: it is here as the baseline that shows what
consistent hashing avoids (``python -m consistent_hash demo memcached``), not for use.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from consistent_hash._address import parse_address
from consistent_hash.compat.ketama import KetamaRing, _parse_server
from consistent_hash.ring import HashRing

__all__ = ["KetamaHasher", "ModuloHasher", "RingHasher"]


class _RouterHasher:
    """The hasher interface HashClient calls, over any router held in ``self.ring``."""

    ring: Any

    def add_node(self, node: str) -> None:
        if node not in self.ring:
            self.ring.add(node)

    def remove_node(self, node: str) -> None:
        if node in self.ring:
            self.ring.remove(node)

    def get_node(self, key: str | bytes) -> str | None:
        ring = self.ring
        if len(ring) == 0:
            return None  # HashClient's "every server is down"
        node: str = ring.get(key)
        return node

    def get_nodes(self, keys: Any) -> Any:
        """Batch form: the node of each key (an object array)."""
        return self.ring.get_many(keys)


class RingHasher(_RouterHasher):
    """A pymemcache ``HashClient`` hasher backed by a :class:`HashRing`.

    Parameters are those of :class:`HashRing` (``vnodes``, ``hash``, ``seed``); nodes are
    the server names HashClient gives (``"host:port"``). ``get_node`` returns None on an
    empty ring, which HashClient expects when every server is down."""

    def __init__(self, *, vnodes: int = 160, hash: str = "xxh3", seed: int = 0) -> None:
        self.ring = HashRing(vnodes=vnodes, hash=hash, seed=seed)


def _ketama_spec(node: str) -> str:
    """HashClient's name of a server as a KetamaRing server: a unix socket path as it is,
    ``"host:port"`` as it is, an IPv6 ``"::1:11211"`` as ``"[::1]:11211"``."""
    if not isinstance(node, str):
        raise TypeError(f"node must be HashClient's str name of a server, got "
                        f"{type(node).__name__!r}")
    if node.startswith("/"):
        return node
    try:
        address = parse_address(node)
    except ValueError:
        raise ValueError(f"bad node {node!r}: expected HashClient's 'host:port' or a unix "
                         "socket path") from None
    if isinstance(address, tuple) and ":" in address[0] and not node.startswith("["):
        return f"[{address[0]}]:{address[1]}"
    return node


def _ring_name(spec: str) -> str:
    return _parse_server(spec)[0]


class KetamaHasher(_RouterHasher):
    """A pymemcache ``HashClient`` hasher backed by a :class:`KetamaRing` in a libmemcached
    mode (``mode`` is required, as for KetamaRing: ``"ketama_weighted"`` for pylibmc's
    ``{"ketama_weighted": True}``, ``"ketama"`` for ``{"ketama": True}``, ...)."""

    def __init__(self, *, mode: str, hash: str | None = None) -> None:
        self.ring = KetamaRing(mode=mode, hash=hash)
        self._names: dict[str, str] = {}  # the ring's node name -> HashClient's name
        self._lock = threading.Lock()

    def add_node(self, node: str) -> None:
        spec = _ketama_spec(node)
        with self._lock:
            if spec not in self.ring:
                self.ring.add(spec)
            self._names[_ring_name(spec)] = node

    def remove_node(self, node: str) -> None:
        spec = _ketama_spec(node)
        with self._lock:
            if spec in self.ring:
                self.ring.remove(spec)
            self._names.pop(_ring_name(spec), None)

    def get_node(self, key: str | bytes) -> str | None:
        ring = self.ring
        if len(ring) == 0:
            return None
        name: str = ring.get(key)
        return self._names.get(name, name)

    def get_nodes(self, keys: Any) -> Any:
        out = self.ring.get_many(keys)
        names = self._names
        if any(k != v for k, v in names.items()):
            out = np.array([names.get(n, n) for n in out], dtype=object)
        return out


class ModuloHasher:
    """``hash(key) % N`` over the sorted node names: the baseline consistent hashing replaces.

    Changing N moves about (N-1)/N of all keys. Provided for comparisons only."""

    def __init__(self, *, hash: str = "xxh3", seed: int = 0) -> None:
        self._probe = HashRing(["_"], hash=hash, seed=seed)  # only its key hash is used
        self._nodes: list[str] = []
        self._lock = threading.Lock()

    def add_node(self, node: str) -> None:
        with self._lock:
            if node not in self._nodes:
                self._nodes = sorted([*self._nodes, node])

    def remove_node(self, node: str) -> None:
        with self._lock:
            self._nodes = [n for n in self._nodes if n != node]

    def get_node(self, key: str | bytes) -> str | None:
        nodes = self._nodes
        if not nodes:
            return None
        return nodes[self._probe.hash(key) % len(nodes)]
