"""consistent-hash: see what consistent hashing does before you change a cluster.

  simulate   keys moved and load spread: hash % N vs the ring vs the other algorithms
             (the default command: python -m consistent_hash)
  plan       what changes from one layout to another: moved share, flows, hash ranges
  assign     route keys (text lines, CSV, Parquet) to nodes: key,node
  inspect    summarise a ring file
  ring       write a ring file for a node list
  demo       demo memcached: real servers, a join and a loss, hit rates ring vs modulo

A layout is a ring file (see consistent_hash.ringfile) or a node list: "a,b,c",
"a:2,b:1" (name:weight), or "@path" to a file with one "name [weight]" per line.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

import numpy as np

from consistent_hash import HashRing, __version__, ringfile
from consistent_hash.analysis import balance, migration_plan, movement

COMMANDS = ("simulate", "plan", "assign", "inspect", "ring", "demo")


class UserError(Exception):
    """A mistake in the command line or its inputs: one line on stderr, exit status 2."""


# -- output helpers --------------------------------------------------------------------------

def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table with right-aligned columns (except the first)."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths, strict=True))) + " |"
    sep = "|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def _json(doc: Any) -> str:
    """Strict JSON: a non-finite float (a ratio with a zero denominator) becomes null."""
    def clean(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x
    return json.dumps(clean(doc), indent=1, ensure_ascii=False, allow_nan=False)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


class Progress:
    """A progress bar on stderr when it is a terminal; silent when piped."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and total > 0
        self.total, self.label, self.done = total, label, 0
        self._last = 0.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(30 * frac)
            self.stream.write(f"\r{self.label} [{bar:<30}] {100 * frac:5.1f}%")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * (len(self.label) + 40) + "\r")
            self.stream.flush()


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'consistent-hash-ring[plot]'"
                        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _check_plot_path(path: str | None) -> None:
    if path is None:
        return
    if not path.lower().endswith(".png"):
        raise UserError(f"--plot: expected a .png file name, got {path!r}")
    _pyplot()
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise UserError(f"--plot: directory {d!r} does not exist")


def _save_figure(fig: Any, path: str) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    _pyplot().close(fig)
    print(f"wrote {path}", file=sys.stderr)


# -- layouts ---------------------------------------------------------------------------------

def _parse_nodes(text: str) -> dict[str, float]:
    """'a,b,c' | 'a:2,b:1' | '@file' (one 'name [weight]' per line) -> {name: weight}."""
    if text.startswith("@"):
        path = text[1:]
        try:
            with open(path, encoding="utf-8") as f:
                items = [ln.split() for ln in f if ln.strip() and not ln.startswith("#")]
        except OSError as e:
            raise UserError(f"cannot read node list {path!r}: {e.strerror}") from None
        pairs = [(p[0], p[1] if len(p) > 1 else "1") for p in items]
    else:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        pairs = [tuple(p.rsplit(":", 1)) if ":" in p else (p, "1") for p in parts]  # type: ignore[misc]
    if not pairs:
        raise UserError(f"empty node list {text!r}")
    out: dict[str, float] = {}
    for name, w in pairs:
        try:
            weight = float(w)
        except ValueError:
            raise UserError(f"bad weight {w!r} for node {name!r}") from None
        if name in out:
            raise UserError(f"node {name!r} is listed twice")
        out[name] = weight
    return out


def _layout(spec: str, args: argparse.Namespace) -> HashRing:
    """A ring from a ring-file path or a node list."""
    if not spec.startswith("@") and os.path.exists(spec):
        if os.path.isdir(spec):
            raise UserError(f"{spec!r} is a directory, not a ring file")
        try:
            return ringfile.load(spec)
        except (ValueError, OSError) as e:
            raise UserError(f"{spec}: {e}") from None
    if not spec.startswith("@") and (os.sep in spec or "/" in spec
                                     or spec.endswith((".json", ".ring", ".txt", ".csv"))):
        raise UserError(f"ring file {spec!r} not found (a node list is 'a,b,c')")
    try:
        return HashRing(_parse_nodes(spec), vnodes=args.vnodes, hash=args.hash, seed=args.seed)
    except (TypeError, ValueError) as e:
        raise UserError(str(e)) from None


