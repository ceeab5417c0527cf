"""Free TCP ports on loopback, for the tests that start real servers.

Imports neither the package nor pytest, so the vector generators under tests/data/ (which run
without the package installed) can use it too."""

from __future__ import annotations

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
