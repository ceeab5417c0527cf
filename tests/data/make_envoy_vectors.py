"""Generate tests/data/envoy_vectors.json: golden vectors for Envoy's ring_hash and maglev.

Every expected value comes from the pure-Python transcription of Envoy's source in
tests/support/model_envoy.py (Envoy itself cannot be installed here), never from
consistent_hash.  For each configuration (3, 5 and 25 hosts, weights, a host removed,
hostnames, hash_key metadata, localities, IPv6, both ring hash functions, several ring and
table sizes): the ring size / entries per host, the host of 4,000 keys (routed as a header
hash policy routes the header's value: xxHash64 seed 0) and of ~3,000 raw hashes (random,
the extremes, and for rings every entry's hash and its neighbours), each stored as the first
200 host indices plus a sha256 of all of them.

    python tests/data/make_envoy_vectors.py      # rewrites the file; must give the same bytes
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))

import model_envoy as ref  # noqa: E402

HEAD = 200


def digest(indices: list[int]) -> str:
    return hashlib.sha256(",".join(map(str, indices)).encode()).hexdigest()


def addrs(n: int, port: int = 8080) -> list[str]:
    return [f"10.1.{i // 200}.{i % 200 + 1}:{port}" for i in range(n)]


def weights(n: int) -> list[int]:
    return [1 + (i * 7) % 5 for i in range(n)]


def config(kind: str, names: list[str], ws: list[int] | None = None, *,
           hash_keys: dict[str, str] | None = None, localities: dict[str, str] | None = None,
           locality_weights: dict[str, int] | None = None, **options: Any) -> dict[str, Any]:
    return {"kind": kind, "hosts": names, "weights": ws or [1] * len(names),
            "hash_keys": hash_keys or {}, "localities": localities or {},
            "locality_weights": locality_weights, "options": options}


def removed(names: list[str], ws: list[int] | None, k: int) -> tuple[list[str], list[int] | None]:
    return names[:k] + names[k + 1:], (None if ws is None else ws[:k] + ws[k + 1:])


def configs() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    a3, a5, a25 = addrs(3), addrs(5), addrs(25)
    w5, w25 = weights(5), weights(25)
    for hf, tag in (("XX_HASH", "xx"), ("MURMUR_HASH_2", "mm")):
        out[f"ring-3-{tag}"] = config("ring", a3, hash_function=hf)
        out[f"ring-5-weighted-{tag}"] = config("ring", a5, w5, hash_function=hf)
        out[f"ring-25-{tag}"] = config("ring", a25, hash_function=hf)
        n, w = removed(a25, None, 12)
        out[f"ring-25-removed-{tag}"] = config("ring", n, w, hash_function=hf)
        out[f"ring-25-weighted-{tag}"] = config("ring", a25, w25, hash_function=hf)
        n, w = removed(a25, w25, 3)
        out[f"ring-25-weighted-removed-{tag}"] = config("ring", n, w, hash_function=hf)
        out[f"ring-5-exact-7-{tag}"] = config("ring", a5, w5, hash_function=hf,
                                              minimum_ring_size=7, maximum_ring_size=7)
        out[f"ring-5-large-{tag}"] = config("ring", a5, w5, hash_function=hf,
                                            minimum_ring_size=100_000)
        out[f"ring-5-capped-{tag}"] = config("ring", a5, [1, 1, 1, 1, 1000], hash_function=hf,
                                             minimum_ring_size=2048, maximum_ring_size=3000)
    hosts = [f"cache-{c}.default.svc" for c in "abcde"]
    out["ring-5-hostnames"] = config("ring", hosts, w5, minimum_ring_size=12)
    out["ring-5-hash-keys-mm"] = config("ring", a5, hash_keys={a5[1]: "shard-1", a5[3]: "shard-3"},
                                        hash_function="MURMUR_HASH_2")
    zones = {a5[0]: "us/a", a5[1]: "us/a", a5[2]: "us/b", a5[3]: "eu/c", a5[4]: "eu/c"}
    out["ring-5-localities"] = config("ring", a5, w5, localities=zones,
                                      locality_weights={"us/a": 3, "us/b": 1, "eu/c": 2})
    out["ring-5-localities-zero"] = config("ring", a5, w5, localities=zones,
                                           locality_weights={"us/a": 3, "us/b": 0, "eu/c": 2},
                                           minimum_ring_size=10, maximum_ring_size=10)
    out["ring-3-ipv6"] = config("ring", ["[::1]:8001", "[2001:db8::7]:8001", "[fe80::1]:9"])
    for m in (7, 17, 1009, 65537):
        out[f"maglev-5-{m}"] = config("maglev", a5, table_size=m)
        out[f"maglev-5-weighted-{m}"] = config("maglev", a5, w5, table_size=m)
    out["maglev-3-65537"] = config("maglev", a3, table_size=65537)
    out["maglev-25-65537"] = config("maglev", a25, table_size=65537)
    n, w = removed(a25, None, 12)
    out["maglev-25-removed-65537"] = config("maglev", n, w, table_size=65537)
    out["maglev-25-weighted-1009"] = config("maglev", a25, w25, table_size=1009)
    n, w = removed(a25, w25, 3)
    out["maglev-25-weighted-removed-1009"] = config("maglev", n, w, table_size=1009)
    out["maglev-2-lopsided-65537"] = config("maglev", a3[:2], [1, 1000], table_size=65537)
    out["maglev-5-hostnames-1009"] = config("maglev", hosts, w5, table_size=1009)
    out["maglev-5-hash-keys-17"] = config("maglev", a5, hash_keys={a5[0]: "z", a5[4]: "a"},
                                          table_size=17)
    out["maglev-5-localities-1009"] = config("maglev", a5, w5, localities=zones,
                                             locality_weights={"us/a": 3, "us/b": 1, "eu/c": 2},
                                             table_size=1009)
    return out


def model_hosts(c: dict[str, Any]) -> tuple[list[tuple[str, int, Any]], dict[Any, int] | None]:
    hosts = []
    for name, w in zip(c["hosts"], c["weights"], strict=True):
        loc = tuple((c["localities"].get(name, "") + "//").split("/")[:3])
        hosts.append((c["hash_keys"].get(name, name), w, loc))
    lw = c["locality_weights"]
    if lw is not None:
        lw = {tuple((k + "//").split("/")[:3]): v for k, v in lw.items()}
    return hosts, lw


def expected(c: dict[str, Any]) -> dict[str, Any]:
    hosts, lw = model_hosts(c)
    keys = ref.vector_keys()
    hashes = ref.vector_hashes()
    o = c["options"]
    if c["kind"] == "ring":
        ring, per, size = ref.ring_build(hosts, lw, o.get("minimum_ring_size", 1024),
                                         o.get("maximum_ring_size", 8 * 1024 * 1024),
                                         o.get("hash_function", "XX_HASH"))
        for p, _ in ring[:100]:
            hashes += [p, (p - 1) % (1 << 64), (p + 1) % (1 << 64)]

        def choose(h: int) -> int:
            return ring[ref.ring_choose(ring, h)][1]

        facts = {"ring_size": len(ring), "size_gauge": size,
                 "hashes_per_host": [per.get(i, 0) for i in range(len(hosts))]}
    else:
        table = ref.maglev_build(hosts, lw, o["table_size"])

        def choose(h: int) -> int:
            return ref.maglev_choose(table, h)

        facts = {"entries_per_host": [table.count(i) for i in range(len(hosts))]}
    by_key = [choose(ref.xxh64(k)) for k in keys]
    by_hash = [choose(h) for h in hashes]
    extra = hashes[len(ref.vector_hashes()):]
    return {**facts, "extra_hashes": " ".join(f"{h:x}" for h in extra),
            "keys_head": by_key[:HEAD], "keys_sha256": digest(by_key),
            "hashes_head": by_hash[:HEAD], "hashes_sha256": digest(by_hash)}


def main() -> None:
    out = {}
    for name, c in configs().items():
        out[name] = {"config": c, "expect": expected(c)}
    path = HERE / "envoy_vectors.json"
    lines = [f" {json.dumps(k)}: {json.dumps(v, sort_keys=True, separators=(',', ':'))}"
             for k, v in sorted(out.items())]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    print(f"wrote {path} ({len(out)} configurations)")


if __name__ == "__main__":
    main()