# -- simulate --------------------------------------------------------------------------------

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


def simulate(n_keys: int, n_nodes: int, vnodes: int, vnode_counts: Sequence[int],
             progress: Progress | None = None) -> dict[str, Any]:
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
        spread.append({"vnodes": v, "lightest": float(counts.min()),
                       "heaviest": float(counts.max()),
                       "ratio": float(counts.max() / counts.min()) if counts.min() else math.inf,
                       "loads": counts.tolist()})
        if progress:
            progress.advance()
    others = []
    for algo_name, make in algos[1:]:
        r = make(names[:n_nodes])
        counts = np.bincount(r.get_indices(keys), minlength=n_nodes) / n_keys
        others.append({"router": algo_name, "lightest": float(counts.min()),
                       "heaviest": float(counts.max()),
                       "ratio": float(counts.max() / counts.min()) if counts.min() else math.inf})
    base_loads = np.bincount(base.lookup(hashes), minlength=n_nodes) / n_keys
    return {"keys": n_keys, "nodes": n_nodes, "vnodes": vnodes, "changes": ring_row,
            "algorithms": changes, "spread": spread, "algorithm_spread": others,
            "loads": dict(zip(base.nodes, base_loads.tolist(), strict=True)),
            "seconds": time.perf_counter() - t0}


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
    if r["algorithm_spread"]:
        print("\nThe other algorithms on the same keys (moved share; load spread)")
        rows = []
        for i, ((name, _), spread) in enumerate(zip(
                [(x["router"], None) for x in r["algorithms"][0]["routers"][1:]],
                r["algorithm_spread"], strict=True)):
            join = r["algorithms"][0]["routers"][i + 1]
            leave = r["algorithms"][1]["routers"][i + 1]
            rows.append([name, _pct(join["moved"]) + ("" if join["only_changed_node"] else " *"),
                         _pct(leave["moved"]) + ("" if leave["only_changed_node"] else " *"),
                         f"{spread['ratio']:.2f}x"])
        print(_table(["router", r["changes"][0]["change"], r["changes"][1]["change"],
                      "heaviest / lightest"], rows))
        if any(" *" in c for row in rows for c in row):
            print("(* some keys moved between nodes that did not change)")
    print(f"\n({r['seconds']:.1f} s)")


def _plot_simulation(r: dict[str, Any], path: str) -> None:
    plt = _pyplot()
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
    _save_figure(fig, path)


def _cmd_simulate(args: argparse.Namespace) -> int:
    if args.nodes < 2:
        raise UserError("--nodes must be at least 2")
    counts = [_positive(x) for x in args.spread_vnodes.split(",")]
    _check_plot_path(args.plot)
    steps = 2 * len(_algorithms([], args.vnodes)) + len(counts)
    progress = Progress(steps, "simulate")
    r = simulate(args.keys, args.nodes, args.vnodes, counts, progress)
    progress.close()
    if args.json:
        for s in r["spread"]:
            s.pop("loads")
        print(_json(r))
    else:
        _print_simulation(r)
    if args.plot:
        _plot_simulation(r, args.plot)
    return 0


# -- plan ------------------------------------------------------------------------------------

def _cmd_plan(args: argparse.Namespace) -> int:
    old, new = _layout(args.old, args), _layout(args.new, args)
    _check_plot_path(args.plot)
    try:
        mv = movement(old, new)
        plan = migration_plan(old, new)
    except ValueError as e:
        raise UserError(str(e)) from None
    if args.format == "json":
        doc = {"old": old.fingerprint(), "new": new.fingerprint(), **mv.to_dict(),
               "ranges": plan.to_dict()["ranges"]}
        print(_json(doc))
    elif args.format == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["start", "end", "from", "to"])
        for start, end, a, b in plan.ranges:
            w.writerow([start, end, a, b])
    else:
        print(f"moved: {_pct(mv.moved)} of the key space (exact), {len(plan)} hash ranges")
        print()
        print(_table(["from", "to", "share"],
                     [[a, b, _pct(s)] for (a, b), s in
                      sorted(mv.flows.items(), key=lambda kv: -kv[1])]))
        if args.ranges:
            print()
            shown = plan.ranges[: args.ranges]
            print(_table(["start", "end", "from", "to"],
                         [[f"{s:#018x}", f"{e:#018x}", a, b] for s, e, a, b in shown]))
            if len(plan) > len(shown):
                print(f"... {len(plan) - len(shown)} more (use --format csv for all)")
    if args.plot:
        plt = _pyplot()
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
        flows = sorted(mv.flows.items(), key=lambda kv: -kv[1])[:20]
        ax[1].barh([f"{a} -> {b}" for (a, b), _ in flows][::-1],
                   [100 * s for _, s in flows][::-1], color="#cc6677")
        ax[1].set_title(f"Movement: {_pct(mv.moved)} of keys")
        ax[1].set_xlabel("% of key space")
        _save_figure(fig, args.plot)
    return 0


