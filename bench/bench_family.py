"""The whole consistent-hashing family side by side, the way the field measures it (the SUPSI
java-consistent-hashing-algorithms benchmark's setup: lookup time over cluster sizes, with and
without removed buckets, memory, balance, monotonicity), in one process.

    python bench/bench_family.py [--quick] [--keys N] [--runs R] [--json out.json]
                                 [--svg docs/figures-family/lookup.svg]

- lookup: ns/key of ``router.lookup(h)`` (threads=1) over N (default 1,000,000) random uint64
  hashes, at cluster sizes 10 .. 10^6; best of R runs.  "90% removed": the router built with
  ten times the nodes and 90% of them removed in random order (routers that allow any
  removal), each result checked against the same router's scalar path first.  The bare
  bucket functions (``jumpback_bucket`` and its siblings) are timed beside ``JumpHash.lookup``.
- memory: bytes of the lookup state (the core's arrays; the node names every router keeps are
  left out) per bucket, at 1,000 buckets.
- balance: min and max load x n / keys over 1,000 x n keys (n = 10 .. 10^4).
- monotonicity: the share of 100 x n keys (n = 1,000) that move when 10%, 30%, 50% of the
  buckets are removed (random order where allowed, else the last ones), over the ideal (the
  removed share; 1.00 is minimal); every moved key must have been on a removed bucket.

The checks of issue 22 (jumpback >= 8x JumpHash at 1,000 buckets and >= 10x at 10^6; FlipHash
and PowerHash within 1.5x of JumpBack) are printed after the tables, from the same run, with
each removal-capable router's 90%-removed / 0% ratio.  The issue asked for that ratio within 3x;
for AnchorHash, DxHash and JumpBackAnchor that cannot be (a 90% lookup is several dependent
reads where the 0% one is one; their originals measure 15-42x), so their check is against the
originals instead, measured by hand and recorded in the README: at 90% removed, ours is no
slower than the reference's C++ / Java on the same state and keys.  Those rows say "replaced".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_algorithms import _best_ns as best_ns  # noqa: E402  (best of runs, ns per key)

import consistent_hash  # noqa: E402
import consistent_hash.algorithms as alg  # noqa: E402
from consistent_hash import HashRing  # noqa: E402

SIZES = [10, 100, 1_000, 10_000, 100_000, 1_000_000]


def names(n: int) -> list[str]:
    return [f"node-{i}" for i in range(n)]


def _maglev(n: int) -> alg.Maglev:
    from consistent_hash.algorithms.maglev import _next_prime
    return alg.Maglev(names(n), table_size=_next_prime(max(101 * n, 1009)))


# name -> (build with n nodes, the largest n it is run at, removal: "any" or "lifo", old/new)
ALGOS: dict[str, tuple[Callable[[int], Any], int, str, str]] = {
    "HashRing (160 vnodes)": (lambda n: HashRing(names(n)), 100_000, "any", "old"),
    "JumpHash (Guava)": (lambda n: alg.JumpHash(names(n)), 1_000_000, "lifo", "old"),
    "Rendezvous": (lambda n: alg.Rendezvous(names(n)), 1_000, "any", "old"),
    "Maglev (M ~ 101 n)": (_maglev, 100_000, "any", "old"),
    "MultiProbe (21 probes)": (lambda n: alg.MultiProbe(names(n)), 1_000_000, "any", "old"),
    "MementoHash": (lambda n: alg.MementoHash(names(n)), 1_000_000, "any", "old"),
    "JumpBackHash": (lambda n: alg.JumpBackHash(names(n)), 1_000_000, "lifo", "new"),
    "FlipHash": (lambda n: alg.FlipHash(names(n)), 1_000_000, "lifo", "new"),
    "PowerHash": (lambda n: alg.PowerHash(names(n)), 1_000_000, "lifo", "new"),
    "BinomialHash": (lambda n: alg.BinomialHash(names(n)), 1_000_000, "lifo", "new"),
    "AnchorHash": (lambda n: alg.AnchorHash(names(n), capacity=n), 1_000_000, "any", "new"),
    "DxHash": (lambda n: alg.DxHash(names(n), capacity=n), 1_000_000, "any", "new"),
    "JumpBackAnchorHash": (lambda n: alg.JumpBackAnchorHash(names(n)), 1_000_000, "any", "new"),
}

# The slot routers built directly in their removed state (one from_state instead of 0.9 x 10 n
# removals): n working of 10 n slots, removed in a random order.
SLOTTED = {"MementoHash": alg.MementoHash, "AnchorHash": alg.AnchorHash, "DxHash": alg.DxHash,
           "JumpBackAnchorHash": alg.JumpBackAnchorHash}


def with_removed(algo: str, n: int, rng: random.Random) -> Any:
    """A router of algo with n working nodes left after removing 90% of 10 n in random order,
    built with one from_state; None for the routers whose state keeps no trace of removals
    (a node-set router without the removed nodes is the same router as one built without
    them) and for the LIFO ones."""
    if algo not in SLOTTED:
        return None
    total = 10 * n
    order = list(range(total))
    rng.shuffle(order)
    removed = order[: total - n]
    slots: list[str | None] = list(names(total))
    for b in removed:
        slots[b] = None
    return SLOTTED[algo].from_state(slots, removed)


def checked_lookup_ns(r: Any, h: np.ndarray, runs: int) -> float:
    """ns/key of r.lookup(h, threads=1), after checking it against the scalar path."""
    got = r.lookup(h, threads=1)
    idx = np.linspace(0, len(h) - 1, 200).astype(np.int64)
    core = r._core
    for i in idx:
        assert got[i] == core.index_of_hash(int(h[i])), (type(r).__name__, i)
    assert ((got >= 0) & (got < len(r))).all()
    return best_ns(lambda: r.lookup(h, threads=1), len(h), runs)


def state_bytes(r: Any) -> int:
    """The bytes of a router's lookup state: every NumPy array its snapshot holds."""
    core = r._core
    total = 0
    for attr in ("positions", "owners", "prefix", "table", "replacers", "slot_node", "A_array",
                 "K_array", "bits", "ka_array", "node_hash", "inv_weights"):
        v = getattr(core, attr, None)
        if isinstance(v, np.ndarray):
            total += v.nbytes
    return total


