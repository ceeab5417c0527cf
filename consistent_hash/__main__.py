"""Command line: ``python -m consistent_hash [simulate] [options]``.

``simulate`` (the default) runs the experiment every article on consistent hashing describes,
on generated keys: how many keys move when a node joins or leaves, with ``hash % N`` and with
the ring, and how evenly the ring spreads load as the number of virtual nodes grows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import HashRing, __version__


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table with right-aligned columns (except the first)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths, strict=True))) + " |"
    sep = "|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def simulate(n_keys: int, n_nodes: int, vnodes: int, vnode_counts: Sequence[int]
             ) -> dict[str, Any]:
    """Run the experiment; returns the figures as a dict (printed by main)."""
    t0 = time.perf_counter()
    keys = np.char.add("key-", np.arange(n_keys).astype("U"))
    names = [f"cache-{i}" for i in range(n_nodes + 1)]
    before = HashRing(names[:n_nodes], vnodes=vnodes)
    hashes = before.hash_many(keys)

    def modulo(n: int) -> npt.NDArray[np.uint64]:
        return hashes % np.uint64(n)

    changes = []
    for label, new_names, ideal in (
        (f"{n_nodes} -> {n_nodes + 1} (one joins)", names, 1 / (n_nodes + 1)),
        (f"{n_nodes} -> {n_nodes - 1} (one leaves)", names[: n_nodes - 1], 1 / n_nodes),
    ):
        after = HashRing(new_names, vnodes=vnodes)
        old = np.array(before.nodes)[before.lookup(hashes)]
        new = np.array(after.nodes)[after.lookup(hashes)]
        moved = old != new
        joined = list(set(after.nodes) - set(before.nodes))
        left = list(set(before.nodes) - set(after.nodes))
        # A join may only move keys to the new node; a leave only the departed node's keys.
        only = bool(np.all(np.isin(new[moved], joined) | np.isin(old[moved], left)))
        mod_moved = float(np.mean(modulo(len(before)) != modulo(len(after))))
        changes.append({
            "change": label,
            "modulo_moved": mod_moved,
            "ring_moved": float(np.mean(moved)),
            "ideal": ideal,
            "only_changed_node": only,
        })

    spread = []
    for v in vnode_counts:
        ring = HashRing(names[:n_nodes], vnodes=v)
        counts = np.bincount(ring.lookup(hashes), minlength=n_nodes) / n_keys
        spread.append({"vnodes": v, "lightest": float(counts.min()),
                       "heaviest": float(counts.max()),
                       "ratio": float(counts.max() / counts.min())})
    return {"keys": n_keys, "nodes": n_nodes, "vnodes": vnodes, "changes": changes,
            "spread": spread, "seconds": time.perf_counter() - t0}


def _print_simulation(r: dict[str, Any]) -> None:
    print(f"consistent_hash {__version__}: {r['keys']:,} keys, {r['nodes']} nodes "
          f"(cache-0 .. cache-{r['nodes'] - 1}), ring of {r['vnodes']} vnodes per node, "
          "hash xxh3\n")
    print("Keys moved when the node count changes")
    print(_table(
        ["change", "hash % N", "ring", "ideal", "ring moved only to/from the changed node"],
        [[c["change"], _pct(c["modulo_moved"]), _pct(c["ring_moved"]), _pct(c["ideal"]),
          "yes" if c["only_changed_node"] else "NO"] for c in r["changes"]]))
    print(f"\nLoad over {r['nodes']} nodes (even share {_pct(1 / r['nodes'])})")
    print(_table(
        ["vnodes", "lightest", "heaviest", "heaviest / lightest"],
        [[str(s["vnodes"]), _pct(s["lightest"]), _pct(s["heaviest"]), f"{s['ratio']:.2f}x"]
         for s in r["spread"]]))
    print(f"\n({r['seconds']:.1f} s)")


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {v}")
    return v


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="consistent-hash", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"consistent_hash {__version__}")
    sub = p.add_subparsers(dest="command")
    s = sub.add_parser("simulate", help="keys moved and load spread: modulo vs the ring")
    s.add_argument("--keys", type=_positive, default=1_000_000, help="keys (default 1,000,000)")
    s.add_argument("--nodes", type=_positive, default=8, help="nodes before the change (8)")
    s.add_argument("--vnodes", type=_positive, default=160, help="vnodes per node (160)")
    s.add_argument("--spread-vnodes", default="1,10,100,160,500",
                   help="comma-separated vnode counts for the load table")
    s.add_argument("--json", action="store_true", help="print the figures as JSON")
    return p


COMMANDS = ("simulate",)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "simulate")  # the default command takes its options directly
    args = _parser().parse_args(argv)
    if args.command in (None, "simulate"):
        keys = getattr(args, "keys", 1_000_000)
        nodes = getattr(args, "nodes", 8)
        if nodes < 2:
            print("consistent-hash: error: --nodes must be at least 2", file=sys.stderr)
            return 2
        try:
            counts = [_positive(x) for x in getattr(args, "spread_vnodes",
                                                     "1,10,100,160,500").split(",")]
        except argparse.ArgumentTypeError as e:
            print(f"consistent-hash: error: --spread-vnodes: {e}", file=sys.stderr)
            return 2
        r = simulate(keys, nodes, getattr(args, "vnodes", 160), counts)
        if getattr(args, "json", False):
            print(json.dumps(r, indent=2))
        else:
            _print_simulation(r)
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
