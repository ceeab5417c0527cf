"""Snapshots under threads, for every router of the registry that has add / remove.

One thread adds and removes a node over and over while reader threads route a fixed batch:
every result must be exactly the layout before the add or the layout after it (the two are
computed beforehand from fresh builds), never a mix of the two.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from routers import EXTRA_NODE, NODES, ROUTERS, RouterSpec

MUTABLE = [s for s in ROUTERS if s.mutable]
BATCH = [f"key-{i}" for i in range(4000)] + ["", "é", "日本"]
SECONDS = 0.8
READERS = 3


@pytest.mark.parametrize("spec", MUTABLE, ids=[s.name for s in MUTABLE])
def test_readers_see_one_snapshot_or_the_other(spec: RouterSpec) -> None:
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
                got = r.get_indices(keys).tobytes() if j else r.get_indices(BATCH).tobytes()
                which = layouts.get(got)
                if which is None:
                    mixes.append(j)
                    stop.set()
                    return
                seen.add(which)
                if j == 0 and tuple(r.get_many(keys).tolist()) not in names:
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
    assert r.nodes in (before.nodes, after.nodes)