def lookup_table(h: np.ndarray, sizes: list[int], runs: int, rng: random.Random
                 ) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for algo, (make, top, _, _) in ALGOS.items():
        row: dict[str, float | None] = {}
        for n in sizes:
            key = str(n)
            if n > top:
                row[key] = row[key + "r"] = None
                continue
            row[key] = checked_lookup_ns(make(n), h, runs)
            removed = with_removed(algo, n, rng) if 10 * n <= top else None
            row[key + "r"] = None if removed is None else checked_lookup_ns(removed, h, runs)
            print(f"  lookup {algo} n={n}: {row[key]:.2f}"
                  + ("" if row[key + 'r'] is None else f" / 90% removed {row[key + 'r']:.2f}"),
                  file=sys.stderr)
        out[algo] = row
    return out


def functions_table(h: np.ndarray, runs: int) -> dict[str, dict[int, float]]:
    """The bare bucket functions beside JumpHash.lookup, at 1,000 and 10^6 buckets, in
    alternating runs of one process."""
    fns: dict[str, Callable[[int], Any]] = {
        "jumpback_bucket": lambda n: alg.jumpback_bucket(h, n, threads=1),
        "fliphash_bucket": lambda n: alg.fliphash_bucket(h, n, threads=1),
        "power_bucket": lambda n: alg.power_bucket(h, n, threads=1),
        "binomial_bucket": lambda n: alg.binomial_bucket(h, n, threads=1),
    }
    out: dict[str, dict[int, float]] = {k: {} for k in ["JumpHash.lookup", *fns]}
    for n in (1_000, 1_000_000):
        jh = alg.JumpHash(names(n))
        assert np.array_equal(alg.jumpback_bucket(h[:1000], n), alg.JumpBackHash(names(n)).lookup(
            h[:1000]))
        best = {k: float("inf") for k in out}
        for _ in range(runs):
            t = time.perf_counter()
            jh.lookup(h, threads=1)
            best["JumpHash.lookup"] = min(best["JumpHash.lookup"], time.perf_counter() - t)
            for k, fn in fns.items():
                t = time.perf_counter()
                fn(n)
                best[k] = min(best[k], time.perf_counter() - t)
        for k in out:
            out[k][n] = best[k] * 1e9 / len(h)
    return out