# -- assign ----------------------------------------------------------------------------------

def _read_keys(args: argparse.Namespace) -> Iterator[list[str]]:
    """Keys in batches, from text lines, a CSV column or a Parquet column."""
    src = args.input
    fmt = args.input_format
    if fmt == "auto":
        fmt = ("parquet" if src.endswith(".parquet") else
               "csv" if src.endswith(".csv") else "text")
    if fmt == "parquet":
        if src == "-":
            raise UserError("Parquet input must be a file, not stdin")
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise UserError("Parquet input needs pyarrow: pip install pyarrow") from None
        try:
            pf = pq.ParquetFile(src)
        except (OSError, ValueError) as e:
            raise UserError(f"{src}: {e}") from None
        col = args.column or pf.schema_arrow.names[0]
        if col not in pf.schema_arrow.names:
            raise UserError(f"{src}: no column {col!r} (columns: {pf.schema_arrow.names})")
        for record_batch in pf.iter_batches(batch_size=args.batch, columns=[col]):
            yield record_batch.column(0).to_pylist()
        return
    try:
        f = sys.stdin if src == "-" else open(src, encoding="utf-8", newline="")
    except OSError as e:
        raise UserError(f"cannot read {src!r}: {e.strerror}") from None
    with f:
        if fmt == "csv":
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                return
            col = args.column or header[0]
            if col not in header:
                raise UserError(f"{src}: no column {col!r} (columns: {header})")
            j = header.index(col)
            batch: list[str] = []
            for row in reader:
                if len(row) <= j:
                    raise UserError(f"{src}: line {reader.line_num} has no column {col!r}")
                batch.append(row[j])
                if len(batch) >= args.batch:
                    yield batch
                    batch = []
            if batch:
                yield batch
        else:
            batch = []
            for line in f:
                batch.append(line.rstrip("\r\n"))
                if len(batch) >= args.batch:
                    yield batch
                    batch = []
            if batch:
                yield batch


def _cmd_assign(args: argparse.Namespace) -> int:
    if (args.ring is None) == (args.nodes is None):
        raise UserError("give exactly one of --ring FILE or --nodes LIST")
    ring = _layout(args.ring if args.ring is not None else args.nodes, args)
    if len(ring) == 0:
        raise UserError("the layout has no nodes")
    fmt = args.input_format
    if fmt == "auto":
        fmt = ("parquet" if args.input.endswith(".parquet") else
               "csv" if args.input.endswith(".csv") else "text")
    if args.column is not None and fmt == "text":
        raise UserError("--column applies to CSV and Parquet input, not text lines")
    args.input_format = fmt
    total = os.path.getsize(args.input) if args.input != "-" and os.path.isfile(args.input) else 0
    progress = Progress(total, "assign")
    batches = _read_keys(args)
    # Read and route the first batch before any output is opened or written, so that a bad
    # input or column is reported without clobbering an existing output file.
    first = next(batches, [])
    routed = _route_batch(ring, first)
    tmp = None
    if args.output in (None, "-"):
        out: TextIO = sys.stdout
    else:
        tmp = f"{args.output}.tmp{os.getpid()}"
        try:
            out = open(tmp, "w", encoding="utf-8", newline="")
        except OSError as e:
            raise UserError(f"cannot write {args.output!r}: {e.strerror}") from None
    ok = False
    try:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["key", "node"])
        batch = first
        while batch:
            w.writerows(zip(batch, routed, strict=True))
            progress.advance(sum(len(k) + 1 for k in batch if isinstance(k, str)))
            batch = next(batches, [])
            routed = _route_batch(ring, batch)
        ok = True
    finally:
        progress.close()
        if tmp is not None:
            out.close()
            if ok:
                os.replace(tmp, args.output)
            else:
                os.unlink(tmp)
    return 0


