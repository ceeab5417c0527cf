"""Faults with real servers: a memcached server is killed (SIGKILL) in the middle of a load
and restarted on its port, under pymemcache's HashClient with our hashers, and under
health-aware routing (HashRing.mark_down / mark_up) over a replicated pool.

Where each key really is comes from the servers themselves: after the writes every server is
read directly, so the expectations (which keys miss, which stay) are the servers' own
placement, not the library's prediction. Without memcached the tests skip, unless
CONSISTENT_HASH_REQUIRE_SERVERS=1 (then they fail).
"""

from __future__ import annotations

import functools
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

from consistent_hash import HashRing
from consistent_hash.integrations import KetamaHasher, RingHasher

pytest.importorskip("pymemcache")
from live_servers import HOST, killable_server, require, stop, wait_port  # noqa: E402
from pymemcache.client.base import Client  # noqa: E402
from pymemcache.client.hash import HashClient  # noqa: E402
from pymemcache.exceptions import MemcacheUnexpectedCloseError  # noqa: E402

N_KEYS = 6000
SERVERS = 4


def _memcached_on(port: int) -> subprocess.Popen[bytes]:
    """A memcached on a given port (a restart of a killed one), started and listening."""
    args = [require("memcached"), "-l", HOST, "-p", str(port), "-U", "0", "-m", "16", "-t", "1"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args += ["-u", "nobody"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, proc)
    return proc


@contextmanager
def _pool(n: int) -> Iterator[list[tuple[int, subprocess.Popen[bytes]]]]:
    require("memcached")
    with ExitStack() as stack:
        yield [stack.enter_context(killable_server("memcached", memory_mb=16))
               for _ in range(n)]


def _placement(ports: list[int], keys: list[str]) -> dict[str, str]:
    """Where each key is, read from every server directly: key -> "host:port"."""
    owner: dict[str, str] = {}
    for port in ports:
        c = Client((HOST, port))
        found = c.get_many(keys)
        c.close()
        for k in found:
            assert k not in owner, f"{k} is on two servers"
            owner[k] = f"{HOST}:{port}"
    return owner


def _value(k: str) -> bytes:
    return f"v-{k}".encode()


HASHERS: dict[str, Callable[[], Any]] = {
    "RingHasher": functools.partial(RingHasher, vnodes=100),
    "KetamaHasher": functools.partial(KetamaHasher, mode="ketama"),
}


@pytest.mark.parametrize("name", list(HASHERS))
def test_kill_and_restart_under_hashclient(name: str) -> None:
    """Kill one server mid-load: exactly the keys it held miss, every other key keeps its
    server and its value; restart it on its port: every key routes back to where it was."""
    keys = [f"user:{i}" for i in range(N_KEYS)]
    with _pool(SERVERS) as pool:
        ports = [p for p, _ in pool]
        client = HashClient([(HOST, p) for p in ports], hasher=HASHERS[name],
                            retry_attempts=0, dead_timeout=0.5, ignore_exc=True,
                            connect_timeout=1, timeout=1)
        client.set_many({k: _value(k) for k in keys}, noreply=False)
        owner = _placement(ports, keys)
        assert len(owner) == N_KEYS  # every key stored once
        assert all(client.hasher.get_node(k) == owner[k] for k in keys)

        victim_port, victim_proc = pool[1]
        victim = f"{HOST}:{victim_port}"
        share = sum(owner[k] == victim for k in keys) / N_KEYS
        half = N_KEYS // 2
        assert all(client.get(k) == _value(k) for k in keys[:half])  # the load, before
        victim_proc.kill()  # mid-load: SIGKILL, no goodbye
        victim_proc.wait()
        missed = {k for k in keys if client.get(k) != _value(k)}
        assert missed == {k for k in keys if owner[k] == victim}
        moved = [k for k in keys if owner[k] != victim and client.hasher.get_node(k) != owner[k]]
        assert moved == []  # nothing but the dead server's keys goes anywhere else
        assert 0.1 < share < 0.45

        restarted = _memcached_on(victim_port)
        try:
            time.sleep(0.6)  # past dead_timeout: HashClient retries the server and re-adds it
            client.get(keys[0])
            back = [k for k in keys if client.hasher.get_node(k) == owner[k]]
            assert len(back) == N_KEYS  # every key routes back to its own server
            lost = [k for k in keys if owner[k] == victim]
            assert all(client.get(k) is None for k in lost)  # a restarted memcached is empty
            client.set_many({k: _value(k) for k in lost}, noreply=False)
            assert _placement(ports, keys) == owner  # refilled exactly where they were
            assert all(client.get(k) == _value(k) for k in keys)
        finally:
            client.close()
            stop([restarted])
        print(f"\n{name}: server share {share:.4f}, missed {len(missed) / N_KEYS:.4f}, "
              f"other keys moved {len(moved)}, routed back {len(back) / N_KEYS:.4f}")


def test_health_aware_routing_sends_dead_keys_to_their_next_replica() -> None:
    """Every key written to its two replicas; kill one server and mark it down: its keys are
    served by their second replica (no miss), no other key moves; restart and mark it up:
    every key routes to its first replica again."""
    keys = [f"user:{i}" for i in range(N_KEYS)]
    with _pool(SERVERS) as pool:
        ports = [p for p, _ in pool]
        names = [f"{HOST}:{p}" for p in ports]
        clients = {n: Client((HOST, p), connect_timeout=1, timeout=1)
                   for n, p in zip(names, ports, strict=True)}
        ring = HashRing(names, vnodes=100)
        reps = {k: tuple(ring.replicas(k, 2)) for k in keys}
        for n in names:
            clients[n].set_many({k: _value(k) for k in keys if n in reps[k]}, noreply=False)
        primary = {k: r[0] for k, r in reps.items()}

        victim_port, victim_proc = pool[2]
        victim = f"{HOST}:{victim_port}"
        own = [k for k in keys if primary[k] == victim]
        victim_proc.kill()
        victim_proc.wait()
        with pytest.raises((OSError, MemcacheUnexpectedCloseError)):
            clients[victim].get(own[0])  # really gone
        ring.mark_down(victim)
        served = {k: ring.get(k) for k in keys}
        assert all(served[k] == reps[k][1] for k in own)  # the next replica
        moved = [k for k in keys if primary[k] != victim and served[k] != primary[k]]
        assert moved == []
        missed = [k for k in keys if clients[served[k]].get(k) != _value(k)]
        assert missed == []  # the second copies answer for the dead server
        clients[victim].close()

        restarted = _memcached_on(victim_port)
        try:
            ring.mark_up(victim)
            assert all(ring.get(k) == primary[k] for k in keys)
            fresh = Client((HOST, victim_port), connect_timeout=1, timeout=1)
            cold = sum(fresh.get(k) is None for k in own)
            fresh.close()
        finally:
            stop([restarted])
        for c in clients.values():
            c.close()
        print(f"\nmark_down: server share {len(own) / N_KEYS:.4f}, served by next replica "
              f"{len(own)}/{len(own)}, missed {len(missed)}, other keys moved {len(moved)}, "
              f"cold after restart {cold}/{len(own)}")