def balance_table(rng: np.random.Generator, sizes: list[int]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for algo, (make, top, _, _) in ALGOS.items():
        row = {}
        for n in sizes:
            if n > top:
                row[str(n)] = None
                continue
            r = make(n)
            keys = 1000 * n
            counts = np.zeros(n, dtype=np.int64)
            for start in range(0, keys, 2_000_000):
                m = min(2_000_000, keys - start)
                counts += np.bincount(r.lookup(rng.integers(0, 2**64, m, dtype=np.uint64)),
                                      minlength=n)
            row[str(n)] = (float(counts.min() * n / keys), float(counts.max() * n / keys))
        out[algo] = row
    return out


def monotonicity_table(rng: np.random.Generator, n: int) -> dict[str, dict[str, float]]:
    h = rng.integers(0, 2**64, 100 * n, dtype=np.uint64)
    out: dict[str, dict[str, float]] = {}
    for algo, (make, top, removal, _) in ALGOS.items():
        if n > top:
            continue
        row = {}
        for frac in (0.1, 0.3, 0.5):
            r = make(n)
            before = np.asarray(r.nodes, dtype=object)[r.lookup(h)]
            k = int(frac * n)
            order = list(r.nodes)
            if removal == "any":
                random.Random(int(frac * 100)).shuffle(order)
                gone = order[:k]
            else:
                gone = order[n - k:][::-1]
            for node in gone:
                r.remove(node)
            after = np.asarray(r.nodes, dtype=object)[r.lookup(h)]
            moved = before != after
            others = float((moved & ~np.isin(before, gone)).mean())  # keys of kept buckets
            if algo not in ("Maglev (M ~ 101 n)",):  # Maglev's table shifts some others' keys
                assert others == 0.0, algo
            row[f"{int(frac * 100)}%"] = float(moved.mean() / frac)
            row[f"{int(frac * 100)}% others"] = others
        out[algo] = row
    return out


def memory_row(n: int = 1_000) -> dict[str, float]:
    return {algo: state_bytes(make(n)) / n for algo, (make, _, _, _) in ALGOS.items()}


def fmt(v: float | None, spec: str = ".1f") -> str:
    return "—" if v is None else format(v, spec)


def report(res: dict[str, Any], sizes: list[int]) -> str:
    lines = [f"Machine: {res['machine']}; CPython {res['python']}, NumPy {res['numpy']}; "
             f"{res['keys']:,} random uint64 hashes per lookup, best of {res['runs']} runs, "
             "threads=1.", ""]
    lines.append("Lookup, ns/key (`router.lookup`; in brackets: with 90% of 10 n buckets removed "
                 "in random order, n left):")
    lines.append("")
    lines.append("| algorithm | " + " | ".join(f"{n:,}" for n in sizes) + " |")
    lines.append("|---|" + "---:|" * len(sizes))
    for algo, row in res["lookup"].items():
        cells = []
        for n in sizes:
            v, vr = row.get(str(n)), row.get(f"{n}r")
            cells.append(fmt(v) + ("" if vr is None else f" ({vr:.1f})"))
        lines.append(f"| {algo} | " + " | ".join(cells) + " |")
    lines += ["", "Bare bucket functions beside `JumpHash.lookup` (alternating runs), ns/key:", "",
              "| call | 1,000 buckets | 1,000,000 buckets |", "|---|---:|---:|"]
    for k, row in res["functions"].items():
        lines.append(f"| `{k}` | {row['1000']:.2f} | {row['1000000']:.2f} |")
    lines += ["", "Memory of the lookup state per bucket (1,000 buckets; names left out), bytes:",
              "", "| algorithm | bytes/bucket |", "|---|---:|"]
    for algo, v in res["memory"].items():
        lines.append(f"| {algo} | {v:.1f} |")
    bsizes = sorted({int(k) for row in res["balance"].values() for k in row})
    lines += ["", "Balance: min / max load x n / keys over 1,000 x n keys:", "",
              "| algorithm | " + " | ".join(f"n = {n:,}" for n in bsizes) + " |",
              "|---|" + "---:|" * len(bsizes)]
    for algo, row in res["balance"].items():
        cells = ["—" if row.get(str(n)) is None else f"{row[str(n)][0]:.3f} / {row[str(n)][1]:.3f}"
                 for n in bsizes]
        lines.append(f"| {algo} | " + " | ".join(cells) + " |")
    lines += ["", f"Monotonicity: keys moved / the ideal when 10%, 30%, 50% of "
              f"{res['mono_n']:,} buckets are removed (random order; LIFO ones: the last); in "
              "brackets, the share of all keys that moved although their bucket stayed:", "",
              "| algorithm | 10% | 30% | 50% |", "|---|---:|---:|---:|"]
    for algo, row in res["monotonicity"].items():
        cells = [f"{row[p]:.3f}" + (f" ({row[p + ' others']:.3f})" if row[p + " others"] else "")
                 for p in ("10%", "30%", "50%")]
        lines.append(f"| {algo} | " + " | ".join(cells) + " |")
    lines += ["", "Checks (issue 22):", "", "| check | measured | met |", "|---|---|---|"]
    for c in res["checks"]:
        met = "replaced" if c["ok"] is None else "yes" if c["ok"] else "NO"
        lines.append(f"| {c['check']} | {c['measured']} | {met} |")
    return "\n".join(lines) + "\n"


def checks(res: dict[str, Any], sizes: list[int]) -> list[dict[str, Any]]:
    out = []
    f = res["functions"]
    for n, want in (("1000", 8.0), ("1000000", 10.0)):
        ratio = f["JumpHash.lookup"][n] / f["jumpback_bucket"][n]
        out.append({"check": f"jumpback_bucket >= {want:g}x JumpHash.lookup at n = {int(n):,}",
                    "measured": f"{ratio:.1f}x", "ok": ratio >= want})
    for other in ("fliphash_bucket", "power_bucket"):
        worst = max(f[other][n] / f["jumpback_bucket"][n] for n in ("1000", "1000000"))
        out.append({"check": f"{other} within 1.5x of jumpback_bucket",
                    "measured": f"{worst:.2f}x (worse of 1,000 and 10^6)", "ok": worst <= 1.5})
    for algo in ("AnchorHash", "DxHash", "JumpBackAnchorHash", "MementoHash"):
        row = res["lookup"][algo]
        ratios = [row[f"{n}r"] / row[str(n)] for n in sizes
                  if row.get(f"{n}r") is not None and row.get(str(n)) is not None]
        if not ratios:
            continue
        if algo in REPLACED_BY_ORIGINALS:
            out.append({"check": f"{algo}: 90% removed / 0% (the issue's 3x: replaced by the "
                                 "comparison with the original, below)",
                        "measured": f"{max(ratios):.2f}x (worst size)", "ok": None})
        else:
            out.append({"check": f"{algo}: 90% removed within 3x of 0%",
                        "measured": f"{max(ratios):.2f}x (worst size)", "ok": max(ratios) <= 3})
    return out


# the removal-capable routers whose 90%-removed check is against their original implementation
# (by hand, README "Against the originals"), since within 3x of 0% is not attainable for them
REPLACED_BY_ORIGINALS = ("AnchorHash", "DxHash", "JumpBackAnchorHash")


def plot(res: dict[str, Any], sizes: list[int], path: Path) -> None:
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams["svg.hashsalt"] = "consistent_hash"  # reproducible ids
    fig, ax = plt.subplots(figsize=(8, 5))
    for algo, row in res["lookup"].items():
        xs = [n for n in sizes if row.get(str(n)) is not None]
        style = "-" if ALGOS[algo][3] == "new" else "--"
        ax.plot(xs, [row[str(n)] for n in xs], style, marker="o", markersize=3, label=algo)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("cluster size (buckets)")
    ax.set_ylabel("lookup, ns/key (1M pre-hashed keys, 1 thread)")
    ax.set_title("The consistent-hashing family, one process (solid: the modern family)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def run(keys: int, runs: int, quick: bool) -> dict[str, Any]:
    sizes = SIZES[:3] if quick else SIZES
    rng = np.random.default_rng(22)
    h = rng.integers(0, 2**64, keys, dtype=np.uint64)
    res: dict[str, Any] = {
        "machine": f"{platform.machine()} {os.cpu_count()} vCPU {platform.processor() or ''}"
                   .strip(),
        "python": platform.python_version(), "numpy": np.__version__,
        "consistent_hash": consistent_hash.__version__, "keys": keys, "runs": runs}
    res["lookup"] = lookup_table(h, sizes, runs, random.Random(22))
    res["functions"] = {k: {str(n): v for n, v in row.items()}
                        for k, row in functions_table(h, runs).items()}
    res["memory"] = memory_row()
    res["balance"] = balance_table(rng, [10, 100] if quick else [10, 100, 1_000, 10_000])
    res["mono_n"] = 100 if quick else 1_000
    res["monotonicity"] = monotonicity_table(rng, res["mono_n"])
    res["checks"] = checks(res, sizes)
    res["sizes"] = sizes
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="sizes up to 1,000, 100,000 keys")
    p.add_argument("--keys", type=int, default=None)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--svg", type=Path, default=None, help="write the lookup plot here")
    a = p.parse_args(argv)
    keys = a.keys or (100_000 if a.quick else 1_000_000)
    res = run(keys, a.runs, a.quick)
    print(report(res, res["sizes"]))
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    if a.svg:
        plot(res, res["sizes"], a.svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
