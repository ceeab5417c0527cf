"""Benchmark every algorithm class: batch lookups of 1,000,000 keys (pre-hashed uint64 and a
list of str) and the scalar get, in one process, printing a markdown table.

    python bench/bench_algorithms.py [--keys N] [--repeat R] [--json] [--percall]

Each batch figure is the median of R runs (default 7) of one call over all keys, in ns per
key; the scalar figure is the median over R runs of 100,000 get() calls, in ns per call.
Every result is checked against a second path (scalar get or a reference kernel) before it
counts.  Absolute times drift on a shared machine: compare rows measured in one run.

The per-call ratios (printed after the table; alone with --percall) compare, in one process,
each best of R runs: a BoundedLoad acquire + release pair against a scalar HashRing.get,
BoundedLoad.assign_indices against get_indices on the same keys, and HashRing add + remove of
one node on a 100-node ring against a bare np.insert + np.delete of the same 160 positions
(the uint64 positions only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# Benchmark the checkout this file sits in (built in place), not some installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import consistent_hash  # noqa: E402
from consistent_hash import BoundedLoad, HashRing  # noqa: E402
from consistent_hash._ring import _jump_batch, _jump_paper_batch, _jump_ref_batch  # noqa: E402
from consistent_hash.algorithms import JumpHash, Maglev, MementoHash, MultiProbe, Rendezvous  # noqa: E402


def _median_ns(fn: Callable[[], Any], count: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e9 / count


def _best_ns(fn: Callable[[], Any], count: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e9 / count


def percall(n_keys: int, repeat: int) -> list[dict[str, Any]]:
    """The per-call paths against their baselines (ours / baseline, best of repeat each)."""
    rows = []
    strs = [f"user:{i}" for i in range(n_keys)]
    ring = HashRing(_names(100))
    scalar = strs[:100_000]
    get = ring.get
    t_get = _best_ns(lambda: [get(k) for k in scalar], len(scalar), repeat)
    bl = BoundedLoad(ring, c=1.25)
    acq, rel = bl.acquire, bl.release

    def pairs() -> None:
        for k in scalar:
            rel(acq(k))
    pairs()
    assert bl.loads == {}
    t_pair = _best_ns(pairs, len(scalar), repeat)
    rows.append({"case": "BoundedLoad acquire + release (ns/pair) vs HashRing.get (ns)",
                 "ours": t_pair, "base": t_get, "target": 4.0})
    t_idx = _best_ns(lambda: ring.get_indices(strs), n_keys, repeat)
    t_asg = _best_ns(lambda: bl.assign_indices(strs), n_keys, repeat)
    rows.append({"case": f"assign_indices vs get_indices, {n_keys:,} str keys (ns/key)",
                 "ours": t_asg, "base": t_idx, "target": 3.0})
    r100 = HashRing(_names(100))
    pos = r100.positions.copy()
    r100.add("node-new")
    new = r100.owners == r100.nodes.index("node-new")
    at = np.flatnonzero(new)  # where the new positions sit in the grown ring
    ins = at - np.arange(len(at))  # their insertion points in the old ring
    new_pos = r100.positions[new]
    r100.remove("node-new")
    grown = np.insert(pos, ins, new_pos)
    assert np.array_equal(grown, HashRing(_names(100) + ["node-new"]).positions)
    assert np.array_equal(np.delete(grown, at), pos)

    def churn() -> None:
        r100.add("node-new")
        r100.remove("node-new")

    def numpy_churn() -> None:  # the bare array work: the positions only
        np.delete(np.insert(pos, ins, new_pos), at)
    t_ch = _best_ns(churn, 1, repeat * 20)
    t_np = _best_ns(numpy_churn, 1, repeat * 20)
    rows.append({"case": "add + remove one node, 100 nodes x 160 vnodes (ns) vs np.insert + "
                 "np.delete of the same positions", "ours": t_ch, "base": t_np, "target": 2.0})
    return rows


def percall_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| per-call path vs baseline | ours | baseline | ratio | target |",
             "|---|---:|---:|---:|---|"]
    for r in rows:
        ratio = r["ours"] / r["base"]
        lines.append(f"| {r['case']} | {_fmt(r['ours'])} | {_fmt(r['base'])} | {ratio:.2f}x | "
                     f"<= {r['target']:g}x: {'met' if ratio <= r['target'] else 'missed'} |")
    return "\n".join(lines)


def _names(n: int) -> list[str]:
    return [f"node-{i}" for i in range(n)]


def _memento(n: int, removed: float) -> MementoHash:
    mh = MementoHash(_names(n))
    rng = np.random.default_rng(0)
    for i in rng.choice(n - 1, size=int(n * removed), replace=False).tolist():
        mh.remove(f"node-{i}")
    return mh


def cases() -> list[tuple[str, str, Callable[[], Any], str, int]]:
    """(algorithm, configuration, factory, target, nodes)."""
    return [
        ("HashRing", "100 nodes x 160 vnodes", lambda: HashRing(_names(100)), "", 100),
        ("JumpHash", "10 buckets", lambda: JumpHash(_names(10)), "", 10),
        ("JumpHash", "1,000 buckets", lambda: JumpHash(_names(1000)), "<= 50 ns", 1000),
        ("JumpHash", "100,000 buckets", lambda: JumpHash(_names(100_000)), "", 100_000),
        ("Rendezvous", "10 nodes", lambda: Rendezvous(_names(10)), "<= 1.5 ns/node", 10),
        ("Rendezvous", "100 nodes", lambda: Rendezvous(_names(100)), "<= 1.5 ns/node", 100),
        ("Rendezvous", "10 nodes, weighted",
         lambda: Rendezvous({n: 1.0 + i % 3 for i, n in enumerate(_names(10))}), "", 10),
        ("Maglev", "100 nodes, M = 65,537", lambda: Maglev(_names(100)), "<= 5 ns", 100),
        ("Maglev", "1,000 nodes, M = 655,373",
         lambda: Maglev(_names(1000), table_size=655_373), "<= 5 ns", 1000),
        ("MultiProbe", "100 nodes, 21 probes", lambda: MultiProbe(_names(100)), "", 100),
        ("MementoHash", "1,000 nodes, none removed", lambda: _memento(1000, 0.0),
         "<= 2x Jump", 1000),
        ("MementoHash", "1,000 slots, 10% removed", lambda: _memento(1000, 0.10),
         "<= 2x Jump", 1000),
    ]


def run(n_keys: int, repeat: int) -> dict[str, Any]:
    rng = np.random.default_rng(42)
    hashes = rng.integers(0, 2**64, size=n_keys, dtype=np.uint64)
    strs = [f"user:{i}" for i in range(n_keys)]
    scalar_keys = strs[:100_000]
    out = np.empty(n_keys, dtype=np.int32)
    rows = []
    for algo, config, factory, target, nodes in cases():
        obj = factory()
        # correctness before timing: batch == scalar on a sample, both paths
        sample = strs[:2000]
        assert obj.get_many(sample).tolist() == [obj.get(k) for k in sample], algo
        assert np.array_equal(obj.lookup(obj.hash_many(sample)), obj.get_indices(sample))
        t_hash = _median_ns(lambda o=obj: o.lookup(hashes, out), n_keys, repeat)
        t_str = _median_ns(lambda o=obj: o.get_indices(strs, out), n_keys, repeat)
        t_get = _median_ns(lambda o=obj: [o.get(k) for k in scalar_keys], len(scalar_keys),
                           max(3, repeat // 2))
        rows.append({"algorithm": algo, "config": config, "uint64": t_hash, "str": t_str,
                     "get": t_get, "target": target, "nodes": nodes})
    # the plain C loop of the jump hash paper, beside Guava's formulation and ours
    for n in (1000,):
        ref = _jump_ref_batch(hashes[:100_000], n)
        assert np.array_equal(_jump_batch(hashes[:100_000], n), ref)
        for label, fn in (("paper's plain C loop", _jump_paper_batch),
                          ("Guava's formulation, plain loop", _jump_ref_batch),
                          ("ours (lane-interleaved)", _jump_batch)):
            t = _median_ns(lambda f=fn, n=n: f(hashes, n), n_keys, repeat)
            rows.append({"algorithm": "jump kernel", "config": f"{label}, {n:,} buckets",
                         "uint64": t, "str": None, "get": None, "target": "", "nodes": n})
    # bounded loads: one pass over all keys, placing each under the bound
    for algo, router in (("BoundedLoad", HashRing(_names(100))),
                         ("BoundedLoad", Maglev(_names(100)))):
        bl = BoundedLoad(router, c=1.25)
        t_str = _median_ns(lambda b=bl: b.assign_indices(strs), n_keys, max(3, repeat // 2))
        t_get = _median_ns(lambda b=bl: [b.acquire(k) for k in scalar_keys[:20_000]],
                           20_000, 3)
        rows.append({"algorithm": algo, "config": f"over {type(router).__name__}, 100 nodes, "
                     "c = 1.25 (get: acquire)", "uint64": None, "str": t_str, "get": t_get,
                     "target": "", "nodes": 100})
    return {"rows": rows, "keys": n_keys, "repeat": repeat, "machine": _machine()}


def _machine() -> dict[str, str]:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cpus": str(os.cpu_count()), "os": platform.platform(),
            "python": sys.version.split()[0], "numpy": np.__version__,
            "consistent_hash": consistent_hash.__version__}


def _fmt(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def _verdict(row: dict[str, Any], jump_ns: float | None) -> str:
    t, target = row["uint64"], row["target"]
    if not target or t is None:
        return ""
    if target == "<= 50 ns":
        ok = t <= 50
    elif target == "<= 5 ns":
        ok = t <= 5
    elif target == "<= 1.5 ns/node":
        per = t / row["nodes"]
        return f"{per:.2f} ns/node: {'met' if per <= 1.5 else 'missed'}"
    elif target == "<= 2x Jump" and jump_ns:
        return f"{t / jump_ns:.2f}x Jump: {'met' if t <= 2 * jump_ns else 'missed'}"
    else:
        return ""
    return f"{target}: {'met' if ok else 'missed'}"


def table(result: dict[str, Any]) -> str:
    m = result["machine"]
    jump_ns = next((r["uint64"] for r in result["rows"]
                    if r["algorithm"] == "JumpHash" and r["nodes"] == 1000), None)
    lines = [
        f"{result['keys']:,} keys per batch, median of {result['repeat']} runs; "
        f"{m['cpu']} ({m['cpus']} CPUs), {m['os']}, CPython {m['python']}, "
        f"NumPy {m['numpy']}, consistent_hash {m['consistent_hash']}",
        "",
        "| algorithm | configuration | batch, uint64 (ns/key) | batch, list of str (ns/key) "
        "| scalar get (ns) | target |",
        "|---|---|---:|---:|---:|---|",
    ]
    for r in result["rows"]:
        lines.append(f"| {r['algorithm']} | {r['config']} | {_fmt(r['uint64'])} | "
                     f"{_fmt(r['str'])} | {_fmt(r['get'])} | {_verdict(r, jump_ns)} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--keys", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--json", action="store_true", help="print the raw results as JSON")
    p.add_argument("--percall", action="store_true", help="only the per-call ratios")
    args = p.parse_args()
    rows = percall(args.keys, args.repeat)
    if args.percall:
        print(json.dumps(rows, indent=1) if args.json else percall_table(rows))
        return
    result = run(args.keys, args.repeat)
    result["percall"] = rows
    print(json.dumps(result, indent=1) if args.json else
          table(result) + "\n\n" + percall_table(rows))


if __name__ == "__main__":
    main()
