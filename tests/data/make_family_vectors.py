"""Generate tests/data/family_vectors.json: golden vectors for the modern family's routers.

Computed WITHOUT consistent_hash, from the documented recipe (docs/routers/*.md) over the
plain-Python models of the references (tests/support/model_family.py) and the reference hash
packages (tests/support/model_hashes.py):

    key -> 64-bit hash  an int key is its own 64 bits (a negative int as its two's complement);
                        str -> UTF-8, bytes as they are -> H(hash, bytes, seed)
    names -> buckets    bucket (slot) i is the i-th name given; the LIFO routers append on
                        add and drop the last on remove; AnchorHash and DxHash keep ``capacity``
                        slots with the free ones stacked from the last down (add fills the top
                        of the stack, remove pushes the node's slot); JumpBackAnchorHash follows
                        hash4j's addBucket / removeBucket
    bucket of a hash    JumpBackHash jumpback(h, n); FlipHash fliphash(h, 0, n - 1); PowerHash
                        power(h, n) (0 for n = 1); BinomialHash binomial(h, n); AnchorHash
                        ComputeBucket(h, 0); DxHash getNodeID(h mod 2**32) (then the first
                        working slot after its last probe where it gives up); JumpBackAnchorHash
                        getBucket(h)

    python tests/data/make_family_vectors.py      # rewrites family_vectors.json; commit it

Regenerating must give an identical file: a diff means a recipe changed, which the stability
promise forbids.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))
import model_family as fm  # noqa: E402
from model_hashes import H, encode_key, key_bytes  # noqa: E402

MASK = (1 << 64) - 1
DIGEST_KEYS = [f"key-{i}" for i in range(100_000)]
KEYS: list[str | bytes | int] = ["", "a", "user:42", "é", "日本語", b"\x00\xff", b"", 0, 1, -1, 42,
                                 2**63, 2**64 - 1, -(2**63)]
KEYS += [f"k{i}" for i in range(40)] + list(range(1000, 1030))


def digest(names: list[str]) -> str:
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()


def key_hash(key: str | bytes | int, hash: str, seed: int) -> int:
    if isinstance(key, int):
        return key & MASK
    return H(hash, key_bytes(key), seed)


class Lifo:
    """n named buckets, append / drop the last."""

    def __init__(self, names: list[str], bucket: Callable[[int, int], int]) -> None:
        self.names, self.fn = list(names), bucket

    def add(self, name: str) -> None:
        self.names.append(name)

    def remove(self, name: str) -> None:
        assert name == self.names[-1]
        self.names.pop()

    def node(self, h: int) -> str:
        return self.names[self.fn(h, len(self.names))]


class Slots:
    """capacity slots (names or None), the stack of free slots, top last."""

    def __init__(self, names: list[str], capacity: int) -> None:
        self.slots: list[str | None] = [*names, *([None] * (capacity - len(names)))]
        self.stack = list(range(capacity - 1, len(names) - 1, -1))

    def add(self, name: str) -> None:
        self.slots[self.stack.pop()] = name

    def remove(self, name: str) -> None:
        b = self.slots.index(name)
        self.slots[b] = None
        self.stack.append(b)


class AnchorRef(Slots):
    def node(self, h: int) -> str:
        a = len(self.slots)
        anchor = fm.Anchor(a, a)
        for b in self.stack:
            anchor.remove(b)
        self._anchor = anchor
        name = self.slots[anchor.bucket(h, 0)]
        assert name is not None
        return name

    def nodes_of(self, hashes: list[int]) -> list[str]:
        self.node(0)
        out = [self.slots[self._anchor.bucket(h, 0)] for h in hashes]
        return [x for x in out if x is not None]


class DxRef(Slots):
    def _dx(self) -> fm.DxOurs:
        dx = fm.DxOurs(len(self.slots), 0)
        dx.nodes = [0 if x is None else 1 for x in self.slots]
        dx.working = sum(dx.nodes)
        return dx

    def node(self, h: int) -> str:
        return self.nodes_of([h])[0]

    def nodes_of(self, hashes: list[int]) -> list[str]:
        dx = self._dx()
        out = [self.slots[dx.node(h & 0xFFFFFFFF)[0]] for h in hashes]
        return [x for x in out if x is not None]


class JumpBackAnchorRef:
    """hash4j's bucket set, each bucket holding a name."""

    def __init__(self, names: list[str]) -> None:
        self.jba = fm.JumpBackAnchor()
        self.names: dict[int, str] = {}
        for n in names:
            self.add(n)

    def add(self, name: str) -> None:
        self.names[self.jba.add()] = name

    def remove(self, name: str) -> None:
        b = next(k for k, v in self.names.items() if v == name)
        assert self.jba.remove(b)
        del self.names[b]

    def node(self, h: int) -> str:
        return self.names[self.jba.bucket(h)]

    def nodes_of(self, hashes: list[int]) -> list[str]:
        return [self.node(h) for h in hashes]


