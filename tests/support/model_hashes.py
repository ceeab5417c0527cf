"""The reference hashes and key bytes of the placement recipe, from the reference packages
(xxhash, mmh3, hashlib): shared by the golden-vector generators, never by the library."""

from __future__ import annotations

import hashlib

import mmh3
import xxhash


def H(name: str, data: bytes, seed: int) -> int:
    if name == "xxh3":
        return xxhash.xxh3_64_intdigest(data, seed)
    if name == "xxh64":
        return xxhash.xxh64_intdigest(data, seed)
    if name == "murmur3":
        return mmh3.hash64(data, seed, signed=False)[0]
    if name == "md5":
        assert seed == 0
        return int.from_bytes(hashlib.md5(data).digest()[:8], "big")
    raise ValueError(name)


def key_bytes(key: str | bytes | int) -> bytes:
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, bytes):
        return key
    return str(key).encode("ascii")


def encode_key(k: str | bytes | int) -> dict[str, str]:
    """A key as the vector files store it: {"str": k}, {"bytes": hex} or {"int": decimal}."""
    if isinstance(k, str):
        return {"str": k}
    if isinstance(k, bytes):
        return {"bytes": k.hex()}
    return {"int": str(k)}
