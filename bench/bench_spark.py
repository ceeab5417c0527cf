"""Spark throughput: consistent_hash.integrations.spark.route on local[2] against one process.

2,000,000 keys "user:<id>" over a 64-node HashRing, best of 3 runs. The Spark rows time a
whole job that writes to the ``noop`` sink: the keys are made on the executors
(``spark.range`` + ``concat``, 4 partitions, Arrow batches of 10,000 rows), routed, and
dropped. The same job without ``route`` is timed too, so its difference is what routing
costs in Spark (Arrow transfer to the Python workers and back included). The one-process rows
route the same keys, made with pyarrow beforehand, with ``get_indices`` and ``get_many`` at
threads=1 and threads=2. Prints a markdown table.

    python bench/bench_spark.py [--keys N] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np


def best(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def java_version() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    except OSError:
        return "no java"
    line = out.splitlines()[0] if out else "java"
    return line.split('"')[1] if '"' in line else line


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--keys", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    n = args.keys

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyspark
    from pyspark.sql import SparkSession

    import consistent_hash
    from consistent_hash import HashRing
    from consistent_hash.integrations.spark import partition, route

    ring = HashRing([f"shard-{i}" for i in range(64)])
    rows: list[tuple[str, float, str]] = []

    keys = pc.binary_join_element_wise(pa.scalar("user:"), pa.array(np.arange(n))
                                       .cast(pa.string()), "")
    for threads in (1, 2):
        t = best(args.runs, lambda: ring.get_indices(keys, threads=threads))  # noqa: B023
        rows.append((f"1 process, `get_indices`, threads={threads}", t, "route"))
    for threads in (1, 2):
        t = best(args.runs, lambda: ring.get_many(keys, threads=threads))  # noqa: B023
        rows.append((f"1 process, `get_many`, threads={threads}", t, "route"))

    # The Python workers run this interpreter and import the package imported here.
    root = os.path.dirname(os.path.dirname(os.path.abspath(consistent_hash.__file__)))
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (SparkSession.builder.master("local[2]").appName("bench_spark")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(n, numPartitions=4).selectExpr("concat('user:', id) AS key", "id")

    def run(frame: object) -> None:
        frame.write.format("noop").mode("overwrite").save()  # type: ignore[attr-defined]

    run(route(df, "key", ring))  # warm-up: JVM, Python workers, the router in each worker
    t_gen = best(args.runs, lambda: run(df))
    rows.append(("Spark local[2], make the keys only (no routing)", t_gen, "baseline"))
    for output in ("index", "node"):
        t = best(args.runs, lambda: run(route(df, "key", ring, output=output)))  # noqa: B023
        rows.append((f'Spark local[2], make + `route(output="{output}")`', t, "job"))
        rows.append((f'Spark local[2], `route(output="{output}")` alone (difference)',
                     t - t_gen, "route"))
    t = best(args.runs, lambda: run(partition(df, "key", ring)))
    rows.append(("Spark local[2], make + `partition` (route + shuffle to 64 partitions)", t,
                 "job"))
    spark.stop()

    machine = platform.processor() or platform.machine()
    print(f"Spark throughput, {n:,} keys, 64-node HashRing, best of {args.runs}; {machine}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, pyspark "
          f"{pyspark.__version__}, Java {java_version()}\n")
    print("| setup | keys/s | ns/key |")
    print("|---|---:|---:|")
    for name, secs, _ in rows:
        ns = secs / n * 1e9
        print(f"| {name} | {n / secs / 1e6:,.2f} M | {ns:,.1f} |" if ns < 100 else
              f"| {name} | {n / secs / 1e6:,.2f} M | {ns:,.0f} |")


if __name__ == "__main__":
    main()
