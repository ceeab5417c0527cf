"""consistent_hash.integrations.migrate on live servers: memcached and redis-server processes
started here on 127.0.0.1 (free ports) and stopped after each test. Without the binaries the
live tests skip, unless CONSISTENT_HASH_REQUIRE_SERVERS=1 (then they fail).

The proof: 4 servers filled with 20,000+ keys (several value sizes, TTLs, flags, unicode and
binary keys, large values) through pymemcache's HashClient / redis-py, migrated to 5 servers,
from 5 to 4 and through a weight change; every key is then read from its new owner with its
value and flags, its TTL within a few seconds; keys that do not move are never touched; a key
the application rewrites during the migration keeps its new value; a target that dies mid-run
leaves the sources intact and the report names what was not copied.
"""

from __future__ import annotations

import functools
import json
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from consistent_hash import HashRing, KetamaRing, Rendezvous
from consistent_hash.integrations.migrate import (
    MigrationError,
    MigrationReport,
    _Memcached,
    migrate_memcached,
    migrate_redis,
    parse_address,
)

HOST = "127.0.0.1"
N_KEYS = 20_000


# -- no server needed ------------------------------------------------------------------------

def test_parse_address() -> None:
    assert parse_address("127.0.0.1:11211") == ("127.0.0.1", 11211)
    assert parse_address("cache-a.internal:6379") == ("cache-a.internal", 6379)
    assert parse_address("[::1]:11211") == ("::1", 11211)
    assert parse_address("::1:11211") == ("::1", 11211)  # HashClient's name for ("::1", 11211)
    assert parse_address("/run/memcached.sock") == "/run/memcached.sock"
    assert parse_address("unix:/run/memcached.sock") == "/run/memcached.sock"
    assert parse_address("[fe80::1%eth0]:11211") == ("fe80::1%eth0", 11211)
    for bad in ("cache-a", "host:", ":11211", "host:0", "host:65536", "host:x", "[::1]",
                "unix:", "127.0.0.1:11211:2", "[cache-a]:1"):
        with pytest.raises(ValueError):
            parse_address(bad)


def test_cli_node_lists_take_addresses_and_weights() -> None:
    import argparse

    from consistent_hash.cli._common import UserError
    from consistent_hash.cli.migrate import _layout

    args = argparse.Namespace(vnodes=160, hash="xxh3", seed=0)
    ring = _layout("127.0.0.1:1, 127.0.0.1:2=2,[::1]:3=0.5,::1:4", args)
    assert ring.weights == {"127.0.0.1:1": 1.0, "127.0.0.1:2": 2.0, "[::1]:3": 0.5,
                            "::1:4": 1.0}
    # the old host:port:weight form is refused (weights are written host:port=weight)
    for bad in ("a,b", "127.0.0.1:1,127.0.0.1:1", "127.0.0.1:1=x", ",", "127.0.0.1:2:2",
                "127.0.0.1:1:x"):
        with pytest.raises(UserError):
            _layout(bad, args)


def test_node_names_must_be_addresses() -> None:
    with pytest.raises(ValueError, match="new layout: node name 'cache-c'"):
        migrate_memcached(HashRing(["127.0.0.1:1", "127.0.0.1:2"]),
                          HashRing(["127.0.0.1:1", "cache-c"]))
    with pytest.raises(ValueError, match="batch_size"):
        migrate_redis(HashRing(["127.0.0.1:1"]), HashRing(["127.0.0.1:2"]), batch_size=0)


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("migrate", [migrate_memcached, migrate_redis])
def test_unreachable_server_is_one_error(migrate: Callable[..., MigrationReport]) -> None:
    if migrate is migrate_redis:
        pytest.importorskip("redis")
    port = _dead_port()
    with pytest.raises(MigrationError, match=rf"cannot reach \w+ server 127.0.0.1:{port}: "):
        migrate(HashRing([f"{HOST}:{port}"]), HashRing([f"{HOST}:{port}", f"{HOST}:1"]))


