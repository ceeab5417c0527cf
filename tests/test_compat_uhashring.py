"""consistent_hash.compat.uhashring.HashRing against the real uhashring 2.5, built from the
same inputs: every key must go to the same node, and every method must give the same result."""

from __future__ import annotations

import os
import pickle
import random
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import uhashring

from consistent_hash.compat import uhashring as ours

N_KEYS = 100_000


def _keys(n: int, seed: int = 0) -> list[Any]:
    """A mix of what users pass: ASCII and UTF-8 text, ints, bytes (hashed by repr), oddities."""
    rnd = random.Random(seed)
    keys: list[Any] = []
    for i in range(n):
        r = i % 10
        if r < 5:
            keys.append(f"user:{rnd.getrandbits(40)}")
        elif r == 5:
            keys.append("clé-ünïcødé-" + chr(0x4E00 + rnd.randrange(5000)) + str(i))
        elif r == 6:
            keys.append(rnd.getrandbits(rnd.choice([8, 31, 63, 90])) * rnd.choice([1, -1]))
        elif r == 7:
            keys.append(bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(12))))
        elif r == 8:
            keys.append(f"session/{i}/" + "x" * rnd.randrange(300))
        else:
            keys.append(rnd.choice([1.5, None, True, (1, "a"), 0.1 * i, frozenset()]))
    return keys


KEYS = _keys(N_KEYS)

CONFIGS: dict[str, tuple[Any, dict[str, Any]]] = {
    "default-3": (["cache-a", "cache-b", "cache-c"], {}),
    "default-weights": ({f"10.0.0.{i}": i % 3 + 1 for i in range(12)}, {}),
    "default-vnodes": ({"a": {"vnodes": 40, "weight": 2}, "b": {"vnodes": 7}, "c": 3},
                       {"vnodes": 100}),
    "ketama-3": (["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"],
                 {"hash_fn": "ketama"}),
    "ketama-weights-25": ({f"server{i}": i % 4 + 1 for i in range(25)}, {"hash_fn": "ketama"}),
    "ketama-replicas": ([f"n{i}" for i in range(9)], {"hash_fn": "ketama", "replicas": 3}),
}


def _pair(name: str) -> tuple[Any, Any]:
    nodes, kwargs = CONFIGS[name]
    return uhashring.HashRing(nodes, **kwargs), ours.HashRing(nodes, **kwargs)


@pytest.mark.parametrize("name", CONFIGS)
def test_every_key_same_node(name: str) -> None:
    ref, ring = _pair(name)
    expected = [ref.get_node(k) for k in KEYS]
    assert ring.get_many(KEYS).tolist() == expected
    sample = KEYS[:: 7]
    assert [ring.get_node(k) for k in sample] == expected[:: 7]


@pytest.mark.parametrize("name", ["default-weights", "ketama-weights-25"])
def test_membership_and_weight_changes(name: str) -> None:
    ref, ring = _pair(name)
    keys = KEYS[:30_000]
    steps = [
        lambda r: r.add_node("joined", {"weight": 3}),
        lambda r: r.remove_node(next(iter(r.get_nodes()))),
        lambda r: r.add_node("joined", 1),                 # re-weighting an existing node
        lambda r: r.__setitem__("another", {"vnodes": 10}),
        lambda r: r.__delitem__("joined"),
    ]
    for step in steps:
        step(ref)
        step(ring)
        assert ring.get_many(keys).tolist() == [ref.get_node(k) for k in keys]
        assert ring.get_points() == ref.get_points()
        assert ring.distribution == ref.distribution
        assert dict(ring.nodes) == dict(ref.nodes)


