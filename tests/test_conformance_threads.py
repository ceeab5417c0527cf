"""Snapshots under threads, for every router of the registry that has add / remove.

One thread adds and removes a node over and over while reader threads route a fixed batch:
every result must be exactly the layout before the add or the layout after it (the two are
computed beforehand from fresh builds), never a mix of the two.  The readers run serial calls,
and calls split over two worker threads (the parallel threshold lowered so the batch goes
parallel): one call reads one snapshot whatever its threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from routers import EXTRA_NODE, NODES, ROUTERS, RouterSpec

from consistent_hash import _ring

MUTABLE = [s for s in ROUTERS if s.mutable]
BATCH = [f"key-{i}" for i in range(4000)] + ["", "é", "日本"]
SECONDS = 0.8
READERS = 3


@pytest.fixture(params=[1, 2], ids=["serial", "threads2"])
def nthreads(request: pytest.FixtureRequest) -> Iterator[int]:
    old = _ring._set_parallel_min(1 if request.param > 1 else old_min())
    try:
        yield request.param
    finally:
        _ring._set_parallel_min(old)


def old_min() -> int:
    return int(_ring._get_parallel_min())


@pytest.mark.parametrize("spec", MUTABLE, ids=[s.name for s in MUTABLE])
def test_readers_see_one_snapshot_or_the_other(spec: RouterSpec, nthreads: int) -> None:
    keys = np.array(BATCH)
    before = spec.make(list(NODES))
    after = spec.make(list(NODES) + [EXTRA_NODE])
    layouts = {
        before.get_indices(BATCH).tobytes(): "before",
        after.get_indices(BATCH).tobytes(): "after",
    }
    assert len(layouts) == 2, "adding the node must move some of the batch's keys"
    names = {tuple(before.get_many(BATCH).tolist()), tuple(after.get_many(BATCH).tolist())}

    r = spec.make(list(NODES))
    runs_before = _ring._parallel_runs()
    stop = threading.Event()
    errors: list[BaseException] = []
    seen: set[str] = set()
    mixes: list[int] = []
    flips = [0]

    def writer() -> None:
        try:
            while not stop.is_set():
                spec.add(r, EXTRA_NODE)
                spec.remove(r, EXTRA_NODE)
                flips[0] += 1
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
            stop.set()

    def reader(j: int) -> None:
        try:
            while not stop.is_set():
                got = (r.get_indices(keys, threads=nthreads) if j
                       else r.get_indices(BATCH, threads=nthreads)).tobytes()
                which = layouts.get(got)
                if which is None:
                    mixes.append(j)
                    stop.set()
                    return
                seen.add(which)
                if j == 0 and tuple(r.get_many(keys, threads=nthreads).tolist()) not in names:
                    mixes.append(j)
                    stop.set()
                    return
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
            stop.set()

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader, args=(j,))
                                                   for j in range(READERS)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline and not stop.is_set():
        time.sleep(0.02)
    stop.set()
    for t in threads:
        t.join(10)
    assert not errors, repr(errors[0])
    assert not mixes, "a reader saw a result that is neither layout"
    assert flips[0] > 0
    if nthreads > 1:  # the readers' calls really were split over the workers
        assert _ring._parallel_runs() > runs_before
    assert r.nodes in (before.nodes, after.nodes)
