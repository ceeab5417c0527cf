"""The live twemproxy run shared by tests/test_twemproxy.py and
tests/data/make_twemproxy_vectors.py: pool configurations, their keys, and where a real
nutcracker (in front of real memcached servers) put each key.

Every configuration is one pool of one nutcracker process, all in front of the same memcached
servers; every key is stored once through its pool, then found by listing each memcached
server's keys (``lru_crawler metadump hash``), so nothing here asks our library anything.
"""

from __future__ import annotations

import random
import socket
import time
import urllib.parse
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from live_servers import HOST, free_ports, memcached_servers, nutcracker_pools

HASHES = ("one_at_a_time", "md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64",
          "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins")
NAMES = ("cache-b", "a", "server-10", "zz", "server-9")  # sorted by nutcracker: a, zz, ...


@dataclass
class Config:
    """One pool: servers as (memcached index or -1 for a dead address, weight, name)."""
    id: str
    servers: list[tuple[int, int, str | None]]
    hash: str | None = "fnv1a_64"          # None: leave the directive out (the default)
    distribution: str | None = "ketama"
    hash_tag: str | None = None
    auto_eject: bool = False
    keys: int = 2000
    lines: list[str] = field(default_factory=list)   # filled in with the ports

    def yaml_body(self) -> str:
        out = []
        if self.hash is not None:
            out.append(f"  hash: {self.hash}\n")
        if self.distribution is not None:
            out.append(f"  distribution: {self.distribution}\n")
        if self.hash_tag is not None:
            out.append(f"  hash_tag: \"{self.hash_tag}\"\n")
        out.append("  timeout: 2000\n")
        if self.auto_eject:
            out.append("  auto_eject_hosts: true\n  server_failure_limit: 1\n"
                       "  server_retry_timeout: 600000\n")
        else:
            out.append("  auto_eject_hosts: false\n")
        out.append("  servers:\n" + "".join(f"   - {s}\n" for s in self.lines))
        return "".join(out)


def _plain(n: int, w: int = 1) -> list[tuple[int, int, str | None]]:
    return [(i, w, None) for i in range(n)]


def configs() -> list[Config]:
    out: list[Config] = []
    for dist in ("ketama", "modula"):
        for n in (3, 5, 25):  # every hash at each size
            for h in HASHES:
                out.append(Config(f"{dist}-{h}-{n}", _plain(n), h, dist))
        out.append(Config(f"{dist}-weights", [(i, w, None) for i, w in
                                             enumerate((1, 2, 3, 1, 5))], "fnv1a_64", dist))
        out.append(Config(f"{dist}-weights-md5-25", [(i, 1 + i % 4, None) for i in range(25)],
                          "md5", dist))
        out.append(Config(f"{dist}-removed", [s for s in _plain(5) if s[0] != 2],
                          "fnv1a_64", dist))
        out.append(Config(f"{dist}-named", [(i, 1 + i % 2, NAMES[i]) for i in range(5)],
                          "murmur", dist))
        out.append(Config(f"{dist}-named-mixed",
                          [(0, 1, "zeta"), (1, 1, None), (2, 2, "b"), (3, 1, None)],
                          "md5", dist))
        out.append(Config(f"{dist}-hash_tag", _plain(5), "fnv1a_64", dist, hash_tag="{}"))
        out.append(Config(f"{dist}-hash_tag-same-char", _plain(3), "crc32a", dist,
                          hash_tag="$$"))
        out.append(Config(f"{dist}-defaults", _plain(5), None, None if dist == "ketama"
                          else dist))
        out.append(Config(f"{dist}-ejected", _plain(4) + [(-1, 1, None)], "one_at_a_time",
                          dist, auto_eject=True))
    return out


# -- keys -------------------------------------------------------------------------------------

_PRINTABLE = bytes(range(0x21, 0x7F))  # memcached keys: no spaces, no control characters


def _utf8(rng: random.Random) -> bytes:
    chars = []
    for _ in range(rng.randint(1, 20)):
        r = rng.random()
        if r < 0.3:
            c = rng.randint(0x21, 0x7E)
        elif r < 0.6:
            c = rng.randint(0xA1, 0x7FF)
        elif r < 0.9:
            c = rng.choice((rng.randint(0x800, 0xD7FF), rng.randint(0xE000, 0xFFFD)))
        else:
            c = rng.randint(0x10000, 0x10FFFF)
        chars.append(chr(c))
    return "".join(chars).encode("utf-8")


