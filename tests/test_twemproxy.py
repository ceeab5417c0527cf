"""consistent_hash.compat.twemproxy against a live nutcracker 0.5.0 in front of live memcached.

Three kinds of proof:

- every twemproxy key hash as a pure-Python model written here from nutcracker's source
  (src/hashkit/*.c at v0.5.0), checked against published test vectors where they exist and
  against the library's C hashes on random inputs of every length;
- the live run (tests/support/live_twemproxy.py): one nutcracker with one pool per configuration
  (3, 5 and 25 servers, every hash, ketama and modula, weights, a server removed, named
  servers, hash_tag, the defaults, a server ejected by auto_eject_hosts), each key stored
  through its pool and found by listing every memcached server's keys; every key must be on
  the server TwemproxyPool names;
- golden vectors from such a run (tests/data/twemproxy_vectors.json, written by
  tests/data/make_twemproxy_vectors.py), checked without servers.
"""

from __future__ import annotations

import binascii
import hashlib
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import live_twemproxy as live  # noqa: E402
from live_servers import HOST, free_ports, nutcracker_pools, redis_servers, require  # noqa: E402

from consistent_hash import EmptyRingError  # noqa: E402
from consistent_hash.analysis import migration_plan, movement  # noqa: E402
from consistent_hash.cli._servers import wait_port  # noqa: E402
from consistent_hash.compat.twemproxy import HASHES, TwemproxyPool, from_config  # noqa: E402

M32 = 0xFFFFFFFF
DATA = Path(__file__).parent / "data" / "twemproxy_vectors.json"
DATA_UNSIGNED = Path(__file__).parent / "data" / "twemproxy_vectors_unsigned_char.json"
DOC = Path(__file__).resolve().parent.parent / "docs" / "agreeing-with-twemproxy.md"


# -- pure-Python models of nutcracker's hashes (from src/hashkit/*.c, v0.5.0) ------------------

def _sx(b: int, uc: bool = False) -> int:
    """A byte read through a C `char` (signed on x86-64; unsigned with uc, as on arm64
    Linux), converted to uint32."""
    return (b - 256 if b >= 128 and not uc else b) & M32


def m_one_at_a_time(d: bytes, uc: bool = False) -> int:
    v = 0
    for b in d:
        v = (v + _sx(b, uc)) & M32
        v = (v + (v << 10)) & M32
        v ^= v >> 6
    v = (v + (v << 3)) & M32
    v ^= v >> 11
    return (v + (v << 15)) & M32


def m_md5(d: bytes) -> int:
    return int.from_bytes(hashlib.md5(d).digest()[:4], "little")


def _crc16_table() -> list[int]:
    out = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else c << 1
        out.append(c & 0xFFFF)
    return out


_T16 = _crc16_table()


def m_crc16(d: bytes) -> int:
    crc = 0
    for b in d:  # the register is uint32 and never masked to 16 bits
        crc = ((crc << 8) & M32) ^ _T16[((crc >> 8) ^ b) & 0xFF]
    return crc


def _crc32_bitwise(d: bytes) -> int:
    crc = M32
    for b in d:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
    return crc ^ M32


def m_crc32(d: bytes) -> int:
    return (_crc32_bitwise(d) >> 16) & 0x7FFF


def m_crc32a(d: bytes) -> int:
    return _crc32_bitwise(d)


def m_fnv1_64(d: bytes, uc: bool = False) -> int:
    h = 0xCBF29CE484222325
    for b in d:
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        h ^= (b - 256 if b >= 128 and not uc else b) & 0xFFFFFFFFFFFFFFFF
    return h & M32


def m_fnv1a_64(d: bytes, uc: bool = False) -> int:
    h = 0xCBF29CE484222325 & M32
    for b in d:
        h ^= _sx(b, uc)
        h = (h * (0x100000001B3 & M32)) & M32
    return h


def m_fnv1_32(d: bytes, uc: bool = False) -> int:
    h = 2166136261
    for b in d:
        h = (h * 16777619) & M32
        h ^= _sx(b, uc)
    return h


def m_fnv1a_32(d: bytes, uc: bool = False) -> int:
    h = 2166136261
    for b in d:
        h ^= _sx(b, uc)
        h = (h * 16777619) & M32
    return h


