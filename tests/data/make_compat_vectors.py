"""Generate tests/data/compat_vectors.json: golden vectors for every compatibility mode.

Every expected value comes from the REFERENCE implementation, never from consistent_hash:
uhashring 2.5 and hashring 1.5.1 (the packages), libketama (the ``ketama`` package, which
bundles its C source), libmemcached 1.0.16 through pylibmc 1.6.3 and twemproxy (nutcracker),
each driving real memcached servers on 127.0.0.1 (keys are stored through the client, then
found on the servers), redis-py's ``key_slot`` and cassandra-driver's ``murmur3``.

    python tests/data/make_compat_vectors.py     # needs memcached and nutcracker installed

The memcached servers listen on fixed ports (22101...) because the ports are part of the point
labels; regenerating must give an identical file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))

import hashring  # noqa: E402
import ketama  # noqa: E402
import pylibmc  # noqa: E402
import uhashring  # noqa: E402
from cassandra.murmur3 import murmur3  # noqa: E402
from live_servers import HOST, nutcracker_proxy, require  # noqa: E402
from pymemcache.client.base import Client  # noqa: E402
from redis.crc import key_slot  # noqa: E402

from consistent_hash.cli._servers import stop as _stop  # noqa: E402
from consistent_hash.cli._servers import wait_port as _wait_port  # noqa: E402

KEYS = ([f"user:{i}" for i in range(60)] + [f"clé-{i}-ключ" for i in range(20)]
        + [str(i) for i in range(20)] + ["", "a", "{tag}x", "x" * 250])
BYTE_KEYS = [k.encode() for k in KEYS if k] + [bytes([0x80 + i, 0xFF - i, 0x41 + i]) for i in
                                               range(40)]
DIGEST_KEYS = [f"key-{i}" for i in range(20_000)]
PORTS = [22101 + i for i in range(5)]


def enc(k: str | bytes) -> dict[str, str]:
    return {"str": k} if isinstance(k, str) else {"bytes": k.hex()}


def digest(nodes: list[Any]) -> str:
    return hashlib.sha256("\n".join(map(str, nodes)).encode()).hexdigest()


def uhashring_vectors() -> list[dict[str, Any]]:
    out = []
    for name, nodes, kw in [
        ("uhashring-default", ["cache-a", "cache-b", "cache-c"], {}),
        ("uhashring-default-weights", {"a": 1, "b": 2, "c": {"weight": 3, "vnodes": 50}}, {}),
        ("uhashring-ketama", ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"],
         {"hash_fn": "ketama"}),
        ("uhashring-ketama-weights", {f"s{i}": i % 3 + 1 for i in range(25)},
         {"hash_fn": "ketama"}),
    ]:
        ring = uhashring.HashRing(nodes, **kw)
        out.append({"name": name, "nodes": nodes, "kwargs": kw,
                    "vectors": [[enc(k), ring.get_node(k)] for k in KEYS],
                    "assignment_sha256": digest([ring.get_node(k) for k in DIGEST_KEYS])})
    return out


def hashring_vectors() -> list[dict[str, Any]]:
    out = []
    for name, nodes, weights in [
        ("hashring", ["192.168.0.246:11212", "192.168.0.247:11212", "192.168.0.249:11212"],
         None),
        ("hashring-weights", [f"n{i}" for i in range(8)], {"n1": 3, "n2": 0.5}),
    ]:
        ring = hashring.HashRing(nodes, weights)
        out.append({"name": name, "nodes": nodes, "weights": weights,
                    "vectors": [[enc(k), ring.get_node(k)] for k in KEYS],
                    "assignment_sha256": digest([ring.get_node(k) for k in DIGEST_KEYS])})
    return out


def libketama_vectors() -> list[dict[str, Any]]:
    out = []
    for name, servers, weights in [
        ("libketama", ["10.0.1.1:11211", "10.0.1.2:11211", "10.0.1.3:11211"], [1, 1, 1]),
        ("libketama-weights", [f"10.0.1.{i}:11211" for i in range(1, 9)],
         [600, 300, 200, 350, 1000, 800, 950, 100]),
        ("libketama-61", [f"10.0.2.{i}:11211" for i in range(1, 62)], [1] * 61),
    ]:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, f"{name}.conf")
            with open(path, "w") as f:
                f.writelines(f"{s}\t{w}\n" for s, w in zip(servers, weights, strict=True))
            ref = ketama.Ketama(path)
            out.append({"name": name, "mode": "libketama", "hash": None, "servers": servers,
                        "weights": dict(zip(servers, weights, strict=True)),
                        "points": len(ref.get_points()),
                        "vectors": [[enc(k), ref.get_server(k)[1]] for k in BYTE_KEYS],
                        "assignment_sha256": digest([ref.get_server(k)[1]
                                                     for k in DIGEST_KEYS])})
            del ref  # libketama keeps global trackers: free one continuum before the next
    return out


def _landed(ports: list[int], keys: list[bytes]) -> list[int]:
    where: dict[bytes, int] = {}
    for i, port in enumerate(ports):
        c = Client((HOST, port))
        for s in range(0, len(keys), 500):
            for k in c.get_many(keys[s : s + 500]):
                where[k] = i
        c.close()
    return [where[k] for k in keys]


def _flush(ports: list[int]) -> None:
    for port in ports:
        c = Client((HOST, port))
        c.flush_all()
        c.close()


def live_vectors() -> list[dict[str, Any]]:
    import subprocess

    binary = require("memcached")
    user = ["-u", "root"] if os.geteuid() == 0 else []
    procs = [subprocess.Popen([binary, *user, "-l", HOST, "-p", str(p), "-m", "16"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for p in PORTS]
    out = []
    keys = [k for k in BYTE_KEYS if len(k) <= 250]
    try:
        for p, proc in zip(PORTS, procs, strict=True):
            _wait_port(p, proc)
        for name, mode, hash, behaviors, weights in [
            ("pylibmc-ketama_weighted", "ketama_weighted", None, {"ketama_weighted": True},
             [1, 1, 1, 1, 1]),
            ("pylibmc-ketama_weighted-weights", "ketama_weighted", None,
             {"ketama_weighted": True}, [1, 2, 3, 1, 2]),
            ("pylibmc-ketama", "ketama", None, {"ketama": True}, [1, 1, 1, 1, 1]),
            ("pylibmc-ketama-md5", "ketama", "md5", {"ketama": True, "hash": "md5"},
             [1, 1, 1, 1, 1]),
            ("pylibmc-ketama-hybrid", "ketama", None, {"ketama": True}, [1, 2, 3, 1, 2]),
            ("pylibmc-spy", "spy", None, {"distribution": "consistent ketama spy"},
             [1, 1, 1, 1, 1]),
            ("pylibmc-consistent_weighted", "consistent_weighted", None,
             {"distribution": "consistent weighted"}, [1, 1, 1, 1, 1]),
            ("pylibmc-spy_weighted", "spy_weighted", None,
             {"ketama_weighted": True, "distribution": "consistent ketama spy"},
             [1, 1, 1, 1, 1]),
            ("pylibmc-spy_weighted-weights", "spy_weighted", None,
             {"ketama_weighted": True, "distribution": "consistent ketama spy"},
             [2, 1, 3, 1, 2]),
            ("pylibmc-spy-md5-weights", "spy", "md5",
             {"distribution": "consistent ketama spy", "hash": "md5"}, [2, 1, 3, 1, 2]),
            ("pylibmc-spy-weights", "spy", None, {"distribution": "consistent ketama spy"},
             [2, 1, 3, 1, 2]),
        ]:
            servers = [f"{HOST}:{p}:{w}" for p, w in zip(PORTS, weights, strict=True)]
            _flush(PORTS)
            mc = pylibmc.Client(servers, behaviors=behaviors)
            assert not mc.set_multi({k: b"v" for k in keys})
            mc.disconnect_all()
            landed = _landed(PORTS, keys)
            out.append({"name": name, "mode": mode, "hash": hash, "servers": servers,
                        "weights": None,
                        "vectors": [[enc(k), f"{HOST}:{PORTS[i]}"]
                                    for k, i in zip(keys, landed, strict=True)]})
        for name, hash, weights in [("twemproxy-md5", "md5", [1, 2, 3, 1, 2]),
                                    ("twemproxy-one_at_a_time", "one_at_a_time", [1] * 5)]:
            servers = [f"{HOST}:{p}:{w}" for p, w in zip(PORTS, weights, strict=True)]
            _flush(PORTS)
            with nutcracker_proxy(servers, hash=hash) as port:
                c = Client((HOST, port))
                assert not c.set_many({k: b"v" for k in keys}, noreply=False)
                c.close()
            landed = _landed(PORTS, keys)
            out.append({"name": name, "mode": "twemproxy", "hash": hash, "servers": servers,
                        "weights": None,
                        "vectors": [[enc(k), f"{HOST}:{PORTS[i]}"]
                                    for k, i in zip(keys, landed, strict=True)]})
    finally:
        _stop(procs)
    return out


def main() -> None:
    redis_keys = KEYS + ["{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "{}", "}{"]
    data = {
        "uhashring": uhashring_vectors(),
        "hashring": hashring_vectors(),
        "ketama": libketama_vectors() + live_vectors(),
        "redis": [[enc(k), key_slot(k.encode())] for k in redis_keys]
        + [[enc(k), key_slot(k)] for k in BYTE_KEYS],
        "cassandra": [[enc(k), murmur3(k)] for k in BYTE_KEYS + [b""]],
    }
    (HERE / "compat_vectors.json").write_text(json.dumps(data, indent=1, ensure_ascii=False)
                                              + "\n", "utf-8")


if __name__ == "__main__":
    main()
