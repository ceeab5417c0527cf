"""Dask throughput: consistent_hash.integrations.dask.assign_indices on a distributed
LocalCluster with 1 and 2 worker processes (one thread each), 10,000,000 keys in 20 partitions
generated on the workers, medians of 3 runs. Also the single-process batch path on the same
partitions, as the baseline. Prints a markdown table.

    python bench/bench_dask.py [--keys N] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np


def make_keys(i: int, n: int):  # type: ignore[no-untyped-def]
    """Keys user:<i*n> .. as an Arrow-backed string Series, built in C (cheap to generate)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    nums = pa.array(np.arange(i * n, (i + 1) * n)).cast(pa.string())
    keys = pc.binary_join_element_wise(pa.scalar("user:"), nums, "")
    return pd.Series(pd.arrays.ArrowStringArray(keys), name="key")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--keys", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    import dask
    import dask.dataframe as dd
    import distributed

    from consistent_hash import HashRing
    from consistent_hash.integrations.dask import assign_indices

    parts = 20
    per = args.keys // parts
    ring = HashRing([f"shard-{i}" for i in range(64)])
    rows = []
    # Baseline: generation + routing in this process, partition by partition.
    t_gen, t_all = [], []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        ks = [make_keys(i, per) for i in range(parts)]
        t1 = time.perf_counter()
        for k in ks:
            ring.get_indices(k)
        t2 = time.perf_counter()
        t_gen.append(t1 - t0)
        t_all.append(t2 - t0)
    route_only = statistics.median(a - g for a, g in zip(t_all, t_gen, strict=True))
    rows.append(("1 process, no dask (routing only)", per * parts / route_only))
    rows.append(("1 process, no dask (generate + route)",
                 per * parts / statistics.median(t_all)))
    for workers in (1, 2):
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                           processes=True, host="127.0.0.1",
                                           dashboard_address=None, silence_logs=40)
        client = distributed.Client(cluster)
        times = []
        for _ in range(args.runs):
            keys = dd.from_map(make_keys, range(parts), [per] * parts)
            t0 = time.perf_counter()
            assign_indices(keys, ring).map_partitions(
                lambda s: s.value_counts(), meta=("x", "int64")).compute()
            times.append(time.perf_counter() - t0)
        client.close()
        cluster.close()
        rows.append((f"dask LocalCluster, {workers} worker process(es) (generate + route)",
                     per * parts / statistics.median(times)))
    machine = platform.processor() or platform.machine()
    print(f"Dask throughput, {per * parts:,} keys, 64-node ring; {machine}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, "
          f"dask {dask.__version__}\n")
    print("| setup | keys/s |")
    print("|---|---:|")
    for name, rate in rows:
        print(f"| {name} | {rate / 1e6:,.1f} M |")


if __name__ == "__main__":
    main()