def _route_batch(ring: HashRing, batch: list[Any]) -> list[str]:
    if not batch:
        return []
    try:
        return ring.get_many(batch).tolist()  # type: ignore[no-any-return]
    except (TypeError, ValueError) as e:
        raise UserError(str(e)) from None


# -- inspect / ring --------------------------------------------------------------------------

def _cmd_inspect(args: argparse.Namespace) -> int:
    ring = _layout(args.file, args)
    _check_plot_path(args.plot)
    b = balance(ring)
    counts = np.bincount(ring.owners, minlength=len(ring))
    if args.json:
        print(_json({"kind": "HashRing", "hash": ring.hash_name, "seed": ring.seed,
                          "vnodes": ring.vnodes, "fingerprint": ring.fingerprint(),
                          "positions": len(ring.positions),
                          "nodes": [{"node": n, "weight": ring.weights[n],
                                     "vnodes": int(c), "share": b.shares[n]}
                                    for n, c in zip(ring.nodes, counts, strict=True)],
                          "balance": {k: v for k, v in b.to_dict().items() if k != "shares"}}))
    else:
        print(f"HashRing: {len(ring)} nodes, {len(ring.positions)} positions, hash "
              f"{ring.hash_name}, seed {ring.seed}, {ring.vnodes} vnodes per unit weight")
        print(f"fingerprint {ring.fingerprint()}\n")
        print(_table(["node", "weight", "vnodes", "share"],
                     [[n, f"{ring.weights[n]:g}", str(int(c)), _pct(b.shares[n])]
                      for n, c in zip(ring.nodes, counts, strict=True)]))
        exp = b.expected_max_over_mean
        print(f"\nmax/mean {b.max_over_mean:.3f} (typical for this layout: "
              f"{exp:.3f}), max/min {b.max_over_min:.3f}, cv {b.cv:.3f}")
    if args.plot:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(max(6, 0.4 * len(ring)), 4.5))
        ax.bar(list(ring.nodes), [100 * b.shares[n] for n in ring.nodes], color="#4477aa")
        ax.set_title("Load per node")
        ax.set_ylabel("% of key space")
        ax.tick_params(axis="x", rotation=45)
        _save_figure(fig, args.plot)
    return 0


def _cmd_ring(args: argparse.Namespace) -> int:
    ring = _layout(args.nodes, args)
    if args.output in (None, "-"):
        sys.stdout.write(ringfile.dumps(ring))
    else:
        try:
            ringfile.save(ring, args.output)
        except OSError as e:
            raise UserError(f"cannot write {args.output!r}: {e.strerror}") from None
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.what != "memcached":
        raise UserError(f"unknown demo {args.what!r} (available: memcached)")
    try:
        import pymemcache  # noqa: F401
    except ImportError:
        raise UserError("the memcached demo needs pymemcache: pip install pymemcache") from None
    from consistent_hash.cli._servers import ServerError
    from consistent_hash.cli.demo import memcached_demo

    progress = Progress(4, "demo")
    try:
        r = memcached_demo(args.keys, args.servers, progress.advance)
    except ServerError as e:
        raise UserError(str(e)) from None
    finally:
        progress.close()
    if args.json:
        print(_json(r))
        return 0
    n = r["servers"]
    print(f"{r['keys']:,} keys written through pymemcache's HashClient to {n} real memcached "
          f"servers on 127.0.0.1, then read back after the pool changed\n")
    print(_table(["client hasher", f"{n} -> {n + 1}: keys still found",
                  f"{n} -> {n - 1}: keys still found"],
                 [[x["hasher"], _pct(x["join_kept"]), _pct(x["leave_kept"])]
                  for x in r["results"]]
                 + [["ideal", _pct(r["ideal_join_kept"]), _pct(r["ideal_leave_kept"])]]))
    print(f"\n({r['seconds']:.1f} s)")
    return 0


