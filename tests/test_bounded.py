"""BoundedLoad: the bound is never exceeded (1,000,000 keys), the assignment equals an
independent model of the bounded walk, hot-key spreading, live load, unsatisfiable bounds."""

from __future__ import annotations

import bisect
import hashlib
import math
from typing import Any

import numpy as np
import pytest

from consistent_hash import BoundedLoad, CapacityError, EmptyRingError, HashRing
from consistent_hash.algorithms import JumpHash, Maglev, MementoHash, MultiProbe, Rendezvous

MASK = (1 << 64) - 1
STEP = 0xD1B54A32D192ED03
NAMES = [f"n{i}" for i in range(20)]


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _memento() -> MementoHash:
    mh = MementoHash(NAMES)
    mh.remove("n3")
    return mh


ROUTERS: dict[str, Any] = {
    "ring": lambda: HashRing(NAMES, vnodes=20),
    "ring-weighted": lambda: HashRing({n: 1.0 + i % 3 for i, n in enumerate(NAMES)}, vnodes=20),
    "rendezvous": lambda: Rendezvous(NAMES),
    "rendezvous-weighted": lambda: Rendezvous({n: 1.0 + i % 4 for i, n in enumerate(NAMES)}),
    "maglev": lambda: Maglev(NAMES),
    "jump": lambda: JumpHash(NAMES),
    "multiprobe": lambda: MultiProbe(NAMES),
    "memento": _memento,
}


def _walk(router: Any, key: Any) -> list[str]:
    """The preference walk of a key, derived independently of the bounded kernel: a HashRing's
    positions clockwise (bisect over positions / owners), Rendezvous' ranking, else the probe
    sequence h, mix64(h + t * STEP) routed by the router, then every node in order."""
    h = router.hash(key)
    nodes = router.nodes
    if isinstance(router, HashRing):
        pos, own = router.positions.tolist(), router.owners.tolist()
        i = bisect.bisect_left(pos, h) % len(pos)
        return [nodes[own[(i + t) % len(pos)]] for t in range(len(pos))]
    if isinstance(router, Rendezvous):
        return router.replicas(key, len(nodes))
    probes = [h] + [_mix64((h + t * STEP) & MASK) for t in range(1, 8 * len(nodes) + 64)]
    idx = router.lookup(np.array(probes, dtype=np.uint64)).tolist()
    return [nodes[i] for i in idx] + list(nodes)


def _model(router: Any, keys: list[Any], caps: dict[str, int], spread: int = 1) -> list[str]:
    loads = dict.fromkeys(caps, 0)
    out = []
    for k in keys:
        walk = _walk(router, k)
        first: list[str] = []
        for n in walk:
            if n not in first:
                first.append(n)
            if len(first) == spread:
                break
        room = [n for n in first if loads[n] < caps[n]]
        if room:
            node = min(room, key=lambda n: (loads[n], first.index(n)))
        else:
            node = next(n for n in walk if loads[n] < caps[n])
        loads[node] += 1
        out.append(node)
    return out


@pytest.mark.parametrize("name", sorted(ROUTERS))
def test_assignment_equals_the_model_of_the_bounded_walk(name: str) -> None:
    router = ROUTERS[name]()
    keys = [f"k{i}" for i in range(1500)]
    for c, spread in ((1.0, 1), (1.1, 1), (1.0, 3)):
        bl = BoundedLoad(router, c=c)
        caps = bl.capacities(len(keys))
        got = bl.assign_many(keys, spread=spread).tolist()
        assert got == _model(router, keys, caps, spread), (c, spread)


@pytest.mark.parametrize("name", sorted(ROUTERS))
def test_bound_never_exceeded(name: str) -> None:
    router = ROUTERS[name]()
    m = 1_000_000 if name in ("ring", "maglev") else 200_000
    keys = np.char.add("key-", np.arange(m).astype("U"))
    base = router.get_indices(keys)
    for c in (1.0, 1.25):
        bl = BoundedLoad(router, c=c)
        idx = bl.assign_indices(keys)
        counts = np.bincount(idx, minlength=len(router.nodes))
        caps = np.array([bl.capacities(m)[n] for n in router.nodes])
        assert np.all(counts <= caps)
        weights = getattr(router, "weights", None)
        if weights is None or len(set(weights.values())) == 1:
            assert caps.max() == math.ceil(c * m / len(router.nodes))
        # only keys whose node is full move, and most keys stay
        assert (idx == base).mean() > (0.75 if c == 1.0 else 0.9)
    huge = BoundedLoad(router, c=1000.0).assign_indices(keys[:50_000])
    assert np.array_equal(huge, base[:50_000])  # a loose bound changes nothing


