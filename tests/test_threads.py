"""Threads: readers calling the batch and scalar paths while a writer changes the membership.

Every result must equal the answer of some whole snapshot (never a mix of two), nothing may
raise, and the counts of operations show the stress actually happened. HashRing and
KetamaRing both swap immutable snapshots; batch lookups hold one snapshot for their run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from consistent_hash import HashRing, KetamaRing

SECONDS = 2.0
READERS = 4


def stress(make: Callable[[list[str]], Any], start: list[str],
           ops: list[tuple[str, str]]) -> dict[str, int]:
    """Readers race a writer applying ops (("add" | "remove", node)) in a cycle that returns
    to start; each result must be one of the states the ring passes through."""
    states, cur = [], list(start)
    for op, node in ops:
        cur = [*cur, node] if op == "add" else [n for n in cur if n != node]
        states.append(list(cur))
    assert sorted(states[-1]) == sorted(start)
    keys = np.array([f"t{i}" for i in range(20_000)])
    answers = [make(s).get_many(keys) for s in states]
    singles = {k: {a[int(k[1:])] for a in answers} for k in ("t1", "t2", "t3")}
    router = make(start)
    stop = threading.Event()
    errors: list[str] = []
    counts = {"batch": 0, "scalar": 0, "writes": 0}
    lock = threading.Lock()

    def reader() -> None:
        n_batch = n_scalar = 0
        try:
            while not stop.is_set():
                got = router.get_many(keys)
                if not any(np.array_equal(got, a) for a in answers):
                    errors.append("a batch result matches no snapshot")
                    return
                n_batch += 1
                for k, allowed in singles.items():
                    if router.get(k) not in allowed:
                        errors.append("a scalar result matches no snapshot")
                        return
                n_scalar += len(singles)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))
        with lock:
            counts["batch"] += n_batch
            counts["scalar"] += n_scalar

    threads = [threading.Thread(target=reader) for _ in range(READERS)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + SECONDS
    try:
        while time.monotonic() < deadline and not errors:
            for op, node in ops:
                getattr(router, op)(node)
                counts["writes"] += 1
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not errors, errors[:3]
    assert counts["batch"] >= READERS and counts["writes"] >= len(ops)
    assert sorted(router.nodes) == sorted(make(start).nodes)
    return counts


def test_hashring_under_concurrent_writes() -> None:
    ops = [("add", "d"), ("add", "e"), ("remove", "a"), ("add", "a"), ("remove", "e"),
           ("remove", "d")]
    c = stress(lambda s: HashRing(s, vnodes=100), ["a", "b", "c"], ops)
    print(f"HashRing: {READERS} readers, {c}")


def test_ketamaring_under_concurrent_writes() -> None:
    s = [f"10.0.0.{x}:11211" for x in range(1, 6)]
    ops = [("add", s[3]), ("add", s[4]), ("remove", s[4]), ("remove", s[3])]
    c = stress(lambda nodes: KetamaRing(nodes, mode="ketama_weighted"), s[:3], ops)
    print(f"KetamaRing: {READERS} readers, {c}")


@pytest.mark.parametrize("n_threads", [2, 4])
def test_parallel_batch_lookups_agree(n_threads: int) -> None:
    """Many threads routing (GIL released in the kernels) give the single-thread answer."""
    ring = HashRing([f"n{i}" for i in range(20)])
    keys = np.array([f"k{i}" for i in range(200_000)])
    hashes = ring.hash_many(keys)
    expected = ring.get_indices(keys)
    results: list[Any] = [None] * n_threads

    def work(t: int) -> None:
        results[t] = (ring.get_indices(keys), ring.lookup(hashes))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in results:
        assert np.array_equal(a, expected) and np.array_equal(b, expected)