# -- argument parsing ------------------------------------------------------------------------

def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {v}")
    return v


def _non_negative(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {v}")
    return v


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2, no usage dump
        raise UserError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="consistent-hash", description=__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"consistent_hash {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    def layout_options(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--vnodes", type=_positive, default=160,
                        help="vnodes per unit weight, for node lists (160)")
        sp.add_argument("--hash", default="xxh3", choices=["xxh3", "xxh64", "murmur3", "md5"],
                        help="hash for node lists (xxh3)")
        sp.add_argument("--seed", type=int, default=0, help="hash seed for node lists (0)")

    s = sub.add_parser("simulate", help="keys moved and load spread: modulo vs the ring")
    s.add_argument("--keys", type=_positive, default=1_000_000, help="keys (1,000,000)")
    s.add_argument("--nodes", type=_positive, default=8, help="nodes before the change (8)")
    s.add_argument("--vnodes", type=_positive, default=160, help="vnodes per node (160)")
    s.add_argument("--spread-vnodes", default="1,10,100,160,500",
                   help="comma-separated vnode counts for the load table")
    s.add_argument("--json", action="store_true", help="print the figures as JSON")
    s.add_argument("--plot", metavar="PNG", help="draw load, movement and balance to a PNG")

    pl = sub.add_parser("plan", help="moved share, flows and hash ranges between two layouts")
    pl.add_argument("old", help="ring file or node list")
    pl.add_argument("new", help="ring file or node list")
    layout_options(pl)
    pl.add_argument("--format", choices=["table", "json", "csv"], default="table")
    pl.add_argument("--ranges", type=_non_negative, default=10, metavar="N",
                    help="hash ranges to list in the table (10; 0 for none)")
    pl.add_argument("--plot", metavar="PNG", help="draw load per node and flows to a PNG")

    a = sub.add_parser("assign", help="route keys to nodes: key,node CSV")
    a.add_argument("input", nargs="?", default="-", help="keys file, or - for stdin")
    a.add_argument("--ring", help="ring file")
    a.add_argument("--nodes", help="node list")
    layout_options(a)
    a.add_argument("--input-format", choices=["auto", "text", "csv", "parquet"], default="auto")
    a.add_argument("--column", help="key column for CSV / Parquet (default: the first)")
    a.add_argument("-o", "--output", help="output file (default stdout)")
    a.add_argument("--batch", type=_positive, default=100_000, help=argparse.SUPPRESS)

    i = sub.add_parser("inspect", help="summarise a ring file (or node list)")
    i.add_argument("file")
    layout_options(i)
    i.add_argument("--json", action="store_true")
    i.add_argument("--plot", metavar="PNG", help="draw load per node to a PNG")

    d = sub.add_parser("demo", help="demo memcached: hit rates on real servers")
    d.add_argument("what", help="memcached")
    d.add_argument("--keys", type=_positive, default=100_000, help="keys (100,000)")
    d.add_argument("--servers", type=_positive, default=8, help="servers before the change (8)")
    d.add_argument("--json", action="store_true")

    r = sub.add_parser("ring", help="write a ring file for a node list")
    r.add_argument("nodes", help="node list")
    layout_options(r)
    r.add_argument("-o", "--output", help="output file (default stdout)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "simulate")  # the default command takes its options directly
    handlers = {"simulate": _cmd_simulate, "plan": _cmd_plan, "assign": _cmd_assign,
                "inspect": _cmd_inspect, "ring": _cmd_ring, "demo": _cmd_demo}
    try:
        args = _parser().parse_args(argv)
        return handlers[args.command](args)
    except UserError as e:
        print(f"consistent-hash: error: {e}", file=sys.stderr)
        return 2
    except argparse.ArgumentTypeError as e:
        print(f"consistent-hash: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # e.g. `consistent-hash assign ... | head`: stop quietly, like other CLI tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("consistent-hash: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
