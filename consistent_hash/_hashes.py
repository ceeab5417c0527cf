"""The one registry of key hashes.

Every hash is written in C (``src/ch_hash.h``, ``src/ch_compat_hash.h``) and dispatched by the
id the core lists in ``HASH_IDS``.  Two kinds:

- the public key hashes, the only values ``hash=`` accepts, listed, serialized and
  fingerprinted: ``PUBLIC`` maps each to its seed width in bits;
- the compatibility hashes (one-at-a-time, ketama's MD5 words, Redis' CRC16 slot, Cassandra's
  murmur3, ...), which exactly reproduce another system and so are reachable only through the
  router that reproduces it (``compat_hasher``), never as a ``hash=`` value.

Adding a public hash is its C function, its id, and one entry in ``PUBLIC``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from consistent_hash._core import HASH_IDS, _Hasher
from consistent_hash._validate import check_int

__all__ = ["COMPAT", "PUBLIC", "compat_hasher", "make_hasher"]

# name -> seed width in bits (md5 takes no seed)
PUBLIC: dict[str, int] = {"xxh3": 64, "xxh64": 64, "murmur3": 32, "md5": 0}

COMPAT: frozenset[str] = frozenset(HASH_IDS) - frozenset(PUBLIC)

HashArg = str | Callable[[bytes], int]


def make_hasher(hash: HashArg, seed: Any) -> tuple[_Hasher, str]:
    """The hasher for a public (hash, seed) argument pair, and the hash's name ("callable"
    for a Python callable).  (A jump-class kernel switches it to raw integer keys itself.)"""
    if isinstance(hash, str):
        if hash not in PUBLIC:
            raise ValueError(f"hash must be one of {', '.join(map(repr, PUBLIC))} or a "
                             f"callable, got {hash!r}")
        s = check_int(seed, "seed", 0, (1 << PUBLIC[hash]) - 1)
        return _Hasher(HASH_IDS[hash], s, None), hash
    if callable(hash):
        check_int(seed, "seed", 0, 0)
        return _Hasher(0, 0, hash), "callable"
    raise TypeError(f"hash must be a str or a callable, got {type(hash).__name__!r}")


def compat_hasher(name: str) -> _Hasher:
    """The hasher of a compatibility hash, for the router that reproduces its system."""
    if name not in COMPAT:
        raise ValueError(f"unknown compatibility hash {name!r}")
    return _Hasher(HASH_IDS[name], 0, None)