def test_memcached_without_meta_commands_is_refused() -> None:
    """A server that answers "ERROR" to the meta no-op (memcached < 1.6) is named in one
    error before anything is read or written (a fake server here, on 127.0.0.1)."""
    import threading

    listener = socket.socket()
    listener.bind((HOST, 0))
    listener.listen()
    port = listener.getsockname()[1]

    def serve() -> None:  # the one connection the migration opens
        conn, _ = listener.accept()
        with conn, conn.makefile("rb") as f:
            for line in f:
                if line.startswith(b"stats"):
                    conn.sendall(b"STAT version 1.4.25\r\nSTAT curr_items 0\r\nEND\r\n")
                else:
                    conn.sendall(b"ERROR\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with pytest.raises(MigrationError, match=rf"memcached server {HOST}:{port} \(version "
                           r"1.4.25\) has no meta commands: memcached >= 1.6 is needed"):
            migrate_memcached(HashRing([f"{HOST}:{port}"]), HashRing([f"{HOST}:1"]))
    finally:
        listener.close()
        thread.join(5)


# -- memcached -------------------------------------------------------------------------------

pymemcache = pytest.importorskip("pymemcache")
from live_servers import killable_server, memcached_servers, redis_servers  # noqa: E402
from pymemcache import serde  # noqa: E402
from pymemcache.client.base import Client  # noqa: E402
from pymemcache.client.hash import HashClient  # noqa: E402

from consistent_hash.integrations import KetamaHasher, RingHasher  # noqa: E402


def _value(i: int) -> Any:
    """Values of several sizes and types (so several client flags): str, int, bytes, a
    pickled dict, 100 KB every 1,000th key, ~900 KB for five keys."""
    if i in (7, 4007, 8007, 12007, 16007):
        return bytes([i % 251]) * 900_000
    if i % 1000 == 3:
        return f"{i}".encode() * (100_000 // len(str(i)))
    kind = i % 4
    if kind == 0:
        return f"value-{i}" * (1 + i % 50)
    if kind == 1:
        return i * 7
    if kind == 2:
        return bytes(range(256)) * (1 + i % 8)
    return {"id": i, "tags": ["a", "b"][: i % 3]}


def _ttl(i: int) -> int:
    return 0 if i % 3 else 600 + i % 1000  # a third of the keys expire in 10-27 minutes


def _keys() -> list[str]:
    return [f"user:{i}" if i % 10 else f"üñï-{i}" for i in range(N_KEYS)]


# Keys only a raw client can write: bytes HashClient would refuse, and keys with a space, a
# NUL or a newline, which the text protocol carries in base64 (meta "b" flag). And TTLs over
# memcached's 30-day relative limit, which must be written as a unix time.
ODD_KEYS = [b"bin:\xff\xfe\x00%d" % i for i in range(50)] + \
           [b"with space %d\n" % i for i in range(50)] + [b"long:" + b"x" * 240]
LONG_TTL = 40 * 24 * 3600


def _names(ports: list[int]) -> list[str]:
    return [f"{HOST}:{p}" for p in ports]


def _conn(node: str) -> _Memcached:
    return _Memcached(parse_address(node), 5.0)


def _snapshot(router: Any, keys: list[bytes]) -> dict[bytes, tuple[bytes, int, int, int]]:
    """Every key as its owner under ``router`` holds it: (value, flags, ttl, cas)."""
    owners = router.get_many(keys)
    out: dict[bytes, tuple[bytes, int, int, int]] = {}
    for node in set(owners):
        mine = [k for k, o in zip(keys, owners, strict=True) if o == node]
        c = _conn(node)
        for s in range(0, len(mine), 500):
            for k, got in zip(mine[s:s + 500], c.get_many(mine[s:s + 500]), strict=True):
                assert got is not None and not isinstance(got, Exception), (node, k)
                out[k] = got  # type: ignore[assignment]
        c.close()
    return out


def _big_keys(old: Any, new: Any) -> list[bytes]:
    """Four keys for 1,000,000-byte values (memcached's 1 MiB item limit, chunked items):
    three that move, one that does not."""
    names = [b"big:%d" % i for i in range(200)]
    moving = [k for k in names if old.get(k) != new.get(k)]
    return moving[:3] + [k for k in names if old.get(k) == new.get(k)][:1]


def _fill_memcached(old: Any, hasher: Any, keys: list[str], big: list[bytes]) -> None:
    """Write every key through HashClient (with ``hasher``), or, for a layout HashClient
    cannot express (weights), through a client per server routed by ``old``; then the odd
    and the big keys through the raw client."""
    addrs = [parse_address(n) for n in old.nodes]
    if hasher is not None:
        client = HashClient(addrs, hasher=hasher, serde=serde.pickle_serde,
                            allow_unicode_keys=True)
        for ttl in {_ttl(i) for i in range(len(keys))}:
            batch = {k: _value(i) for i, k in enumerate(keys) if _ttl(i) == ttl}
            assert not client.set_many(batch, expire=ttl, noreply=False)
        client.close()
    else:
        owners = old.get_many(keys)
        for node in old.nodes:
            c = Client(parse_address(node), serde=serde.pickle_serde, allow_unicode_keys=True)
            for i, (k, o) in enumerate(zip(keys, owners, strict=True)):
                if o == node:
                    assert c.set(k, _value(i), expire=_ttl(i), noreply=False)
            c.close()
    for k, o in zip(ODD_KEYS, old.get_many(ODD_KEYS), strict=True):
        c = _conn(o)
        ttl = int(time.time()) + LONG_TTL if k.startswith(b"bin") else 0
        assert c.add_many([(k, b"odd" + k, 5, ttl)])[0] not in (False,)
        c.close()
    for k, o in zip(big, old.get_many(big), strict=True):
        c = _conn(o)
        assert c.add_many([(k, bytes([len(k)]) * 1_000_000, 9, 0)])[0] not in (False,)
        c.close()


def _two_to_three(ports: list[int], keys: list[str], value: bytes
                  ) -> tuple[list[str], HashRing, HashRing]:
    """Keys stored through a HashClient on the first two of three memcached servers; the
    rings before and after the third joins."""
    names = _names(ports)
    client = HashClient([parse_address(n) for n in names[:2]], hasher=RingHasher)
    client.set_many({k: value for k in keys}, noreply=False)
    client.close()
    return names, HashRing(names[:2]), HashRing(names)


def _pairs(old: Any, new: Any, keys: list[bytes]) -> dict[tuple[str, str], list[bytes]]:
    out: dict[tuple[str, str], list[bytes]] = {}
    for k, a, b in zip(keys, old.get_many(keys), new.get_many(keys), strict=True):
        if a != b:
            out.setdefault((a, b), []).append(k)
    return out


def _layouts(scenario: str, names: list[str]) -> tuple[Any, Any, Any]:
    """(old, new, the HashClient hasher for old or None) for 5 server names."""
    if scenario == "join":
        return HashRing(names[:4]), HashRing(names), RingHasher
    if scenario == "leave":
        return HashRing(names), HashRing(names[:4]), RingHasher
    if scenario == "weight":
        return (HashRing(names[:4]), HashRing({**dict.fromkeys(names[:4], 1.0), names[0]: 2.0}),
                None)
    assert scenario == "ketama-join"
    return (KetamaRing(names[:4], mode="ketama"), KetamaRing(names, mode="ketama"),
            functools.partial(KetamaHasher, mode="ketama"))


@pytest.mark.parametrize("scenario", ["join", "leave", "weight", "ketama-join"])
def test_memcached_migration(scenario: str) -> None:
    keys = _keys()
    with memcached_servers(5, memory_mb=64) as ports:
        names = _names(ports)
        old, new, hasher = _layouts(scenario, names)
        big = _big_keys(old, new)
        _fill_memcached(old, hasher, keys, big)
        raw = [k.encode() for k in keys] + ODD_KEYS + big
        t_first = time.monotonic()  # a key's two TTL reads lie between this and the second snapshot
        before = _snapshot(old, raw)
        pairs = _pairs(old, new, raw)
        # The application writes one moving key on its new owner during the migration (after
        # the first batch, in the last pair to be copied): it must keep that value.
        last = max(pairs)
        rewritten = pairs[last][0]
        calls: list[tuple[int, int]] = []

        def progress(done: int, total: int) -> None:
            if not calls:
                c = Client(parse_address(last[1]), serde=serde.pickle_serde)
                assert c.set(rewritten, "rewritten", noreply=False)
                c.close()
            calls.append((done, total))

        report = migrate_memcached(old, new, progress=progress)
        moved = sum(len(v) for v in pairs.values())
        assert calls[-1] == (moved, moved) and len(calls) > 1
        assert report.complete and report.ok
        # Every server that loses keys was listed; one that the exact analysis of two rings
        # shows loses nothing (the heavier server of a weight change, the staying servers
        # when one leaves) is not.
        losing = {s for s, _ in pairs}
        assert set(report.sources) == losing == {"leave": {names[4]},
                                                 "weight": set(names[1:4])}.get(
                                                     scenario, set(names[:4]))
        on_losing = sum(o in losing for o in old.get_many(raw))
        assert report.scanned == on_losing
        assert report.moved == moved and report.unchanged == on_losing - moved
        assert report.copied == moved - 1 and report.skipped == 1
        assert report.failed == report.vanished == report.invalidated == report.deleted == 0
        assert {p: r.moved for p, r in report.pairs.items()} == \
               {p: len(v) for p, v in pairs.items()}
        assert report.bytes == sum(len(before[k][0]) for v in pairs.values() for k in v) - \
            len(before[rewritten][0])
        json.dumps(report.to_dict())
        # Every key on its new owner, with its value, flags and TTL; the unmoved keys and the
        # old copies untouched (same CAS); the rewritten key with the application's value.
        after = _snapshot(new, raw)
        old_copies = _snapshot(old, raw)
        elapsed = time.monotonic() - t_first  # bounds the time between a key's two TTL reads
        moving = {k for v in pairs.values() for k in v}
        for k in raw:
            value, flags, ttl, cas = before[k]
            if k == rewritten:
                assert after[k][0] == b"rewritten"
                continue
            a_value, a_flags, a_ttl, a_cas = after[k]
            assert (a_value, a_flags) == (value, flags), k
            if ttl < 0:
                assert a_ttl == -1
            else:
                assert abs(a_ttl - ttl) <= 3 + elapsed, (k, ttl, a_ttl)
            assert old_copies[k][3] == cas, k  # the source copy is untouched
            if k not in moving:
                assert a_cas == cas, k  # an unmoved key is the same item
        # A client over the new servers finds every key where it looks.
        if hasher is not None:
            client = HashClient([parse_address(n) for n in new.nodes], hasher=hasher,
                                serde=serde.pickle_serde, allow_unicode_keys=True)
            got = {}
            for s in range(0, len(keys), 2000):
                got.update(client.get_many(keys[s:s + 2000]))
            client.close()
            assert len(got) == len(keys)
            for i, k in enumerate(keys):
                assert got[k] == ("rewritten" if k.encode() == rewritten else _value(i)), k
        # After the switch: a second pass with delete=True copies nothing (all present) and
        # removes every moved key from its old owner, and nothing else.
        second = migrate_memcached(old, new, delete=True)
        assert second.copied == 0 and second.skipped == moved and second.deleted == moved
        assert second.failed == 0
        for node in old.nodes:
            c = _conn(node)
            mine = [k for k, o in zip(raw, old.get_many(raw), strict=True) if o == node]
            held = {k for k, g in zip(mine, c.get_many(mine), strict=True) if g is not None}
            c.close()
            assert held == {k for k in mine if k not in moving}


def test_memcached_dry_run_writes_nothing_and_rate_limit() -> None:
    keys = [f"k{i}" for i in range(3000)]
    with memcached_servers(3) as ports:
        names, old, new = _two_to_three(ports, keys, b"v")
        dry = migrate_memcached(old, new, dry_run=True)
        expected = len(_pairs(old, new, [k.encode() for k in keys]).get(
            (names[0], names[2]), [])) + len(_pairs(old, new, [k.encode() for k in keys]).get(
                (names[1], names[2]), []))
        assert dry.dry_run and dry.moved == expected > 500 and dry.copied == 0
        c = _conn(names[2])
        assert c.stats()["curr_items"] == "0"
        c.close()
        t0 = time.monotonic()
        real = migrate_memcached(old, new, batch_size=100, rate=2 * expected)
        # 2 x expected keys per second, 100 a batch: the last batch starts after
        # (expected - 100) / rate seconds
        assert time.monotonic() - t0 >= 0.95 * (expected - 100) / (2 * expected)
        assert real.copied == expected == real.moved


def test_enumeration_is_checked_against_curr_items() -> None:
    """The enumeration is checked against curr_items; expired keys are reclaimed first."""
    with memcached_servers(2) as ports:
        names = _names(ports)
        c = Client(parse_address(names[0]))
        c.set_many({f"fresh{i}": b"x" for i in range(1000)}, noreply=False)
        c.set_many({f"short{i}": b"x" for i in range(300)}, expire=1, noreply=False)
        c.close()
        time.sleep(2.1)
        report = migrate_memcached(HashRing(names[:1]), HashRing(names[1:]), dry_run=True)
        src = report.sources[names[0]]
        assert src.complete and src.scanned == 1000 == src.items == report.moved


def test_failing_target_leaves_sources_intact() -> None:
    keys = [f"user:{i}" for i in range(4000)]
    with memcached_servers(4) as ports, killable_server("memcached") as (port5, proc):
        names = _names(ports) + [f"{HOST}:{port5}"]
        old, new = HashRing(names[:4]), HashRing(names)
        client = HashClient([parse_address(n) for n in names[:4]], hasher=RingHasher)
        client.set_many({k: k.encode() * 3 for k in keys}, noreply=False)
        client.close()
        raw = [k.encode() for k in keys]
        before = _snapshot(old, raw)

        def progress(done: int, total: int) -> None:
            if proc.poll() is None:
                proc.kill()  # the new server dies after the first batch
                proc.wait()

        report = migrate_memcached(old, new, batch_size=100, delete=True, progress=progress)
        assert not report.ok and report.failed > 0
        assert report.copied == 100 and report.copied + report.failed == report.moved
        assert report.deleted == report.copied  # only what the target confirmed
        for p in report.pairs.values():
            assert p.copied + p.failed == p.moved
            if p.failed:
                assert any("target" in e and names[4] in e for e in p.errors)
                assert len(p.failed_keys) == min(p.failed, 1000)
        failed = {k for p in report.pairs.values() for k in p.failed_keys}
        deleted = set(raw) - failed - {k for k in raw if new.get(k) == old.get(k)}
        # every key that was not copied is still on its source, unchanged
        after = _snapshot(old, sorted(set(raw) - deleted))
        for k, v in after.items():
            assert v == before[k]
        d = report.to_dict()
        assert d["ok"] is False and d["totals"]["failed"] == report.failed


def test_source_rewritten_during_the_copy_is_not_left_stale(monkeypatch: Any) -> None:
    """The application rewrites a key on its old owner after the migration read it: the older
    copy is taken back off the new owner (by CAS), so the client misses and refills instead of
    reading the older value."""
    import consistent_hash.integrations.migrate as m

    keys = [f"k{i}" for i in range(2000)]
    with memcached_servers(3) as ports:
        names, old, new = _two_to_three(ports, keys, b"old")
        real = m._Memcached.add_many
        victims: list[bytes] = []

        def add_many(self: Any, items: Any) -> Any:
            if not victims:
                key = items[0][0]
                victims.append(key)
                c = Client(parse_address(old.get(key)))
                c.set(key, b"newer", noreply=False)  # the application, on the old owner
                c.close()
            return real(self, items)

        monkeypatch.setattr(m._Memcached, "add_many", add_many)
        report = migrate_memcached(old, new)
        assert report.invalidated == 1 and report.copied == report.moved - 1
        assert report.ok
        (key,) = victims
        target, source = _conn(new.get(key)), _conn(old.get(key))
        assert target.get_many([key]) == [None]
        assert source.get_many([key])[0][0] == b"newer"  # type: ignore[index]
        target.close()
        source.close()


def test_unix_socket_servers() -> None:
    """Node names that are unix socket paths (as HashClient names such servers)."""
    import os
    import subprocess
    import tempfile

    from live_servers import require, stop

    binary = require("memcached")
    # memcached runs as nobody under root: a directory nobody can reach (pytest's tmp_path
    # is not), removed at the end.
    tmp = tempfile.TemporaryDirectory(prefix="ch-migrate-")
    os.chmod(tmp.name, 0o777)
    paths = [os.path.join(tmp.name, f"mc{i}.sock") for i in range(2)]
    procs = []
    try:
        for path in paths:
            args = [binary, "-s", path, "-a", "0777", "-m", "16", "-t", "1"]
            if os.geteuid() == 0:
                args += ["-u", "nobody"]
            procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 10
        while not all(os.path.exists(p) for p in paths) and time.monotonic() < deadline:
            time.sleep(0.02)
        keys = [f"k{i}" for i in range(1000)]
        client = HashClient(paths[:1], hasher=RingHasher)
        client.set_many({k: k.encode() for k in keys}, noreply=False)
        client.close()
        report = migrate_memcached(HashRing(paths[:1]), HashRing(paths))
        assert report.ok and report.copied == report.moved > 300
        client = HashClient(paths, hasher=RingHasher)
        assert client.get_many(keys) == {k: k.encode() for k in keys}
        client.close()
    finally:
        stop(procs)
        tmp.cleanup()


# -- redis -----------------------------------------------------------------------------------

redis = pytest.importorskip("redis")


def _fill_redis(old: Any, n: int) -> dict[str, Any]:
    """n keys of every type (string of several sizes, hash, list, set, sorted set, stream),
    a third with a TTL, written to their owners under ``old`` with redis-py."""
    keys = [f"user:{i}" if i % 10 else f"üñï-{i}" for i in range(n)]
    clients = {node: redis.Redis(*parse_address(node)) for node in old.nodes}
    pipes = {node: c.pipeline(transaction=False) for node, c in clients.items()}
    for i, (k, node) in enumerate(zip(keys, old.get_many(keys), strict=True)):
        p = pipes[node]
        kind = i % 6
        if kind == 0:
            p.set(k, b"s" * (i % 3000) if i % 1000 != 6 else b"L" * 600_000)
        elif kind == 1:
            p.hset(k, mapping={"a": i, "b": "x" * (i % 40)})
        elif kind == 2:
            p.rpush(k, *range(i % 20 + 1))
        elif kind == 3:
            p.sadd(k, *[f"m{j}" for j in range(i % 10 + 1)])
        elif kind == 4:
            p.zadd(k, {f"m{j}": j * 0.5 for j in range(i % 10 + 1)})
        else:
            p.xadd(k, {"f": str(i)})
        if i % 3 == 0:
            p.pexpire(k, 600_000 + i)
    for p in pipes.values():
        p.execute()
    for c in clients.values():
        c.close()
    return {"keys": keys, "binary": [b"bin:\xff\x00 %d" % i for i in range(20)]}


_READ = {b"string": ("get", ()), b"hash": ("hgetall", ()), b"list": ("lrange", (0, -1)),
         b"set": ("smembers", ()), b"zset": ("zrange", (0, -1)), b"stream": ("xrange", ())}


def _redis_state(router: Any, keys: list[bytes]) -> dict[bytes, tuple[Any, int]]:
    """Every key as its owner under ``router`` holds it: (value, pttl), the value read by
    content whatever its type (a restored set or hash may be encoded, and so dumped,
    differently), None when absent."""
    out = {}
    owners = router.get_many(keys)
    for node in set(owners):
        c = redis.Redis(*parse_address(node))
        mine = [k for k, o in zip(keys, owners, strict=True) if o == node]
        p = c.pipeline(transaction=False)
        for k in mine:
            p.type(k)
        kinds = p.execute()
        p = c.pipeline(transaction=False)
        for k, kind in zip(mine, kinds, strict=True):
            if kind == b"none":
                p.exists(k)
            else:
                command, args = _READ[kind]
                getattr(p, command)(k, *args, **({"withscores": True} if kind == b"zset"
                                                 else {}))
            p.pttl(k)
        got = p.execute()
        for j, (k, kind) in enumerate(zip(mine, kinds, strict=True)):
            out[k] = (None if kind == b"none" else got[2 * j], got[2 * j + 1])
        c.close()
    return out


def _calls(node: str, command: str) -> int:
    c = redis.Redis(*parse_address(node))
    stats = c.info("commandstats")
    c.close()
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


@pytest.mark.parametrize("scenario", ["join", "leave", "weight"])
def test_redis_migration(scenario: str) -> None:
    with redis_servers(5) as ports:
        names = _names(ports)
        if scenario == "join":
            old, new = HashRing(names[:4]), HashRing(names)
        elif scenario == "leave":
            old, new = Rendezvous(names), Rendezvous(names[:4])
        else:
            old = HashRing(names[:4])
            new = HashRing({**dict.fromkeys(names[:4], 1.0), names[1]: 2.0})
        data = _fill_redis(old, N_KEYS)
        for k, node in zip(data["binary"], old.get_many(data["binary"]), strict=True):
            c = redis.Redis(*parse_address(node))
            c.set(k, k * 2)
            c.close()
        raw = [k.encode() for k in data["keys"]] + data["binary"]
        t0 = time.monotonic()
        before = _redis_state(old, raw)
        pairs = _pairs(old, new, raw)
        last = max(pairs)
        rewritten = pairs[last][0]
        dumps_before = {n: _calls(n, "dump") for n in names}

        calls: list[int] = []

        def progress(done: int, total: int) -> None:
            if not calls:
                c = redis.Redis(*parse_address(last[1]))
                c.set(rewritten, b"rewritten")
                c.close()
            calls.append(done)

        report = migrate_redis(old, new, progress=progress)
        moved = sum(len(v) for v in pairs.values())
        # Rendezvous has no exact analysis: every old server is listed.
        listed = set(names) if scenario == "leave" else {s for s, _ in pairs}
        assert set(report.sources) == listed
        assert report.scanned == sum(o in listed for o in old.get_many(raw))
        assert report.ok and report.moved == moved
        assert report.copied == moved - 1 and report.skipped == 1 and report.failed == 0
        assert {p: r.moved for p, r in report.pairs.items()} == \
               {p: len(v) for p, v in pairs.items()}
        # Only the moving keys were read (DUMP), from their old owners: once to copy, once to
        # check that they did not change meanwhile (not the skipped one); and each target
        # dumped each key it was sent (the copy as it holds it).
        for n in names:
            out = sum(len(v) for (s, _), v in pairs.items() if s == n)
            into = sum(len(v) for (_, t), v in pairs.items() if t == n)
            assert _calls(n, "dump") - dumps_before[n] == 2 * out - (n == last[0]) + into
        after = _redis_state(new, raw)
        old_after = _redis_state(old, raw)
        # from before the first snapshot to after the second: it bounds the time between a
        # key's two PTTL reads (measured before the second, a loaded machine broke the bound)
        elapsed = time.monotonic() - t0
        for k in raw:
            if k == rewritten:
                continue
            payload, pttl = before[k]
            assert after[k][0] == payload, k
            assert old_after[k][0] == payload  # the source copy is intact
            if pttl < 0:
                assert after[k][1] == -1
            else:
                assert pttl - 3000 - 1000 * elapsed <= after[k][1] <= pttl + 50, k
        c = redis.Redis(*parse_address(last[1]))
        assert c.get(rewritten) == b"rewritten"
        c.close()
        second = migrate_redis(old, new, delete=True)
        assert second.copied == 0 and second.skipped == moved == second.deleted
        state = _redis_state(old, raw)
        moving = {k for v in pairs.values() for k in v}
        assert {k for k, (p, _) in state.items() if p is not None} == set(raw) - moving


def test_redis_failing_target_leaves_sources_intact() -> None:
    with redis_servers(2) as ports, killable_server("redis-server") as (port3, proc):
        names = _names(ports) + [f"{HOST}:{port3}"]
        old, new = HashRing(names[:2]), HashRing(names)
        data = _fill_redis(old, 4000)
        raw = [k.encode() for k in data["keys"]]
        before = _redis_state(old, raw)

        def progress(done: int, total: int) -> None:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

        report = migrate_redis(old, new, batch_size=100, progress=progress, timeout=2.0)
        assert report.copied == 100 and report.failed == report.moved - 100 > 0
        assert all(names[2] in e for p in report.pairs.values() for e in p.errors)
        state = _redis_state(old, raw)
        assert all(state[k][0] == before[k][0] for k in raw)


def test_redis_source_rewritten_during_the_copy(monkeypatch: Any) -> None:
    """delete=True removes a moved key from its old owner only if it still holds the value
    that was copied."""
    with redis_servers(3) as ports:
        names = _names(ports)
        old, new = HashRing(names[:2]), HashRing(names)
        data = _fill_redis(old, 2000)
        real = redis.client.Pipeline.restore
        victims: list[bytes] = []

        def restore(self: Any, key: Any, *args: Any, **kw: Any) -> Any:
            if not victims:
                victims.append(key)
                c = redis.Redis(*parse_address(old.get(key)))
                c.set(key, b"newer")  # the application, on the old owner
                c.close()
            return real(self, key, *args, **kw)

        monkeypatch.setattr(redis.client.Pipeline, "restore", restore)
        report = migrate_redis(old, new, delete=True)
        # the older copy was taken back off the target, and the source keeps the newer value
        assert report.ok and report.copied == report.moved - 1 and report.invalidated == 1
        assert report.deleted == report.moved - 1
        (key,) = victims
        c = redis.Redis(*parse_address(old.get(key)))
        assert c.get(key) == b"newer"
        c.close()
        c = redis.Redis(*parse_address(new.get(key)))
        assert c.exists(key) == 0
        c.close()
        again = migrate_redis(old, new)  # a second pass copies the newer value
        assert again.copied == 1 and again.skipped == again.moved - 1
        c = redis.Redis(*parse_address(new.get(key)))
        assert c.get(key) == b"newer"
        c.close()
        moved = [k for k in data["keys"] if old.get(k) != new.get(k)]
        state = _redis_state(old, [k.encode() for k in moved])
        assert [k for k, (v, _) in state.items() if v is not None] == [key]


# -- the command line ------------------------------------------------------------------------

def _cli(*args: str) -> Any:
    import subprocess

    from test_cli import _env

    return subprocess.run([sys.executable, "-m", "consistent_hash", "migrate", *args],
                          capture_output=True, text=True, timeout=120, env=_env())


def test_cli_migrate_memcached() -> None:
    keys = [f"k{i}" for i in range(4000)]
    with memcached_servers(3) as ports:
        names = _names(ports)
        client = HashClient([parse_address(n) for n in names[:2]], hasher=RingHasher)
        client.set_many({k: b"v" * 10 for k in keys}, noreply=False)
        client.close()
        old, new = ",".join(names[:2]), ",".join(names)
        dry = _cli("memcached", "--from", old, "--to", new, "--dry-run", "--json")
        assert dry.returncode == 0, dry.stderr
        d = json.loads(dry.stdout)
        moved = len([k for k in keys if HashRing(names).get(k) == names[2]])
        assert d["dry_run"] and d["totals"]["moved"] == moved and d["totals"]["copied"] == 0
        r = _cli("memcached", "--from", old, "--to", new)
        assert r.returncode == 0, r.stderr
        assert f"copied {moved:,}" in r.stdout and names[2] in r.stdout
        client = HashClient([parse_address(n) for n in names], hasher=RingHasher)
        assert len(client.get_many(keys)) == len(keys)
        client.close()


def test_cli_migrate_redis_and_errors(tmp_path: Any) -> None:
    with redis_servers(3) as ports:
        names = _names(ports)
        _fill_redis(HashRing(names[:2]), 2000)
        from consistent_hash import ringfile

        ringfile.save(HashRing(names[:2]), tmp_path / "old.json")  # a ring file
        (tmp_path / "new.txt").write_text("\n".join(names) + "\n")  # a node list file
        r = _cli("redis", "--from", str(tmp_path / "old.json"), "--to",
                 f"@{tmp_path / 'new.txt'}", "--json")
        assert r.returncode == 0, r.stderr
        d = json.loads(r.stdout)
        assert d["ok"] and d["totals"]["copied"] == d["totals"]["moved"] > 0
    port = _dead_port()
    bad = _cli("memcached", "--from", f"{HOST}:{port}", "--to", f"{HOST}:{port},{HOST}:1")
    assert bad.returncode == 2
    assert bad.stderr == (f"consistent-hash: error: cannot reach memcached server "
                          f"{HOST}:{port}: [Errno 111] Connection refused\n")
    bad = _cli("redis", "--from", "a,b", "--to", "a,b,c")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "node 'a': expected host:port" in bad.stderr
    bad = _cli("nosuch", "--from", "a", "--to", "b")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_cli_progress_bar_on_a_terminal() -> None:
    from test_cli import run_with_tty_stderr

    with memcached_servers(3) as ports:
        names = _names(ports)
        client = HashClient([parse_address(n) for n in names[:2]], hasher=RingHasher)
        client.set_many({f"k{i}": b"v" for i in range(5000)}, noreply=False)
        client.close()
        rc, out, err = run_with_tty_stderr("migrate", "memcached", "--from",
                                           ",".join(names[:2]), "--to", ",".join(names),
                                           "--batch-size", "50")
        assert rc == 0, err
        assert "migrate [" in err and "100.0%" in err and "#" not in out


# -- the demo --------------------------------------------------------------------------------

def test_resize_demo_hit_rates() -> None:
    """Through a resize 8 -> 9 servers: modulo keeps ~1/9 of the hits, the ring ~8/9, the ring
    with migrate_memcached first all of them."""
    from consistent_hash.analysis import movement
    from consistent_hash.cli.demo import resize_demo

    memcached_servers(0)  # skips (or fails) without memcached
    r = resize_demo(30_000, 8, rounds_after=3)
    got = {x["strategy"]: x for x in r["results"]}
    mod, ring, mig = got["modulo"], got["ring"], got["ring + migrate"]
    assert all(h == 1.0 for x in r["results"] for h in x["hit_rates"][: r["rounds_before"]])
    assert 0.09 < mod["first_after"] < 0.14
    keys = [f"user:{i}" for i in range(30_000)]
    names = r["nodes"]
    kept = 1 - movement(HashRing(names[:8]), HashRing(names), keys).moved
    assert abs(ring["first_after"] - kept) < 0.02
    assert mig["first_after"] == 1.0 and all(h == 1.0 for h in mig["hit_rates"])
    assert mig["migration"]["failed"] == 0 and mig["migration"]["copied"] > 0


def test_cli_demo_resize(tmp_path: Any) -> None:
    import subprocess

    from test_cli import _env, png_size

    memcached_servers(0)  # skips (or fails) without memcached
    png = tmp_path / "resize.png"
    r = subprocess.run([sys.executable, "-m", "consistent_hash", "demo", "resize", "--keys",
                        "5000", "--rounds", "2", "--json", "--plot", str(png)],
                       capture_output=True, text=True, timeout=120, env=_env())
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert [x["strategy"] for x in d["results"]] == ["modulo", "ring", "ring + migrate"]
    assert d["results"][2]["hit_rates"] == [1.0] * 4
    assert png_size(png)[0] > 0