@pytest.mark.parametrize("name", CONFIGS)
def test_method_results(name: str) -> None:
    ref, ring = _pair(name)
    keys = KEYS[:1500]
    for k in keys:
        assert ring.get_node_pos(k) == ref.get_node_pos(k)
        assert ring.get(k) == ref.get(k)
        assert ring.get_server(k) == ref.get_server(k)
        assert ring.get_key(k) == ref.get_key(k) == ring.hashi(k)
        assert ring.get_node_weight(k) == ref.get_node_weight(k)
        assert ring.get_node_hostname(k) == ref.get_node_hostname(k)
        assert ring.get_node_port(k) == ref.get_node_port(k)
        assert ring[k] == ref[k] == ring.get_node_instance(k)
    for k in keys[:300]:
        assert list(ring.range(k)) == list(ref.range(k))
        assert list(ring.range(k, 2)) == list(ref.range(k, 2))
        assert list(ring.range(k, 5, unique=False)) == list(ref.range(k, 5, unique=False))
        assert list(ring.iterate_nodes(k)) == list(ref.iterate_nodes(k))
        assert list(ring.iterate_nodes(k, distinct=False)) == list(ref.iterate_nodes(k, False))
    assert list(ring.range("k", unique=False)) == list(ref.range("k", unique=False))
    assert ring.get_points() == ref.get_points()
    assert ring.ring == ref.ring == ring.continuum
    assert ring.size == ref.size
    assert ring.distribution == ref.distribution
    assert list(ring.get_nodes()) == list(ref.get_nodes())
    assert ring.conf == ref.conf
    assert ring._keys == ref._keys


def test_containers_agree() -> None:
    ref, ring = _pair("default-weights")
    text = [k for k in KEYS[:20_000] if isinstance(k, str)]
    expected = [ref.get_node(k) for k in text]
    assert ring.get_many(np.array(text)).tolist() == expected
    assert ring.get_many(tuple(text)).tolist() == expected
    assert ring.get_many(np.array(text, dtype=object)).tolist() == expected
    ints = np.arange(-500, 5000, dtype=np.int64)
    assert ring.get_many(ints).tolist() == [ref.get_node(int(i)) for i in ints]
    raw = np.array([b"a", b"bc", b"\xff\x00z"], dtype="S")
    assert ring.get_many(raw).tolist() == [ref.get_node(b) for b in raw]
    idx = ring.get_indices(text)
    assert [ring.ring_nodes()[i] for i in idx] == expected


def test_instances_hostnames_ports_and_weight_fn() -> None:
    nodes = {
        "n1": {"hostname": "10.0.0.1", "port": 6379, "instance": "I1", "weight": 2},
        "n2": {"hostname": "10.0.0.2", "port": 6380, "instance": "I2"},
        "n3": {"instance": "I3", "vnodes": 80},
    }

    def weight_fn(**conf: Any) -> int:
        return 3 if conf["nodename"] == "n3" else int(conf["weight"])

    ref = uhashring.HashRing(nodes, weight_fn=weight_fn)
    ring = ours.HashRing(nodes, weight_fn=weight_fn)
    assert ring.get_instances() == ref.get_instances()
    for k in KEYS[:5000]:
        assert ring[k] == ref[k]
        assert ring.get_node_port(k) == ref.get_node_port(k)
    ref.regenerate()
    ring.regenerate()
    assert ring.get_points() == ref.get_points()


def test_empty_ring_behaves_like_uhashring() -> None:
    ref, ring = uhashring.HashRing(), ours.HashRing()
    for f in ("get_node", "get", "get_node_pos", "get_server", "get_node_instance"):
        assert getattr(ring, f)("k") is getattr(ref, f)("k") is None
    assert list(ring.range("k")) == list(ref.range("k")) == []
    assert list(ring.iterate_nodes("k")) == list(ref.iterate_nodes("k")) == [None]
    assert ring.get_many(["a", "b"]).tolist() == [None, None]
    ring.add_node("a")
    ref.add_node("a")
    assert ring.get_node("k") == ref.get_node("k") == "a"