def m_hsieh(d: bytes, uc: bool = False) -> int:
    if not d:
        return 0
    h = 0
    n4, rem = divmod(len(d), 4)
    i = 0
    for _ in range(n4):
        h = (h + (d[i] | d[i + 1] << 8)) & M32
        tmp = (((d[i + 2] | d[i + 3] << 8) << 11) ^ h) & M32
        h = ((h << 16) & M32) ^ tmp
        i += 4
        h = (h + (h >> 11)) & M32
    if rem == 3:
        h = (h + (d[i] | d[i + 1] << 8)) & M32
        h ^= (h << 16) & M32
        h ^= (_sx(d[i + 2], uc) << 18) & M32
        h = (h + (h >> 11)) & M32
    elif rem == 2:
        h = (h + (d[i] | d[i + 1] << 8)) & M32
        h ^= (h << 11) & M32
        h = (h + (h >> 17)) & M32
    elif rem == 1:
        h = (h + d[i]) & M32
        h ^= (h << 10) & M32
        h = (h + (h >> 1)) & M32
    h ^= (h << 3) & M32
    h = (h + (h >> 5)) & M32
    h ^= (h << 4) & M32
    h = (h + (h >> 17)) & M32
    h ^= (h << 25) & M32
    return (h + (h >> 6)) & M32


def murmur2(d: bytes, seed: int) -> int:
    """MurmurHash2 (Austin Appleby), 32 bits."""
    m = 0x5BD1E995
    n = len(d)
    h = (seed ^ n) & M32
    i = 0
    while n - i >= 4:
        k = int.from_bytes(d[i:i + 4], "little")
        k = (k * m) & M32
        k ^= k >> 24
        k = (k * m) & M32
        h = ((h * m) & M32) ^ k
        i += 4
    tail = d[i:]
    if len(tail) == 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * m) & M32
    h ^= h >> 13
    h = (h * m) & M32
    return h ^ (h >> 15)


def m_murmur(d: bytes) -> int:
    return murmur2(d, (0xDEADBEEF * len(d)) & M32)


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & M32


def hashlittle(d: bytes, initval: int) -> int:
    """Bob Jenkins' lookup3 hashlittle, byte by byte."""
    a = b = c = (0xDEADBEEF + len(d) + initval) & M32
    n = len(d)
    if n == 0:
        return c
    i = 0
    while n - i > 12:
        a = (a + int.from_bytes(d[i:i + 4], "little")) & M32
        b = (b + int.from_bytes(d[i + 4:i + 8], "little")) & M32
        c = (c + int.from_bytes(d[i + 8:i + 12], "little")) & M32
        a = (a - c) & M32; a ^= _rot(c, 4); c = (c + b) & M32     # noqa: E702
        b = (b - a) & M32; b ^= _rot(a, 6); a = (a + c) & M32     # noqa: E702
        c = (c - b) & M32; c ^= _rot(b, 8); b = (b + a) & M32     # noqa: E702
        a = (a - c) & M32; a ^= _rot(c, 16); c = (c + b) & M32    # noqa: E702
        b = (b - a) & M32; b ^= _rot(a, 19); a = (a + c) & M32    # noqa: E702
        c = (c - b) & M32; c ^= _rot(b, 4); b = (b + a) & M32     # noqa: E702
        i += 12
    last = d[i:] + bytes(12 - (n - i))
    a = (a + int.from_bytes(last[0:4], "little")) & M32
    b = (b + int.from_bytes(last[4:8], "little")) & M32
    c = (c + int.from_bytes(last[8:12], "little")) & M32
    c ^= b; c = (c - _rot(b, 14)) & M32    # noqa: E702
    a ^= c; a = (a - _rot(c, 11)) & M32    # noqa: E702
    b ^= a; b = (b - _rot(a, 25)) & M32    # noqa: E702
    c ^= b; c = (c - _rot(b, 16)) & M32    # noqa: E702
    a ^= c; a = (a - _rot(c, 4)) & M32     # noqa: E702
    b ^= a; b = (b - _rot(a, 14)) & M32    # noqa: E702
    c ^= b; c = (c - _rot(b, 24)) & M32    # noqa: E702
    return c


def m_jenkins(d: bytes) -> int:
    return hashlittle(d, 13)


MODELS: dict[str, Callable[..., int]] = {
    "one_at_a_time": m_one_at_a_time, "md5": m_md5, "crc16": m_crc16, "crc32": m_crc32,
    "crc32a": m_crc32a, "fnv1_64": m_fnv1_64, "fnv1a_64": m_fnv1a_64, "fnv1_32": m_fnv1_32,
    "fnv1a_32": m_fnv1a_32, "hsieh": m_hsieh, "murmur": m_murmur, "jenkins": m_jenkins}


def m_tagged(key: bytes, tag: bytes | None) -> bytes:
    """The part of a key nutcracker hashes under hash_tag (server_pool_idx)."""
    if tag is None:
        return key
    start = key.find(tag[:1])
    if start < 0:
        return key
    end = key.find(tag[1:], start + 1)
    if end < 0 or end - start <= 1:
        return key
    return key[start + 1:end]


