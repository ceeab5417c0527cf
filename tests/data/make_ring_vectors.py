"""Generate tests/data/ring_vectors.json: golden key -> node vectors for HashRing.

The vectors are computed WITHOUT consistent_hash: straight from the placement recipe in the
README, with the reference hash packages (xxhash, mmh3, hashlib) and bisect.  The tests then
require the library to reproduce them exactly, so the mapping can never change silently.

    python tests/data/make_ring_vectors.py      # rewrites ring_vectors.json; commit the result

Regenerating must produce an identical file: a diff here means the recipe itself changed,
which the stability promise forbids (a new recipe is a new named scheme).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))  # model_hashes.py
from model_hashes import H, encode_key, key_bytes  # noqa: E402


class RecipeRing:
    def __init__(self, weights: dict[str, float], vnodes: int, hash: str, seed: int) -> None:
        self.hash, self.seed = hash, seed
        points = []
        for node, w in weights.items():
            count = max(1, math.floor(vnodes * w + 0.5))
            for j in range(count):
                label = node.encode("utf-8") + b"#" + str(j).encode("ascii")
                points.append((H(hash, label, seed), node.encode("utf-8"), node))
        points.sort()
        self.pos = [p for p, _, _ in points]
        self.owner = [n for _, _, n in points]

    def get(self, key: str | bytes | int) -> str:
        h = H(self.hash, key_bytes(key), self.seed)
        i = bisect.bisect_left(self.pos, h)
        return self.owner[i % len(self.pos)]


CONFIGS = [
    {"name": "xxh3-default", "nodes": {f"cache-{i}": 1.0 for i in range(8)},
     "vnodes": 160, "hash": "xxh3", "seed": 0},
    {"name": "xxh3-weighted-seeded", "nodes": {"a": 1.0, "b": 2.5, "c": 0.25, "dé": 1.0,
                                               "节点": 0.7}, "vnodes": 100, "hash": "xxh3",
     "seed": 2**63 + 12345},
    {"name": "xxh64", "nodes": {f"10.0.0.{i}:11211": 1.0 for i in range(1, 6)},
     "vnodes": 160, "hash": "xxh64", "seed": 7},
    {"name": "murmur3", "nodes": {f"shard-{i:02d}": 1.0 + i / 10 for i in range(12)},
     "vnodes": 64, "hash": "murmur3", "seed": 0xDEADBEEF},
    {"name": "md5", "nodes": {"alpha": 1.0, "beta": 1.0, "gamma": 3.0}, "vnodes": 160,
     "hash": "md5", "seed": 0},
    {"name": "xxh3-one-vnode", "nodes": {f"n{i}": 1.0 for i in range(50)}, "vnodes": 1,
     "hash": "xxh3", "seed": 0},
    # 40,000 positions: past the direct table, so the digest's batch of 100,000 keys is routed
    # through the line table (built on first use) on every platform the vectors are checked on
    {"name": "xxh3-line-table", "nodes": {f"node-{i}": 1.0 for i in range(250)}, "vnodes": 160,
     "hash": "xxh3", "seed": 0},
]

N_DIGEST = 100_000


def sample_keys() -> list[str | bytes | int]:
    rng = random.Random(20261130)
    keys: list[str | bytes | int] = ["", "a", "user:42", "héllo wörld", "🚀 launch", "\x00x"]
    keys += [b"", b"\xff\xfe\x80", b"binary\x00key"]
    keys += [0, 1, -1, 42, 2**63 - 1, -(2**63), 2**64 + 5, 10**30]
    for _ in range(100):
        n = rng.randrange(1, 40)
        keys.append("".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(160, 0x3000)]))
                            for _ in range(n)))
    return keys


def digest_keys() -> list[str]:
    return [f"key-{i}" for i in range(N_DIGEST)]


def main() -> None:
    out = {"comment": __doc__.strip().splitlines()[0],
           "digest_keys": f"key-0 .. key-{N_DIGEST - 1}", "configs": []}
    keys = sample_keys()
    dk = digest_keys()
    for cfg in CONFIGS:
        ring = RecipeRing(cfg["nodes"], cfg["vnodes"], cfg["hash"], cfg["seed"])
        assignment = "\n".join(ring.get(k) for k in dk).encode("utf-8")
        positions = b"".join(p.to_bytes(8, "little") for p in ring.pos)
        out["configs"].append({
            **cfg,
            "vectors": [[encode_key(k), ring.get(k)] for k in keys],
            "assignment_sha256": hashlib.sha256(assignment).hexdigest(),
            "positions_sha256": hashlib.sha256(positions).hexdigest(),
        })
    path = Path(__file__).with_name("ring_vectors.json")
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
