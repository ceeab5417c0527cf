"""Generate tests/data/algo_vectors.json: golden vectors for the algorithm classes.

Computed WITHOUT consistent_hash: each algorithm is transcribed here in plain Python from its
published description (and, for jump hash, from both Guava's code and the paper's), with the
reference hash packages (xxhash, mmh3, hashlib).  The tests require the library to reproduce
every vector exactly, so a mapping can never change silently.

    python tests/data/make_algo_vectors.py      # rewrites algo_vectors.json; commit the result

Regenerating must give an identical file: a diff means a recipe changed, which the stability
promise forbids (a new recipe is a new named scheme).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import random
import struct
import sys
from decimal import Decimal, getcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))  # model_hashes.py
from model_hashes import H, encode_key, key_bytes  # noqa: E402

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
DIGEST_KEYS = [f"key-{i}" for i in range(100_000)]


def digest(names: list[str]) -> str:
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()


def mix64(z: int) -> int:
    """SplitMix64's finalizer (Steele, Lea & Flood 2014)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def mulhi(a: int, b: int) -> int:
    return (a * b) >> 64


# ---------------------------------------------------------------------------------------------
# Jump hash: Guava's Java, transcribed with Java's int and double semantics
# ---------------------------------------------------------------------------------------------

JUMP_MUL = 2862933555777941757


def java_d2i(x: float) -> int:
    """Java's (int) cast of a double: NaN -> 0, saturating at the int range."""
    if x != x:
        return 0
    if x >= 2**31 - 1:
        return 2**31 - 1
    if x <= -(2**31):
        return -(2**31)
    return int(x)  # truncation toward zero


