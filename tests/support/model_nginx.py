"""A pure-Python model of nginx 1.22's upstream ``hash`` balancer, written from nginx's source
(src/http/modules/ngx_http_upstream_hash_module.c, ngx_http_upstream_round_robin.c,
src/core/ngx_crc32.h) for the tests; it uses nothing from consistent_hash.

``zlib.crc32`` is nginx's ngx_crc32_long / ngx_crc32_update + final (the same CRC-32).

Returns server indices into the list given; ``None`` where nginx itself gives up after its
tries and falls back to round robin (unpredictable), or for an empty key (round robin too).
"""

from __future__ import annotations

import bisect
import struct
import zlib
from collections.abc import Sequence

TRIES = 20  # nginx: `if (++hp->tries > 20)` -> round robin


def host_port(server: str) -> tuple[bytes, bytes]:
    """ngx_http_upstream_update_chash: "unix:" (any case) -> the path, no port; else the
    trailing digits after the last ':' are the port, when only digits follow that ':'."""
    b = server.encode()
    if len(b) >= 5 and b[:5].lower() == b"unix:":
        return b[5:], b""
    for j in range(len(b)):
        c = b[len(b) - j - 1]
        if c == ord(":"):
            return b[:len(b) - j - 1], b[len(b) - j:]
        if not ord("0") <= c <= ord("9"):
            break
    return b, b""


class ConsistentModel:
    """`hash $key consistent;` over servers [(name, weight, down)] in config order."""

    def __init__(self, servers: Sequence[tuple[str, int, bool]]) -> None:
        self.servers = list(servers)
        pts: list[tuple[int, int]] = []
        for i, (name, weight, _) in enumerate(self.servers):
            host, port = host_port(name)
            base = host + b"\0" + port
            prev = 0
            for _ in range(160 * weight):
                # crc32(HOST \0 PORT PREV_HASH), PREV_HASH the previous point, little-endian
                prev = zlib.crc32(base + struct.pack("<I", prev))
                pts.append((prev, i))
        pts.sort(key=lambda p: p[0])  # glibc qsort (a merge sort here): stable
        self.points: list[tuple[int, int]] = []
        for p in pts:  # keep the first of each run of equal hashes
            if not self.points or self.points[-1][0] != p[0]:
                self.points.append(p)
        self.values = [p[0] for p in self.points]

    def index(self, key: bytes) -> int | None:
        if not key:
            return None
        h = zlib.crc32(key)
        i = bisect.bisect_left(self.values, h)  # first point >= hash (or number: wraps)
        for t in range(TRIES + 1):
            s = self.points[(i + t) % len(self.points)][1]
            if not self.servers[s][2]:
                return s
        return None


class PlainModel:
    """`hash $key;` over servers [(name, weight, down)] in config order."""

    def __init__(self, servers: Sequence[tuple[str, int, bool]]) -> None:
        self.servers = list(servers)
        self.total = sum(w for _, w, _ in self.servers)

    def index(self, key: bytes) -> int | None:
        if not key:
            return None
        acc = 0
        for rehash in range(TRIES + 1):
            prefix = str(rehash).encode() if rehash else b""
            acc += (zlib.crc32(prefix + key) >> 16) & 0x7FFF
            w = acc % self.total
            p = 0
            while w >= self.servers[p][1]:
                w -= self.servers[p][1]
                p += 1
            if not self.servers[p][2]:
                return p
        return None


def model(servers: Sequence[tuple[str, int, bool]], consistent: bool
          ) -> ConsistentModel | PlainModel:
    return ConsistentModel(servers) if consistent else PlainModel(servers)
