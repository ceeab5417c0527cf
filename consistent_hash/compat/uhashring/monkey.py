"""``patch_memcache()``, as ``uhashring.monkey`` offers it.

uhashring 2.5's ``uhashring.monkey.patch_memcache()`` makes python-memcached's
``memcache.Client`` route keys over a uhashring ``HashRing`` instead of its own modulo
buckets.  This one patches the same class in the same way, over
:class:`consistent_hash.compat.uhashring.HashRing`, so a patched client sends every key to the
server a uhashring-patched client sends it to::

    from consistent_hash.compat.uhashring import monkey   # was: from uhashring import monkey
    monkey.patch_memcache()
    mc = memcache.Client(["10.0.0.1:11211", "10.0.0.2:11211"])

What the patch does, as uhashring's does: after ``Client.__init__``, the client's servers
become the nodes of a default-mode ring (160 vnodes, MD5), each named by its host **address
without the port** and configured with its ``_Host`` as ``instance``, its port and its weight;
``_get_server(key)`` walks the ring from the key's position and takes the first server that
connects (``_SERVER_RETRIES`` times round), or ``(None, None)``; a ``(hash, key)`` tuple key
keeps python-memcached's own routing.  So, as with uhashring, servers that share an address
(several ports on one host) are one node, the last of them, and ``set_servers`` after
construction does not change the ring.

Where this differs: calling ``patch_memcache()`` twice is harmless (uhashring's second call
makes ``__init__`` call itself forever); ``unpatch_memcache()`` restores the class; a unix
socket server is a node named by its path (uhashring raises AttributeError, a ``_Host`` for a
socket having no ``ip``).
"""

from __future__ import annotations

import importlib
from typing import Any

from consistent_hash.compat.uhashring import HashRing

__all__ = ["patch_memcache", "unpatch_memcache"]

_MARK = "_consistent_hash_originals"


def _memcache() -> Any:
    try:
        memcache = importlib.import_module("memcache")
    except ImportError:
        raise ImportError("patch_memcache patches python-memcached's memcache.Client: "
                          "pip install python-memcached (the extra "
                          "consistent_hash[python-memcached])") from None
    return memcache


def _nodes(servers: Any) -> dict[str, dict[str, Any]]:
    nodes: dict[str, dict[str, Any]] = {}
    for server in servers:
        ip = getattr(server, "ip", None)
        name = ip if ip is not None else str(server.address)  # a unix socket: its path
        nodes[name] = {"hostname": name, "instance": server,
                       "port": getattr(server, "port", None), "weight": server.weight}
    return nodes


def patch_memcache() -> None:
    """Monkey patch python-memcached's ``memcache.Client`` to pick servers with the
    uhashring-compatible consistent hash ring (uhashring's ``patch_memcache``)."""
    client = _memcache().Client
    if _MARK in client.__dict__:
        return
    old_init, old_get_server = client.__init__, client._get_server

    def __init__(self: Any, servers: Any, *args: Any, **kwargs: Any) -> None:
        old_init(self, servers, *args, **kwargs)
        self.uhashring = HashRing(_nodes(self.servers))

    def _get_server(self: Any, key: Any) -> tuple[Any, Any]:
        if isinstance(key, tuple):
            return old_get_server(self, key)  # type: ignore[no-any-return]
        for _ in range(self._SERVER_RETRIES):
            for node in self.uhashring.range(key):
                if node["instance"].connect():
                    return node["instance"], key
        return None, None

    setattr(client, _MARK, (old_init, old_get_server))
    client._old_init, client._old_get_server = old_init, old_get_server  # as uhashring names
    client.__init__ = __init__
    client._get_server = _get_server


def unpatch_memcache() -> None:
    """Undo :func:`patch_memcache` (clients made meanwhile keep their ring)."""
    client = _memcache().Client
    originals = client.__dict__.get(_MARK)
    if originals is None:
        return
    client.__init__, client._get_server = originals
    for name in (_MARK, "_old_init", "_old_get_server"):
        if name in client.__dict__:
            delattr(client, name)
