"""The versioned binary format of to_bytes / from_bytes.

    magic    4 bytes   b"\\x89CHR"
    version  u16 LE    1, or 2 when nodes are marked down
    kind     u16 LE    1 = HashRing
    length   u32 LE    payload length
    payload  length bytes (kind-specific, canonical: equal routers give equal payloads)
    down     version 2 only: u32 count, then each down node's name (u32 length + UTF-8), in
             name order: the router's down marks (mark_down), part of its routing state
    check    8 bytes   first 8 bytes of sha256(everything before it)

A router with nothing marked down writes version 1, byte for byte what this library always
wrote; version 1 data still loads.

Every size is checked against the bytes actually present before anything is allocated, so
damaged or hostile input raises ValueError, never crashes or allocates without bound.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

MAGIC = b"\x89CHR"
VERSION = 2  # the newest version written; VERSIONS are read
VERSIONS = (1, 2)
# The envelope's kind of every router class: one table, each number once (tests check it).
KINDS: dict[str, int] = {
    "HashRing": 1,
    "JumpHash": 16,
    "Rendezvous": 17,
    "Maglev": 18,
    "MultiProbe": 19,
    "MementoHash": 20,
    "KetamaRing": 21,
    "SlotMap": 22,
    "TokenRing": 23,
    "RingRouter": 30,  # rings defined outside the library (the payload names their class)
    "TwemproxyPool": 40,
    "NginxUpstream": 60,
    "HAProxyBackend": 65,
    "EnvoyRingHash": 80,
    "EnvoyMaglev": 81,
    # the modern family (consistent_hash.algorithms, issue 22)
    "JumpBackHash": 90,
    "FlipHash": 91,
    "PowerHash": 92,
    "BinomialHash": 93,
    "AnchorHash": 94,
    "DxHash": 95,
    "JumpBackAnchorHash": 96,
}
KIND_HASHRING = KINDS["HashRing"]
_HEADER = struct.Struct("<4sHHI")


class FormatError(ValueError):
    """Bytes that are not a serialized router, or damaged ones (a ValueError)."""


def pack(kind: int, payload: bytes, down: Any = ()) -> bytes:
    """The envelope around a payload, with the down marks (version 2) when there are any."""
    down = sorted(down)
    version = 2 if down else 1
    head = _HEADER.pack(MAGIC, version, kind, len(payload)) + payload
    if down:
        head += pack_down(down)
    return head + hashlib.sha256(head).digest()[:8]


def pack_down(down: Any) -> bytes:
    """The down-marks block: u32 count, then each name, in name order."""
    return pack_names(sorted(down))


def unpack(data: object, kind: int) -> bytes:
    """Check the envelope and return the payload (data with down marks is refused: a caller
    that cannot apply them would route differently)."""
    payload, down = unpack_state(data, kind)
    if down:
        raise FormatError("data holds down marks, which this reader does not apply")
    return payload


def unpack_state(data: object, kind: int) -> tuple[bytes, list[str]]:
    """Check the envelope; return the payload and the down marks."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes-like, got {type(data).__name__!r}")
    b = bytes(data)
    if len(b) < _HEADER.size + 8:
        raise FormatError("data is too short to be a serialized router")
    magic, version, k, length = _HEADER.unpack_from(b)
    if magic != MAGIC:
        raise FormatError("data is not a serialized consistent_hash router (bad magic)")
    if version not in VERSIONS:
        raise FormatError(f"unsupported format version {version} (this library reads "
                          f"{', '.join(map(str, VERSIONS))})")
    if k != kind:
        raise FormatError(f"data holds router kind {k}, expected {kind}")
    end = _HEADER.size + length
    if len(b) < end + 8 or (version == 1 and len(b) != end + 8):
        raise FormatError("data length does not match its header (truncated or padded)")
    if hashlib.sha256(b[:-8]).digest()[:8] != b[-8:]:
        raise FormatError("data is damaged (checksum mismatch)")
    down: list[str] = []
    if version == 2:
        r = Reader(b[end:-8])
        down = read_names(r)
        r.done()
        if not down or down != sorted(set(down)):
            raise FormatError("data is damaged (down marks not a sorted set of names)")
    return b[_HEADER.size:end], down


class Reader:
    """Bounds-checked reads from a payload."""

    def __init__(self, payload: bytes) -> None:
        self.b = payload
        self.i = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.i + n > len(self.b):
            raise FormatError("data is damaged (a field runs past the end)")
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
            raise FormatError("data is damaged (trailing bytes)")


# -- fields shared by the payloads --------------------------------------------------------------

def pack_str(s: str) -> bytes:
    """u32 length + UTF-8."""
    b = s.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def read_str(r: Reader) -> str:
    (n,) = r.unpack("I")
    try:
        return r.take(int(n)).decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError("data is damaged (a name is not UTF-8)") from None


def pack_hash(name: str, seed: int) -> bytes:
    """The hash header: u8 length + ASCII name, u64 seed."""
    b = name.encode("ascii")
    return struct.pack("<B", len(b)) + b + struct.pack("<Q", seed)


def read_hash(r: Reader) -> tuple[str, int]:
    (nlen,) = r.unpack("B")
    try:
        name = r.take(int(nlen)).decode("ascii")
    except UnicodeDecodeError:
        raise FormatError("data is damaged (hash name)") from None
    (seed,) = r.unpack("Q")
    return name, int(seed)


def pack_weights(weights: dict[str, float]) -> bytes:
    """u32 count, then per node: its name and its weight as f64."""
    parts = [struct.pack("<I", len(weights))]
    for node, w in weights.items():
        parts.append(pack_str(node))
        parts.append(struct.pack("<d", w))
    return b"".join(parts)


def read_weights(r: Reader) -> dict[str, float]:
    (count,) = r.unpack("I")
    if int(count) * 12 > r.remaining():  # each node takes >= 12 bytes: check before looping
        raise FormatError("data is damaged (node count exceeds the data)")
    weights: dict[str, float] = {}
    for _ in range(int(count)):
        name = read_str(r)
        (w,) = r.unpack("d")
        weights[name] = float(w)
    if len(weights) != count:
        raise FormatError("data is damaged (duplicate node names)")
    return weights


def pack_names(names: Any) -> bytes:
    """u32 count, then each name."""
    names = list(names)
    return struct.pack("<I", len(names)) + b"".join(pack_str(n) for n in names)


def read_names(r: Reader) -> list[str]:
    (count,) = r.unpack("I")
    if int(count) * 4 > r.remaining():
        raise FormatError("data is damaged (node count exceeds the data)")
    return [read_str(r) for _ in range(int(count))]
