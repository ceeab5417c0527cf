"""State machines for the mutable routers beyond HashRing (which test_model.py covers):
random sequences of membership and weight changes, checked after every step against an
independent model.

- compat.uhashring.HashRing against the real uhashring 2.5 package, fed the same operations
  (default and ketama modes);
- KetamaRing, changed step by step, against a KetamaRing built from scratch for the same
  membership (the from-scratch placement is itself proven against live memcached servers in
  test_ketama.py) and against the pure-Python ketama model below (weighted MD5 mode);
- SlotMap membership changes: every slot assigned, counts balanced, fewest moves.

The example budget follows HYPOTHESIS_PROFILE (ci: 300 examples a machine).
"""

from __future__ import annotations

import bisect
import hashlib
import math

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

# Each machine runs the profile's example count (capped at 100), 20 steps each.
STEPS = settings(settings.default, max_examples=min(settings.default.max_examples, 100),
                 stateful_step_count=20)

KEYS = [f"key-{i}" for i in range(400)] + ["", "ünï", "x" * 300]
NAMES = [f"10.0.0.{i}:{11211 + i % 3}" for i in range(1, 13)]


# -- uhashring ------------------------------------------------------------------------------

uhashring = pytest.importorskip("uhashring")
from consistent_hash.compat.uhashring import HashRing as CompatRing  # noqa: E402


class UhashringMachine(RuleBasedStateMachine):
    mode: dict[str, object] = {}

    @initialize(first=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    def start(self, first: list[str]) -> None:
        self.ours = CompatRing(list(first), **self.mode)
        self.ref = uhashring.HashRing(list(first), **self.mode)
        self.members = set(first)

    @rule(name=st.sampled_from(NAMES), weight=st.integers(1, 4))
    def add(self, name: str, weight: int) -> None:
        conf = {"weight": weight} if self.mode.get("hash_fn") == "ketama" else {
            "weight": weight, "vnodes": 40}
        self.ours.add_node(name, conf)
        self.ref.add_node(name, conf)
        self.members.add(name)

    @precondition(lambda self: len(self.members) > 1)
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.members)))
        self.ours.remove_node(name)
        self.ref.remove_node(name)
        self.members.discard(name)

    @invariant()
    def same_nodes_for_every_key(self) -> None:
        assert [self.ours.get_node(k) for k in KEYS] == [self.ref.get_node(k) for k in KEYS]
        assert self.ours.get_many(KEYS).tolist() == [self.ref.get_node(k) for k in KEYS]


class UhashringDefault(UhashringMachine):
    mode = {}


class UhashringKetama(UhashringMachine):
    mode = {"hash_fn": "ketama"}


UhashringDefault.TestCase.settings = STEPS
TestUhashringDefault = UhashringDefault.TestCase
UhashringKetama.TestCase.settings = STEPS
TestUhashringKetama = UhashringKetama.TestCase


# -- KetamaRing ------------------------------------------------------------------------------

from consistent_hash import KetamaRing  # noqa: E402


def f32(x: float) -> float:
    return float(np.float32(x))


class KetamaModel:
    """libmemcached's weighted MD5 ketama, written from COMPAT.md: per server
    floor((float32)(w / total * 40 * n + 1e-10)) labels "host:port-i" ("host-i" on port
    11211), 4 little-endian uint32 points per label MD5; keys by the first 4 MD5 bytes, LE;
    first point >= hash, wrapping; ties to the earlier server."""

    def __init__(self, servers: list[str], weights: dict[str, int]) -> None:
        total = sum(weights[s] for s in servers)
        n = len(servers)
        points = []
        for idx, s in enumerate(servers):
            host, port = s.rsplit(":", 1)
            pct = f32(f32(weights[s]) / f32(total))
            labels = math.floor(f32(f32(f32(pct * f32(40.0)) * f32(n)) + 1e-10))
            prefix = host if port == "11211" else s
            for i in range(labels):
                d = hashlib.md5(f"{prefix}-{i}".encode()).digest()
                for k in range(4):
                    points.append((int.from_bytes(d[4 * k: 4 * k + 4], "little"), idx))
        points.sort()
        self.values = [v for v, _ in points]
        self.owner = [servers[i] for _, i in points]

    def get(self, key: str) -> str:
        h = int.from_bytes(hashlib.md5(key.encode()).digest()[:4], "little")
        i = bisect.bisect_left(self.values, h)
        return self.owner[i % len(self.values)]


