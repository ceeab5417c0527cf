"""RingHasher and KetamaHasher inside pymemcache's own HashClient, over live memcached on
127.0.0.1, on unix sockets and on the IPv6 loopback.

HashClient names a (host, port) server ``"host:port"`` (IPv6 too: ``"::1:11211"``) and a unix
socket by its path (pymemcache 4.0.0, client/hash.py ``_make_client_key``), then looks the
hasher's answer up in its ``clients`` dict: the hashers must give those names back unchanged.
Every key is stored through HashClient, then each server is read directly; KetamaHasher's
placement is also checked against pylibmc (libmemcached) over the same servers.
"""

from __future__ import annotations

import functools
import os
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from live_server_kinds import tcp_memcached, unix_memcached  # noqa: E402
from live_servers import HOST  # noqa: E402

from consistent_hash.integrations import KetamaHasher, RingHasher  # noqa: E402

pm_base = pytest.importorskip("pymemcache.client.base")
pm_hash = pytest.importorskip("pymemcache.client.hash")

_rnd = random.Random(13)
KEYS = [f"k:{i}:{_rnd.getrandbits(48):x}" for i in range(3000)]

HASHERS: dict[str, Callable[[], Any]] = {
    "ring": RingHasher,
    "ring-vnodes-40-md5": functools.partial(RingHasher, vnodes=40, hash="md5"),
    "ketama": functools.partial(KetamaHasher, mode="ketama"),
    "ketama_weighted": functools.partial(KetamaHasher, mode="ketama_weighted"),
}
# the pylibmc behaviors each KetamaHasher mode stands for
PYLIBMC = {"ketama": {"ketama": True}, "ketama_weighted": {"ketama_weighted": True}}


@contextmanager
def _servers(kind: str) -> Iterator[tuple[list[Any], list[str]]]:
    """(HashClient's server list, pylibmc's server list) of live memcached servers."""
    if kind == "tcp":
        with tcp_memcached([HOST] * 3) as addrs:
            yield addrs, [f"{h}:{p}" for h, p in addrs]
    elif kind == "ipv6":
        with tcp_memcached(["::1"] * 3) as addrs:
            yield addrs, [f"[{h}]:{p}" for h, p in addrs]
    elif kind == "unix":
        with unix_memcached(3) as paths:
            yield paths, paths
    else:  # mixed: two TCP servers and a unix socket, as pymemcache's own mixed test
        with tcp_memcached([HOST, HOST]) as addrs, unix_memcached(1) as paths:
            yield [*addrs, *paths], [f"{h}:{p}" for h, p in addrs] + paths


def _direct(server: Any) -> Any:
    return pm_base.Client(server, connect_timeout=5, timeout=10)


def _landed(servers: list[Any], keys: list[str]) -> list[int]:
    where: dict[str, int] = {}
    for i, server in enumerate(servers):
        c = _direct(server)
        try:
            for s in range(0, len(keys), 500):
                for k in c.get_many(keys[s : s + 500]):
                    k = k.decode() if isinstance(k, bytes) else k
                    assert k not in where, f"{k!r} on two servers"
                    where[k] = i
        finally:
            c.close()
    assert len(where) == len(keys), f"{len(keys) - len(where)} keys stored nowhere"
    return [where[k] for k in keys]


def _flush(servers: list[Any]) -> None:
    for server in servers:
        c = _direct(server)
        c.flush_all()
        c.close()


def _name(server: Any) -> str:
    """HashClient's name of a server, as pymemcache 4.0.0 forms it (written out here)."""
    return server if isinstance(server, str) else f"{server[0]}:{server[1]}"


@pytest.mark.parametrize("kind", ["tcp", "unix", "ipv6", "mixed"])
@pytest.mark.parametrize("hasher", list(HASHERS))
def test_hashclient_routes_with_our_hasher(kind: str, hasher: str) -> None:
    with _servers(kind) as (servers, pylibmc_servers):
        _flush(servers)
        client = pm_hash.HashClient(servers, hasher=HASHERS[hasher], connect_timeout=5,
                                    timeout=10)
        try:
            names = [_name(s) for s in servers]
            assert sorted(client.clients) == sorted(names)
            for s in range(0, len(KEYS), 500):
                assert not client.set_many({k: b"v" for k in KEYS[s : s + 500]},
                                           noreply=False)
            got = client.get_many(KEYS[:200])
            assert len(got) == 200
            nodes = [client.hasher.get_node(k) for k in KEYS]
        finally:
            client.close()
        landed = _landed(servers, KEYS)
        # the hasher's answer is HashClient's own name of the server the key is on
        assert nodes == [names[i] for i in landed]
        assert list(client.hasher.get_nodes(KEYS)) == nodes
        assert len(set(landed)) == len(servers)  # every server takes keys

        # and the placement is libmemcached's.  Not for IPv6: libmemcached 1.0.16 resolves
        # hosts with ai_family = AF_INET only (libmemcached/connect.cc, set_hostinfo), so
        # pylibmc cannot reach ::1; nor mixed, which pylibmc refuses ("can't mix transport
        # types").
        if hasher in PYLIBMC and kind in ("tcp", "unix"):
            pylibmc = pytest.importorskip("pylibmc", reason="pylibmc has wheels for <= 3.11")
            _flush(servers)
            mc = pylibmc.Client(pylibmc_servers, behaviors=PYLIBMC[hasher])
            try:
                assert not mc.set_multi({k: b"v" for k in KEYS})
            finally:
                mc.disconnect_all()
            assert _landed(servers, KEYS) == landed


def test_remove_and_readd_keep_names() -> None:
    for make in HASHERS.values():
        h = make()
        names = ["127.0.0.1:11211", "::1:11211", "/run/mc.sock", "cache-b:11212"]
        for n in names:
            h.add_node(n)
        assert {h.get_node(k) for k in KEYS} == set(names)
        h.remove_node("::1:11211")
        h.remove_node("::1:11211")  # HashClient may remove a dead server twice
        assert {h.get_node(k) for k in KEYS} == set(names) - {"::1:11211"}
        h.add_node("::1:11211")
        assert {h.get_node(k) for k in KEYS} == set(names)
        for n in names:
            h.remove_node(n)
        assert h.get_node("x") is None  # HashClient's "every server is down"


def test_bad_node_names() -> None:
    h = KetamaHasher(mode="ketama")
    with pytest.raises(TypeError):
        h.add_node(("127.0.0.1", 11211))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        h.add_node("no-port")
    with pytest.raises(ValueError):
        h.add_node("::1:notaport")


@pytest.mark.parametrize("hasher", ["ring", "ketama"])
def test_pymemcache_own_hash_client_suite(hasher: str) -> None:
    """pymemcache's own tests/test_client_hash.py (installed with its wheel as
    pymemcache.test), with our hasher in every HashClient it builds: all pass (65 in 4.0.0)."""
    import importlib.util

    # Looked up, not imported: its module-level `pytest.mark.unit` fails at import under our
    # --strict-markers (pytest >= 9.1 checks a marker when it is first named)
    if importlib.util.find_spec("pymemcache.test.test_client_hash") is None:
        pytest.skip("pymemcache's tests are not installed")
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, os.path.join(root, "tests", "external",
                                                        "run_pymemcache_suite.py"), hasher],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
    import pymemcache

    if pymemcache.__version__ == "4.0.0":
        assert "65 passed" in proc.stdout
