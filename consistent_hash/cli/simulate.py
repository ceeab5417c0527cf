"""``consistent-hash simulate`` (the default command): keys moved and load spread when the node
count changes, ``hash % N`` against the ring and the other algorithms."""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from consistent_hash import HashRing, __version__
from consistent_hash.cli import _common
from consistent_hash.cli._common import Subparsers, UserError, pct

NAME = "simulate"


# What one run may take: the keys, their hashes and one owner array per router live in memory
# at once (about 200 bytes a key: 10,000,000 keys take about 2 GB and 15 s), and Rendezvous and
# the Maglev table grow with the node count.
MAX_KEYS = 10_000_000
MAX_NODES = 1_000


def add_parser(subparsers: Subparsers) -> None:
    s = subparsers.add_parser(NAME, help="keys moved and load spread: modulo vs the ring")
    s.add_argument("--keys", type=_common.positive, default=1_000_000, metavar="N",
                   help=f"keys (1,000,000; at most {MAX_KEYS:,})")
    s.add_argument("--nodes", type=_common.positive, default=8, metavar="N",
                   help=f"nodes before the change (8; 2 to {MAX_NODES:,})")
    s.add_argument("--vnodes", type=_common.vnodes, default=160, metavar="N",
                   help="vnodes per node (160)")
    s.add_argument("--spread-vnodes", default="1,10,100,160,500", metavar="N,N,...",
                   help="vnode counts for the load table (1,10,100,160,500)")
    s.add_argument("--json", action="store_true", help="print the figures as JSON")
    s.add_argument("--plot", metavar="PNG", help="draw load, movement and balance to a PNG")


def run(args: argparse.Namespace) -> int:
    if args.nodes < 2:
        raise UserError("--nodes must be at least 2")
    if args.nodes > MAX_NODES:
        raise UserError(f"--nodes {args.nodes:,}: at most {MAX_NODES:,} (the simulation runs "
                        "every algorithm, some of which grow with the node count)")
    if args.keys > MAX_KEYS:
        raise UserError(f"--keys {args.keys:,}: at most {MAX_KEYS:,} (about 200 bytes of "
                        "memory a key); assign streams any number of keys from a file")
    counts = []
    for x in args.spread_vnodes.split(","):
        try:
            counts.append(_common.vnodes(x.strip()))
        except argparse.ArgumentTypeError as e:
            raise UserError(f"--spread-vnodes: {e}") from None
    for v in (args.vnodes, *counts):
        _common.check_positions((args.nodes + 1) * v, f"--vnodes {v} over {args.nodes + 1} nodes")
    _common.check_plot_path(args.plot)
    steps = 2 * len(_algorithms([], args.vnodes)) + len(counts)
    progress = _common.Progress(steps, "simulate")
    r = simulate(args.keys, args.nodes, args.vnodes, counts, progress)
    progress.close()
    if args.json:
        for s in r["spread"]:
            s.pop("loads")
        print(_common.to_json(r))
    else:
        _print_simulation(r)
    if args.plot:
        _plot_simulation(r, args.plot)
    return 0


def _algorithms(names: list[str], vnodes: int) -> list[tuple[str, Callable[[list[str]], Any]]]:
    """The routers the simulation compares: the ring, and each other algorithm available."""
    import consistent_hash as ch

    out: list[tuple[str, Callable[[list[str]], Any]]] = [
        (f"ring ({vnodes} vnodes)", lambda ns: HashRing(ns, vnodes=vnodes))]
    for cls_name in ("JumpHash", "Rendezvous", "Maglev", "MultiProbe", "AnchorHash",
                     "MementoHash"):
        cls = getattr(ch, cls_name, None)
        if cls is not None:
            out.append((cls_name, _factory(cls)))
    return out


def _factory(cls: Any) -> Callable[[list[str]], Any]:
    def make(names: list[str]) -> Any:
        return cls(names)
    return make


def _spread(counts: Any) -> dict[str, float]:
    """The lightest and heaviest share of the keys, and their ratio (inf if a node has none)."""
    return {"lightest": float(counts.min()), "heaviest": float(counts.max()),
            "ratio": float(counts.max() / counts.min()) if counts.min() else math.inf}


