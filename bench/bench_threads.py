"""Do batch lookups scale across threads? They release the GIL wherever no Python object is
read (NumPy and Arrow buffers, pre-hashed keys), so 2 threads on 2 cores should approach 2x
there, and stay at 1x for a list of str (which must hold the GIL to read the objects).

    python bench/bench_threads.py [--keys N] [--runs R]

Each case: the same total work (T threads x N keys each), median wall time of R runs, keys/s
and the speedup over 1 thread. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import threading
import time

import numpy as np


def run_threads(fn, n_threads: int) -> float:  # type: ignore[no-untyped-def]
    barrier = threading.Barrier(n_threads + 1)

    def work() -> None:
        barrier.wait()
        fn()

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--keys", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    from consistent_hash import HashRing

    ring = HashRing([f"node-{i}" for i in range(100)])
    keys = [f"user:{i}:{(i * 2654435761) % 10**9}" for i in range(args.keys)]
    cases = {
        "lookup, pre-hashed uint64": (ring.lookup, ring.hash_many(keys)),
        "get_indices, NumPy U array": (ring.get_indices, np.array(keys)),
        "get_indices, list of str": (ring.get_indices, keys),
    }
    try:
        import pyarrow as pa

        cases["get_indices, pyarrow string"] = (ring.get_indices, pa.array(keys))
    except ImportError:
        pass
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"Thread scaling, {args.keys:,} keys per thread, 100 nodes x 160 vnodes; {cpu}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}\n")
    print("| case | 1 thread keys/s | 2 threads keys/s | speedup |")
    print("|---|---:|---:|---:|")
    for name, (fn, data) in cases.items():
        rates = {}
        for t in (1, 2):
            times = [run_threads(lambda fn=fn, data=data: fn(data), t)
                     for _ in range(args.runs)]
            rates[t] = t * args.keys / statistics.median(times)
        print(f"| {name} | {rates[1] / 1e6:,.0f} M | {rates[2] / 1e6:,.0f} M | "
              f"{rates[2] / rates[1]:.2f}x |")


if __name__ == "__main__":
    main()
