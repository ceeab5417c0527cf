"""The versioned binary format of to_bytes / from_bytes.

    magic    4 bytes   b"\\x89CHR"
    version  u16 LE    1
    kind     u16 LE    1 = HashRing
    length   u32 LE    payload length
    payload  length bytes (kind-specific, canonical: equal routers give equal payloads)
    check    8 bytes   first 8 bytes of sha256(everything before it)

Every size is checked against the bytes actually present before anything is allocated, so
damaged or hostile input raises ValueError, never crashes or allocates without bound.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

MAGIC = b"\x89CHR"
VERSION = 1
KIND_HASHRING = 1
_HEADER = struct.Struct("<4sHHI")


def pack(kind: int, payload: bytes) -> bytes:
    head = _HEADER.pack(MAGIC, VERSION, kind, len(payload)) + payload
    return head + hashlib.sha256(head).digest()[:8]


def unpack(data: object, kind: int) -> bytes:
    """Check the envelope and return the payload."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes-like, got {type(data).__name__!r}")
    b = bytes(data)
    if len(b) < _HEADER.size + 8:
        raise ValueError("data is too short to be a serialized router")
    magic, version, k, length = _HEADER.unpack_from(b)
    if magic != MAGIC:
        raise ValueError("data is not a serialized consistent_hash router (bad magic)")
    if version != VERSION:
        raise ValueError(f"unsupported format version {version} (this library reads {VERSION})")
    if k != kind:
        raise ValueError(f"data holds router kind {k}, expected {kind}")
    if len(b) != _HEADER.size + length + 8:
        raise ValueError("data length does not match its header (truncated or padded)")
    body = b[: _HEADER.size + length]
    if hashlib.sha256(body).digest()[:8] != b[-8:]:
        raise ValueError("data is damaged (checksum mismatch)")
    return body[_HEADER.size:]


class Reader:
    """Bounds-checked reads from a payload."""

    def __init__(self, payload: bytes) -> None:
        self.b = payload
        self.i = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.i + n > len(self.b):
            raise ValueError("data is damaged (a field runs past the end)")
        out = self.b[self.i : self.i + n]
        self.i += n
        return out

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        s = struct.Struct("<" + fmt)
        return s.unpack(self.take(s.size))

    def remaining(self) -> int:
        return len(self.b) - self.i

    def done(self) -> None:
        if self.i != len(self.b):
            raise ValueError("data is damaged (trailing bytes)")
