"""``consistent-hash plan OLD NEW``: what changes from one layout to another (the moved share,
the flows between nodes, the hash ranges that change owner), exactly."""

from __future__ import annotations

import argparse
import csv
import math
import sys
from typing import Any

import numpy as np

from consistent_hash.analysis import balance, migration_plan, movement
from consistent_hash.cli import _common
from consistent_hash.cli._common import Subparsers, UserError

NAME = "plan"


def add_parser(subparsers: Subparsers) -> None:
    pl = subparsers.add_parser(NAME, help="moved share, flows and hash ranges between two layouts")
    pl.add_argument("old", help="ring file, node list, or a proxy's configuration file "
                                "(nginx.conf, haproxy.cfg, Envoy cluster, nutcracker pools)")
    pl.add_argument("new", help="the same, after the change")
    _common.add_layout_options(pl)
    _common.add_config_options(pl)
    pl.add_argument("--json", action="store_true", help="print the plan as JSON")
    pl.add_argument("--csv", action="store_true", help="print every hash range as CSV")
    # The first spelling of --json / --csv, kept working.
    pl.add_argument("--format", choices=["table", "json", "csv"], default=None,
                    help=argparse.SUPPRESS)
    pl.add_argument("--ranges", type=_common.non_negative, default=10, metavar="N",
                    help="hash ranges to list in the table (10; 0 for none)")
    pl.add_argument("--plot", metavar="PNG", help="draw load per node and flows to a PNG")


def run(args: argparse.Namespace) -> int:
    fmt = args.format or ("json" if args.json else "csv" if args.csv else "table")
    if args.json and args.csv or args.format and (args.json or args.csv) and (
            args.format != ("json" if args.json else "csv")):
        raise UserError("give one output format: --json or --csv")
    old, new = _common.layout_from_spec(args.old, args), _common.layout_from_spec(args.new, args)
    _common.check_plot_path(args.plot)
    if type(old) is not type(new):
        raise UserError(f"the layouts are of different kinds ({type(old).__name__}, "
                        f"{type(new).__name__}): plan compares two layouts of one system")
    if hasattr(old, "hash_name") and hasattr(old, "seed"):  # HashRing layouts
        _check_same_hash(old, new, args)
    try:
        mv = movement(old, new)
        plan = migration_plan(old, new) if mv.exact else None
    except (ValueError, TypeError) as e:
        raise UserError(str(e)) from None
    if plan is None and fmt == "csv":
        raise UserError(f"{type(old).__name__} is not a ring: the moved share is estimated "
                        "and there are no hash ranges to list (use --json)")
    fair = _fair_share(old, new)
    flows = sorted(mv.flows.items(), key=lambda kv: -kv[1])  # the largest first
    if fmt == "json":
        doc = {"old": old.fingerprint(), "new": new.fingerprint(), **mv.to_dict(),
               "fair_share": fair,
               "ranges": plan.to_dict()["ranges"] if plan is not None else None}
        print(_common.to_json(doc))
    elif fmt == "csv":
        assert plan is not None
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["start", "end", "from", "to"])
        for start, end, a, b in plan.ranges:
            w.writerow([start, end, a, b])
    else:
        if plan is not None:
            print(f"moved: {_common.pct(mv.moved)} of the key space (exact), "
                  f"{len(plan)} hash ranges")
        else:
            lo, hi = mv.interval or (mv.moved, mv.moved)
            print(f"moved: {_common.pct(mv.moved)} of the keys (estimated on {mv.keys:,} keys, "
                  f"95% in {_common.pct(lo)}..{_common.pct(hi)})")
        if fair is not None and mv.moved > fair + 0.005:
            print(f"the change itself needs {_common.pct(fair)} (what the nodes' shares gain); "
                  f"the other {_common.pct(mv.moved - fair)} moves between nodes that keep "
                  "their share")
        print()
        print(_common.table(["from", "to", "share"],
                    [[a, b, _common.pct(s)] for (a, b), s in flows]))
        if args.ranges and plan is not None:
            print()
            shown = plan.ranges[: args.ranges]
            print(_common.table(["start", "end", "from", "to"],
                        [[f"{s:#018x}", f"{e:#018x}", a, b] for s, e, a, b in shown]))
            if len(plan) > len(shown):
                print(f"... {len(plan) - len(shown)} more (--csv lists them all)")
    if args.plot:
        plt = _common.pyplot()
        fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
        before, after = _shares(old), _shares(new)
        names = sorted(set(before) | set(after))
        x = np.arange(len(names))
        ax[0].bar(x - 0.2, [100 * before.get(n, 0) for n in names], 0.4, label="old")
        ax[0].bar(x + 0.2, [100 * after.get(n, 0) for n in names], 0.4, label="new")
        ax[0].set_xticks(x, names, rotation=45)
        ax[0].set_title("Load per node")
        ax[0].set_ylabel("% of key space")
        ax[0].legend()
        top = flows[:20]
        ax[1].barh([f"{a} -> {b}" for (a, b), _ in top][::-1],
                   [100 * s for _, s in top][::-1], color="#cc6677")
        ax[1].set_title(f"Movement: {_common.pct(mv.moved)} of keys")
        ax[1].set_xlabel("% of key space")
        _common.save_figure(fig, args.plot)
    return 0


def _shares(router: Any) -> dict[str, float]:
    """Each node's share of the keys: exact where the router knows it."""
    own = getattr(router, "ownership", None)
    if callable(own):
        shares: dict[str, float] = own()
        return shares
    return dict(balance(router, sample=200_000).shares)


def _fair_share(old: Any, new: Any) -> float | None:
    """The least any layout change with these shares must move: half the total change of the
    nodes' shares (what the nodes that gain take in).  None when shares cannot be had."""
    try:
        a, b = _shares(old), _shares(new)
    except (TypeError, ValueError):
        return None
    # in name order: a set's order changes between processes, and float sums with it
    return 0.5 * math.fsum(abs(b.get(n, 0.0) - a.get(n, 0.0)) for n in sorted(set(a) | set(b)))


def _check_same_hash(old: Any, new: Any, args: argparse.Namespace) -> None:
    """Two layouts compare only under one hash function and seed: say which options make a
    node list match a ring file."""
    a, b = (old.hash_name, old.seed), (new.hash_name, new.seed)
    if a == b:
        return
    files = [spec for spec in (args.old, args.new) if _common.is_ring_file(spec)]
    ring = old if files and files[0] == args.old else new
    fix = f"--hash {ring.hash_name}" + (f" --seed {ring.seed}" if ring.seed else "")
    if len(files) == 1:
        raise UserError(f"{files[0]} hashes with {ring.hash_name} (seed {ring.seed}) and the "
                        f"node list with {args.hash} (seed {args.seed}): give {fix} to build "
                        "the node list like the ring file")
    raise UserError(f"the layouts hash differently ({a[0]} seed {a[1]}, {b[0]} seed {b[1]}): "
                    "plan compares two layouts of one hash and seed")