def make_keys(cfg: Config, index: int, seed: int = 13) -> list[bytes]:
    """cfg.keys distinct keys: plain ASCII, random printable bytes, raw UTF-8 and raw high
    bytes (0x80..0xFF, which twemproxy's signed chars sign-extend); tagged forms for a
    hash_tag pool.  Each pool's keys carry its index, so no two pools share a key."""
    rng = random.Random(seed * 1000 + index)
    keys: set[bytes] = set()
    tag = cfg.hash_tag.encode() if cfg.hash_tag else None
    p = f"p{index}".encode()
    while len(keys) < cfg.keys:
        r = rng.random()
        if r < 0.3:
            k = p + f":user:{rng.randrange(10**9)}".encode()
        elif r < 0.55:
            k = p + bytes(rng.choice(_PRINTABLE) for _ in range(rng.randint(1, 60)))
        elif r < 0.8:
            k = p + _utf8(rng)
        else:
            k = p + bytes(rng.randint(0x80, 0xFF) for _ in range(rng.randint(1, 40)))
        if tag is not None and rng.random() < 0.6:
            inner = rng.choice((b"", b"user1000", bytes(rng.choice(_PRINTABLE)
                                                        for _ in range(rng.randint(1, 9))),
                                _utf8(rng)))
            form = rng.randrange(5)
            if form == 0:
                k = k + tag[:1] + inner + tag[1:]                 # tag at the end
            elif form == 1:
                k = tag[:1] + inner + tag[1:] + k                 # at the start
            elif form == 2:
                k = k + tag[:1] + inner                           # no closing char
            elif form == 3:
                k = k + tag[:1] + tag[1:] + tag[:1] + inner + tag[1:]  # empty tag first
            else:
                k = tag[1:] + k + tag[:1] + inner + tag[1:] + tag[1:]  # close char before
        if len(k) <= 250:
            keys.add(k)
    return sorted(keys)


# -- the run ----------------------------------------------------------------------------------

def _memcached_keys(port: int) -> list[bytes]:
    """Every key a memcached server holds (lru_crawler metadump hash)."""
    with socket.create_connection((HOST, port), timeout=10) as s:
        s.sendall(b"lru_crawler metadump hash\r\n")
        buf = b""
        while not (buf.endswith(b"END\r\n") or buf.startswith(b"ERROR")
                   or buf.startswith(b"BUSY")):
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
    if not buf.endswith(b"END\r\n"):
        raise RuntimeError(f"metadump failed on port {port}: {buf[:80]!r}")
    out = []
    for line in buf.split(b"\n"):
        if line.startswith(b"key="):
            out.append(urllib.parse.unquote_to_bytes(line.split(b" ", 1)[0][4:]))
    return out


def _send_all(port: int, keys: list[bytes]) -> None:
    """Store every key through a nutcracker pool (pipelined ASCII sets, each answered)."""
    with socket.create_connection((HOST, port), timeout=30) as s:
        f = s.makefile("rb")
        for start in range(0, len(keys), 200):
            batch = keys[start:start + 200]
            s.sendall(b"".join(b"set " + k + b" 0 0 1\r\nx\r\n" for k in batch))
            for k in batch:
                line = f.readline()
                if line != b"STORED\r\n":
                    raise RuntimeError(f"nutcracker answered {line!r} to set {k!r}")


def _eject_dead(port: int, rng: random.Random) -> None:
    """Make nutcracker eject the pool's dead server: send sets until 200 in a row succeed."""
    ok = 0
    deadline = time.monotonic() + 20
    with socket.create_connection((HOST, port), timeout=10) as s:
        f = s.makefile("rb")
        while ok < 200:
            if time.monotonic() > deadline:
                raise RuntimeError("nutcracker never ejected the dead server")
            k = b"warmup:%d" % rng.randrange(10**12)
            s.sendall(b"set " + k + b" 0 0 1\r\nx\r\n")
            line = f.readline()
            ok = ok + 1 if line == b"STORED\r\n" else 0


def run(cfgs: list[Config], seed: int = 13, binary: str | None = None
        ) -> tuple[dict[str, list[bytes]], dict[str, list[int]], list[int]]:
    """Start the servers, store every pool's keys through nutcracker (``binary``: another
    build than the installed one), find them.

    Returns (keys per config id, the index into cfg.lines of the server holding each key,
    the memcached ports).  cfg.lines are filled in."""
    n = max(i for c in cfgs for i, _, _ in c.servers) + 1
    with ExitStack() as stack:
        ports = stack.enter_context(memcached_servers(n, 32))
        (dead,) = free_ports(1)  # nothing listens there: a server nutcracker must eject
        for c in cfgs:
            c.lines = [f"{HOST}:{ports[i] if i >= 0 else dead}:{w}" + (f" {nm}" if nm else "")
                       for i, w, nm in c.servers]
        pool_ports = stack.enter_context(nutcracker_pools([c.yaml_body() for c in cfgs],
                                                          binary))
        keys = {c.id: make_keys(c, j, seed) for j, c in enumerate(cfgs)}
        rng = random.Random(seed)
        for c, pp in zip(cfgs, pool_ports, strict=True):
            if c.auto_eject:
                _eject_dead(pp, rng)
            _send_all(pp, keys[c.id])
        holder: dict[bytes, int] = {}
        for port in ports:
            for k in _memcached_keys(port):
                if k in holder:
                    raise RuntimeError(f"key {k!r} is on two servers")
                holder[k] = port
    landed: dict[str, list[int]] = {}
    for c in cfgs:
        index = {ports[i]: j for j, (i, _, _) in enumerate(c.servers) if i >= 0}
        missing = [k for k in keys[c.id] if k not in holder]
        if missing:
            raise RuntimeError(f"{len(missing)} keys of {c.id} were stored nowhere")
        landed[c.id] = [index[holder[k]] for k in keys[c.id]]
    return keys, landed, ports


def pool_args(cfg: Config) -> dict[str, Any]:
    """The TwemproxyPool arguments a configuration stands for (nutcracker's defaults where
    a directive is left out)."""
    return {"hash": cfg.hash or "fnv1a_64", "distribution": cfg.distribution or "ketama",
            "hash_tag": cfg.hash_tag, "auto_eject_hosts": cfg.auto_eject}
