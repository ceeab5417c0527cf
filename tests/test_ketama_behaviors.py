"""KetamaRing.from_behaviors and the spy modes against live pylibmc (libmemcached 1.0.16).

As tests/test_ketama.py: live memcached servers on 127.0.0.1, keys stored through
``pylibmc.Client(servers, behaviors=...)``, every server then read directly to see where each
key landed; the ring built from the same servers and behaviors must predict every key.  Also
unix-socket servers (memcached -s), which libmemcached hashes by their path.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from live_server_kinds import unix_memcached  # noqa: E402
from live_servers import HOST, memcached_clusters  # noqa: E402
from test_ketama import KEYS, _flush, _landed  # noqa: E402

from consistent_hash import KetamaRing  # noqa: E402
from consistent_hash.compat.ketama import behaviors_mode  # noqa: E402

pymemcache = pytest.importorskip("pymemcache.client.base")

SIZES = (3, 5, 25)


def _pylibmc() -> Any:
    return pytest.importorskip(
        "pylibmc", reason="pylibmc 1.6.3 (libmemcached 1.0.16) has wheels for CPython <= 3.11")


@pytest.fixture(scope="module")
def clusters() -> Iterator[Callable[[int], list[int]]]:
    with memcached_clusters() as get:
        yield get


def _weights(n: int, weighted: bool) -> list[int]:
    # the first weight > 1: libmemcached sizes its continuum for weighted points from the first
    # server on, so 25 weighted servers do not overrun it (see tests/test_ketama.py)
    return [(i + 1) % 3 + 1 for i in range(n)] if weighted else [1] * n


def _store(specs: list[str], behaviors: dict[str, Any]) -> None:
    mc = _pylibmc().Client(specs, behaviors=behaviors)
    try:
        assert not mc.set_multi({k: b"v" for k in KEYS})
    finally:
        mc.disconnect_all()


# (behaviors, weighted servers?, the mode and hash libmemcached ends up with)
BEHAVIORS: list[tuple[dict[str, Any], bool, tuple[str, str]]] = [
    ({"ketama_weighted": True, "distribution": "consistent ketama spy"}, False,
     ("spy_weighted", "md5")),
    ({"ketama_weighted": True, "distribution": "consistent ketama spy"}, True,
     ("spy_weighted", "md5")),
    ({"distribution": "consistent ketama spy"}, True, ("spy_weighted", "one_at_a_time")),
    ({"distribution": "consistent ketama spy", "hash": "md5"}, True, ("spy_weighted", "md5")),
    ({"distribution": "consistent ketama spy", "hash": "md5"}, False, ("spy", "md5")),
    ({"distribution": "consistent ketama spy"}, False, ("spy", "one_at_a_time")),
    ({"ketama": True}, False, ("ketama", "one_at_a_time")),
    ({"ketama": True, "hash": "md5"}, False, ("ketama", "md5")),
    ({"ketama_weighted": True}, False, ("ketama_weighted", "md5")),
    ({"ketama_weighted": True}, True, ("ketama_weighted", "md5")),
    ({"distribution": "consistent weighted"}, False, ("consistent_weighted", "one_at_a_time")),
    # pylibmc applies hash before ketama_weighted, which sets MD5 keys: the crc is overridden
    ({"hash": "crc", "ketama_weighted": True}, False, ("ketama_weighted", "md5")),
    # ketama_weighted sets MD5 keys, then "consistent" turns the weighted points off again
    ({"ketama_weighted": True, "distribution": "consistent"}, False, ("ketama", "md5")),
    # turning ketama_weighted off turns plain ketama on
    ({"ketama_weighted": False}, False, ("ketama", "one_at_a_time")),
    # "ketama" is applied before "distribution", whatever the dict's order
    ({"distribution": "consistent ketama spy", "ketama": True}, False, ("spy", "one_at_a_time")),
    ({"ketama": True, "ketama_hash": "fnv1a_32", "cas": True, "tcp_nodelay": True}, False,
     ("ketama", "one_at_a_time")),
]

CASES = [(n, b, w, want) for b, w, want in BEHAVIORS for n in SIZES]


@pytest.mark.parametrize("n,behaviors,weighted,want", CASES,
                         ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in b.items())}"
                              f"{'-weighted' if w else ''}" for n, b, w, _ in CASES])
def test_from_behaviors_predicts_pylibmc(clusters: Callable[[int], list[int]], n: int,
                                         behaviors: dict[str, Any], weighted: bool,
                                         want: tuple[str, str]) -> None:
    _pylibmc()
    cluster = clusters(n)
    specs = [f"{HOST}:{p}:{w}" if w != 1 else f"{HOST}:{p}"
             for p, w in zip(cluster, _weights(n, weighted), strict=True)]
    _flush(cluster)
    _store(specs, behaviors)
    landed = _landed(cluster, KEYS)
    ring = KetamaRing.from_behaviors(specs, behaviors)
    assert (ring.mode, ring.hash_name) == want
    assert ring.get_indices(KEYS).tolist() == landed
    assert [ring.nodes.index(ring.get(k)) for k in KEYS[::50]] == landed[::50]


def test_spy_weighted_differs_from_every_other_mode(clusters: Callable[[int], list[int]]) -> None:
    """The gap the issue reported: no other mode reproduces ketama_weighted + spy."""
    _pylibmc()
    cluster = clusters(5)
    specs = [f"{HOST}:{p}" for p in cluster]
    behaviors = {"ketama_weighted": True, "distribution": "consistent ketama spy"}
    _flush(cluster)
    _store(specs, behaviors)
    landed = _landed(cluster, KEYS)
    assert KetamaRing(specs, mode="spy_weighted").get_indices(KEYS).tolist() == landed
    for mode, hash in [("spy", "md5"), ("spy", None), ("ketama_weighted", None)]:
        got = KetamaRing(specs, mode=mode, hash=hash).get_indices(KEYS).tolist()
        assert sum(a == b for a, b in zip(got, landed, strict=True)) < 0.9 * len(KEYS)


# -- unix sockets -------------------------------------------------------------------------

def _landed_unix(paths: list[str], keys: list[bytes]) -> list[int]:
    where: dict[bytes, int] = {}
    for i, path in enumerate(paths):
        c = pymemcache.Client(path)
        try:
            for s in range(0, len(keys), 1000):
                for k in c.get_many(keys[s : s + 1000]):
                    assert k not in where
                    where[k] = i
        finally:
            c.close()
    assert len(where) == len(keys)
    return [where[k] for k in keys]


@pytest.mark.parametrize("behaviors", [
    {"ketama": True}, {"ketama_weighted": True}, {"distribution": "consistent ketama spy"},
    {"ketama_weighted": True, "distribution": "consistent ketama spy"}],
    ids=lambda b: "-".join(f"{k}={v}" for k, v in b.items()))
def test_unix_socket_servers(behaviors: dict[str, Any]) -> None:
    _pylibmc()
    with unix_memcached(3) as paths:
        _store(paths, behaviors)
        landed = _landed_unix(paths, KEYS)
        ring = KetamaRing.from_behaviors(paths, behaviors)
        assert ring.nodes == tuple(paths)
        assert ring.get_indices(KEYS).tolist() == landed


# -- what pylibmc refuses, and what KetamaRing does not model ------------------------------

@pytest.mark.parametrize("behaviors,exc", [
    ({}, ValueError),                                     # libmemcached's default: modula
    ({"ketama": False}, ValueError),                      # modula
    ({"ketama": True, "distribution": "modula"}, ValueError),
    ({"distribution": "random"}, ValueError),
    ({"distribution": "consistent max"}, ValueError),
    ({"distribution": "nope"}, ValueError),
    ({"ketama": True, "hash": "fnv1a_32"}, ValueError),  # a key hash KetamaRing lacks
    ({"ketama": True, "hash": "sha1"}, ValueError),      # not a pylibmc hash
    ({"ketama": True, "hash": 1}, ValueError),           # pylibmc takes hash names only
    ({"ketama": True, "kettle": 1}, ValueError),         # unknown name
    ({"ketama": "yes"}, TypeError),
    ({"ketama": True, "_sort_hosts": True}, ValueError),
])
def test_refused(behaviors: dict[str, Any], exc: type[Exception]) -> None:
    with pytest.raises(exc):
        KetamaRing.from_behaviors(["10.0.0.1:11211", "10.0.0.2:11211"], behaviors)
    with pytest.raises(TypeError):
        KetamaRing.from_behaviors(["10.0.0.1:11211"], [("ketama", True)])  # type: ignore[arg-type]


@pytest.mark.parametrize("behaviors", [{"kettle": 1}, {"hash": "sha1"}, {"distribution": "nope"}])
def test_refused_by_pylibmc_too(behaviors: dict[str, Any]) -> None:
    """The names and values refused above are refused by pylibmc itself."""
    pylibmc = _pylibmc()
    with pytest.raises((ValueError, KeyError)):
        pylibmc.Client(["127.0.0.1:1"], behaviors=behaviors)


def test_pylibmc_names_transcribed() -> None:
    """Our tables of pylibmc's behavior, hash and distribution names are pylibmc's."""
    pylibmc = _pylibmc()
    from pylibmc import consts

    from consistent_hash.compat import ketama

    real = set(consts.all_behaviors) | set(consts.all_callbacks) | {"_retry_timeout"}
    assert real == set(ketama._PYLIBMC_BEHAVIORS)
    assert consts.hashers == ketama._PYLIBMC_HASHES
    assert set(consts.distributions) == set(ketama._PYLIBMC_DISTRIBUTIONS)
    assert pylibmc.libmemcached_version == "1.0.16"


def test_spy_weighted_surface() -> None:
    servers = ["10.0.0.1:11211", "10.0.0.2:11211", "/run/mc.sock"]
    ring = KetamaRing(servers, {"10.0.0.2:11211": 3}, mode="spy_weighted")
    assert repr(ring) == "KetamaRing(['10.0.0.1:11211', '10.0.0.2:11211', '/run/mc.sock'], " \
                         "mode='spy_weighted')"
    import pickle

    back = pickle.loads(pickle.dumps(ring))
    assert back == ring and back.weights == ring.weights
    assert KetamaRing.from_bytes(ring.to_bytes()) == ring
    assert "/run/mc.sock" in ring
    with pytest.raises(ValueError, match="unix socket"):
        KetamaRing(["/run/mc.sock"], mode="twemproxy")
    with pytest.raises(ValueError, match="unix socket"):
        KetamaRing([], mode="libketama").add("/run/mc.sock")
    assert behaviors_mode({"ketama": True}, weighted_server=True) == ("consistent_weighted",
                                                                      "one_at_a_time")


# -- num_replicas: libmemcached's replicas are the next servers in the server list ----------

def _holders(ports: list[int], keys: list[bytes]) -> list[set[int]]:
    """The indices of the servers that hold each key (replicas: more than one)."""
    where: dict[bytes, set[int]] = {k: set() for k in keys}
    for i, port in enumerate(ports):
        c = pymemcache.Client((HOST, port))
        try:
            for s in range(0, len(keys), 1000):
                for k in c.get_many(keys[s : s + 1000]):
                    where[k].add(i)
        finally:
            c.close()
    return [where[k] for k in keys]


REPLICA_BEHAVIORS = [
    ({"ketama": True, "num_replicas": 1}, False),
    ({"ketama": True, "hash": "md5", "num_replicas": 2}, False),
    ({"ketama_weighted": True, "num_replicas": 2}, True),
    ({"distribution": "consistent ketama spy", "num_replicas": 1}, False),
    ({"distribution": "consistent weighted", "num_replicas": 4}, True),
]
REPLICA_CASES = [(n, b, w) for b, w in REPLICA_BEHAVIORS for n in SIZES]


@pytest.mark.parametrize("n,behaviors,weighted", REPLICA_CASES,
                         ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in b.items())}"
                              f"{'-weighted' if w else ''}" for n, b, w in REPLICA_CASES])
def test_num_replicas_predicts_pylibmc(clusters: Callable[[int], list[int]], n: int,
                                       behaviors: dict[str, Any], weighted: bool) -> None:
    """Over the binary protocol libmemcached writes each key to its server and to the
    num_replicas servers after it in the server list (wrapping round), not the next ones on
    the continuum; from_behaviors' ring says the same for every key (the issue: 210 of 996)."""
    pylibmc = _pylibmc()
    cluster = clusters(n)
    specs = [f"{HOST}:{p}:{w}" if w != 1 else f"{HOST}:{p}"
             for p, w in zip(cluster, _weights(n, weighted), strict=True)]
    _flush(cluster)
    mc = pylibmc.Client(specs, binary=True, behaviors=behaviors)
    try:
        assert not mc.set_multi({k: b"v" for k in KEYS})
    finally:
        mc.disconnect_all()
    holders = _holders(cluster, KEYS)
    ring = KetamaRing.from_behaviors(specs, behaviors)
    assert ring.replica_order == "server_list"
    copies = min(n, behaviors["num_replicas"] + 1)
    rows = ring.replica_indices(KEYS, behaviors["num_replicas"] + 1)
    assert rows.shape == (len(KEYS), copies)
    assert [set(r) for r in rows.tolist()] == holders
    assert rows[:, 0].tolist() == ring.get_indices(KEYS).tolist()
    names = ring.replicas_many(KEYS, copies)
    for i in range(0, len(KEYS), 97):
        assert ring.replicas(KEYS[i], copies) == [ring.nodes[j] for j in rows[i]]
        assert names[i].tolist() == ring.replicas(KEYS[i], copies)


