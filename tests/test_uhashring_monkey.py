"""consistent_hash.compat.uhashring.monkey.patch_memcache against uhashring 2.5's own
``uhashring.monkey.patch_memcache``, both patching python-memcached's ``memcache.Client``
over live memcached servers.

Each patched client runs in its own interpreter (a patch is global and uhashring's cannot be
undone): it stores every key, then every server is read directly; the keys must be where the
uhashring-patched client put them, server for server.  python-memcached is not a dependency
of the library (``pip install python-memcached``; .ci/run installs it).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from typing import Any

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from live_server_kinds import tcp_memcached, unix_memcached  # noqa: E402

pytest.importorskip("memcache", reason="python-memcached is not installed "
                                       "(pip install python-memcached)")
pytest.importorskip("uhashring")
pm_base = pytest.importorskip("pymemcache.client.base")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_rnd = random.Random(5)
KEYS = ([f"user:{i}:{_rnd.getrandbits(40)}" for i in range(2000)]
        + [f"clé-ü-{chr(0x4E00 + _rnd.randrange(9000))}-{i}" for i in range(500)])

RUN = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    which, servers, keys = json.loads(sys.stdin.read())
    servers = [tuple(s) if isinstance(s, list) else s for s in servers]
    if which == "uhashring":
        from uhashring import monkey
    else:
        from consistent_hash.compat.uhashring import monkey
    monkey.patch_memcache()
    import memcache
    mc = memcache.Client(servers)
    half = len(keys) // 2
    for k in keys[:half]:
        assert mc.set(k, "v"), k
    assert not mc.set_multi({k.encode(): "v" for k in keys[half:]})  # bytes keys too
    assert mc.get(keys[0]) == "v" and mc.get_multi(keys[:50]) == {k: "v" for k in keys[:50]}
    mc.disconnect_all()
""")


def _run(which: str, servers: list[Any]) -> None:
    proc = subprocess.run([sys.executable, "-c", RUN, ROOT], input=json.dumps(
        [which, servers, KEYS]), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _direct(address: Any) -> Any:
    return pm_base.Client(address, connect_timeout=5, timeout=10)


def _landed(addresses: list[Any]) -> dict[str, int]:
    where: dict[str, int] = {}
    raw = [k.encode() for k in KEYS]
    for i, address in enumerate(addresses):
        c = _direct(address)
        try:
            for s in range(0, len(raw), 500):
                for k in c.get_many(raw[s : s + 500]):
                    assert k.decode() not in where
                    where[k.decode()] = i
            c.flush_all()
        finally:
            c.close()
    assert len(where) == len(KEYS), f"{len(KEYS) - len(where)} keys stored nowhere"
    return where


def _compare(servers: list[Any], addresses: list[Any]) -> dict[str, int]:
    for a in addresses:
        c = _direct(a)
        c.flush_all()
        c.close()
    _run("uhashring", servers)
    theirs = _landed(addresses)
    _run("ours", servers)
    ours = _landed(addresses)
    assert ours == theirs
    return ours


def test_distinct_hosts_weighted() -> None:
    hosts = [f"127.0.0.{i}" for i in range(2, 7)]
    with tcp_memcached(hosts) as addrs:
        servers = [[f"{h}:{p}", w] for (h, p), w in zip(addrs, [1, 3, 1, 2, 5], strict=True)]
        where = _compare(servers, addrs)
        assert len(set(where.values())) == len(addrs)  # every server holds keys
        # and the placement is the real uhashring ring's, over the nodes the patch builds
        import uhashring

        ring = uhashring.HashRing({h: {"hostname": h, "port": p, "weight": w}
                                   for (h, p), (_, w) in zip(addrs, servers, strict=True)})
        # python-memcached encodes a str key to UTF-8 before it picks the server, and
        # uhashring hashes bytes as their str(): b"user:..." is hashed as "b'user:...'"
        hosts_of = [h for h, _ in addrs]
        assert [hosts_of[where[k]] for k in KEYS] == [ring.get_node(k.encode()) for k in KEYS]


def test_servers_sharing_an_address() -> None:
    """uhashring names nodes by address: three ports on one host are one node, the last."""
    with tcp_memcached(["127.0.0.1"] * 3) as addrs:
        where = _compare([f"{h}:{p}" for h, p in addrs], addrs)
        assert set(where.values()) == {2}


def test_unix_socket_server() -> None:
    """uhashring's patch fails on a unix socket (its _Host has no ip); ours names it by path."""
    with unix_memcached(2) as paths, tcp_memcached(["127.0.0.2"]) as addrs:
        servers = [f"unix:{p}" for p in paths] + [f"{h}:{p}" for h, p in addrs]
        proc = subprocess.run([sys.executable, "-c", RUN, ROOT], input=json.dumps(
            ["uhashring", servers, KEYS[:10]]), capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0 and "AttributeError" in proc.stderr
        _run("ours", servers)
        where = _landed([*paths, *addrs])
        assert len(set(where.values())) == 3


def test_patch_is_idempotent_and_undone() -> None:
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        import memcache
        original = memcache.Client.__init__, memcache.Client._get_server
        from consistent_hash.compat.uhashring import monkey
        monkey.patch_memcache()
        monkey.patch_memcache()
        mc = memcache.Client(["127.0.0.9:1", "127.0.0.8:1"])
        assert sorted(mc.uhashring.get_nodes()) == ["127.0.0.8", "127.0.0.9"]
        assert memcache.Client._old_init is original[0]
        assert mc._get_server("k") == (None, None)     # no server answers
        monkey.unpatch_memcache()
        assert (memcache.Client.__init__, memcache.Client._get_server) == original
        assert not hasattr(memcache.Client, "_old_init")
        assert not hasattr(memcache.Client(["127.0.0.9:1"]), "uhashring")
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code, ROOT], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]
    # uhashring's own patch, called twice, recurses forever: the difference documented
    twice = ("from uhashring import monkey; monkey.patch_memcache(); monkey.patch_memcache()\n"
             "import memcache; memcache.Client(['127.0.0.9:1'])")
    proc = subprocess.run([sys.executable, "-c", twice], capture_output=True, text=True,
                          timeout=60)
    assert "RecursionError" in proc.stderr


def test_without_python_memcached() -> None:
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        sys.modules["memcache"] = None   # as if not installed
        from consistent_hash.compat.uhashring import monkey
        try:
            monkey.patch_memcache()
        except ImportError as e:
            print(e)
    """)
    proc = subprocess.run([sys.executable, "-c", code, ROOT], capture_output=True, text=True,
                          timeout=60)
    assert "pip install python-memcached" in proc.stdout, proc.stderr