def test_weighted_capacities() -> None:
    ring = HashRing({"a": 1.0, "b": 2.0, "c": 3.0, "d": 2.0})
    caps = BoundedLoad(ring, c=1.0).capacities(8000)
    assert caps == {"a": 1000, "b": 2000, "c": 3000, "d": 2000}
    assert BoundedLoad(ring, c=1.5).capacities(10) == {"a": 2, "b": 4, "c": 6, "d": 4}
    assert BoundedLoad(JumpHash(3), c=1.25).capacities(10) == {"0": 5, "1": 5, "2": 5}
    assert BoundedLoad(JumpHash(3), c=1.0).capacities(0) == {"0": 0, "1": 0, "2": 0}
    # c is the decimal it is written as: ceil(1.1 * 1000 / 10) is 110, not 111
    assert BoundedLoad(JumpHash(10), c=1.1).capacities(1000)["0"] == 110
    assert BoundedLoad(HashRing({"a": 1.0, "b": 2.0}), c=1.1).capacities(3000) == {
        "a": 1100, "b": 2200}


def test_hot_key_spreading() -> None:
    ring = HashRing(NAMES)
    hot = ["hot"] * 3000
    first3 = ring.replicas("hot", 3)
    spread = BoundedLoad(ring, c=1000.0).assign_many(hot, spread=3)
    names, counts = np.unique(spread, return_counts=True)
    assert set(names) == set(first3) and counts.min() == 1000  # least-loaded of 3: even
    plain = BoundedLoad(ring, c=1000.0).assign_many(hot)
    assert set(plain) == {first3[0]}
    # bounded without spreading: the hot key overflows along its replica walk
    tight = BoundedLoad(ring, c=1.0).assign_many(hot)
    names, counts = np.unique(tight, return_counts=True)
    assert counts.max() == 150 and len(names) == 20
    r = Rendezvous(NAMES)
    live = BoundedLoad(r, c=1000.0)
    got = {live.acquire("hot", spread=4) for _ in range(40)}
    assert got == set(r.replicas("hot", 4))
    assert sorted(live.loads.values()) == [10, 10, 10, 10]


def test_acquire_release_live_load() -> None:
    ring = HashRing(NAMES[:5])
    bl = BoundedLoad(ring, c=1.0)
    for i in range(500):
        held = sum(bl.loads.values())
        node = bl.acquire(f"conn-{i}")
        assert bl.loads[node] <= math.ceil((held + 1) / 5)
    assert sum(bl.loads.values()) == 500 and max(bl.loads.values()) == 100
    first = max(bl.loads, key=bl.loads.__getitem__)
    for _ in range(100):
        bl.release(first)
    assert first not in bl.loads
    with pytest.raises(KeyError):
        bl.release(first)
    with pytest.raises(KeyError):
        bl.release("zz")
    with pytest.raises(TypeError):
        bl.release(3)  # type: ignore[arg-type]
    bl.reset()
    assert bl.loads == {}
    # the router changes under held load: loads follow the names
    for i in range(50):
        bl.acquire(f"a{i}")
    ring.add("n-new")
    for i in range(50):
        bl.acquire(f"b{i}")
    assert sum(bl.loads.values()) == 100 and max(bl.loads.values()) <= math.ceil(100 / 6)
    ring.remove("n-new")
    bl.acquire("c")
    assert sum(bl.loads.values()) == 101
    bl.reset()
    # without pressure, acquire gives the router's node
    loose = BoundedLoad(ring, c=100.0)
    assert [loose.acquire(f"x{i}") for i in range(50)] == [ring.get(f"x{i}") for i in range(50)]