CHAR_READERS = ("one_at_a_time", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh")


def m_key_hash(hash: str, key: bytes, tag: bytes | None = None, uc: bool = False) -> int:
    part = m_tagged(key, tag)
    if not part:
        return 0  # server_pool_hash: an empty key hashes to 0
    return MODELS[hash](part, uc) if hash in CHAR_READERS else MODELS[hash](part)


# -- the models against published vectors and independent references ---------------------------

def test_models_published_vectors() -> None:
    # FNV (the FNV reference test suite): FNV-1 / FNV-1a, 32 and 64 bits, on ASCII
    assert m_fnv1_32(b"a") == 0x050C5D7E and m_fnv1_32(b"foobar") == 0x31F0B262
    assert m_fnv1a_32(b"a") == 0xE40C292C and m_fnv1a_32(b"foobar") == 0xBF9CF968
    assert m_fnv1a_32(b"") == 0x811C9DC5
    # nutcracker's "64-bit" ones are the low 32 bits of FNV-1 / FNV-1a 64 on ASCII bytes
    assert m_fnv1_64(b"a") == 0xAF63BD4C8601B7BE & M32
    assert m_fnv1_64(b"foobar") == 0x340D8765A4DDA9C2 & M32
    assert m_fnv1a_64(b"a") == 0xAF63DC4C8601EC8C & M32
    assert m_fnv1a_64(b"foobar") == 0x85944171F73967E8 & M32
    # CRC-32 check value; CRC-16/XMODEM check value in the low half
    assert m_crc32a(b"123456789") == 0xCBF43926
    assert m_crc32(b"123456789") == 0xCBF43926 >> 16 & 0x7FFF
    assert m_crc16(b"123456789") & 0xFFFF == 0x31C3
    # one-at-a-time (Jenkins' own examples), on ASCII where the sign does not matter
    assert m_one_at_a_time(b"a") == 0xCA2E9442
    assert m_one_at_a_time(b"The quick brown fox jumps over the lazy dog") == 0x519E91F5
    # lookup3.c's driver5 expectations for hashlittle
    assert hashlittle(b"", 0) == 0xDEADBEEF
    assert hashlittle(b"", 0xDEADBEEF) == 0xBD5B7DDE
    assert hashlittle(b"Four score and seven years ago", 0) == 0x17770551
    assert hashlittle(b"Four score and seven years ago", 1) == 0xCD628161
    # MD5 (RFC 1321 test suite): "abc" is 900150983cd24fb0...
    assert m_md5(b"abc") == 0x98500190


def test_murmur2_smhasher_verification() -> None:
    # SMHasher's verification code for MurmurHash2: hash keys 0..i-1 (i < 256) with seed
    # 256 - i, then hash the 1,024 bytes of results with seed 0; published as 0x27864C1E.
    key = bytes(range(256))
    hashes = b"".join(murmur2(key[:i], 256 - i).to_bytes(4, "little") for i in range(256))
    assert murmur2(hashes, 0) == 0x27864C1E


def test_models_against_python_references() -> None:
    rng = random.Random(5)
    for n in range(0, 200):
        d = bytes(rng.randrange(256) for _ in range(n))
        assert m_crc32a(d) == zlib.crc32(d)
        assert m_crc16(d) & 0xFFFF == binascii.crc_hqx(d, 0)
        assert m_md5(d) == int.from_bytes(hashlib.md5(d).digest()[:4], "little")


@pytest.mark.parametrize("signed", [True, False], ids=["signed-char", "unsigned-char"])
@pytest.mark.parametrize("hash", HASHES)
def test_core_hash_equals_model(hash: str, signed: bool) -> None:
    """The library's C hash (through a pool's hash_many) equals the model on every length
    0..300 and on random bytes, including bytes >= 0x80 (the signed-char paths)."""
    rng = random.Random(hash)
    keys = [bytes(rng.randrange(256) for _ in range(n)) for n in range(301)]
    keys += [bytes(rng.randrange(0x80, 0x100) for _ in range(rng.randrange(1, 40)))
             for _ in range(300)]
    pool = TwemproxyPool(["127.0.0.1:1:1", "127.0.0.1:2:1"], hash=hash, signed_char=signed)
    got = pool.hash_many(keys).tolist()
    assert got == [m_key_hash(hash, k, uc=not signed) for k in keys]
    assert [pool.hash(k) for k in keys[:50]] == got[:50]
    if hash in CHAR_READERS:  # the two builds differ exactly on keys with a byte >= 0x80
        other = TwemproxyPool(["127.0.0.1:1:1", "127.0.0.1:2:1"], hash=hash,
                              signed_char=not signed).hash_many(keys).tolist()
        assert [a != b for a, b in zip(got, other, strict=True)] == [
            bool(k) and max(k) >= 0x80 and (hash != "hsieh" or _hsieh_reads_sign(k))
            for k in keys]


def _hsieh_reads_sign(k: bytes) -> bool:
    return len(k) % 4 == 3 and k[-1] >= 0x80  # only the third byte of a 3-byte tail


@pytest.mark.parametrize("tag", ["{}", "$$", "[]"])
def test_core_hash_tag_equals_model(tag: str) -> None:
    rng = random.Random(tag)
    t = tag.encode()
    alphabet = b"ab" + t
    keys = [bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 12))) for _ in range(3000)]
    keys += [b"{user1000}.following", b"foo{}{bar}", b"foo{{bar}}zap", b"{", b"{}", b"}{", b"x{y"]
    for hash in ("fnv1a_64", "md5", "crc16"):
        pool = TwemproxyPool(["127.0.0.1:1:1", "127.0.0.1:2:1"], hash=hash, hash_tag=tag)
        assert pool.hash_many(keys).tolist() == [m_key_hash(hash, k, t) for k in keys]
    # the cases nutcracker's rule decides: first open char, then the first close after it
    assert m_tagged(b"{user1000}.following", b"{}") == b"user1000"
    assert m_tagged(b"foo{}{bar}", b"{}") == b"foo{}{bar}"   # empty tag: the whole key
    assert m_tagged(b"foo{{bar}}zap", b"{}") == b"{bar"
    assert m_tagged(b"foo{bar", b"{}") == b"foo{bar"          # no close: the whole key
    assert m_tagged(b"a$b$c$", b"$$") == b"b"


