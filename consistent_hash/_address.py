"""The one address parser: a node named as a server's address -- ``"host:port"``,
``"[v6]:port"``, a bare ``"v6:port"`` (as pymemcache's HashClient names ``("::1", 11211)``), a
unix socket path (``"/path"``, ``"unix:/path"``) -- for the migration
(``integrations.migrate``), the pymemcache hashers and KetamaRing's server specs.

The load-balancer rings read a server line as their system does on purpose, not through this:
nginx splits ``host:port`` at its last ``:digits`` for the text it hashes (``compat.nginx``),
nutcracker reads ``host:port:weight [name]`` from the end (``compat.twemproxy``): those
reproduce the system's own bytes. The CLI's ``name=weight`` lists only ask whether a
``name:N`` reads as an address (``cli._common``), with ``is_ip``.
"""

from __future__ import annotations

from typing import TypeAlias

from consistent_hash._validate import is_ip

__all__ = ["Address", "bare_v6_port", "parse_address"]

Address: TypeAlias = "tuple[str, int] | str"
"""(host, port), or a unix socket path."""


def bare_v6_port(text: str) -> tuple[str, str] | None:
    """``"v6:port"`` without brackets (HashClient's name of ``("::1", 11211)``) -> (the IPv6
    address, the port text); None when text is not an IPv6 address and a port."""
    if text.count(":") < 2:
        return None
    host, _, port = text.rpartition(":")
    return (host, port) if is_ip(host, v6=True) else None


def parse_address(node: str) -> Address:
    """A node name as a server address: ``"host:port"``, ``"[v6]:port"`` or ``"v6:port"``
    (as HashClient names ``("::1", 11211)``) -> (host, port); ``"/path"`` or
    ``"unix:/path"`` -> the socket path. Raises ValueError for anything else."""
    if not isinstance(node, str):
        raise ValueError(f"node name {node!r} is not a string")
    if node.startswith("unix:"):
        node = node[5:]
        if not node:
            raise ValueError("empty unix socket path")
        return node
    if node.startswith("/"):
        return node
    if node.startswith("["):
        host, sep, port = node[1:].partition("]:")
        if not sep:
            raise ValueError(f"node name {node!r} is not an address: expected [host]:port")
    else:
        host, sep, port = node.rpartition(":")  # a bare "v6:port" too: the port is last
        if not sep or not host:
            raise ValueError(f"node name {node!r} is not an address: expected host:port "
                             "(or a unix socket path)")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"node name {node!r}: bad port {port!r}")
    if (":" in host or node.startswith("[")) and not is_ip(host, v6=True):
        raise ValueError(f"node name {node!r} is not an address: {host!r} is not an IPv6 "
                         "address")
    return host, int(port)
