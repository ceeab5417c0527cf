"""``consistent-hash ring``: write a ring file (see consistent_hash.ringfile) for a node list."""

from __future__ import annotations

import argparse
import sys

from consistent_hash import ringfile
from consistent_hash.cli._common import (
    Subparsers,
    UserError,
    add_layout_options,
    router_from_spec,
    to_json,
)

NAME = "ring"


def add_parser(subparsers: Subparsers) -> None:
    r = subparsers.add_parser(NAME, help="write a ring file for a node list")
    r.add_argument("nodes", help="node list")
    add_layout_options(r)
    r.add_argument("-o", "--output", help="output file (default stdout)")
    r.add_argument("--json", action="store_true",
                   help="with -o: print what was written as JSON (the ring file is JSON)")


def run(args: argparse.Namespace) -> int:
    ring = router_from_spec(args.nodes, args)
    if args.output in (None, "-"):
        sys.stdout.write(ringfile.dumps(ring))
        return 0
    try:
        ringfile.save(ring, args.output)
    except OSError as e:
        raise UserError(f"cannot write {args.output!r}: {e.strerror}") from None
    if args.json:
        print(to_json({"file": args.output, "fingerprint": ring.fingerprint(),
                       "nodes": len(ring), "positions": len(ring.positions)}))
    return 0