# -- the live run -------------------------------------------------------------------------------

CONFIGS = live.configs()


@pytest.fixture(scope="module")
def run() -> tuple[dict[str, list[bytes]], dict[str, list[int]]]:
    require("memcached")
    require("nutcracker")
    keys, landed, _ = live.run(CONFIGS)
    return keys, landed


def _pool(cfg: live.Config) -> TwemproxyPool:
    pool = TwemproxyPool(cfg.lines, **live.pool_args(cfg))
    for j, (i, _, _) in enumerate(cfg.servers):
        if i < 0:  # the dead server nutcracker ejected
            pool.eject(pool.nodes[j])
    return pool


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c.id for c in CONFIGS])
def test_live_every_key_where_nutcracker_put_it(run: Any, cfg: live.Config) -> None:
    keys, landed = run
    ks, where = keys[cfg.id], landed[cfg.id]
    assert len(ks) >= 1000
    pool = _pool(cfg)
    got = pool.get_indices(ks).tolist()
    bad = [(k, pool.nodes[g], pool.nodes[w]) for k, g, w in zip(ks, got, where, strict=True)
           if g != w]
    assert not bad, f"{len(bad)} of {len(ks)} keys elsewhere, e.g. {bad[:3]}"
    # names map back: the node of a key is its server's name, or its address as written
    for j, (_, _, name) in enumerate(cfg.servers):
        assert pool.nodes[j] == (name if name else cfg.lines[j].rsplit(":", 1)[0])
        assert pool.servers[pool.nodes[j]] == cfg.lines[j]
    # the same through from_config on the pool's own YAML
    text = f"{cfg.id}:\n  listen: 127.0.0.1:1\n" + cfg.yaml_body()
    again = from_config(text)
    for node in pool.ejected:
        again.eject(node)
    assert again.get_indices(ks).tolist() == got
    # every key class is in the run: ASCII, printable, UTF-8, high bytes
    assert any(all(b < 0x80 for b in k) for k in ks)
    assert any(any(b >= 0x80 for b in k) for k in ks)


