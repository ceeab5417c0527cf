"""Free TCP ports on loopback, for the tests that start real servers.

Imports neither the package nor pytest, so the vector generators under tests/data/ (which run
without the package installed) can use it too."""

from __future__ import annotations

import random
import socket

HOST = "127.0.0.1"


def free_ports(n: int, host: str = HOST, family: int = socket.AF_INET) -> list[int]:
    """n distinct free TCP ports on host (bound together, so they are distinct)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(family, socket.SOCK_STREAM)
            s.bind((host, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_cluster_port(host: str = HOST, bus_offset: int = 10000, low: int = 20000,
                      tries: int = 200) -> int:
    """A free TCP port for a redis-server with --cluster-enabled yes: it also listens on
    port + bus_offset (the cluster bus), so the port must be at most 65535 - bus_offset
    (redis refuses anything higher at startup) and both ports must be free.  The kernel's
    ephemeral range reaches above that, so the port is drawn at random below the limit."""
    top = 65535 - bus_offset
    rng = random.SystemRandom()
    for _ in range(tries):
        port = rng.randint(low, top)
        socks = []
        try:
            for p in (port, port + bus_offset):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                socks.append(s)
                s.bind((host, p))
            return port
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no free port pair (p, p + {bus_offset}) with p <= {top} on {host}")
