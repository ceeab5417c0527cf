"""The usual pure-Python consistent-hash ring: md5 vnode labels, a sorted list, bisect.

A benchmark peer, not part of the library. The defaults (label ``f"{node}#{j}"``, the first
8 bytes of md5 as a big-endian uint64, the first position >= the key's hash, wrapping to 0)
are the layout of ``HashRing(nodes, hash="md5")``, so the two can be checked against each
other; ``hash_fn`` / ``label`` / ``side`` reproduce other layouts (e.g. uhashring's default:
``label="{}-{}"``, ``hash_fn=md5_128``, ``side="right"``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterable
from hashlib import md5


def md5_64(data: bytes) -> int:
    return int.from_bytes(md5(data).digest()[:8], "big")


def md5_128(data: bytes) -> int:
    return int(md5(data).hexdigest(), 16)


class PyRing:
    def __init__(self, nodes: Iterable[str], vnodes: int = 160,
                 hash_fn: Callable[[bytes], int] = md5_64, label: str = "{}#{}",
                 side: str = "left") -> None:
        self._hash, self._label, self._vnodes = hash_fn, label, vnodes
        self._bisect = bisect_right if side == "right" else bisect_left
        self._ring: dict[int, str] = {}
        for node in nodes:
            for h in self._points(node):
                self._ring[h] = node
        self._keys = sorted(self._ring)

    def _points(self, node: str) -> list[int]:
        return [self._hash(self._label.format(node, j).encode()) for j in range(self._vnodes)]

    def add(self, node: str) -> None:
        for h in self._points(node):
            self._ring[h] = node
            insort(self._keys, h)

    def remove(self, node: str) -> None:
        for h in self._points(node):
            del self._ring[h]
            del self._keys[bisect_left(self._keys, h)]

    def _index(self, key: str) -> int:
        i = self._bisect(self._keys, self._hash(key.encode()))
        return 0 if i == len(self._keys) else i

    def get(self, key: str) -> str:
        return self._ring[self._keys[self._index(key)]]

    def replicas(self, key: str, n: int) -> list[str]:
        """The first n distinct nodes clockwise from the key."""
        out: list[str] = []
        keys, i = self._keys, self._index(key)
        n = min(n, len(set(self._ring.values())))
        while len(out) < n:
            node = self._ring[keys[i]]
            if node not in out:
                out.append(node)
            i = (i + 1) % len(keys)
        return out