def test_live_distinguishes_the_quirks(run: Any) -> None:
    """The run can tell the quirks apart: the obvious readings of nutcracker are wrong on it."""
    keys, landed = run
    by_id = {c.id: c for c in CONFIGS}

    def wrong_share(cid: str, **change: Any) -> float:
        cfg = by_id[cid]
        args = {**live.pool_args(cfg), **change.pop("args", {})}
        lines = change.pop("lines", cfg.lines)
        pool = TwemproxyPool(lines, **args)
        got = pool.get_indices(keys[cid]).tolist()
        return float(np.mean([g != w for g, w in zip(got, landed[cid], strict=True)]))

    # modula places servers sorted by name, not in config order: config order disagrees
    cfg = by_id["modula-named"]
    table = [j for j, (_, w, _) in enumerate(cfg.servers) for _ in range(w)]
    hashes = [m_key_hash("murmur", k) for k in keys[cfg.id]]
    naive = [table[h % len(table)] for h in hashes]
    assert np.mean([a != b for a, b in zip(naive, landed[cfg.id], strict=True)]) > 0.3
    # fnv1a_64 over unsigned bytes (the textbook FNV-1a, low 32 bits) disagrees on high bytes
    cfg = by_id["modula-fnv1a_64-5"]
    high = [(k, w) for k, w in zip(keys[cfg.id], landed[cfg.id], strict=True)
            if any(b >= 0x80 for b in k)]

    def textbook(d: bytes) -> int:
        h = 0xCBF29CE484222325
        for b in d:
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        return h & M32

    assert np.mean([textbook(k) % 5 != w for k, w in high]) > 0.5
    # a named server is placed by its name: the same pool without the names disagrees
    plain = [ln.split(" ")[0] for ln in by_id["ketama-named"].lines]
    assert wrong_share("ketama-named", lines=plain) > 0.3
    # hash_tag matters
    assert wrong_share("ketama-hash_tag", args={"hash_tag": None}) > 0.2


def _mc_listen(path_or_port: str | int) -> subprocess.Popen[bytes]:
    args = [require("memcached"), "-U", "0", "-m", "16", "-t", "1"]
    args += (["-s", path_or_port, "-a", "0777"] if isinstance(path_or_port, str)
             else ["-l", HOST, "-p", str(path_or_port)])
    if os.geteuid() == 0:
        args += ["-u", "root"]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_live_unix_sockets_and_the_default_port() -> None:
    """A unix-socket server is placed as "path:" and a server on 11211 by its host alone;
    checked live (the 11211 half only when 127.0.0.1:11211 is free)."""
    require("nutcracker")
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)
        paths = [os.path.join(d, f"mc{i}.sock") for i in range(3)]
        procs = [_mc_listen(p) for p in paths]
        try:
            for _ in range(200):
                if all(os.path.exists(p) for p in paths):
                    break
                subprocess.run(["sleep", "0.02"], check=True)
            lines = [f"{p}:{1 + i}" for i, p in enumerate(paths)]
            for dist in ("ketama", "modula"):
                cfg = live.Config(f"unix-{dist}", [], "md5", dist, keys=1500)
                cfg.lines = lines
                keys = live.make_keys(cfg, 900 + len(dist))
                with nutcracker_pools([cfg.yaml_body()]) as (port,):
                    live._send_all(port, keys)
                holder = {}
                for j, p in enumerate(paths):
                    for k in _unix_keys(p):
                        holder[k] = j
                    _unix_flush(p)
                pool = TwemproxyPool(lines, hash="md5", distribution=dist)
                assert pool.nodes == tuple(paths)
                truth = [holder[k] for k in keys]
                assert pool.get_indices(keys).tolist() == truth
                if dist == "ketama":  # placed as "path:", not "path": naming it so disagrees
                    named = TwemproxyPool([f"{ln} {p}" for ln, p in zip(lines, paths,
                                                                       strict=True)],
                                          hash="md5")
                    wrong = np.mean(named.get_indices(keys) != np.array(truth))
                    assert wrong > 0.3
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait()
    # port 11211: placed as "127.0.0.1" (libmemcached's rule)
    probe = socket.socket()
    try:
        probe.bind((HOST, 11211))
    except OSError:
        probe.close()
        pytest.skip("127.0.0.1:11211 is taken: the default-port half needs it free")
    probe.close()
    others = free_ports(2)
    procs = [_mc_listen(p) for p in [11211, *others]]
    try:
        for mc_port, proc in zip([11211, *others], procs, strict=True):
            wait_port(mc_port, proc)
        lines = [f"{HOST}:{p}:1" for p in [11211, *others]]
        cfg = live.Config("port-11211", [], "fnv1a_64", "ketama", keys=1500)
        cfg.lines = lines
        keys = live.make_keys(cfg, 950)
        with nutcracker_pools([cfg.yaml_body()]) as (port,):
            live._send_all(port, keys)
        holder = {k: j for j, mc in enumerate([11211, *others])
                  for k in live._memcached_keys(mc)}
        pool = TwemproxyPool(lines)
        assert pool.get_indices(keys).tolist() == [holder[k] for k in keys]
        # the point labels are "127.0.0.1-i" for it: with "127.0.0.1:11211-i" keys move
        assert pool.points is not None
        digest = hashlib.md5(b"127.0.0.1-0").digest()
        assert int.from_bytes(digest[:4], "little") in set(pool.points.tolist())
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()