def java_int(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def guava_consistent_hash(key: int, buckets: int) -> int:
    """Guava Hashing.consistentHash(long input, int buckets) with its LinearCongruentialGenerator:
    state = 2862933555777941757 * state + 1; nextDouble = ((int)(state >>> 33) + 1) / 2^31;
    next = (int)((candidate + 1) / nextDouble); loop while 0 <= next < buckets."""
    state = key & MASK
    candidate = 0
    while True:
        state = (JUMP_MUL * state + 1) & MASK
        next_double = float(java_int((state >> 33) + 1)) / 2.0**31
        nxt = java_d2i(float(candidate + 1) / next_double)
        if 0 <= nxt < buckets:
            candidate = nxt
        else:
            return candidate


def paper_jump(key: int, num_buckets: int) -> int:
    """The C++ code of Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm"."""
    b, j = -1, 0
    while j < num_buckets:
        b = j
        key = (key * JUMP_MUL + 1) & MASK
        j = int(float(b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


GUAVA_PUBLISHED = (
    [[i, 100, b] for i, b in enumerate(
        [0, 55, 62, 8, 45, 59, 86, 97, 82, 59, 73, 37, 17, 56, 86, 21, 90, 37, 38, 83])]
    + [[10863919174838991, 11, 6], [2201, 100001, 22152]]
)

# Keys on which Guava and the paper's code disagree (found by a search over mix64(i)): where
# (state >>> 33) + 1 overflows Java's int, and where dividing by nextDouble rounds differently
# from the paper's multiplication by 2^31 / r.  The library follows Guava.
GUAVA_VS_PAPER = [
    (5819021093706553826, 2147483647), (7463813627736713734, 2147483647),
    (11269536723047565231, 2147483647), (16867596707385162659, 2147483647),
    (13249206951421759667, 1000000), (4566286447457738447, 1000000),
    (13249206951421759667, 1000), (11641919665973973968, 1000),
]


def overflow_key() -> int:
    """A key whose first generator step has state >>> 33 == 2^31 - 1: Guava stops at bucket 0
    (its int overflows to -2^31), the paper's code goes on."""
    state1 = (0x7FFFFFFF << 33) | 0x1234567
    return ((state1 - 1) * pow(JUMP_MUL, -1, 1 << 64)) & MASK


def make_jump() -> dict[str, object]:
    for key, n, b in GUAVA_PUBLISHED:
        assert guava_consistent_hash(key, n) == b, (key, n)
        assert paper_jump(key, n) == b, (key, n)
    rng = random.Random(20140606)
    rand = []
    for n in [1, 2, 3, 10, 100, 1000, 65537, 1_000_000, 2**31 - 1]:
        for _ in range(40):
            key = rng.getrandbits(64)
            b = guava_consistent_hash(key, n)
            assert b == paper_jump(key, n)  # the two transcriptions agree on random keys
            rand.append([key, n, b])
    differ = []
    for key, n in GUAVA_VS_PAPER + [(overflow_key(), 10), (overflow_key(), 2**31 - 1)]:
        g, p = guava_consistent_hash(key, n), paper_jump(key, n)
        assert g != p, (key, n)
        differ.append([key, n, g, p])
    assert differ[-1][2] == 0
    named = []
    for cfg in [
        {"name": "jump-xxh3", "nodes": [f"shard-{i}" for i in range(10)], "hash": "xxh3",
         "seed": 0},
        {"name": "jump-xxh64-seeded", "nodes": [f"n{i}" for i in range(1000)], "hash": "xxh64",
         "seed": 99},
        {"name": "jump-md5", "nodes": ["alpha", "beta", "gamma", "δ"], "hash": "md5", "seed": 0},
    ]:
        nodes, h, seed = cfg["nodes"], cfg["hash"], cfg["seed"]

        def get(key: str | bytes | int, nodes: list[str] = nodes, h: str = h,  # type: ignore[assignment]
                seed: int = seed) -> str:  # type: ignore[assignment]
            if isinstance(key, int):
                k = key & MASK  # integer keys are used directly, two's complement
            else:
                k = H(h, key_bytes(key), seed)  # type: ignore[arg-type]
            return nodes[guava_consistent_hash(k, len(nodes))]  # type: ignore[index]

        keys: list[str | bytes | int] = ["", "a", "user:42", "é", b"\x00\xff", 0, 1, -1, 42,
                                         2**63, 2**64 - 1, -(2**63)]
        keys += [f"k{i}" for i in range(30)] + list(range(1000, 1030))
        vectors = [[encode_key(k), get(k)] for k in keys]
        named.append(dict(cfg, vectors=vectors,
                          assignment_sha256=digest([get(k) for k in DIGEST_KEYS])))
    return {"guava_published": GUAVA_PUBLISHED, "random": rand, "guava_vs_paper": differ,
            "named": named}


# ---------------------------------------------------------------------------------------------
# Rendezvous: draws mix64(h ^ H(name)); weighted by -log2(u) / w with an integer log
# ---------------------------------------------------------------------------------------------

getcontext().prec = 80
_LN2 = Decimal(2).ln()
NL2_C = [-(-(1 << 39) // (128 + k)) for k in range(128)]  # ceil(2^39 / (128 + k))
NL2_T = [int(((Decimal(1 << 32) / Decimal(c)).ln() / _LN2 * (1 << 63)).to_integral_value())
         for c in NL2_C]  # round(log2(2^32 / C[k]) * 2^63)
NL2_P = [int((Decimal(1 << 63) / (j * _LN2)).to_integral_value()) for j in range(1, 8)]


def neglog2(v: int) -> int:
    """-log2(v / 2^64) in Q8.56 for odd v (the library's ch_neglog2, step by step)."""
    n = 64 - v.bit_length()
    m = (v << n) & MASK
    k = (m >> 56) & 0x7F
    y = (m * NL2_C[k]) >> 32
    d = (y - (1 << 63)) << 1
    assert 0 <= d < 1 << 64
    acc = NL2_P[6]
    for j in range(5, -1, -1):
        acc = NL2_P[j] - mulhi(d, acc)
        assert acc >= 0
    f = NL2_T[k] + mulhi(d, acc)
    return max(((1 + n) << 56) - (f >> 7), 1)


class RefRendezvous:
    def __init__(self, weights: dict[str, float], hash: str, seed: int) -> None:
        self.names = sorted(weights)
        self.hash, self.seed = hash, seed
        self.s = [H(hash, n.encode("utf-8"), seed) for n in self.names]
        ws = [weights[n] for n in self.names]
        self.inv = None if len(set(ws)) <= 1 else [1.0 / w for w in ws]

    def order_key(self, h: int, i: int) -> tuple[float | int, int]:
        x = mix64(h ^ self.s[i])
        if self.inv is None:
            return (MASK - x, i)  # larger draw first; ties to the smaller index
        return (float(neglog2(x | 1)) * self.inv[i], i)

    def ranked(self, key: str | bytes | int) -> list[str]:
        h = H(self.hash, key_bytes(key), self.seed)
        if self.inv is None:
            order = sorted(range(len(self.names)), key=lambda i: (MASK - mix64(h ^ self.s[i]), i))
        else:
            order = sorted(range(len(self.names)), key=lambda i: self.order_key(h, i))
        return [self.names[i] for i in order]

    def get(self, key: str | bytes | int) -> str:
        return self.ranked(key)[0]


def make_rendezvous() -> dict[str, object]:
    # the fixed-point log against a high-precision one
    rng = random.Random(1996)
    for v in [1, 3, MASK, (1 << 63) + 1, (1 << 63) - 1] + [rng.getrandbits(64) | 1
                                                         for _ in range(3000)]:
        true = -(Decimal(v) / Decimal(1 << 64)).ln() / _LN2 * (1 << 56)
        assert abs(Decimal(neglog2(v)) - true) < 2, v
    configs = []
    for cfg in [
        {"name": "rdv-xxh3", "nodes": {f"cache-{i}": 1.0 for i in range(10)}, "hash": "xxh3",
         "seed": 0},
        {"name": "rdv-weighted-murmur3", "nodes": {"a": 1.0, "b": 2.0, "c": 0.5, "dé": 3.25,
                                                  "节点": 1.0, "f": 0.1},
         "hash": "murmur3", "seed": 12345},
        {"name": "rdv-weighted-xxh64", "nodes": {f"s{i}": 1.0 + (i % 4) for i in range(20)},
         "hash": "xxh64", "seed": 2**64 - 1},
        {"name": "rdv-md5-equal-weights", "nodes": {"x": 2.0, "y": 2.0, "z": 2.0},
         "hash": "md5", "seed": 0},
    ]:
        ref = RefRendezvous(cfg["nodes"], cfg["hash"], cfg["seed"])  # type: ignore[arg-type]
        keys: list[str | bytes | int] = ["", "a", "user:42", "é", b"\x00\xff", 0, -1, 2**70]
        keys += [f"k{i}" for i in range(40)]
        vectors = [[encode_key(k), ref.ranked(k)[:3]] for k in keys]
        configs.append(dict(cfg, vectors=vectors,
                            assignment_sha256=digest([ref.get(k) for k in DIGEST_KEYS])))
    return {"configs": configs, "neglog2_tables": {"C": NL2_C, "T": NL2_T, "P": NL2_P}}


# ---------------------------------------------------------------------------------------------
# Maglev: permutations from one hash per node, weighted turns, entry = floor(h * M / 2^64)
# ---------------------------------------------------------------------------------------------


def maglev_table(weights: dict[str, float], m: int, hash: str, seed: int) -> list[int]:
    names = sorted(weights)
    n = len(names)
    a = [H(hash, nm.encode("utf-8"), seed) for nm in names]
    offset = [x % m for x in a]
    skip = [(x // m) % (m - 1) + 1 for x in a]
    top = max(weights.values())
    ratio = [weights[nm] / top for nm in names]
    credit = [0.0] * n
    nxt = [0] * n  # j: how many preferences node i has consumed
    table = [-1] * m
    filled = 0
    while filled < m:
        for i in range(n):
            if filled == m:
                break
            credit[i] += ratio[i]
            if not credit[i] >= 1.0:
                continue
            credit[i] -= 1.0
            while True:
                c = (offset[i] + nxt[i] * skip[i]) % m
                nxt[i] += 1
                if table[c] < 0:
                    break
            table[c] = i
            filled += 1
    return table


def make_maglev() -> dict[str, object]:
    configs = []
    for cfg in [
        {"name": "maglev-default", "nodes": {f"backend-{i}": 1.0 for i in range(10)},
         "table_size": 65537, "hash": "xxh3", "seed": 0},
        {"name": "maglev-weighted", "nodes": {"a": 1.0, "b": 2.0, "c": 0.5, "dé": 3.0,
                                             "节点": 1.5}, "table_size": 65537,
         "hash": "murmur3", "seed": 77},
        {"name": "maglev-small-md5", "nodes": {f"n{i}": 1.0 for i in range(7)},
         "table_size": 1009, "hash": "md5", "seed": 0},
        {"name": "maglev-xxh64-251", "nodes": {f"h{i}": 1.0 + i for i in range(40)},
         "table_size": 4099, "hash": "xxh64", "seed": 3},
    ]:
        m = cfg["table_size"]
        table = maglev_table(cfg["nodes"], m, cfg["hash"], cfg["seed"])  # type: ignore[arg-type]
        names = sorted(cfg["nodes"])  # type: ignore[arg-type]

        def get(key: str | bytes | int, cfg: dict[str, object] = cfg, names: list[str] = names,
                table: list[int] = table, m: int = m) -> str:  # type: ignore[assignment]
            h = H(cfg["hash"], key_bytes(key), cfg["seed"])  # type: ignore[arg-type]
            return names[table[mulhi(h, m)]]

        keys: list[str | bytes | int] = ["", "a", "user:42", "é", b"\x00\xff", 0, -1, 2**70]
        keys += [f"k{i}" for i in range(40)]
        configs.append(dict(
            cfg, vectors=[[encode_key(k), get(k)] for k in keys],
            table_sha256=hashlib.sha256(struct.pack(f"<{m}i", *table)).hexdigest(),
            assignment_sha256=digest([get(k) for k in DIGEST_KEYS])))
    return {"configs": configs}


# ---------------------------------------------------------------------------------------------
# MultiProbe: one point per node, probes q_j = mix64(h + j * GOLDEN), nearest successor wins
# ---------------------------------------------------------------------------------------------


def make_multiprobe() -> dict[str, object]:
    configs = []
    for cfg in [
        {"name": "mp-default", "nodes": [f"cache-{i}" for i in range(10)], "probes": 21,
         "hash": "xxh3", "seed": 0},
        {"name": "mp-xxh64-5probes", "nodes": [f"n{i}" for i in range(100)], "probes": 5,
         "hash": "xxh64", "seed": 8},
        {"name": "mp-murmur3-1probe", "nodes": ["a", "b", "c", "dé", "节点"], "probes": 1,
         "hash": "murmur3", "seed": 0},
        {"name": "mp-md5", "nodes": ["alpha", "beta", "gamma"], "probes": 21, "hash": "md5",
         "seed": 0},
    ]:
        names = sorted(cfg["nodes"])  # type: ignore[arg-type]
        pts = sorted((H(cfg["hash"], nm.encode("utf-8"), cfg["seed"]), i)  # type: ignore[arg-type]
                     for i, nm in enumerate(names))
        pos = [p for p, _ in pts]

        def get(key: str | bytes | int, cfg: dict[str, object] = cfg, pos: list[int] = pos,
                names: list[str] = names, pts: list[tuple[int, int]] = pts) -> str:
            h = H(cfg["hash"], key_bytes(key), cfg["seed"])  # type: ignore[arg-type]
            best = None
            for j in range(cfg["probes"]):  # type: ignore[call-overload]
                q = mix64((h + j * GOLDEN) & MASK)
                i = bisect.bisect_left(pos, q) % len(pos)
                d = (pos[i] - q) & MASK
                if best is None or d < best[0]:  # a tie keeps the earlier probe
                    best = (d, i)
            assert best is not None
            return names[pts[best[1]][1]]

        keys: list[str | bytes | int] = ["", "a", "user:42", "é", b"\x00\xff", 0, -1, 2**70]
        keys += [f"k{i}" for i in range(40)]
        configs.append(dict(cfg, vectors=[[encode_key(k), get(k)] for k in keys],
                            assignment_sha256=digest([get(k) for k in DIGEST_KEYS])))
    return {"configs": configs}


# ---------------------------------------------------------------------------------------------
# MementoHash: the paper's engine (b-array size, memento table, last removed), over Guava's jump
# ---------------------------------------------------------------------------------------------


class RefMemento:
    """MementoHash as in Coluzzi et al. 2023 (Algorithms 1-3): a dict bucket -> (replacer,
    previous removed), the b-array size n and the last removed bucket; names per bucket."""

    def __init__(self, names: list[str]) -> None:
        self.n = len(names)
        self.memento: dict[int, tuple[int, int]] = {}
        self.last = self.n
        self.names: dict[int, str] = dict(enumerate(names))

    def size(self) -> int:
        return self.n - len(self.memento)

    def remove(self, name: str) -> None:
        b = next(k for k, v in self.names.items() if v == name)
        del self.names[b]
        if not self.memento and b == self.n - 1:
            self.n -= 1
            self.last = self.n
            return
        self.memento[b] = (self.size() - 1, self.last)
        self.last = b

    def add(self, name: str) -> None:
        b = self.last
        if self.memento:
            self.last = self.memento.pop(b)[1]
        else:
            self.n = b + 1
            self.last = self.n
        self.names[b] = name

    def bucket(self, h: int) -> int:
        b = guava_consistent_hash(h, self.n)
        r = self.memento.get(b, (-1, 0))[0]
        while r >= 0:
            b = mulhi(mix64((h + (b + 1) * GOLDEN) & MASK), r)
            r2 = self.memento.get(b, (-1, 0))[0]
            while r2 >= r:
                b = r2
                r2 = self.memento.get(b, (-1, 0))[0]
            r = r2
        return b

    def get(self, key: str | bytes | int, hash: str, seed: int) -> str:
        h = key & MASK if isinstance(key, int) else H(hash, key_bytes(key), seed)
        return self.names[self.bucket(h)]

    def state(self) -> tuple[list[str | None], list[int]]:
        order = []
        b = self.last
        while b in self.memento:
            order.append(b)
            b = self.memento[b][1]
        return [self.names.get(i) for i in range(self.n)], order[::-1]


def make_memento() -> dict[str, object]:
    configs = []
    for cfg in [
        {"name": "memento-xxh3", "nodes": [f"n{i}" for i in range(20)], "hash": "xxh3",
         "seed": 0, "ops": [["remove", "n5"], ["remove", "n17"], ["remove", "n0"],
                            ["remove", "n19"], ["remove", "n8"], ["add", "x"],
                            ["remove", "n12"], ["add", "n5"], ["remove", "n3"]]},
        {"name": "memento-xxh64-many", "nodes": [f"s{i}" for i in range(300)], "hash": "xxh64",
         "seed": 5, "ops": [["remove", f"s{(i * 37) % 300}"] for i in range(40)]
         + [["add", f"new{i}"] for i in range(10)]},
        {"name": "memento-tail", "nodes": ["a", "b", "c", "d"], "hash": "md5", "seed": 0,
         "ops": [["remove", "d"], ["remove", "c"], ["add", "e"], ["remove", "a"],
                 ["add", "f"], ["add", "g"]]},
    ]:
        ref = RefMemento(list(cfg["nodes"]))  # type: ignore[call-overload]
        for op, name in cfg["ops"]:  # type: ignore[attr-defined]
            getattr(ref, op)(name)
        keys: list[str | bytes | int] = ["", "a", "user:42", "é", b"\x00\xff", 0, -1, 42,
                                         2**64 - 1]
        keys += [f"k{i}" for i in range(40)] + list(range(1000, 1040))
        h, seed = cfg["hash"], cfg["seed"]
        slots, removed = ref.state()
        configs.append(dict(
            cfg, slots=slots, removed=removed,
            vectors=[[encode_key(k), ref.get(k, h, seed)] for k in keys],  # type: ignore[arg-type]
            assignment_sha256=digest([ref.get(k, h, seed)  # type: ignore[arg-type]
                                      for k in DIGEST_KEYS])))
    return {"configs": configs}


# ---------------------------------------------------------------------------------------------

SECTIONS = {
    "jump": make_jump,
    "rendezvous": make_rendezvous,
    "maglev": make_maglev,
    "multiprobe": make_multiprobe,
    "memento": make_memento,
}


def main() -> None:
    out = {"comment": "Generated by tests/data/make_algo_vectors.py without consistent_hash; "
                      "see that script for each algorithm's transcription.",
           "digest_keys": "key-0 .. key-99999, names joined by newlines, sha256"}
    for name, fn in SECTIONS.items():
        out[name] = fn()
    path = Path(__file__).with_name("algo_vectors.json")
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
