"""The seam suite: a router's routing state is one thing, whoever reads it.

For every router of the registry (tests/routers.py), a Hypothesis state machine drives random
sequences of add / remove / set_weight / mark_down / mark_up, and after every step checks that
each consumer of the routing state agrees with the router's own lookups:

(a) the exact ``movement(old, new)`` of two rings equals the share of the hash space whose
    owner changed, computed by brute force: every position of either ring is routed through
    ``lookup`` of both routers (the owner is constant between consecutive positions), and the
    arcs whose owner differs are summed as integers; ``balance`` sums the arcs per owner the
    same way;
(b) ``migration_plan(old, new).moves(keys)`` is ``old.get_many(keys) != new.get_many(keys)``
    key for key, on 100,000 keys;
(c) the router after pickle, ``to_bytes`` / ``from_bytes``, ``copy`` (and for HashRing the
    CLI's ring file) routes every key as the original, with the same fingerprint.

A step a router refuses (JumpHash removing or marking down any bucket but its last; SlotMap
has no removal) must raise TypeError or ValueError and leave the router exactly as it was.

Then on live memcached and Redis servers (started here): ``migrate_*`` between successive
states of a ring with down marks moves exactly the keys whose owner changed, and every key is
found through the new router afterwards.
"""

from __future__ import annotations

import os
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from routers import NODES, ROUTERS, RouterSpec, node_names, spec_id

from consistent_hash import HashRing, ringfile
from consistent_hash.analysis import balance, migration_plan, movement

KEYS = np.char.add("seam:", np.arange(100_000).astype("U"))
POOL = node_names(8) + ["10.0.1.99:6379"]  # NODES are the first five
FULL = 1 << 64

_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
EXAMPLES = {"dev": 2, "ci": 12}.get(_PROFILE, 5)
STEPS = {"dev": 5, "ci": 10}.get(_PROFILE, 8)


def _is_ring(router: Any) -> bool:
    return hasattr(router._core, "routing_owners")


def _core_positions(router: Any) -> np.ndarray:
    return np.asarray(router._core.positions, dtype=np.uint64)


def _owner_names(router: Any, core_hashes: np.ndarray) -> np.ndarray:
    """The node each core-space hash routes to, through the router's public lookup."""
    shift = np.uint64(router._hash_shift)
    idx = router.lookup(core_hashes >> shift)
    return np.asarray(router.nodes, dtype=object)[idx]


def _arcs(ends: np.ndarray) -> list[int]:
    """Arc k is (ends[k-1], ends[k]]; arc 0 also holds the wrap (ends[-1], 2**64)."""
    e = [int(x) for x in ends]
    return [(e[0] - e[-1]) % FULL or FULL] + [e[k] - e[k - 1] for k in range(1, len(e))]


def brute_movement(old: Any, new: Any) -> tuple[int, dict[tuple[str, str], int]]:
    ends = np.union1d(_core_positions(old), _core_positions(new))
    a, b = _owner_names(old, ends), _owner_names(new, ends)
    flows: dict[tuple[str, str], int] = {}
    for length, x, y in zip(_arcs(ends), a.tolist(), b.tolist(), strict=True):
        if x != y:
            flows[(x, y)] = flows.get((x, y), 0) + length
    return sum(flows.values()), flows


def brute_shares(router: Any) -> dict[str, int]:
    ends = np.unique(_core_positions(router))
    out = dict.fromkeys(router.nodes, 0)
    for length, x in zip(_arcs(ends), _owner_names(router, ends).tolist(), strict=True):
        out[x] += length
    return out


def check_pair(old: Any, new: Any) -> None:
    """(a) and (b) between two successive states."""
    a, b = old.get_many(KEYS), new.get_many(KEYS)
    if _is_ring(old) and _is_ring(new):
        total, flows = brute_movement(old, new)
        mv = movement(old, new)
        assert mv.exact
        assert mv.moved == total / FULL
        assert mv.flows == {p: v / FULL for p, v in flows.items()}
        plan = migration_plan(old, new)
        assert np.array_equal(plan.moves(KEYS), a != b)
        assert plan.moved == total / FULL
    else:
        mv = movement(old, new, KEYS)
        assert not mv.exact and mv.moved == float((a != b).mean())


