"""A pure-Python transcription of Envoy's ring_hash and maglev load balancers, written from
Envoy's source and independent of consistent_hash (only the ``xxhash`` reference package):
shared by tests/test_envoy.py and the golden-vector generator tests/data/make_envoy_vectors.py.

Read at (envoyproxy/envoy; S = source/extensions/load_balancing_policies):
  S/ring_hash/ring_hash_lb.cc                 e7495d2690fac1d2c4041b7945959abbcb4f9eaa
  S/maglev/maglev_lb.cc                       a6b64f4b8db11f00fd7255e4dba14c5802547275
  S/common/thread_aware_lb_impl.cc            0336fd611e5792d2cee803b64c168d69fa9762f3
  source/common/common/hash.cc (murmurHash2)  03fa724669376b0eecbd359050aa6396b2cf7b7e

A host here is (hash key, weight, locality); a cluster is a list of hosts in cluster order
and, for locality-weighted balancing, a dict locality -> weight.
"""

from __future__ import annotations

import math
from typing import Any

import xxhash

M64 = (1 << 64) - 1


def xxh64(data: bytes, seed: int = 0) -> int:
    return xxhash.xxh64_intdigest(data, seed)


def murmur2(data: bytes, seed: int = 0xC70F6907) -> int:
    """MurmurHash::murmurHash2 (libstdc++'s 64-bit _Hash_bytes), little-endian words."""
    mul = 0xC6A4A7935BD1E995

    def shift_mix(v: int) -> int:
        return v ^ (v >> 47)

    n = len(data)
    h = (seed ^ (n * mul)) & M64
    aligned = n & ~7
    for off in range(0, aligned, 8):
        word = int.from_bytes(data[off:off + 8], "little")
        h ^= (shift_mix((word * mul) & M64) * mul) & M64
        h = (h * mul) & M64
    if n & 7:
        h ^= int.from_bytes(data[aligned:], "little")
        h = (h * mul) & M64
    h = (shift_mix(h) * mul) & M64
    return shift_mix(h)


def normalize(hosts: list[tuple[str, int, Any]],
              locality_weights: dict[Any, int] | None) -> list[tuple[int, float]]:
    """normalizeWeights: [(host index, normalized weight)] in Envoy's order.

    Flat: hosts in order, weight * 1.0 / sum.  Locality-weighted: localities sorted (Envoy
    keeps them in a std::map ordered by region, zone, sub_zone), weight-0 ones skipped, each
    host weight * (lw / sum lw) / (sum of its locality's host weights)."""
    out: list[tuple[int, float]] = []
    if locality_weights is None:
        total = sum(w for _, w, _ in hosts)
        for i, (_, w, _) in enumerate(hosts):
            out.append((i, w * 1.0 / total))
        return out
    locs = sorted({loc for _, _, loc in hosts})
    lsum = sum(locality_weights[loc] for loc in locs)
    if lsum == 0:
        return out
    for loc in locs:
        if locality_weights[loc] == 0:
            continue
        nlw = float(locality_weights[loc]) / lsum
        members = [i for i, h in enumerate(hosts) if h[2] == loc]
        total = sum(hosts[i][1] for i in members)
        for i in members:
            out.append((i, hosts[i][1] * nlw / total))
    return out


def ring_build(hosts: list[tuple[str, int, Any]], locality_weights: dict[Any, int] | None,
               min_ring: int, max_ring: int, hash_function: str
               ) -> tuple[list[tuple[int, int]], dict[int, int], int]:
    """RingHashLoadBalancer::Ring: ([(hash, host index)] sorted by hash, entries per host,
    Envoy's size gauge ceil(scale))."""
    norm = normalize(hosts, locality_weights)
    if not norm:
        return [], {}, 0
    min_w = 1.0
    for _, w in norm:
        min_w = min(min_w, w)
    scale = min(math.ceil(min_w * min_ring) / min_w, float(max_ring))
    ring: list[tuple[int, int]] = []
    per: dict[int, int] = {}
    current = 0.0
    target = 0.0
    for i, w in norm:
        prefix = hosts[i][0].encode("utf-8") + b"_"
        target += scale * w
        k = 0
        while current < target:
            label = prefix + str(k).encode("ascii")
            h = murmur2(label) if hash_function == "MURMUR_HASH_2" else xxh64(label)
            ring.append((h, i))
            k += 1
            current += 1
        per[i] = k
    ring.sort(key=lambda e: e[0])  # ties: never seen with 64-bit hashes (Envoy: unspecified)
    return ring, per, math.ceil(scale)


def ring_choose(ring: list[tuple[int, int]], h: int) -> int:
    """Ring::chooseHost, transcribed as written (ketama's binary search with signed
    bounds): the first entry >= h, wrapping to entry 0.  Returns the entry index."""
    lowp, highp = 0, len(ring)
    while True:
        midp = (lowp + highp) // 2
        if midp == len(ring):
            return 0
        midval = ring[midp][0]
        midval1 = 0 if midp == 0 else ring[midp - 1][0]
        if midval1 < h <= midval:
            return midp
        if midval < h:
            lowp = midp + 1
        else:
            highp = midp - 1
        if lowp > highp:
            return 0


def maglev_build(hosts: list[tuple[str, int, Any]], locality_weights: dict[Any, int] | None,
                 table_size: int) -> list[int]:
    """MaglevTable + OriginalMaglevTable: the host index of every table slot."""
    norm = normalize(hosts, locality_weights)
    if not norm:
        return []
    max_w = 0.0
    for _, w in norm:
        max_w = max(max_w, w)
    entries = []
    for key, i, w in sorted((hosts[i][0].encode("utf-8"), i, w) for i, w in norm):
        entries.append({"host": i, "offset": xxh64(key, 0) % table_size,
                        "skip": xxh64(key, 1) % (table_size - 1) + 1, "weight": w,
                        "target": 0.0, "next": 0})
    table: list[int | None] = [None] * table_size
    filled = 0
    iteration = 1
    while filled < table_size:
        for e in entries:
            if filled >= table_size:
                break
            if iteration * e["weight"] < e["target"]:
                continue
            e["target"] += max_w
            c = (e["offset"] + e["skip"] * e["next"]) % table_size
            while table[c] is not None:
                e["next"] += 1
                c = (e["offset"] + e["skip"] * e["next"]) % table_size
            table[c] = e["host"]
            e["next"] += 1
            filled += 1
        iteration += 1
    return [t for t in table if t is not None]


def maglev_choose(table: list[int], h: int) -> int:
    return table[h % len(table)]


# -- the keys and hashes the golden vectors route ------------------------------------------------

def vector_keys() -> list[bytes]:
    """4,000 keys as bytes: plain ASCII, random printable bytes, raw UTF-8 of random text."""
    import random

    rnd = random.Random(4013)
    keys = [f"user:{i}".encode() for i in range(2000)]
    printable = bytes(range(0x20, 0x7F))
    keys += [bytes(rnd.choice(printable) for _ in range(rnd.randrange(0, 40)))
             for _ in range(1000)]
    cps = [c for c in range(0x20, 0x3000) if not 0xD800 <= c <= 0xDFFF]
    keys += ["".join(chr(rnd.choice(cps)) for _ in range(rnd.randrange(1, 16))).encode("utf-8")
             for _ in range(1000)]
    return keys


def vector_hashes() -> list[int]:
    """3,004 raw 64-bit hashes: the extremes and random ones."""
    import random

    rnd = random.Random(6007)
    return [0, 1, M64, 1 << 63] + [rnd.getrandbits(64) for _ in range(3000)]
