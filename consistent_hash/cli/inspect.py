"""``consistent-hash inspect``: summarise a ring file (or a node list): its parameters, each
node's weight, vnodes and share of the key space, and how balanced it is."""

from __future__ import annotations

import argparse

import numpy as np

from consistent_hash.analysis import balance
from consistent_hash.cli import _common
from consistent_hash.cli._common import Subparsers

NAME = "inspect"


def add_parser(subparsers: Subparsers) -> None:
    i = subparsers.add_parser(NAME, help="summarise a ring file (or node list)")
    i.add_argument("file")
    _common.add_layout_options(i)
    i.add_argument("--json", action="store_true")
    i.add_argument("--plot", metavar="PNG", help="draw load per node to a PNG")


def run(args: argparse.Namespace) -> int:
    ring = _common.router_from_spec(args.file, args)
    _common.check_plot_path(args.plot)
    b = balance(ring)
    counts = np.bincount(ring.owners, minlength=len(ring))
    if args.json:
        print(_common.to_json({"kind": "HashRing", "hash": ring.hash_name, "seed": ring.seed,
                       "vnodes": ring.vnodes, "fingerprint": ring.fingerprint(),
                       "positions": len(ring.positions), "down": sorted(ring.down),
                       "nodes": [{"node": n, "weight": ring.weights[n],
                                  "vnodes": int(c), "share": b.shares[n],
                                  "down": n in ring.down}
                                 for n, c in zip(ring.nodes, counts, strict=True)],
                       "balance": {k: v for k, v in b.to_dict().items() if k != "shares"}}))
    else:
        print(f"HashRing: {len(ring)} nodes, {len(ring.positions)} positions, hash "
              f"{ring.hash_name}, seed {ring.seed}, {ring.vnodes} vnodes per unit weight")
        print(f"fingerprint {ring.fingerprint()}")
        if ring.down:
            print(f"marked down: {', '.join(sorted(ring.down))} (their keys go to their next "
                  "replicas)")
        print()
        print(_common.table(["node", "weight", "vnodes", "share"],
                    [[n + (" (down)" if n in ring.down else ""), f"{ring.weights[n]:g}",
                      str(int(c)), _common.pct(b.shares[n])]
                     for n, c in zip(ring.nodes, counts, strict=True)]))
        exp = b.expected_max_over_mean
        print(f"\nmax/mean {b.max_over_mean:.3f} (typical for this layout: "
              f"{exp:.3f}), max/min {b.max_over_min:.3f}, cv {b.cv:.3f}")
    if args.plot:
        plt = _common.pyplot()
        fig, ax = plt.subplots(figsize=(max(6, 0.4 * len(ring)), 4.5))
        ax.bar(list(ring.nodes), [100 * b.shares[n] for n in ring.nodes], color="#4477aa")
        ax.set_title("Load per node")
        ax.set_ylabel("% of key space")
        ax.tick_params(axis="x", rotation=45)
        _common.save_figure(fig, args.plot)
    return 0
