"""A live nginx for the nginx compatibility tests (tests/test_nginx.py) and the golden-vector
generator (tests/data/make_nginx_vectors.py).

One nginx process serves everything: 25 TCP backends (``server`` blocks on free 127.0.0.1
ports) and one unix-socket backend, each answering ``$server_addr:$server_port`` (so the reply
says where nginx sent the request), and one front ``server`` with a ``location /NAME`` per
upstream that proxies to ``upstream NAME`` balanced by ``hash $http_x_key [consistent]``: the
key travels in the ``X-Key`` header, whose bytes nginx hands to the balancer unchanged (it only
drops leading and trailing spaces; CR, LF and NUL cannot be sent).
"""

from __future__ import annotations

import http.client
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from ports import free_ports as _free_ports

HOST = "127.0.0.1"
NBACK = 25


@dataclass(frozen=True)
class Config:
    """One upstream: name, mode, servers as (written, weight, down); backup servers are
    written before the ``hash`` line (the only place nginx accepts them with hash)."""

    name: str
    consistent: bool
    servers: tuple[tuple[str, int, bool], ...]
    backup: tuple[str, ...] = ()
    dead: tuple[str, ...] = ()  # servers with nothing listening (nginx retries the next)

    def block(self) -> str:
        lines = [f"    upstream {self.name} {{"]
        lines += [f"        server {b} backup;" for b in self.backup]
        lines += [f"        hash $http_x_key{' consistent' if self.consistent else ''};"]
        for s, w, d in self.servers:
            lines.append(f"        server {s}" + (f" weight={w}" if w != 1 else "")
                         + (" down" if d else "") + ";")
        lines.append("        keepalive 4;")  # after `hash`: it wraps the balancer
        lines.append("    }")
        return "\n".join(lines)


def configs(ports: Sequence[int], sock: str, dead: int = 9) -> list[Config]:
    """The configurations: 3, 5 and 25 servers, weights, a server removed, servers down, a
    server dead (nothing listens on port ``dead``), backup servers, localhost:P vs
    127.0.0.1:P, a unix socket; consistent and plain hash."""
    ip = [f"{HOST}:{p}" for p in ports]
    gone = f"{HOST}:{dead}"

    def s(names: Sequence[str], weights: Sequence[int] | None = None,
          down: Sequence[int] = ()) -> tuple[tuple[str, int, bool], ...]:
        ws = weights or [1] * len(names)
        return tuple((n, w, i in down) for i, (n, w) in enumerate(zip(names, ws, strict=True)))

    w5 = [1, 2, 3, 1, 5]
    local5 = [ip[0], f"localhost:{ports[1]}", ip[2], f"localhost:{ports[3]}", ip[4]]
    out = []
    for consistent, pre in ((True, "c"), (False, "h")):
        out += [
            Config(pre + "3", consistent, s(ip[:3])),
            Config(pre + "5", consistent, s(ip[:5])),
            Config(pre + "25", consistent, s(ip[:25])),
            Config(pre + "5w", consistent, s(ip[:5], w5)),
            Config(pre + "5rm", consistent, s(ip[:2] + ip[3:5])),
            Config(pre + "5down", consistent, s(ip[:5], down=[1])),
            Config(pre + "25down", consistent, s(ip[:25], [1 + i % 3 for i in range(25)],
                                                 down=[0, 7, 19])),
            Config(pre + "4backup", consistent, s(ip[:4]), backup=(ip[4],)),
            Config(pre + "5dead", consistent, s(ip[:2] + [gone] + ip[3:5]), dead=(gone,)),
        ]
    out += [
        Config("c5local", True, s(local5)),
        Config("c4unix", True, s([ip[0], ip[1], f"unix:{sock}", ip[3]])),
        Config("c3heavy", True, s(ip[:3], [10, 1, 30])),
    ]
    return out


def nginx_conf(prefix: str, front: int, ports: Sequence[int], sock: str,
               cfgs: Sequence[Config]) -> str:
    user = "user nobody nogroup;\n" if os.geteuid() == 0 else ""
    backends = "\n".join(
        f"    server {{ listen {HOST}:{p}; return 200 \"$server_addr:$server_port\"; }}"
        for p in ports)
    backends += f"\n    server {{ listen unix:{sock}; return 200 \"unix:{sock}\"; }}"
    locations = "\n".join(
        f"        location = /{c.name} {{ proxy_pass http://{c.name};"
        + (" proxy_next_upstream error timeout; proxy_connect_timeout 2s;" if c.dead else "")
        + " }" for c in cfgs)
    return f"""{user}worker_processes 2;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
{backends}
{chr(10).join(c.block() for c in cfgs)}
    server {{
        listen {HOST}:{front};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_next_upstream off;
{locations}
    }}
}}
"""


