"""Down marks beside membership changes: mark_down + mark_up, and add + remove with a node down,
against add + remove on an all-up ring of the same size (the floor), and a batch lookup with a
node down against the same lookup all up, one process.

    python bench/bench_health.py [--nodes 100,2000,10000] [--rounds 15]

The three timings are interleaved round by round on three rings built alike (so load on a
shared machine hits them alike); each figure is the best round. Before it times anything it
checks that each ring routes as a freshly built one would, so the timings are of real work.
Prints a markdown table (ms per pair of calls, ns per key of a lookup of 200,000 hashes, and
the ratios to the all-up figures).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import numpy as np

from consistent_hash import HashRing

KEYS = np.char.add("k", np.arange(20_000).astype("U"))
HASHES = np.random.default_rng(5).integers(0, 2**64, 200_000, dtype=np.uint64)


def _one(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def case(n: int, rounds: int) -> tuple[float, float, float, float, float]:
    names = [f"node-{i}" for i in range(n)]
    up, down, marks = HashRing(names), HashRing(names), HashRing(names)
    down.mark_down(names[3])
    # checks: each pair of calls leaves its ring as it was, and the rings route as they should
    want_up = up.get_indices(KEYS)
    ref_down = HashRing(names)
    ref_down.remove(names[3])
    want_down = np.asarray(ref_down.nodes, dtype=object)[ref_down.get_indices(KEYS)]

    def churn(r: HashRing) -> None:
        r.add("node-new")
        r.remove("node-new")

    def flap(r: HashRing) -> None:
        r.mark_down(names[7])
        r.mark_up(names[7])

    a, b, c, d, e = [], [], [], [], []
    for _ in range(rounds):
        a.append(_one(lambda: churn(up)))
        b.append(_one(lambda: churn(down)))
        c.append(_one(lambda: flap(marks)))
        d.append(_one(lambda: up.lookup(HASHES)))
        e.append(_one(lambda: down.lookup(HASHES)))
    assert np.array_equal(up.get_indices(KEYS), want_up)
    assert np.array_equal(marks.get_indices(KEYS), want_up)
    assert np.array_equal(down.get_many(KEYS), want_down)
    return min(a), min(b), min(c), min(d) / len(HASHES), min(e) / len(HASHES)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nodes", default="100,2000,10000")
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)
    print("| nodes x 160 vnodes | add + remove, all up (ms) | mark_down + mark_up (ms) | "
          "ratio | add + remove, one node down (ms) | ratio | lookup, all up (ns/key) | "
          "lookup, one node down (ns/key) | ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(x) for x in args.nodes.split(",")):
        floor, with_down, marks, look_up, look_down = case(n, args.rounds)
        print(f"| {n:,} | {floor * 1e3:.2f} | {marks * 1e3:.2f} | {marks / floor:.2f}x | "
              f"{with_down * 1e3:.2f} | {with_down / floor:.2f}x | {look_up * 1e9:.1f} | "
              f"{look_down * 1e9:.1f} | {look_down / look_up:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
