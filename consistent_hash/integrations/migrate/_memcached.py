"""A small memcached client over the text and meta protocols: what the migration needs."""

from __future__ import annotations

import base64
import socket
import time
import urllib.parse
from collections.abc import Sequence

from consistent_hash._address import Address
from consistent_hash.integrations.migrate._report import MigrationError, _show_key


class _MemcachedError(Exception):
    """A memcached error line (ERROR, CLIENT_ERROR, SERVER_ERROR)."""


def _connect(address: Address, timeout: float) -> socket.socket:
    if isinstance(address, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(address)
        except OSError:
            sock.close()
            raise
        return sock
    sock = socket.create_connection(address, timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _wire_key(key: bytes) -> tuple[bytes, bytes]:
    """The key as the command carries it and the flag that goes with it: the key itself when
    the text protocol allows it, else its base64 with the ``b`` flag."""
    if 0 < len(key) <= 250 and not any(c <= 32 or c == 127 for c in key):
        return key, b""
    encoded = base64.b64encode(key)
    if not key or len(encoded) > 250:
        raise ValueError(f"key {_show_key(key)[:60]!r} cannot be sent to memcached "
                         "(empty, or too long in base64)")
    return encoded, b" b"


class _Memcached:
    """One connection to one memcached server."""

    def __init__(self, address: Address, timeout: float) -> None:
        self.sock = _connect(address, timeout)
        self.rfile = self.sock.makefile("rb", buffering=1 << 16)

    def close(self) -> None:
        try:
            self.rfile.close()
        finally:
            self.sock.close()

    def _line(self) -> bytes:
        line: bytes = self.rfile.readline()
        if not line.endswith(b"\r\n") and not line.endswith(b"\n"):
            raise ConnectionError("memcached closed the connection")
        return line.rstrip(b"\r\n")

    def _exact(self, n: int) -> bytes:
        data: bytes = self.rfile.read(n + 2)
        if len(data) != n + 2:
            raise ConnectionError("memcached closed the connection")
        return data[:n]

    @staticmethod
    def _check(line: bytes) -> bytes:
        if line == b"ERROR" or line.startswith((b"CLIENT_ERROR", b"SERVER_ERROR",
                                                b"ERROR ")):
            raise _MemcachedError(line.decode("utf-8", "replace"))
        return line

    def stats(self) -> dict[str, str]:
        self.sock.sendall(b"stats\r\n")
        out: dict[str, str] = {}
        while True:
            line = self._check(self._line())
            if line == b"END":
                return out
            parts = line.decode("utf-8", "replace").split(" ", 2)
            if len(parts) == 3 and parts[0] == "STAT":
                out[parts[1]] = parts[2]

    def crawler(self, command: bytes, deadline: float) -> bytes:
        """Send an lru_crawler command, retrying while the crawler is busy; the first line."""
        while True:
            self.sock.sendall(b"lru_crawler " + command + b"\r\n")
            line = self._line()
            if not line.startswith(b"BUSY"):
                return line
            if time.monotonic() > deadline:
                raise MigrationError(f"memcached's lru_crawler stayed busy ({line.decode()})")
            time.sleep(0.02)

    def metadump(self, deadline: float) -> tuple[list[bytes], list[int]]:
        """Every key of the server (lru_crawler metadump hash), and each item's size."""
        line = self.crawler(b"metadump hash", deadline)
        if line.startswith((b"ERROR", b"CLIENT_ERROR", b"BADCLASS")):
            # memcached before 1.6.? has no hash walk: the LRU walk (checked by the count)
            line = self.crawler(b"metadump all", deadline)
        keys: list[bytes] = []
        sizes: list[int] = []
        while line != b"END":
            self._check(line)
            if line.startswith(b"key="):
                fields = dict(f.split(b"=", 1) for f in line.split(b" ") if b"=" in f)
                keys.append(urllib.parse.unquote_to_bytes(fields[b"key"]))
                size = fields.get(b"size", b"0")
                sizes.append(int(size) if size.isdigit() else 0)
            line = self._line()
        return keys, sizes

    def get_many(self, keys: Sequence[bytes]
                 ) -> list[tuple[bytes, int, int, int] | None | _MemcachedError]:
        """(value, client flags, remaining TTL (-1: none), CAS) per key, None for a miss."""
        self.sock.sendall(b"".join(b"mg %s v f t c u%s\r\n" % _wire_key(k) for k in keys))
        out: list[tuple[bytes, int, int, int] | None | _MemcachedError] = []
        for _ in keys:
            line = self._line()
            if line == b"EN":
                out.append(None)
                continue
            if not line.startswith(b"VA "):
                try:
                    self._check(line)
                except _MemcachedError as e:
                    out.append(e)
                    continue
                raise ConnectionError(f"unexpected memcached reply {line[:80]!r}")
            tokens = line.split(b" ")
            value = self._exact(int(tokens[1]))
            got = {t[:1]: t[1:] for t in tokens[2:]}
            out.append((value, int(got[b"f"]), int(got[b"t"]), int(got[b"c"])))
        return out

    def cas_many(self, keys: Sequence[bytes]) -> list[int | None]:
        """The current CAS of each key (None: gone)."""
        self.sock.sendall(b"".join(b"mg %s c u%s\r\n" % _wire_key(k) for k in keys))
        out: list[int | None] = []
        for _ in keys:
            line = self._check(self._line())
            out.append(int(line.split(b" ")[1][1:]) if line.startswith(b"HD c") else None)
        return out

    def add_many(self, items: Sequence[tuple[bytes, bytes, int, int]]
                 ) -> list[int | bool | _MemcachedError]:
        """Add (key, value, flags, ttl) items: the new CAS when stored, False when the key
        exists, or the server's error."""
        parts = []
        for key, value, flags, ttl in items:
            wkey, b = _wire_key(key)
            parts.append(b"ms %s %d ME F%d T%d c%s\r\n" % (wkey, len(value), flags, ttl, b))
            parts.append(value)
            parts.append(b"\r\n")
            if sum(map(len, parts)) > 1 << 20:
                self.sock.sendall(b"".join(parts))
                parts = []
        if parts:
            self.sock.sendall(b"".join(parts))
        out: list[int | bool | _MemcachedError] = []
        for _ in items:
            line = self._line()
            if line.startswith(b"HD"):
                tokens = line.split(b" ")
                out.append(int(tokens[1][1:]) if len(tokens) > 1 else True)
            elif line.startswith(b"NS"):
                out.append(False)
            else:
                try:
                    self._check(line)
                    raise ConnectionError(f"unexpected memcached reply {line[:80]!r}")
                except _MemcachedError as e:
                    out.append(e)
        return out

    def delete_many(self, items: Sequence[tuple[bytes, int]]) -> list[bool]:
        """Delete (key, CAS) items, each only if its CAS is unchanged: True when deleted."""
        self.sock.sendall(b"".join(b"md %s C%d%s\r\n" % (_wire_key(k)[0], cas, _wire_key(k)[1])
                                   for k, cas in items))
        return [self._check(self._line()).startswith(b"HD") for _ in items]