def check_state(spec: RouterSpec, router: Any) -> None:
    """(c), and the exact balance of a ring against the brute-force arcs."""
    want = router.get_indices(KEYS)
    fp = router.fingerprint()
    copies = [router.copy(), pickle.loads(pickle.dumps(router)),
              spec.cls.from_bytes(router.to_bytes())]
    if isinstance(router, HashRing):
        copies.append(ringfile.loads(ringfile.dumps(router)))
    for other in copies:
        assert other == router and other.down == router.down
        assert other.fingerprint() == fp
        assert np.array_equal(other.get_indices(KEYS), want)
    assert not set(router.get_many(KEYS[:20_000])) & router.down
    if _is_ring(router) and router.down != set(router.nodes):
        shares = brute_shares(router)
        bal = balance(router)
        assert bal.exact
        assert bal.shares == {n: v / FULL for n, v in shares.items()}
        assert all(bal.shares[n] == 0 for n in router.down)


class SeamMachine(RuleBasedStateMachine):
    spec: RouterSpec

    def __init__(self) -> None:
        super().__init__()
        self.router = self.spec.make(list(NODES))

    def _step(self, action: Any) -> None:
        before = self.router.copy()
        before_idx = self.router.get_indices(KEYS[:5000])
        try:
            action()
        except (TypeError, ValueError):
            # refused: nothing half-applied
            assert self.router == before and self.router.down == before.down
            assert np.array_equal(self.router.get_indices(KEYS[:5000]), before_idx)
            return
        if len(self.router.down) < len(self.router):
            check_pair(before, self.router)

    @rule(data=st.data())
    def add(self, data: st.DataObject) -> None:
        free = [n for n in POOL if n not in self.router]
        if not self.spec.mutable or not free:
            return
        node = data.draw(st.sampled_from(free))
        self._step(lambda: self.spec.add(self.router, node))

    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        if not self.spec.mutable or len(self.router) - len(self.router.down) <= 1:
            return
        up = [n for n in self.router.nodes if n not in self.router.down]
        node = data.draw(st.sampled_from(up))
        self._step(lambda: self.spec.remove(self.router, node))

    @rule(data=st.data(), weight=st.integers(1, 3))
    def set_weight(self, data: st.DataObject, weight: int) -> None:
        if not hasattr(self.router, "set_weight") or not len(self.router):
            return
        node = data.draw(st.sampled_from(self.router.nodes))
        self._step(lambda: self.router.set_weight(node, weight))

    @rule(data=st.data())
    def mark_down(self, data: st.DataObject) -> None:
        up = [n for n in self.router.nodes if n not in self.router.down]
        if len(up) <= 1:
            return
        node = data.draw(st.sampled_from(up))
        self._step(lambda: self.router.mark_down(node))

    @rule(data=st.data())
    def mark_up(self, data: st.DataObject) -> None:
        if not self.router.down:
            return
        node = data.draw(st.sampled_from(sorted(self.router.down)))
        self._step(lambda: self.router.mark_up(node))

    @invariant()
    def consumers_agree(self) -> None:
        check_state(self.spec, self.router)


@pytest.mark.parametrize("spec", ROUTERS, ids=spec_id)
def test_seams(spec: RouterSpec) -> None:
    machine = type(f"Seam_{spec.name}", (SeamMachine,), {"spec": spec})
    run_state_machine_as_test(machine, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))


# -- what each router does with a down mark, by itself -----------------------------------------

@pytest.mark.parametrize("spec", ROUTERS, ids=spec_id)
def test_mark_down_routes_as_if_removed(spec: RouterSpec) -> None:
    """A down node's keys go where they would go with the node removed; no other key moves
    (for the routers whose removal moves only that node's keys); mark_up restores exactly."""
    router = spec.make(list(NODES))
    base = router.get_many(KEYS[:20_000])
    victim = NODES[2]
    try:
        router.mark_down(victim)
    except (TypeError, ValueError) as e:
        assert not spec.mutable or "cannot route around" in str(e) or "down" in str(e)
        assert router.down == frozenset() and np.array_equal(router.get_many(KEYS[:20_000]),
                                                              base)
        return
    after = router.get_many(KEYS[:20_000])
    assert router.down == {victim} and victim in router and len(router) == len(NODES)
    assert victim not in set(after)
    if spec.mutable and spec.name not in ("HAProxyBackend", "NginxUpstream-plain"):
        removed = spec.make(list(NODES))
        spec.remove(removed, victim)
        assert np.array_equal(after, removed.get_many(KEYS[:20_000]))
    router.mark_up(victim)
    assert router.down == frozenset() and router == spec.make(list(NODES))
    assert np.array_equal(router.get_many(KEYS[:20_000]), base)