def power_or_zero(h: int, n: int) -> int:
    return 0 if n == 1 else fm.power(h, n)


LIFO: dict[str, Callable[[int, int], int]] = {
    "JumpBackHash": fm.jumpback,
    "FlipHash": lambda h, n: fm.fliphash(h, 0, n - 1),
    "PowerHash": power_or_zero,
    "BinomialHash": fm.binomial,
}

CONFIGS: list[dict[str, Any]] = []
for router in LIFO:
    CONFIGS += [
        {"router": router, "name": f"{router}-xxh3", "nodes": [f"n{i}" for i in range(10)],
         "hash": "xxh3", "seed": 0, "ops": [["add", "n10"], ["add", "n11"], ["remove", "n11"]]},
        {"router": router, "name": f"{router}-murmur3-1000", "hash": "murmur3", "seed": 7,
         "nodes": [f"shard-{i:04d}" for i in range(1000)], "ops": []},
        {"router": router, "name": f"{router}-one", "nodes": ["only"], "hash": "xxh64",
         "seed": 3, "ops": []},
    ]
for router in ("AnchorHash", "DxHash"):
    CONFIGS += [
        {"router": router, "name": f"{router}-xxh3", "nodes": [f"n{i}" for i in range(20)],
         "capacity": 64, "hash": "xxh3", "seed": 0,
         "ops": [["remove", "n5"], ["remove", "n17"], ["remove", "n0"], ["add", "x"],
                 ["remove", "n12"], ["add", "n5"], ["add", "y"], ["remove", "n3"]]},
        {"router": router, "name": f"{router}-md5-many", "capacity": 1000, "hash": "md5",
         "seed": 0, "nodes": [f"s{i}" for i in range(900)],
         "ops": [["remove", f"s{(i * 37) % 900}"] for i in range(600)]
         + [["add", f"new{i}"] for i in range(50)]},
        {"router": router, "name": f"{router}-odd-capacity", "capacity": 7, "hash": "xxh64",
         "seed": 11, "nodes": ["a", "b", "c"], "ops": [["add", "d"], ["remove", "a"]]},
    ]
CONFIGS += [
    {"router": "JumpBackAnchorHash", "name": "JumpBackAnchorHash-xxh3",
     "nodes": [f"n{i}" for i in range(20)], "hash": "xxh3", "seed": 0,
     "ops": [["remove", "n5"], ["remove", "n17"], ["remove", "n0"], ["add", "x"],
             ["remove", "n19"], ["add", "n5"], ["add", "y"], ["remove", "n3"], ["add", "z"]]},
    {"router": "JumpBackAnchorHash", "name": "JumpBackAnchorHash-murmur3-many",
     "nodes": [f"s{i}" for i in range(1000)], "hash": "murmur3", "seed": 9,
     "ops": [["remove", f"s{(i * 37) % 1000}"] for i in range(900)]
     + [["add", f"new{i}"] for i in range(30)]},
    {"router": "JumpBackAnchorHash", "name": "JumpBackAnchorHash-tail", "nodes": ["a", "b", "c"],
     "hash": "xxh3", "seed": 0,
     "ops": [["remove", "c"], ["remove", "a"], ["add", "d"], ["add", "e"], ["remove", "b"]]},
]


def build(cfg: dict[str, Any]) -> Any:
    router, names = cfg["router"], list(cfg["nodes"])
    if router in LIFO:
        return Lifo(names, LIFO[router])
    if router == "AnchorHash":
        return AnchorRef(names, cfg["capacity"])
    if router == "DxHash":
        return DxRef(names, cfg["capacity"])
    return JumpBackAnchorRef(names)


def make() -> list[dict[str, Any]]:
    out = []
    for cfg in CONFIGS:
        ref = build(cfg)
        for op, name in cfg["ops"]:
            getattr(ref, op)(name)
        h, seed = cfg["hash"], cfg["seed"]
        hashes = [key_hash(k, h, seed) for k in KEYS]
        digest_hashes = [key_hash(k, h, seed) for k in DIGEST_KEYS]
        if hasattr(ref, "nodes_of"):
            got, names = ref.nodes_of(hashes), ref.nodes_of(digest_hashes)
        else:
            got, names = [ref.node(x) for x in hashes], [ref.node(x) for x in digest_hashes]
        entry = dict(cfg, vectors=[[encode_key(k), g] for k, g in zip(KEYS, got, strict=True)],
                     assignment_sha256=digest(names))
        if isinstance(ref, Slots):
            entry["slots"], entry["removed"] = ref.slots, ref.stack
        out.append(entry)
    return out


def main() -> None:
    out = {"comment": "Generated by tests/data/make_family_vectors.py without consistent_hash, "
                      "from the recipe in its docstring over tests/support/model_family.py.",
           "digest_keys": "key-0 .. key-99999, names joined by newlines, sha256",
           "configs": make()}
    path = HERE / "family_vectors.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
