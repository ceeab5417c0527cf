"""Do batch lookups scale across cores?  Two questions, one process:

1. One call split over threads (``threads=``): the process default (``threads=None``, the
   usable cores) against ``threads=1`` on the same batch, runs interleaved so that other work
   on the machine hits both alike; ns/key of 10M keys in one call against the same 10M keys in
   calls of 1M (no growth with batch size): with the calls' results dropped (malloc then hands
   each call the 4 MB block the last one freed, already faulted in, while a fresh 40 MB output
   is mapped and faulted in afresh), with every result kept (each output fresh, as when the
   answer is assembled), and into a preallocated ``out=``; the peak memory
   beyond the output (tracemalloc: NumPy and Python allocations; the core's own buffers are a
   fixed 32 KB per thread plus 68 bytes per 2,048 keys, listed beside it).
2. Python threads each making their own calls with ``threads=1`` (the old table): the GIL is
   released wherever no Python object is read, so that scales too, except for a list of str.

    python bench/bench_threads.py [--keys N] [--runs R] [--big N] [--threshold] [--skip-python]

``--threshold`` instead times threads=2 against threads=1 at small batch sizes (the parallel
threshold forced down to 1) to find where a second thread starts to pay.  Prints markdown.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import platform
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)  # the in-place build of the repo

import numpy as np  # noqa: E402


def make_keys(n: int) -> list[str]:
    return [f"user:{i}:{(i * 2654435761) % 10**9}" for i in range(n)]


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(fns: list[Callable[[], Any]], runs: int) -> list[float]:
    """Median seconds of each fn, the runs interleaved (a, b, a, b, ...) after one warm-up."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for i, fn in enumerate(fns):
            times[i].append(timed(fn))
    return [statistics.median(t) for t in times]


def cases(ring: Any, keys: list[str]) -> dict[str, tuple[Callable[..., Any], Any]]:
    out: dict[str, tuple[Callable[..., Any], Any]] = {
        "lookup, pre-hashed uint64": (ring.lookup, ring.hash_many(keys)),
        "get_indices, NumPy U": (ring.get_indices, np.array(keys)),
        "get_indices, NumPy S": (ring.get_indices, np.array(keys, dtype="S")),
    }
    try:
        import pyarrow as pa

        out["get_indices, pyarrow string"] = (ring.get_indices, pa.array(keys))
    except ImportError:
        pass
    out["get_indices, list of str"] = (ring.get_indices, keys)
    with_nulls = list(keys)
    with_nulls[::100] = [None] * len(with_nulls[::100])
    out["get_indices, list of str, 1% None (nulls='none')"] = (
        functools.partial(ring.get_indices, nulls="none"), with_nulls)
    return out


def thread_counts(usable: int) -> list[int]:
    """1, 2, 4, ... up to the usable cores, and the usable count itself."""
    counts = [1]
    while counts[-1] * 2 <= usable:
        counts.append(counts[-1] * 2)
    if counts[-1] != usable:
        counts.append(usable)
    return counts


def split_table(ring: Any, n: int, runs: int) -> None:
    """ns/key of one call at each thread count (1, 2, 4, ... usable), runs interleaved, and
    the speedup of each over threads=1; the default (threads=None) is the last column."""
    from consistent_hash import get_threads

    usable = get_threads()
    counts = thread_counts(usable)
    keys = make_keys(n)
    print(f"### One call over threads: threads=1, 2, ... up to the default (threads=None -> "
          f"{usable}), {n:,} keys, 100 nodes x 160 vnodes\n")
    print("| case | " + " | ".join(f"threads={t} ns/key" for t in counts) + " | "
          + " | ".join(f"speedup at {t}" for t in counts[1:]) + " |")
    print("|---|" + "---:|" * (2 * len(counts) - 1))
    for name, (fn, data) in cases(ring, keys).items():
        calls = [lambda fn=fn, data=data, t=t: fn(data, threads=t) for t in counts[:-1]]
        calls.append(lambda fn=fn, data=data: fn(data))  # the default: threads=None
        times = interleaved(calls, runs)
        print(f"| {name} | " + " | ".join(f"{t / n * 1e9:.2f}" for t in times) + " | "
              + " | ".join(f"{times[0] / t:.2f}x" for t in times[1:]) + " |")
    print()