def test_unsatisfiable_bounds_raise_never_hang() -> None:
    ring = HashRing(NAMES[:4])
    fixed = BoundedLoad(ring, capacity=2)
    assert fixed.capacities(100) == dict.fromkeys(NAMES[:4], 2)
    assert len(fixed.assign_many([f"k{i}" for i in range(8)])) == 8
    with pytest.raises(ValueError, match="unsatisfiable"):
        fixed.assign_many([f"k{i}" for i in range(9)])
    for i in range(8):
        fixed.acquire(f"k{i}")
    with pytest.raises(CapacityError, match="capacity"):
        fixed.acquire("one-more")
    fixed.release(ring.nodes[0])
    assert fixed.acquire("one-more") == ring.nodes[0]
    with pytest.raises(ValueError, match="c must be"):
        BoundedLoad(ring, c=0.99)
    with pytest.raises(ValueError, match="c must be"):
        BoundedLoad(ring, c=float("nan"))
    with pytest.raises(TypeError, match="c must be"):
        BoundedLoad(ring, c="1.5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="capacity"):
        BoundedLoad(ring, capacity=0)
    with pytest.raises(ValueError, match="spread"):
        BoundedLoad(ring).assign_many(["a"], spread=0)
    with pytest.raises(TypeError, match="router"):
        BoundedLoad(["a", "b"])
    with pytest.raises(EmptyRingError):
        BoundedLoad(HashRing()).assign_many(["a"])
    with pytest.raises(EmptyRingError):
        BoundedLoad(Maglev()).acquire("a")


def test_down_nodes_get_nothing() -> None:
    ring = HashRing(NAMES)
    ring.mark_down("n1")
    ring.mark_down("n2")
    bl = BoundedLoad(ring, c=1.0)
    caps = bl.capacities(1800)
    assert caps["n1"] == caps["n2"] == 0 and caps["n0"] == 100
    got = bl.assign_many([f"k{i}" for i in range(1800)])
    assert not {"n1", "n2"} & set(got)
    assert max(np.unique(got, return_counts=True)[1]) == 100


def _batch_node(bl: BoundedLoad, key: str, caps: dict[str, int], loads: dict[str, int]) -> str:
    """The node the batch kernel gives one key under these capacities and loads."""
    from consistent_hash._ring import bounded_assign
    core = bl.router._core
    out = np.empty(1, dtype=np.int32)
    bounded_assign(core, np.array([bl.router.hash(key)], dtype=np.uint64),
                   np.array([caps[n] for n in core.nodes], dtype=np.int64),
                   np.array([loads[n] for n in core.nodes], dtype=np.int64), 1, out)
    return str(core.nodes[int(out[0])])


@pytest.mark.parametrize("weights", [
    {"a": 1.0, "b": 2.5, "c": 0.75},                 # capacities in 64-bit integers
    {"a": 1.0, "b": 2.5, "c": 1e-300, "d": 3.0},     # ratios beyond 64 bits: Python ints
])
@pytest.mark.parametrize("c", [1.0, 1.1, 1.25])
def test_live_capacities_exact_weighted(weights: dict[str, float], c: float) -> None:
    ring = HashRing(weights)
    bl = BoundedLoad(ring, c=c)
    held: dict[str, int] = {}
    for i in range(300):
        want = _batch_node(bl, f"k{i}", bl.capacities(sum(held.values()) + 1),
                           {n: held.get(n, 0) for n in ring.nodes})
        assert bl.acquire(f"k{i}") == want
        held[want] = held.get(want, 0) + 1
        if i % 3 == 2:
            gone = sorted(held)[i % len(held)]
            bl.release(gone)
            held[gone] -= 1
            if not held[gone]:
                del held[gone]
        assert bl.loads == held
    ring.mark_down("b")  # the capacities follow the router: b's is 0 now
    node = bl.acquire("after")
    assert node != "b" and bl.loads[node] == held.get(node, 0) + 1


def _in_threads(work: Any, n: int) -> list[BaseException]:
    """Run work(0) .. work(n - 1) in n threads at once; the exceptions they raised."""
    import threading
    errors: list[BaseException] = []

    def run(t: int) -> None:
        try:
            work(t)
        except BaseException as e:  # pragma: no cover - returned to the test
            errors.append(e)
    threads = [threading.Thread(target=run, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return errors


def test_live_load_threads() -> None:
    ring = HashRing(NAMES)
    bl = BoundedLoad(ring, capacity=1000)

    def work(t: int) -> None:
        for i in range(2000):
            bl.release(bl.acquire(f"t{t}-{i % 50}"))
            if i % 500 == 0 and t == 0:
                ring.add(f"new-{i}")
    assert not _in_threads(work, 4) and bl.loads == {}


def test_live_load_lock_waits_and_hands_over() -> None:
    # The assigner's lock under contention: keys hashed by a Python callable that gives up the
    # GIL (time.sleep(0)) inside acquire's locked section, so other threads find the lock held,
    # wait on it and are handed it by the give.  No count is lost, none doubles, and the lock
    # itself (used as a context manager, as the slow paths do) never has two holders.
    import time

    def yielding_hash(b: bytes) -> int:
        time.sleep(0)
        return int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little")

    ring = HashRing(NAMES, hash=yielding_hash)
    bl = BoundedLoad(ring, c=1.25)
    inside = [0, 0]  # holders now, most ever
    got: list[list[str]] = [[] for _ in range(4)]

    def work(t: int) -> None:
        for i in range(300):
            got[t].append(bl.acquire(f"t{t}-{i}"))
            with bl._lock:
                inside[0] += 1
                inside[1] = max(inside[1], inside[0])
                time.sleep(0)
                inside[0] -= 1
    assert not _in_threads(work, 4) and inside == [0, 1]
    held: dict[str, int] = {}
    for nodes in got:
        for n in nodes:
            held[n] = held.get(n, 0) + 1
    assert bl.loads == held and sum(held.values()) == 1200
    for nodes in got:
        for n in nodes:
            bl.release(n)
    assert bl.loads == {}


@pytest.mark.parametrize("kind", ["HashRing", "Maglev", "Rendezvous"])
def test_live_load_sees_each_new_weights_object(kind: str) -> None:
    # The live load is checked against the router's weights object on every acquire, read
    # from the router's _weights slot: a new object there (the same snapshot) is seen as
    # getattr would see it, and the loads move to a live load built for it.
    router = {"HashRing": HashRing, "Maglev": Maglev, "Rendezvous": Rendezvous}[kind](NAMES)
    bl = BoundedLoad(router)
    first = bl.acquire("a")
    live = bl._live
    bl.acquire("b")
    assert bl._live is live  # the fast path, nothing changed
    router._weights = dict(router._weights)  # type: ignore[attr-defined]
    bl.acquire("c")
    assert bl._live is not live and sum(bl.loads.values()) == 3
    live = bl._live
    bl.acquire("d")
    assert bl._live is live
    bl.release(first)
    assert sum(bl.loads.values()) == 3
