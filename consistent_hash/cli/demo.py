"""``python -m consistent_hash demo memcached|resize``: the promise, shown on real servers.

``demo memcached`` starts memcached servers on 127.0.0.1, writes keys through pymemcache's
HashClient, changes the pool (one server joins; one server is lost) and reads every key back.
The hit rate is the share of keys still found where the client now looks: about N/(N+1) with
the ring, about 1/N with ``hash % N``.

``demo resize`` follows the hit rate of a read-through cache through a resize from N to N+1
servers, round by round (each round reads a random share of the keys through HashClient and
refills what it misses), for ``hash % N``, for the ring, and for the ring with
``consistent_hash.integrations.migrate.migrate_memcached`` run before the clients switch: the
first round after the switch hits about 1/(N+1), about N/(N+1) and all of the keys.
``--plot`` draws the rounds.
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
    check_plot_path,
    pct,
    positive,
    pyplot,
    save_figure,
    table,
    to_json,
)

__all__ = ["NAME", "add_parser", "memcached_demo", "resize_demo", "run"]

NAME = "demo"
# Local servers and keys one demo starts and writes (each server is a process on this machine).
MAX_SERVERS = 64
MAX_KEYS = 1_000_000
MAX_ROUNDS = 100


def add_parser(subparsers: Subparsers) -> None:
    d = subparsers.add_parser(NAME, help="demo memcached|resize: hit rates on real servers")
    d.add_argument("what", help="memcached (a join and a loss) or resize (the hit rate "
                   "through a resize, with and without migrate_memcached)")
    d.add_argument("--keys", type=positive, default=100_000, help="keys (100,000)")
    d.add_argument("--servers", type=positive, default=8, help="servers before the change (8)")
    d.add_argument("--rounds", type=positive, default=6,
                   help="resize: read rounds after the resize (6)")
    d.add_argument("--plot", metavar="PNG", help="resize: draw the hit rate per round to a PNG")
    d.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    if args.what not in ("memcached", "resize"):
        raise UserError(f"unknown demo {args.what!r} (available: memcached, resize)")
    if not 2 <= args.servers <= MAX_SERVERS:
        raise UserError(f"--servers {args.servers}: the demo needs 2 to {MAX_SERVERS} servers "
                        "(one leaves, one joins)")
    if args.keys > MAX_KEYS:
        raise UserError(f"--keys {args.keys:,}: the demo writes at most {MAX_KEYS:,} keys")
    if args.rounds > MAX_ROUNDS:
        raise UserError(f"--rounds {args.rounds}: at most {MAX_ROUNDS}")
    check_plot_path(args.plot)
    try:
        import pymemcache  # noqa: F401
    except ImportError:
        raise UserError("the memcached demo needs pymemcache: pip install pymemcache") from None
    from consistent_hash.cli._servers import ServerError

    if args.what == "resize":
        progress = Progress(3 * (_ROUNDS_BEFORE + args.rounds), "demo")
        try:
            r = resize_demo(args.keys, args.servers, rounds_after=args.rounds,
                            progress=progress.advance)
        except ServerError as e:
            raise UserError(str(e)) from None
        finally:
            progress.close()
        _print_resize(r, args)
        return 0

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


# -- demo resize -----------------------------------------------------------------------------

_ROUNDS_BEFORE = 2
_STRATEGIES = ("modulo", "ring", "ring + migrate")


def resize_demo(n_keys: int = 100_000, n_servers: int = 8, *, rounds_before: int = _ROUNDS_BEFORE,
                rounds_after: int = 6, share: float = 0.25,
                progress: Callable[[], None] | None = None) -> dict[str, Any]:
    """The hit rate of a read-through cache, round by round, through a resize from n_servers
    to n_servers + 1 real memcached servers, for three strategies: ``hash % N``
    (ModuloHasher), the ring (RingHasher), and the ring with ``migrate_memcached`` run between
    the last round before and the first round after the switch.

    Every round reads the same random ``share`` of the keys for each strategy through
    HashClient and writes back each key it misses (as an application refills its cache).
    Returns {"keys", "servers", "rounds_before", "results": [{"strategy", "hit_rates",
    "first_after", "migration"}], "nodes", "seconds"}."""
    import numpy as np
    from pymemcache.client.base import Client
    from pymemcache.client.hash import HashClient

    from consistent_hash import HashRing
    from consistent_hash.cli._servers import memcached_servers
    from consistent_hash.integrations import ModuloHasher, RingHasher
    from consistent_hash.integrations.migrate import migrate_memcached

    t0 = time.perf_counter()
    keys = [f"user:{i}" for i in range(n_keys)]
    rng = np.random.default_rng(2026)
    rounds = rounds_before + rounds_after
    size = max(1, int(share * n_keys))
    samples = [[keys[i] for i in rng.choice(n_keys, size, replace=False)] for _ in range(rounds)]
    results = []
    with memcached_servers(n_servers + 1) as ports:
        addrs = [("127.0.0.1", p) for p in ports]
        nodes = [f"{h}:{p}" for h, p in addrs]
        for strategy in _STRATEGIES:
            for a in addrs:
                c = Client(a)
                c.flush_all(noreply=False)
                c.close()
            hasher: Any = ModuloHasher if strategy == "modulo" else RingHasher
            client = HashClient(addrs[:n_servers], hasher=hasher)
            _write(client, keys)
            rates: list[float] = []
            migration: dict[str, Any] | None = None
            for r, sample in enumerate(samples):
                if r == rounds_before:  # the resize: one server joins, the clients switch
                    client.close()
                    if strategy == "ring + migrate":
                        report = migrate_memcached(HashRing(nodes[:n_servers]), HashRing(nodes))
                        migration = {k: v for k, v in report.to_dict()["totals"].items()}
                        migration["seconds"] = report.seconds
                    client = HashClient(addrs, hasher=hasher)
                rates.append(_read_through(client, sample))
                if progress:
                    progress()
            client.close()
            results.append({"strategy": strategy, "hit_rates": rates,
                            "first_after": rates[rounds_before], "migration": migration})
    return {"keys": n_keys, "servers": n_servers, "rounds_before": rounds_before,
            "share": share, "results": results, "nodes": nodes,
            "ideal_ring_kept": n_servers / (n_servers + 1),
            "seconds": time.perf_counter() - t0}


def _read_through(client: Any, keys: list[str]) -> float:
    """Read keys; write back the ones missed (the cache refilled from the database)."""
    hits = 0
    for s in range(0, len(keys), _BATCH):
        batch = keys[s : s + _BATCH]
        found = client.get_many(batch)
        hits += len(found)
        missed = [k for k in batch if k not in found]
        if missed:
            _write(client, missed)
    return hits / len(keys)


def _print_resize(r: dict[str, Any], args: argparse.Namespace) -> None:
    n, before = r["servers"], r["rounds_before"]
    if args.json:
        print(to_json(r))
    else:
        print(f"{r['keys']:,} keys in {n} real memcached servers on 127.0.0.1, read through "
              f"pymemcache's HashClient ({pct(r['share'])} of them a round, misses refilled); "
              f"after round {before} a server joins and the clients switch to {n + 1}\n")
        rounds = len(r["results"][0]["hit_rates"])
        print(table(["strategy", "before", "first round after", f"round {rounds}"],
                    [[x["strategy"], pct(min(x["hit_rates"][:before])), pct(x["first_after"]),
                      pct(x["hit_rates"][-1])] for x in r["results"]]))
        mig = r["results"][-1]["migration"]
        print(f"\nideal for the ring: {pct(r['ideal_ring_kept'])} (100 - 100/{n + 1}%); "
              f"migrate_memcached copied {mig['copied']:,} keys "
              f"({mig['failed']:,} failed) in {mig['seconds']:.2f} s before the switch")
        print(f"\n({r['seconds']:.1f} s)")
    if args.plot:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for x, style in zip(r["results"], ("-o", "-s", "-^"), strict=True):
            rates = [100 * h for h in x["hit_rates"]]
            ax.plot(range(1, len(rates) + 1), rates, style, label=x["strategy"])
        ax.axvline(before + 0.5, color="grey", linestyle="--")
        ax.text(before + 0.55, 50, f"{n} -> {n + 1} servers", color="grey")
        ax.set_xlabel("read round")
        ax.set_ylabel("hit rate (%)")
        ax.set_ylim(0, 105)
        ax.set_title("Hit rate through a resize (real memcached, read-through cache)")
        ax.legend(loc="lower right")
        save_figure(fig, args.plot)