def test_live_redis_pools() -> None:
    """A `redis: true` pool routes by the same recipe (the Redis key is hashed): ketama with a
    hash tag and modula, keys set through nutcracker with redis-py, found with SCAN."""
    redis = pytest.importorskip("redis")
    require("nutcracker")
    with redis_servers(3) as ports:
        lines = [f"{HOST}:{p}:{1 + i}" for i, p in enumerate(ports)]
        cfgs = [live.Config("redis-ketama", [], "fnv1a_64", "ketama", hash_tag="{}"),
                live.Config("redis-modula", [], "jenkins", "modula")]
        for c in cfgs:
            c.lines = lines
        bodies = ["  redis: true\n" + c.yaml_body() for c in cfgs]
        keys = [live.make_keys(c, 970 + j) for j, c in enumerate(cfgs)]
        with nutcracker_pools(bodies) as pool_ports:
            for ks, pp in zip(keys, pool_ports, strict=True):
                _redis_set_all(pp, ks)  # raw RESP: a client's CLIENT SETINFO would be refused
        holder = {}
        for j, p in enumerate(ports):
            client = redis.Redis(host=HOST, port=p)
            for k in client.scan_iter(count=1000):
                holder[k] = j
            client.close()
        for c, ks in zip(cfgs, keys, strict=True):
            pool = TwemproxyPool(lines, **live.pool_args(c))
            assert pool.get_indices(ks).tolist() == [holder[k] for k in ks], c.id


def _redis_set_all(port: int, keys: list[bytes]) -> None:
    with socket.create_connection((HOST, port), timeout=30) as s:
        f = s.makefile("rb")
        for start in range(0, len(keys), 200):
            batch = keys[start:start + 200]
            s.sendall(b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nx\r\n" % (len(k), k)
                               for k in batch))
            for k in batch:
                line = f.readline()
                assert line == b"+OK\r\n", (k, line)