def test_errors_match() -> None:
    for bad in (("a", "b"), 5):
        with pytest.raises(ValueError):
            uhashring.HashRing(bad)
        with pytest.raises(ValueError):
            ours.HashRing(bad)
    with pytest.raises(ValueError):
        ours.HashRing({"a": "heavy"})
    with pytest.raises(TypeError):
        ours.HashRing(["a"], hash_fn=5)
    with pytest.raises(TypeError):
        ours.HashRing(["a"], weight_fn=5)
    ring = ours.HashRing(["a"])
    with pytest.raises(KeyError, match="not found"):
        ring.remove_node("zzz")
    assert ring.get_node("k") == "a"


def test_custom_hash_fn_python_path() -> None:
    def fn(key: Any) -> int:
        return hash(str(key)) % 1000003

    ref = uhashring.HashRing(["a", "b", "c"], hash_fn=fn)
    ring = ours.HashRing(["a", "b", "c"], hash_fn=fn)
    keys = KEYS[:3000]
    assert [ring.get_node(k) for k in keys] == [ref.get_node(k) for k in keys]
    assert ring.get_many(keys).tolist() == [ref.get_node(k) for k in keys]
    assert ring.get_points() == ref.get_points()


def test_string_key_is_the_same_as_its_node_label() -> None:
    # "a-0" is exactly a point's label: uhashring takes the first point *greater* than it.
    for kw in ({}, {"hash_fn": "ketama"}):
        ref, ring = uhashring.HashRing(["a", "b"], **kw), ours.HashRing(["a", "b"], **kw)
        labels = [f"{n}-{i}" for n in "ab" for i in range(160)]
        assert [ring.get_node(k) for k in labels] == [ref.get_node(k) for k in labels]


def test_pickle_and_bytes_keys_raw() -> None:
    ring = ours.HashRing({"a": 1, "b": 2}, hash_fn="ketama")
    back = pickle.loads(pickle.dumps(ring))
    assert back.get_many(KEYS[:5000]).tolist() == ring.get_many(KEYS[:5000]).tolist()
    raw = ours.HashRing(["a", "b", "c"], bytes_keys="raw")
    ref = uhashring.HashRing(["a", "b", "c"])
    keys = [f"k{i}".encode() for i in range(2000)]
    assert [raw.get_node(k) for k in keys] == [ref.get_node(k.decode()) for k in keys]
    assert raw.get_many(keys).tolist() == [ref.get_node(k.decode()) for k in keys]


def test_readers_see_whole_snapshots_during_changes() -> None:
    ring = ours.HashRing([f"n{i}" for i in range(8)])
    keys = [f"k{i}" for i in range(20_000)]
    allowed = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "extra"}
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                assert set(ring.get_many(keys).tolist()) <= allowed
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for _ in range(30):
        ring.add_node("extra")
        ring.remove_node("extra")
    stop.set()
    for t in threads:
        t.join()
    assert not errors


def _terminates(code: str) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter with a deadline (uhashring's answer is a hang)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=30, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not return within 30 s: {code}")


def test_in_and_iter_return() -> None:
    """uhashring has only __getitem__, so ``"a" in ring`` calls ring[0], ring[1], ... for
    ever and ``iter(ring)`` yields the instance of each (None) for ever.  Ours: ``in`` is node
    membership and ``iter`` the node names, as every router of this library."""
    r = _terminates(
        "from consistent_hash.compat.uhashring import HashRing\n"
        "ring = HashRing({'a': {'weight': 2}, 'b': {}, 'c': {'instance': 7}})\n"
        "import itertools\n"
        "print(repr(('a' in ring, 'zz' in ring, [] in ring, 0 in ring, list(ring),"
        " list(itertools.islice(iter(ring), 10)))))\n"
        "del ring['b']\n"
        "print(repr(('b' in ring, list(ring), list(HashRing()))))\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "(True, False, False, False, ['a', 'b', 'c'], ['a', 'b', 'c'])",
        "(False, ['a', 'c'], [])"]
    # every name get_nodes() gives, in its order, whatever the mode
    for kw in ({}, {"hash_fn": "ketama"}):
        ring = ours.HashRing(["x", "y", "z"], **kw)
        assert list(ring) == list(ring.get_nodes()) and all(n in ring for n in ring)
