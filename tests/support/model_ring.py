"""A pure-Python reference ring, written from the documented placement recipe only.

It uses the reference hash packages (xxhash, mmh3, hashlib) and ``bisect``; nothing from
``consistent_hash`` and no NumPy searching.  It is slow and obviously correct, which is the point:
the compiled ring is checked against it.

Recipe (DESIGN.md, "Placement recipe"):
    vnode label   utf8(node) + b"#" + ascii(decimal j),   j = 0 .. count(node) - 1
    count(node)   max(1, floor(vnodes * weight + 0.5))
    position      H(label, seed)
    key bytes     str -> UTF-8; bytes / bytearray / memoryview as is; int (not bool) -> decimal
    lookup        first position >= H(key) clockwise, wrapping to the first position
    ties          equal positions are ordered by node name (UTF-8 bytes)
"""

from __future__ import annotations

import bisect
import hashlib
import math
from collections.abc import Callable
from fractions import Fraction

import mmh3
import xxhash

SPACE = 1 << 64
MAX64 = SPACE - 1


def reference_hash(name, seed: int = 0) -> Callable[[bytes], int]:
    """bytes -> uint64 for a hash name (or a callable, passed through)."""
    if callable(name):
        return name
    if name == "xxh3":
        return lambda b: xxhash.xxh3_64_intdigest(b, seed)
    if name == "xxh64":
        return lambda b: xxhash.xxh64_intdigest(b, seed)
    if name == "murmur3":
        return lambda b: mmh3.hash64(b, seed, signed=False)[0]
    if name == "md5":
        assert seed == 0
        return lambda b: int.from_bytes(hashlib.md5(b).digest()[:8], "big")
    raise AssertionError(f"no reference for {name!r}")


def key_bytes(key) -> bytes:
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray)):
        return bytes(key)
    if isinstance(key, memoryview):
        return key.tobytes()
    if isinstance(key, int) and not isinstance(key, bool):
        return str(int(key)).encode("ascii")
    raise TypeError(f"model: unsupported key {key!r}")


def count_of(vnodes: int, weight: float) -> int:
    return max(1, math.floor(float(vnodes) * float(weight) + 0.5))


class ModelRing:
    def __init__(self, nodes=(), *, vnodes: int = 160, hash="xxh3", seed: int = 0):
        self.vnodes = vnodes
        self.hash_name = hash
        self.seed = seed
        self.H = reference_hash(hash, seed)
        self.weights: dict[str, float] = {}
        items = nodes.items() if isinstance(nodes, dict) else ((n, 1.0) for n in nodes)
        for n, w in items:
            self.weights[n] = float(w)
        self._rebuild()

    # -- building ------------------------------------------------------------------------
    def labels(self, node: str) -> list[bytes]:
        name = node.encode("utf-8")
        return [name + b"#" + str(j).encode("ascii")
                for j in range(count_of(self.vnodes, self.weights[node]))]

    def _rebuild(self) -> None:
        entries = []
        for node in self.weights:
            nb = node.encode("utf-8")
            for label in self.labels(node):
                entries.append((self.H(label), nb, node))
        entries.sort(key=lambda e: (e[0], e[1]))
        self.nodes = tuple(sorted(self.weights, key=lambda n: n.encode("utf-8")))
        index = {n: i for i, n in enumerate(self.nodes)}
        self.positions = [e[0] for e in entries]
        self.owner_names = [e[2] for e in entries]
        self.owners = [index[n] for n in self.owner_names]

    def add(self, node: str, weight: float = 1.0) -> None:
        assert node not in self.weights
        self.weights[node] = float(weight)
        self._rebuild()

    def remove(self, node: str) -> None:
        del self.weights[node]
        self._rebuild()

    def set_weight(self, node: str, weight: float) -> None:
        assert node in self.weights
        self.weights[node] = float(weight)
        self._rebuild()

    # -- lookups -------------------------------------------------------------------------
    def hash(self, key) -> int:
        return self.H(key_bytes(key))

    def index_of_hash(self, h: int) -> int:
        """Index into positions of the vnode that owns hash h."""
        assert self.positions, "empty model ring"
        i = bisect.bisect_left(self.positions, h)
        return 0 if i == len(self.positions) else i

    def owner_of_hash(self, h: int) -> str:
        return self.owner_names[self.index_of_hash(h)]

    def get(self, key) -> str:
        return self.owner_of_hash(self.hash(key))

    def replicas(self, key, n: int) -> list[str]:
        want = min(n, len(self.weights))
        i = self.index_of_hash(self.hash(key))
        out: list[str] = []
        V = len(self.positions)
        for step in range(V):
            name = self.owner_names[(i + step) % V]
            if name not in out:
                out.append(name)
                if len(out) == want:
                    break
        return out

    def ownership(self) -> dict[str, Fraction]:
        shares = {n: Fraction(0) for n in self.weights}
        p = self.positions
        V = len(p)
        for i in range(V):
            arc = p[i] - p[i - 1] if i > 0 else p[0] + SPACE - p[-1]
            shares[self.owner_names[i]] += Fraction(arc, SPACE)
        return shares