class KetamaMachine(RuleBasedStateMachine):
    @initialize(first=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    def start(self, first: list[str]) -> None:
        self.servers = list(first)
        self.weights = {s: 1 for s in first}
        self.ring = KetamaRing(self.servers, mode="ketama_weighted")

    @rule(name=st.sampled_from(NAMES), weight=st.integers(1, 5))
    def add(self, name: str, weight: int) -> None:
        if name in self.weights:
            return
        self.ring.add(name, weight)
        self.servers.append(name)
        self.weights[name] = weight

    @precondition(lambda self: len(self.servers) > 1)
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self.servers))
        self.ring.remove(name)
        self.servers.remove(name)
        del self.weights[name]

    @rule(data=st.data(), weight=st.integers(1, 5))
    def reweight(self, data: st.DataObject, weight: int) -> None:
        name = data.draw(st.sampled_from(self.servers))
        self.ring.set_weight(name, weight)
        self.weights[name] = weight

    @invariant()
    def equals_rebuild_and_model(self) -> None:
        fresh = KetamaRing(self.servers, self.weights, mode="ketama_weighted")
        got = self.ring.get_many(KEYS).tolist()
        assert got == fresh.get_many(KEYS).tolist()
        assert list(self.ring.nodes) == self.servers
        model = KetamaModel(self.servers, self.weights)
        assert got == [model.get(k) for k in KEYS]


KetamaMachine.TestCase.settings = STEPS
TestKetamaMachine = KetamaMachine.TestCase


# -- SlotMap ---------------------------------------------------------------------------------

from consistent_hash import SlotMap  # noqa: E402


def slot_owners(m: SlotMap) -> np.ndarray:
    out = np.empty(16384, dtype=object)
    for lo, hi, node in m.ranges():
        out[lo: hi + 1] = node
    return out


class SlotMapMachine(RuleBasedStateMachine):
    @initialize(n=st.integers(1, 5))
    def start(self, n: int) -> None:
        self.nodes = [f"r{i}:6379" for i in range(n)]
        self.map = SlotMap.even(self.nodes)

    @rule(i=st.integers(0, 20))
    def join(self, i: int) -> None:
        name = f"j{i}:6379"
        if name in self.nodes:
            return
        old = self.map
        self.map, moves = old.add_node(name)
        self.nodes.append(name)
        self.check_moves(old, moves)

    @precondition(lambda self: len(self.nodes) > 1)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self.nodes))
        old = self.map
        self.map, moves = old.remove_node(name)
        self.nodes.remove(name)
        self.check_moves(old, moves)

    def check_moves(self, old: SlotMap, moves: list[object]) -> None:
        # Every slot that changed owner is in exactly one move, and nothing else is.
        a, b = slot_owners(old), slot_owners(self.map)
        assert sum(m.count for m in moves) == int((a != b).sum())  # type: ignore[attr-defined]
        # Fewest moves to a balanced map: exactly the surplus over each node's target count.
        counts = self.map.counts()
        lo, hi = 16384 // len(self.nodes), -(-16384 // len(self.nodes))
        assert all(lo <= c <= hi for c in counts.values())
        before: dict[str, int] = {}
        for s in a.tolist():
            before[s] = before.get(s, 0) + 1
        needed = sum(max(0, c - before.get(n, 0)) for n, c in counts.items())
        assert int((a != b).sum()) == needed

    @invariant()
    def every_slot_assigned(self) -> None:
        assert set(self.map.counts()) == set(self.nodes)
        assert sum(self.map.counts().values()) == 16384


SlotMapMachine.TestCase.settings = STEPS
TestSlotMapMachine = SlotMapMachine.TestCase