def test_down_marks_seen_by_every_consumer_hashring() -> None:
    """The issue's report: new = old.copy(); new.mark_down("b")."""
    old = HashRing(["a", "b", "c", "d"])
    new = old.copy()
    new.mark_down("b")
    a, b = old.get_many(KEYS), new.get_many(KEYS)
    share_b = old.ownership()["b"]
    mv = movement(old, new)
    assert mv.exact and mv.moved == share_b > 0.2
    assert set(mv.flows) == {("b", "a"), ("b", "c"), ("b", "d")} & set(mv.flows)
    assert np.array_equal(migration_plan(old, new).moves(KEYS), a != b)
    assert balance(new).shares["b"] == 0 and new.ownership()["b"] == 0
    assert abs(sum(balance(new).shares.values()) - 1) < 1e-12
    back = movement(new, old)  # mark_up: the same share comes back
    assert back.moved == mv.moved and set(back.flows) == {(y, x) for x, y in mv.flows}


# -- live servers --------------------------------------------------------------------------------

def _states(names: list[str]) -> list[Any]:
    """Successive ring states with down marks, weights and membership changes."""
    r = HashRing(names[:4])
    out = [r.copy()]
    for step in (lambda: r.mark_down(names[1]), lambda: r.mark_up(names[1]),
                 lambda: r.mark_down(names[2]), lambda: r.add(names[4]),
                 lambda: r.set_weight(names[0], 2.0), lambda: r.mark_down(names[0]),
                 lambda: r.mark_up(names[2]), lambda: r.remove(names[3])):
        step()
        out.append(r.copy())
    return out


def _seam_migrations(backend: str) -> None:
    import sys

    sys.path.insert(0, os.path.dirname(__file__))
    from live_servers import memcached_servers, redis_servers

    from consistent_hash.integrations.migrate import migrate_memcached, migrate_redis, parse_address

    keys = [f"seam:{i}" for i in range(4000)]
    raw = [k.encode() for k in keys]
    servers = memcached_servers(5) if backend == "memcached" else redis_servers(5)
    with servers as ports:
        names = [f"127.0.0.1:{p}" for p in ports]
        states = _states(names)
        if backend == "memcached":
            from pymemcache.client.base import Client

            def client(node: str) -> Any:
                return Client(parse_address(node))

            def write(c: Any, k: str, v: bytes) -> None:
                assert c.set(k, v, noreply=False)

            def read(c: Any, k: str) -> Any:
                return c.get(k)

            def flush(c: Any) -> None:
                c.flush_all(noreply=False)

            migrate = migrate_memcached
        else:
            import redis

            def client(node: str) -> Any:
                return redis.Redis(*parse_address(node))

            def write(c: Any, k: str, v: bytes) -> None:
                assert c.set(k, v)

            def read(c: Any, k: str) -> Any:
                return c.get(k)

            def flush(c: Any) -> None:
                c.flushall()

            migrate = migrate_redis
        conns = {n: client(n) for n in names}
        try:
            for old, new in zip(states, states[1:], strict=False):
                for c in conns.values():
                    flush(c)
                for k, node in zip(keys, old.get_many(keys), strict=True):
                    write(conns[node], k, k.encode())
                changed = int((old.get_many(raw) != new.get_many(raw)).sum())
                report = migrate(old, new)
                assert report.ok and report.complete
                assert report.moved == changed and report.copied == changed, (old, new)
                for k, node in zip(keys, new.get_many(keys), strict=True):
                    assert read(conns[node], k) == k.encode(), (k, node, new)
        finally:
            for c in conns.values():
                c.close()


def test_seam_migrate_memcached() -> None:
    _seam_migrations("memcached")


def test_seam_migrate_redis() -> None:
    _seam_migrations("redis")


# -- the command line reads the same state -------------------------------------------------------

def test_cli_plan_and_inspect_see_down_marks(tmp_path: Any) -> None:
    """plan between two ring files (one with a node marked down) is exactly the library's
    movement and migration plan, range for range; inspect shows the mark and a share of 0."""
    import json
    import subprocess
    import sys

    old = HashRing(["a", "b", "c", "d"])
    new = old.copy()
    new.mark_down("b")
    ringfile.save(old, tmp_path / "old.ring")
    ringfile.save(new, tmp_path / "new.ring")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}

    def cli(*args: str) -> Any:
        r = subprocess.run([sys.executable, "-m", "consistent_hash", *args], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    plan = cli("plan", "old.ring", "new.ring", "--json")
    want = migration_plan(old, new)
    assert plan["exact"] and plan["moved"] == movement(old, new).moved == want.moved > 0.2
    assert [(r["start"], r["end"], r["from"], r["to"]) for r in plan["ranges"]] == want.ranges
    back = cli("plan", "new.ring", "old.ring", "--json")
    assert back["moved"] == plan["moved"]
    info = cli("inspect", "new.ring", "--json")
    assert info["down"] == ["b"] and info["fingerprint"] == new.fingerprint()
    assert {n["node"]: (n["down"], n["share"]) for n in info["nodes"]}["b"] == (True, 0.0)
