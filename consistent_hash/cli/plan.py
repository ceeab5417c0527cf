"""``consistent-hash plan OLD NEW``: what changes from one layout to another (the moved share,
the flows between nodes, the hash ranges that change owner), exactly."""

from __future__ import annotations

import argparse
import csv
import sys

import numpy as np

from consistent_hash.analysis import migration_plan, movement
from consistent_hash.cli import _common
from consistent_hash.cli._common import Subparsers, UserError

NAME = "plan"


def add_parser(subparsers: Subparsers) -> None:
    pl = subparsers.add_parser(NAME, help="moved share, flows and hash ranges between two layouts")
    pl.add_argument("old", help="ring file or node list")
    pl.add_argument("new", help="ring file or node list")
    _common.add_layout_options(pl)
    pl.add_argument("--format", choices=["table", "json", "csv"], default="table")
    pl.add_argument("--ranges", type=_common.non_negative, default=10, metavar="N",
                    help="hash ranges to list in the table (10; 0 for none)")
    pl.add_argument("--plot", metavar="PNG", help="draw load per node and flows to a PNG")


def run(args: argparse.Namespace) -> int:
    old, new = _common.layout(args.old, args), _common.layout(args.new, args)
    _common.check_plot_path(args.plot)
    try:
        mv = movement(old, new)
        plan = migration_plan(old, new)
    except ValueError as e:
        raise UserError(str(e)) from None
    flows = sorted(mv.flows.items(), key=lambda kv: -kv[1])  # the largest first
    if args.format == "json":
        doc = {"old": old.fingerprint(), "new": new.fingerprint(), **mv.to_dict(),
               "ranges": plan.to_dict()["ranges"]}
        print(_common.to_json(doc))
    elif args.format == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["start", "end", "from", "to"])
        for start, end, a, b in plan.ranges:
            w.writerow([start, end, a, b])
    else:
        print(f"moved: {_common.pct(mv.moved)} of the key space (exact), {len(plan)} hash ranges")
        print()
        print(_common.table(["from", "to", "share"],
                    [[a, b, _common.pct(s)] for (a, b), s in flows]))
        if args.ranges:
            print()
            shown = plan.ranges[: args.ranges]
            print(_common.table(["start", "end", "from", "to"],
                        [[f"{s:#018x}", f"{e:#018x}", a, b] for s, e, a, b in shown]))
            if len(plan) > len(shown):
                print(f"... {len(plan) - len(shown)} more (use --format csv for all)")
    if args.plot:
        plt = _common.pyplot()
        fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
        before, after = old.ownership(), new.ownership()
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