def test_num_replicas_over_the_text_protocol_writes_none(
        clusters: Callable[[int], list[int]]) -> None:
    """What the docstring says: the text protocol stores no replicas at all."""
    pylibmc = _pylibmc()
    cluster = clusters(3)
    specs = [f"{HOST}:{p}" for p in cluster]
    _flush(cluster)
    mc = pylibmc.Client(specs, binary=False, behaviors={"ketama": True, "num_replicas": 2})
    try:
        assert not mc.set_multi({k: b"v" for k in KEYS[:500]})
    finally:
        mc.disconnect_all()
    ring = KetamaRing.from_behaviors(specs, {"ketama": True, "num_replicas": 2})
    assert _holders(cluster, KEYS[:500]) == [{i} for i in ring.get_indices(KEYS[:500])]


def test_server_list_replicas_model() -> None:
    """replica_order="server_list" against its definition, and as state."""
    import pickle

    servers = [f"10.0.0.{i}:11211" for i in range(1, 8)]
    ring = KetamaRing.from_behaviors(servers, {"ketama": True, "num_replicas": 2})
    keys = [f"user:{i}" for i in range(5000)]
    primary = ring.get_indices(keys)
    want = (primary[:, None] + np.arange(3)) % len(servers)
    assert ring.replica_indices(keys, 3).tolist() == want.tolist()
    assert ring.replica_indices(keys, 99).tolist() == (
        (primary[:, None] + np.arange(7)) % 7).tolist()
    assert ring.replicas("user:1", 3) == [servers[j] for j in want[1]]
    # the continuum's replicas differ: the wrong answer
    plain = KetamaRing(servers, mode="ketama")
    assert plain.replica_order == "continuum" and plain.get_indices(keys).tolist() == \
        primary.tolist()
    assert (plain.replica_indices(keys, 3) != want).any(axis=1).mean() > 0.5
    assert plain != ring and plain.fingerprint() != ring.fingerprint()
    # every copy of the ring keeps its order
    for back in (pickle.loads(pickle.dumps(ring)), ring.copy(),
                 KetamaRing.from_bytes(ring.to_bytes()), eval(repr(ring), {"KetamaRing":
                                                                         KetamaRing})):
        assert back == ring and back.replica_order == "server_list"
        assert back.replica_indices(keys, 3).tolist() == want.tolist()
    assert KetamaRing.from_bytes(plain.to_bytes()) == plain
    # a missing key: a row of -1 / None, as for the continuum
    pa = pytest.importorskip("pyarrow")
    got = ring.replica_indices(pa.array(["user:1", None]), 2, nulls="none")
    assert got.tolist() == [want[1][:2].tolist(), [-1, -1]]
    assert ring.replicas_many(pa.array([None], pa.string()), 2, nulls="none").tolist() == [
        [None, None]]
    # a server marked down is skipped: the walk goes on to the next one up in the list
    down = ring.copy()
    down.mark_down(servers[2])
    up = [i for i in range(7) if i != 2]
    p = down.get_indices(keys)
    rows = down.replica_indices(keys, 3)
    want_down = [[up[(up.index(int(a)) + x) % 6] for x in range(3)] for a in p]
    assert rows.tolist() == want_down and 2 not in rows
    assert down.replicas("user:1", 3) == [servers[j] for j in want_down[1]]
    assert down.replica_indices(keys, 99).shape == (len(keys), 6)
    # servers added later go to the end of the list, as in libmemcached
    ring.add("10.0.0.9:11211")
    p = ring.get_indices(keys)
    assert ring.replica_indices(keys, 2).tolist() == (
        (p[:, None] + np.arange(2)) % 8).tolist()
    with pytest.raises(Exception, match="EmptyRing|no nodes|empty"):
        KetamaRing([], mode="ketama", replica_order="server_list").replicas("k", 2)
    with pytest.raises(ValueError, match="replica_order"):
        KetamaRing(servers, mode="ketama", replica_order="next")


@pytest.mark.parametrize("value,order", [
    (0, "continuum"), (1, "server_list"), (True, "server_list"),
    (-1, "server_list"),          # libmemcached stores it as uint32: 4294967295 replicas
    (1 << 32, "continuum"),       # ... and 2**32 as 0, as pylibmc shows (behaviors[...] == 0)
])
def test_num_replicas_values(value: int, order: str) -> None:
    ring = KetamaRing.from_behaviors(["a:1", "b:1"], {"ketama": True, "num_replicas": value})
    assert ring.replica_order == order
    with pytest.raises(TypeError, match="num_replicas"):
        KetamaRing.from_behaviors(["a:1"], {"ketama": True, "num_replicas": "2"})


def test_num_replicas_values_as_pylibmc_stores_them() -> None:
    pylibmc = _pylibmc()
    for value, stored in [(1, 1), (True, 1), (-1, (1 << 32) - 1), (1 << 32, 0)]:
        mc = pylibmc.Client(["127.0.0.1:1"], behaviors={"ketama": True, "num_replicas": value})
        assert mc.behaviors["num_replicas"] == stored
