"""``python -m consistent_hash demo memcached``: the promise, shown on real servers.

Starts memcached servers on 127.0.0.1, writes keys through pymemcache's HashClient, changes
the pool (one server joins; one server is lost) and reads every key back. The hit rate is the
share of keys still found where the client now looks: about N/(N+1) with the ring, about 1/N
with ``hash % N``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from consistent_hash.cli._common import (
    Progress,
    Subparsers,
    UserError,
    pct,
    positive,
    table,
    to_json,
)

__all__ = ["NAME", "add_parser", "memcached_demo", "run"]

NAME = "demo"


def add_parser(subparsers: Subparsers) -> None:
    d = subparsers.add_parser(NAME, help="demo memcached: hit rates on real servers")
    d.add_argument("what", help="memcached")
    d.add_argument("--keys", type=positive, default=100_000, help="keys (100,000)")
    d.add_argument("--servers", type=positive, default=8, help="servers before the change (8)")
    d.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    if args.what != "memcached":
        raise UserError(f"unknown demo {args.what!r} (available: memcached)")
    try:
        import pymemcache  # noqa: F401
    except ImportError:
        raise UserError("the memcached demo needs pymemcache: pip install pymemcache") from None
    from consistent_hash.cli._servers import ServerError

    progress = Progress(4, "demo")
    try:
        r = memcached_demo(args.keys, args.servers, progress.advance)
    except ServerError as e:
        raise UserError(str(e)) from None
    finally:
        progress.close()
    if args.json:
        print(to_json(r))
        return 0
    n = r["servers"]
    print(f"{r['keys']:,} keys written through pymemcache's HashClient to {n} real memcached "
          f"servers on 127.0.0.1, then read back after the pool changed\n")
    print(table(["client hasher", f"{n} -> {n + 1}: keys still found",
                 f"{n} -> {n - 1}: keys still found"],
                [[x["hasher"], pct(x["join_kept"]), pct(x["leave_kept"])]
                 for x in r["results"]]
                + [["ideal", pct(r["ideal_join_kept"]), pct(r["ideal_leave_kept"])]]))
    print(f"\n({r['seconds']:.1f} s)")
    return 0


_BATCH = 5_000


def _hit_rate(client: Any, keys: list[str]) -> float:
    hits = 0
    for s in range(0, len(keys), _BATCH):
        hits += len(client.get_many(keys[s : s + _BATCH]))
    return hits / len(keys)


def _write(client: Any, keys: list[str]) -> None:
    for s in range(0, len(keys), _BATCH):
        failed = client.set_many({k: b"1" for k in keys[s : s + _BATCH]}, noreply=False)
        if failed:
            raise RuntimeError(f"memcached refused {len(failed)} writes")


def memcached_demo(n_keys: int = 100_000, n_servers: int = 8,
                   progress: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run the join and leave experiments with the ring and with modulo routing.

    Returns {"keys", "servers", "results": [{"hasher", "join_kept", "leave_kept"}], ...}."""
    from pymemcache.client.base import Client
    from pymemcache.client.hash import HashClient

    from consistent_hash.cli._servers import memcached_servers
    from consistent_hash.integrations import ModuloHasher, RingHasher

    t0 = time.perf_counter()
    keys = [f"user:{i}" for i in range(n_keys)]
    results = []
    with memcached_servers(n_servers + 1) as ports:
        addrs = [("127.0.0.1", p) for p in ports]

        def flush() -> None:
            for a in addrs:
                c = Client(a)
                c.flush_all(noreply=False)
                c.close()

        for name, hasher in (("ring (HashRing, 160 vnodes)", RingHasher),
                             ("hash % N (ModuloHasher)", ModuloHasher)):
            flush()
            client = HashClient(addrs[:n_servers], hasher=hasher)
            _write(client, keys)
            client.add_server(*addrs[n_servers])
            join = _hit_rate(client, keys)
            client.close()
            if progress:
                progress()
            flush()
            client = HashClient(addrs[:n_servers], hasher=hasher)
            _write(client, keys)
            client.close()
            # The pool loses its last server: clients are configured without it.
            client = HashClient(addrs[: n_servers - 1], hasher=hasher)
            leave = _hit_rate(client, keys)
            client.close()
            if progress:
                progress()
            results.append({"hasher": name, "join_kept": join, "leave_kept": leave})
        nodes = [f"{h}:{p}" for h, p in addrs]
    return {"keys": n_keys, "servers": n_servers, "results": results, "nodes": nodes,
            "ideal_join_kept": n_servers / (n_servers + 1),
            "ideal_leave_kept": (n_servers - 1) / n_servers,
            "seconds": time.perf_counter() - t0}