def peak_extra(fn: Callable[..., Any], data: Any) -> int:
    """Peak bytes traced during fn(data) beyond its result."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    result = fn(data)
    peak = tracemalloc.get_traced_memory()[1] - base - result.nbytes
    tracemalloc.stop()
    return max(0, peak)


def growth_table(ring: Any, small: int, big: int, runs: int) -> None:
    from consistent_hash import get_threads

    print(f"### ns/key with the default threads: {big:,} keys in calls of {small:,} vs one "
          "call; peak memory beyond the output\n")
    print(f"| case | {small:,} ns/key | {big:,} ns/key | ratio | ratio, {small:,} results kept "
          f"| ratio with out= | peak extra at {big:,} (tracemalloc) | core buffers |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    keys = make_keys(big)
    all_cases = list(cases(ring, keys).items())
    del keys
    core = 32 * 1024 * get_threads() + 68 * (big // 2048 + 1)
    while all_cases:
        name, (fn, data) = all_cases.pop(0)  # each input freed once measured
        # The big input as consecutive windows of `small` keys, one call each.
        windows = [data[i : i + small] for i in range(0, len(data), small)]
        rounds = max(5, runs)
        out_s, out_b = np.empty(small, np.int32), np.empty(len(data), np.int32)

        def drop(fn: Any = fn, windows: list[Any] = windows) -> None:
            for w in windows:
                fn(w)

        def keep(fn: Any = fn, windows: list[Any] = windows) -> None:
            kept = [fn(w) for w in windows]
            del kept

        def into_windows(fn: Any = fn, windows: list[Any] = windows, o: Any = out_s) -> None:
            for w in windows:
                fn(w, o[: len(w)])

        # All five interleaved round by round, so other work on the machine hits them alike.
        # "into" = a preallocated out=, without the page faults of a fresh output (glibc maps
        # a 40 MB array afresh on every call, a 4 MB one is reused).
        n = len(data)
        ns_s, ns_b, ns_k, into_s, into_b = (t / n * 1e9 for t in interleaved(
            [drop, lambda fn=fn, data=data: fn(data), keep, into_windows,
             lambda fn=fn, data=data, o=out_b: fn(data, o)], rounds))
        extra = peak_extra(fn, data)
        print(f"| {name} | {ns_s:.2f} | {ns_b:.2f} | {ns_b / ns_s:.2f}x | {ns_b / ns_k:.2f}x | "
              f"{into_b / into_s:.2f}x | {extra / 2**20:.2f} MB | {core / 2**20:.2f} MB |")
        del out_s, out_b
        del data, windows
        gc.collect()
    print()


def threshold_table(ring: Any, runs: int) -> None:
    from consistent_hash import _ring

    old = _ring._set_parallel_min(1)
    try:
        sizes = [4096, 8192, 16384, 32768, 65536, 131072]
        keys = make_keys(max(sizes))
        print(f"### Where a second thread pays: threads=2 vs threads=1 (threshold forced to 1), "
              f"median of {runs} interleaved runs x 20 calls\n")
        print("| keys | " + " | ".join(f"{s:,}" for s in sizes) + " |")
        print("|---|" + "---:|" * len(sizes))
        for name, (fn, data) in cases(ring, keys).items():
            row = []
            for s in sizes:
                part = data[:s]

                def calls(t: int, part: Any = part, fn: Any = fn) -> None:
                    for _ in range(20):
                        fn(part, threads=t)

                one, two = interleaved([lambda: calls(1), lambda: calls(2)], runs)
                row.append(f"{one / two:.2f}x")
            print(f"| {name} | " + " | ".join(row) + " |")
        print()
    finally:
        _ring._set_parallel_min(old)


def run_threads(fn: Callable[[], Any], n_threads: int) -> float:
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


def python_threads_table(ring: Any, n: int, runs: int) -> None:
    keys = make_keys(n)
    print(f"### Python threads, each calling with threads=1 ({n:,} keys per thread)\n")
    print("| case | 1 thread keys/s | 2 threads keys/s | speedup |")
    print("|---|---:|---:|---:|")
    for name, (fn, data) in cases(ring, keys).items():
        rates = {}
        for t in (1, 2):
            times = [run_threads(lambda fn=fn, data=data: fn(data, threads=1), t)
                     for _ in range(runs)]
            rates[t] = t * n / statistics.median(times)
        print(f"| {name} | {rates[1] / 1e6:,.0f} M | {rates[2] / 1e6:,.0f} M | "
              f"{rates[2] / rates[1]:.2f}x |")
    print()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--small", type=int, default=1_000_000)
    ap.add_argument("--big", type=int, default=10_000_000, help="0 skips the growth table")
    ap.add_argument("--threshold", action="store_true")
    ap.add_argument("--skip-python", action="store_true",
                    help="skip the Python-threads table")
    args = ap.parse_args(argv)
    import consistent_hash
    from consistent_hash import HashRing

    ring = HashRing([f"node-{i}" for i in range(100)], vnodes=160)
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"consistent_hash from {os.path.dirname(consistent_hash.__file__)}; {cpu}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy "
          f"{np.__version__}\n")
    if args.threshold:
        threshold_table(ring, args.runs)
        return
    split_table(ring, args.keys, args.runs)
    if args.big:
        growth_table(ring, args.small, args.big, args.runs)
    if not args.skip_python:
        python_threads_table(ring, args.keys, max(3, args.runs // 2))


if __name__ == "__main__":
    main()
