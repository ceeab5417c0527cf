"""``consistent-hash migrate memcached|redis --from OLD --to NEW``: copy the keys a layout
change moves to their new owners before the clients switch
(``consistent_hash.integrations.migrate``).

OLD and NEW are ring files or node lists whose node names are the servers' addresses
("10.0.0.1:11211,10.0.0.2:11211", "10.0.0.3:11211=2" for a weight, "@servers.txt" with
one "host:port" or "host:port=weight" per line). ``--dry-run`` lists what would move,
``--delete`` removes the moved keys from their old owners once the new ones hold them (run it
after the clients have switched), ``--json`` prints the report. The exit status is 0 when
every moving key is on its new owner and every listing was complete, 1 otherwise, 2 for a
command-line error or a server that cannot be reached.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from consistent_hash import HashRing
from consistent_hash.cli import _common
from consistent_hash.cli._common import Progress, Subparsers, UserError
from consistent_hash.integrations import migrate as _migrate

NAME = "migrate"


def add_parser(subparsers: Subparsers) -> None:
    m = subparsers.add_parser(NAME, help="copy the keys a resize moves to their new servers")
    m.add_argument("backend", help="memcached or redis")
    m.add_argument("--from", dest="old", required=True, metavar="OLD",
                   help="the current layout: ring file or node list of host:port")
    m.add_argument("--to", dest="new", required=True, metavar="NEW",
                   help="the new layout: ring file or node list of host:port")
    _common.add_layout_options(m)
    m.add_argument("--dry-run", action="store_true", help="report what would move; write nothing")
    m.add_argument("--delete", action="store_true",
                   help="remove moved keys from their old servers (after the clients switched)")
    m.add_argument("--batch-size", type=_common.batch, default=500,
                   help="keys per pipelined round trip (500)")
    m.add_argument("--rate", type=_common.per_second, default=None, metavar="KEYS_PER_S",
                   help="at most this many keys per second (no limit)")
    m.add_argument("--timeout", type=_common.seconds, default=5.0,
                   help="seconds per socket operation (5)")
    m.add_argument("--key-prefix", default="",
                   help="memcached: the key_prefix the clients add but do not hash")
    m.add_argument("--db", type=_common.redis_db, default=0,
                   help="redis: database number (0)")
    m.add_argument("--match", default=None, help="redis: only keys matching this SCAN pattern")
    m.add_argument("--json", action="store_true", help="print the report as JSON")


def _layout(spec: str, args: argparse.Namespace) -> HashRing:
    """A ring file, "@file" or a node list of addresses ("host:port", "[v6]:port", a unix
    socket path; a weight as "host:port=2"), each name checked as an address."""
    ring = _common.router_from_spec(spec, args)
    for node in ring.nodes:
        try:
            _migrate.parse_address(node)
        except ValueError as e:
            raise UserError(f"node {node!r}: expected host:port, [v6]:port or a unix socket "
                            f"path ({e})") from None
    return ring


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"  # pragma: no cover


def run(args: argparse.Namespace) -> int:
    if args.backend not in ("memcached", "redis"):
        raise UserError(f"unknown backend {args.backend!r} (available: memcached, redis)")
    if args.backend == "redis":
        try:
            import redis  # noqa: F401
        except ImportError:
            raise UserError("migrate redis needs redis-py: pip install redis") from None
    old, new = _layout(args.old, args), _layout(args.new, args)
    bar: list[Progress] = []

    def progress(done: int, total: int) -> None:
        if not bar:
            bar.append(Progress(total, "migrate"))
        bar[0].advance(done - bar[0].done)

    options: dict[str, Any] = {"dry_run": args.dry_run, "delete": args.delete,
                               "batch_size": args.batch_size, "rate": args.rate,
                               "progress": progress, "timeout": args.timeout}
    try:
        if args.backend == "memcached":
            report = _migrate.migrate_memcached(old, new, key_prefix=args.key_prefix, **options)
        else:
            report = _migrate.migrate_redis(old, new, db=args.db, match=args.match, **options)
    except (_migrate.MigrationError, ValueError) as e:
        raise UserError(str(e)) from None
    finally:
        if bar:
            bar[0].close()
    if args.json:
        print(_common.to_json(report.to_dict()))
        return 0 if report.ok else 1
    what = "would move" if report.dry_run else "move"
    print(f"{args.backend}: {len(old)} -> {len(new)} servers: {report.scanned:,} keys scanned, "
          f"{report.moved:,} {what}: copied {report.copied:,}, skipped {report.skipped:,} "
          f"(already on the new server), vanished {report.vanished:,}, invalidated "
          f"{report.invalidated:,}, failed {report.failed:,}"
          + (f", deleted {report.deleted:,}" if report.delete else "")
          + f" ({_size(report.bytes)}, {report.seconds:.1f} s)")
    if report.pairs:
        print()
        print(_common.table(
            ["source", "target", "moved", "copied", "skipped", "vanished", "failed", "bytes"],
            [[p.source, p.target, f"{p.moved:,}", f"{p.copied:,}", f"{p.skipped:,}",
              f"{p.vanished:,}", f"{p.failed:,}", _size(p.bytes)]
             for p in report.pairs.values()]))
    for s in report.sources.values():
        if not s.complete:
            print(f"warning: {s.node} listed {s.scanned:,} keys of its {s.items:,}: keys it "
                  "did not list were not migrated", file=sys.stderr)
    for p in report.pairs.values():
        for message in p.errors:
            print(f"error: {p.source} -> {p.target}: {message}", file=sys.stderr)
    return 0 if report.ok else 1