def simulate(n_keys: int, n_nodes: int, vnodes: int, vnode_counts: Sequence[int],
             progress: _common.Progress | None = None) -> dict[str, Any]:
    """Run the experiment; returns the figures as a dict."""
    t0 = time.perf_counter()
    keys = np.char.add("key-", np.arange(n_keys).astype("U"))
    names = [f"cache-{i}" for i in range(n_nodes + 1)]
    base = HashRing(names[:n_nodes], vnodes=vnodes)
    hashes = base.hash_many(keys)
    algos = _algorithms(names, vnodes)
    changes_spec = [
        (f"{n_nodes} -> {n_nodes + 1} (cache-{n_nodes} joins)", names, 1 / (n_nodes + 1)),
        (f"{n_nodes} -> {n_nodes - 1} (cache-{n_nodes - 1} leaves)", names[: n_nodes - 1],
         1 / n_nodes),
    ]
    changes = []
    for label, new_names, ideal in changes_spec:
        mod = float(np.mean(hashes % np.uint64(n_nodes) != hashes % np.uint64(len(new_names))))
        row: dict[str, Any] = {"change": label, "ideal": ideal, "modulo_moved": mod,
                               "routers": []}
        for algo_name, make in algos:
            before, after = make(names[:n_nodes]), make(new_names)
            old = np.array(before.nodes)[before.get_indices(keys)]
            new = np.array(after.nodes)[after.get_indices(keys)]
            moved = old != new
            joined = list(set(after.nodes) - set(before.nodes))
            left = list(set(before.nodes) - set(after.nodes))
            # A join may only move keys to the new node; a leave only the departed node's keys.
            only = bool(np.all(np.isin(new[moved], joined) | np.isin(old[moved], left)))
            row["routers"].append({"router": algo_name, "moved": float(np.mean(moved)),
                                   "only_changed_node": only})
            if progress:
                progress.advance()
        changes.append(row)
    ring_row = [{"change": c["change"], "modulo_moved": c["modulo_moved"],
                 "ring_moved": c["routers"][0]["moved"], "ideal": c["ideal"],
                 "only_changed_node": c["routers"][0]["only_changed_node"]} for c in changes]
    spread = []
    for v in vnode_counts:
        ring = HashRing(names[:n_nodes], vnodes=v)
        counts = np.bincount(ring.lookup(hashes), minlength=n_nodes) / n_keys
        spread.append({"vnodes": v, **_spread(counts), "loads": counts.tolist()})
        if progress:
            progress.advance()
    others = []
    for algo_name, make in algos[1:]:
        r = make(names[:n_nodes])
        counts = np.bincount(r.get_indices(keys), minlength=n_nodes) / n_keys
        others.append({"router": algo_name, **_spread(counts)})
    base_loads = np.bincount(base.lookup(hashes), minlength=n_nodes) / n_keys
    return {"keys": n_keys, "nodes": n_nodes, "vnodes": vnodes, "changes": ring_row,
            "algorithms": changes, "spread": spread, "algorithm_spread": others,
            "loads": dict(zip(base.nodes, base_loads.tolist(), strict=True)),
            "seconds": time.perf_counter() - t0}


def _moved(router: dict[str, Any]) -> str:
    """A router's moved share, starred if it moved keys between nodes that did not change."""
    return pct(router["moved"]) + ("" if router["only_changed_node"] else " *")


def _print_simulation(r: dict[str, Any]) -> None:
    print(f"consistent_hash {__version__}: {r['keys']:,} keys, {r['nodes']} nodes "
          f"(cache-0 .. cache-{r['nodes'] - 1}), ring of {r['vnodes']} vnodes per node, "
          "hash xxh3\n")
    print("Keys moved when the node count changes")
    print(_common.table(
        ["change", "hash % N", "ring", "ideal", "ring moved only to/from the changed node"],
        [[c["change"], pct(c["modulo_moved"]), pct(c["ring_moved"]), pct(c["ideal"]),
          "yes" if c["only_changed_node"] else "NO"] for c in r["changes"]]))
    print(f"\nLoad over {r['nodes']} nodes (even share {pct(1 / r['nodes'])})")
    print(_common.table(
        ["vnodes", "lightest", "heaviest", "heaviest / lightest"],
        [[str(s["vnodes"]), pct(s["lightest"]), pct(s["heaviest"]), f"{s['ratio']:.2f}x"]
         for s in r["spread"]]))
    if r["algorithm_spread"]:
        print("\nThe other algorithms on the same keys (moved share; load spread)")
        join, leave = (a["routers"][1:] for a in r["algorithms"])  # [0] is the ring
        rows = [[j["router"], _moved(j), _moved(lv), f"{s['ratio']:.2f}x"]
                for j, lv, s in zip(join, leave, r["algorithm_spread"], strict=True)]
        print(_common.table(["router", r["changes"][0]["change"], r["changes"][1]["change"],
                     "heaviest / lightest"], rows))
        if any(" *" in c for row in rows for c in row):
            print("(* some keys moved between nodes that did not change)")
    print(f"\n({r['seconds']:.1f} s)")


def _plot_simulation(r: dict[str, Any], path: str) -> None:
    plt = _common.pyplot()
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.5))
    loads = r["loads"]
    ax[0].bar(list(loads), [100 * v for v in loads.values()], color="#4477aa")
    ax[0].axhline(100 / r["nodes"], color="k", ls="--", lw=1, label="even share")
    ax[0].set_title(f"Load per node ({r['vnodes']} vnodes)")
    ax[0].set_ylabel("% of keys")
    ax[0].tick_params(axis="x", rotation=45)
    ax[0].legend()
    labels = [c["change"].split(" (")[0] for c in r["changes"]]
    x = np.arange(len(labels))
    series = [("hash % N", [c["modulo_moved"] for c in r["changes"]])]
    for i, rt in enumerate(r["algorithms"][0]["routers"]):
        series.append((rt["router"], [a["routers"][i]["moved"] for a in r["algorithms"]]))
    w = 0.8 / len(series)
    for i, (name, vals) in enumerate(series):
        ax[1].bar(x + i * w - 0.4 + w / 2, [100 * v for v in vals], w, label=name)
    ax[1].plot(x, [100 * c["ideal"] for c in r["changes"]], "k_", ms=40, mew=2, label="ideal")
    ax[1].set_xticks(x, labels)
    ax[1].set_title("Keys moved per change")
    ax[1].set_ylabel("% of keys")
    ax[1].legend(fontsize=7)
    vs = [s["vnodes"] for s in r["spread"]]
    ax[2].plot(vs, [s["ratio"] for s in r["spread"]], "o-")
    ax[2].set_xscale("log")
    ax[2].set_title("Balance against vnodes")
    ax[2].set_xlabel("vnodes per node")
    ax[2].set_ylabel("heaviest / lightest")
    _common.save_figure(fig, path)