def _unix_request(path: str, cmd: bytes, end: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
        s.sendall(cmd)
        buf = b""
        while not buf.endswith(end):
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
    return buf


def _unix_keys(path: str) -> list[bytes]:
    import urllib.parse
    buf = _unix_request(path, b"lru_crawler metadump hash\r\n", b"END\r\n")
    return [urllib.parse.unquote_to_bytes(line.split(b" ", 1)[0][4:])
            for line in buf.split(b"\n") if line.startswith(b"key=")]


def _unix_flush(path: str) -> None:
    _unix_request(path, b"flush_all\r\n", b"OK\r\n")


# -- golden vectors (no servers) ----------------------------------------------------------------

def test_golden_vectors() -> None:
    data = json.loads(DATA.read_text())
    assert data["nutcracker"].startswith("0.5.0") and len(data["configs"]) >= 80
    assert {(c["hash"], c["distribution"]) for c in data["configs"]} == {
        (h, d) for h in HASHES for d in ("ketama", "modula")}
    assert _check_vectors(data) >= 5_000


def test_golden_vectors_unsigned_char() -> None:
    """nutcracker 0.5.0's source built with -funsigned-char (arm64's char), run live by
    tests/data/make_twemproxy_vectors.py --unsigned-char: every hash that reads a char."""
    data = json.loads(DATA_UNSIGNED.read_text())
    assert data["nutcracker"] == "0.5.0-unsigned-char"
    assert {c["hash"] for c in data["configs"]} == set(CHAR_READERS)
    assert {c["distribution"] for c in data["configs"]} == {"ketama", "modula"}
    assert _check_vectors(data) >= 1_500
    # and the x86-64 (signed) reading puts many of these high-byte keys elsewhere
    wrong = 0
    for c in data["configs"]:
        pool = TwemproxyPool(c["servers"], hash=c["hash"], distribution=c["distribution"])
        keys = [bytes.fromhex(k) for k in c["keys"]]
        wrong += int(np.sum(pool.get_indices(keys) != np.array(c["server"])))
    assert wrong > 500


def _check_vectors(data: dict[str, Any]) -> int:
    total = 0
    for c in data["configs"]:
        pool = TwemproxyPool(c["servers"], hash=c["hash"], distribution=c["distribution"],
                             hash_tag=c["hash_tag"], auto_eject_hosts=bool(c["ejected"]),
                             signed_char=c["signed_char"])
        for j in c["ejected"]:
            pool.eject(pool.nodes[j])
        keys = [bytes.fromhex(k) for k in c["keys"]]
        assert pool.get_indices(keys).tolist() == c["server"], c["id"]
        total += len(keys)
    return total


# -- from_config ---------------------------------------------------------------------------------

CONF = """
alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  hash_tag: "{}"
  distribution: ketama
  auto_eject_hosts: true
  redis: false
  server_retry_timeout: 2000
  server_failure_limit: 1
  servers:
   - 127.0.0.1:11211:1
   - 127.0.0.1:11212:1 cache-b

beta:
  listen: 127.0.0.1:22122
  distribution: modula
  hash: murmur
  servers:
   - 10.0.0.1:11211:2
   - 10.0.0.2:11211:1
"""


def test_from_config_pools_and_defaults() -> None:
    a = from_config(CONF, name="alpha")
    assert a.nodes == ("127.0.0.1:11211", "cache-b") and a.hash_tag == "{}"
    assert a.hash_name == "fnv1a_64" and a.distribution == "ketama" and a.auto_eject_hosts
    assert a.addresses == {"127.0.0.1:11211": "127.0.0.1:11211", "cache-b": "127.0.0.1:11212"}
    b = from_config(CONF, name="beta")
    assert b.distribution == "modula" and b.weights == {"10.0.0.1:11211": 2,
                                                         "10.0.0.2:11211": 1}
    import yaml  # type: ignore[import-untyped, unused-ignore]
    assert from_config(yaml.safe_load(CONF), name="beta") == b
    one = from_config("p:\n  servers:\n   - 10.0.0.1:11211:1\n   - 10.0.0.2:11211:1\n")
    assert one.hash_name == "fnv1a_64" and one.distribution == "ketama"  # nutcracker defaults
    assert one.hash_tag is None and not one.auto_eject_hosts
    with pytest.raises(ValueError, match="'alpha', 'beta'"):
        from_config(CONF)
    with pytest.raises(ValueError, match="no pool 'gamma'"):
        from_config(CONF, name="gamma")


@pytest.mark.parametrize("body,match", [
    ("  hash: sha1\n", "'hash'"),
    ("  distribution: random\n", "random"),
    ("  distribution: rendezvous\n", "'distribution'"),
    ("  hash_tag: \"{\"\n", "'hash_tag'"),
    ("  hash_tag: {}\n", "'hash_tag'"),
    ("  auto_eject_hosts: maybe\n", "'auto_eject_hosts'"),
    ("  hashtag: \"{}\"\n", "'hashtag'"),
])
def test_from_config_bad_values_name_the_key(body: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        from_config("p:\n" + body + "  servers:\n   - 10.0.0.1:11211:1\n")


@pytest.mark.parametrize("servers,match", [
    ("  servers: []\n", "'servers'"),
    ("", "'servers'"),
    ("  servers:\n   - 10.0.0.1:11211:0\n", "zero weight"),
    ("  servers:\n   - 10.0.0.1:99999:1\n", "port"),
    ("  servers:\n   - 10.0.0.1:11211:x\n", "weight"),
    ("  servers:\n   - 10.0.0.1:11211:1 a\n   - 10.0.0.2:11211:1 a\n", "duplicate"),
    ("  servers:\n   - 10.0.0.1:11211:1\n   - 10.0.0.9:1:1 10.0.0.1\n", "same name"),
])
def test_from_config_bad_servers(servers: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        from_config("p:\n  hash: md5\n" + servers)


def test_from_config_not_a_config() -> None:
    with pytest.raises(ValueError, match="YAML"):
        from_config("p: [unclosed")
    with pytest.raises(ValueError, match="mapping"):
        from_config("- a\n- b\n")
    with pytest.raises(TypeError):
        from_config(42)  # type: ignore[arg-type]


# -- the constructor, ejection, movement ---------------------------------------------------------

def test_constructor_errors() -> None:
    with pytest.raises(ValueError, match="hash"):
        TwemproxyPool(["a:1:1"], hash="xxh3")
    with pytest.raises(ValueError, match="random"):
        TwemproxyPool(["a:1:1"], distribution="random")
    with pytest.raises(ValueError, match="hash_tag"):
        TwemproxyPool(["a:1:1"], hash_tag="{{}")
    with pytest.raises(TypeError, match="servers"):
        TwemproxyPool("a:1:1")
    with pytest.raises(TypeError, match="servers"):
        TwemproxyPool([b"a:1:1"])  # type: ignore[list-item]
    with pytest.raises(KeyError):
        TwemproxyPool(["a:1:1"], {"b:1": 2})
    with pytest.raises(ValueError, match="too long"):
        TwemproxyPool(["h" * 300 + ":1:1", "b:1:1"])


@pytest.mark.parametrize("dist", ["ketama", "modula"])
def test_eject_is_the_pool_without_the_server(dist: str) -> None:
    servers = [f"10.0.0.{i}:11211:{1 + i % 3}" for i in range(1, 8)]
    pool = TwemproxyPool(servers, distribution=dist, auto_eject_hosts=True)
    keys = [f"k{i}" for i in range(20_000)]
    before = pool.get_many(keys)
    pool.eject("10.0.0.3:11211")
    without = TwemproxyPool([s for s in servers if not s.startswith("10.0.0.3:")],
                            distribution=dist)
    assert pool.get_many(keys).tolist() == without.get_many(keys).tolist()
    assert pool.ejected == {"10.0.0.3:11211"} and "10.0.0.3:11211" in pool.nodes
    restored = pool.copy()
    restored.restore("10.0.0.3:11211")
    assert restored.get_many(keys).tolist() == before.tolist()
    assert TwemproxyPool.from_bytes(pool.to_bytes()) == pool
    with pytest.raises(ValueError, match="not ejected"):
        restored.restore("10.0.0.3:11211")
    with pytest.raises(KeyError):
        pool.eject("10.9.9.9:11211")
    for s in servers:
        node = s.rsplit(":", 1)[0]
        if node not in pool.ejected:
            pool.eject(node)
    with pytest.raises(EmptyRingError):
        pool.get("x")
    with pytest.raises(ValueError, match="auto_eject_hosts"):
        TwemproxyPool(servers).eject("10.0.0.3:11211")


def test_movement_exact_for_ketama_estimated_for_modula() -> None:
    servers = [f"10.0.0.{i}:11211:1" for i in range(1, 6)]
    rng = random.Random(3)
    keys = [rng.randbytes(16).hex() for _ in range(200_000)]  # MD5 of them: uniform hashes
    for dist, exact in (("ketama", True), ("modula", False)):
        old = TwemproxyPool(servers, distribution=dist, hash="md5")
        new = TwemproxyPool(servers + ["10.0.0.6:11211:1"], distribution=dist, hash="md5")
        mv = movement(old, new)
        assert mv.exact is exact
        share = float(np.mean(old.get_many(keys) != new.get_many(keys)))
        if exact:
            assert abs(mv.moved - share) < 0.004  # the exact share vs 200,000 keys
        else:
            assert movement(old, new, keys).moved == pytest.approx(share)
            assert abs(mv.moved - 5 / 6) < 0.01   # hash % 5 vs hash % 6: 5/6 of keys move
        if exact:
            plan = migration_plan(old, new)
            moved = plan.moves(keys)
            assert np.array_equal(np.asarray(moved, dtype=bool),
                                  old.get_many(keys) != new.get_many(keys))
    # ketama: only the new server's share moves; modula: most keys move
    assert movement(TwemproxyPool(servers), TwemproxyPool(servers + ["x:1:1"])).moved < 0.25
    assert movement(TwemproxyPool(servers, distribution="modula"),
                    TwemproxyPool(servers + ["x:1:1"], distribution="modula")).moved > 0.6
    # a different hash_tag hashes keys differently: estimated, not exact
    assert not movement(TwemproxyPool(servers), TwemproxyPool(servers, hash_tag="{}")).exact


def test_renaming_a_named_server_moves_nothing_but_its_address() -> None:
    old = TwemproxyPool(["10.0.0.1:11211:1 a", "10.0.0.2:11211:1 b"])
    new = TwemproxyPool(["10.0.0.1:11211:1 a", "10.0.0.9:11311:1 b"])
    assert movement(old, new).moved == 0.0
    assert new.addresses["b"] == "10.0.0.9:11311"



@pytest.mark.skipif(not DOC.exists(), reason="docs/ is not beside tests/")
def test_docs_page_examples() -> None:
    import doctest
    result = doctest.testfile(str(DOC), module_relative=False)
    assert result.attempted >= 8 and result.failed == 0


def test_serialization_round_trips() -> None:
    import pickle
    pools = [TwemproxyPool(["10.0.0.1:11211:1", "10.0.0.2:11212:3 b", "/tmp/mc.sock:2"],
                           hash=h, distribution=d, hash_tag=t, auto_eject_hosts=True)
             for h in ("fnv1a_64", "crc16") for d in ("ketama", "modula")
             for t in (None, "{}", b"\xab\xcd")]
    pools[-1].eject("b")
    keys = [b"a\xabkey\xcd", "user:1", b"x{y}z"]
    for p in pools:
        for q in (TwemproxyPool.from_bytes(p.to_bytes()), pickle.loads(pickle.dumps(p)),
                  p.copy()):
            assert q == p and q.hash_tag == p.hash_tag and q.ejected == p.ejected
            assert q.get_many(keys).tolist() == p.get_many(keys).tolist()
            assert q.fingerprint() == p.fingerprint()
    assert pools[0].fingerprint() != pools[1].fingerprint()
    # a raw-bytes tag: only the bytes between 0xAB and 0xCD are hashed
    p = pools[-1]
    assert p.hash(b"a\xabkey\xcd") == m_crc16(b"key")