@dataclass
class Live:
    front: int
    ports: list[int]
    sock: str
    configs: list[Config]
    conf_text: str

    def answer_to_server(self, cfg: Config, answer: str) -> str:
        """The server (as written in cfg) a backend's reply names."""
        if answer.startswith("unix:"):
            return next(s for s, _, _ in cfg.servers if s.startswith("unix:"))
        port = answer.rsplit(":", 1)[1]
        written = [s for s, _, _ in cfg.servers] + list(cfg.backup)
        return next(s for s in written if s.rsplit(":", 1)[-1] == port)

    def route(self, requests: Sequence[tuple[str, bytes]], threads: int = 6) -> list[str]:
        """For (upstream name, key) pairs, the backend reply to each (keep-alive connections,
        a few threads)."""
        out: list[str] = [""] * len(requests)
        chunks = [range(i, len(requests), threads) for i in range(threads)]

        def work(idx: range) -> None:
            conn = http.client.HTTPConnection(HOST, self.front, timeout=30)
            try:
                for i in idx:
                    name, key = requests[i]
                    for attempt in range(3):
                        try:
                            conn.putrequest("GET", "/" + name, skip_accept_encoding=True)
                            conn.putheader("X-Key", key)
                            conn.endheaders()
                            r = conn.getresponse()
                            body = r.read().decode()
                            if r.status != 200:
                                raise RuntimeError(f"nginx answered {r.status} for {key!r}")
                            out[i] = body
                            break
                        except (http.client.HTTPException, ConnectionError):
                            conn.close()
                            conn = http.client.HTTPConnection(HOST, self.front, timeout=30)
                            if attempt == 2:
                                raise
            finally:
                conn.close()

        with ThreadPoolExecutor(threads) as ex:
            list(ex.map(work, chunks))
        return out




def _wait(port: int, proc: subprocess.Popen[bytes], errlog: str, timeout: float = 10) -> None:
    """Until nginx's master itself listens on ``port`` (the harness's check: not another
    process that took the port meanwhile); its error log goes into the error."""
    from consistent_hash.cli._servers import wait_port

    wait_port(port, proc, timeout=timeout, log=errlog)


@contextmanager
def live_nginx(binary: str) -> Iterator[Live]:
    """Start nginx (retrying on a port race); yields a Live; stops it (its process only)."""
    prefix = tempfile.mkdtemp(prefix="ch-nginx-")
    sockdir = tempfile.mkdtemp(prefix="ch-nginx-sock-")
    os.chmod(prefix, 0o755)
    os.chmod(sockdir, 0o777)
    sock = os.path.join(sockdir, "backend.sock")
    proc = None
    try:
        for attempt in range(5):
            ports = _free_ports(NBACK + 2)
            front, back, dead = ports[0], ports[1:-1], ports[-1]
            cfgs = configs(back, sock, dead)
            text = nginx_conf(prefix, front, back, sock, cfgs)
            conf = os.path.join(prefix, "nginx.conf")
            with open(conf, "w") as f:
                f.write(text)
            if os.path.exists(sock):
                os.unlink(sock)
            proc = subprocess.Popen([binary, "-p", prefix, "-c", conf, "-e",
                                     os.path.join(prefix, "error.log")],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                _wait(front, proc, os.path.join(prefix, "error.log"))
                break
            except RuntimeError:
                _stop(proc)
                proc = None
                if attempt == 4:
                    raise
        for _ in range(100):  # the master creates the socket; let workers connect to it
            if os.path.exists(sock):
                os.chmod(sock, 0o777)
                break
            time.sleep(0.05)
        yield Live(front, back, sock, cfgs, text)
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(prefix, ignore_errors=True)
        shutil.rmtree(sockdir, ignore_errors=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # the master stops its workers
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    if proc.stderr:
        proc.stderr.close()


# -- keys that survive a header unchanged ------------------------------------------------------



def header_safe(key: bytes) -> bool:
    """nginx passes a header value's bytes unchanged if it has no CR, LF or NUL and does not
    start or end with a space (those it strips); an empty value is round-robined."""
    return (bool(key) and not any(c in key for c in b"\r\n\0")
            and key[:1] != b" " and key[-1:] != b" ")


def keys(seed: int, n: int) -> list[bytes]:
    """n distinct header-safe keys: a third plain ASCII, a third random bytes (every byte value
    but CR, LF, NUL; tabs and inner spaces included), a third raw UTF-8 of mixed scripts."""
    rng = random.Random(seed)
    out: list[bytes] = []
    seen: set[bytes] = set()
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_./"
    ranges = [(0x20, 0x7E), (0xC0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x4E00, 0x9FFF),
              (0x3040, 0x30FF), (0x1F300, 0x1F64F), (0x600, 0x6FF)]
    bytes_ok = [b for b in range(1, 256) if b not in (10, 13)]
    while len(out) < n:
        kind = len(out) % 3
        if kind == 0:
            k = ("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))).encode()
        elif kind == 1:
            k = bytes(rng.choice(bytes_ok) for _ in range(rng.randint(1, 40)))
        else:
            chars = []
            for _ in range(rng.randint(1, 16)):
                lo, hi = rng.choice(ranges)
                chars.append(chr(rng.randint(lo, hi)))
            k = "".join(chars).encode("utf-8")
        if header_safe(k) and k not in seen:
            seen.add(k)
            out.append(k)
    return out
