"""A live HAProxy for the tests and for tests/data/make_haproxy_vectors.py (no consistent_hash
here: what it returns is what HAProxy did).

One haproxy process does everything: one frontend per backend under test (``balance
hdr(X-Key)``), and one ``listen`` section per server name answering every request with that
name (``http-request return ... lf-string "NAME"``), which the backends' servers point to.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from ports import free_ports as _free_ports

HOST = "127.0.0.1"
FUNCTIONS = ("sdbm", "djb2", "wt6", "crc32")


def _servers(n: int, **per: dict[str, str]) -> list[tuple[str, str]]:
    return [(f"s{i}", per.get(f"s{i}", "")) for i in range(1, n + 1)]


def configs() -> list[dict[str, Any]]:
    """The backends checked live: name, hash-type line (None: from a defaults section),
    servers [(name, options)], extra lines."""
    out: list[dict[str, Any]] = [
        {"name": "three_default", "hash_type": "consistent", "servers": _servers(3)},
    ]
    for f in FUNCTIONS:
        for av in (False, True):
            out.append({"name": f"five_{f}" + ("_avalanche" if av else ""),
                        "hash_type": f"consistent {f}" + (" avalanche" if av else ""),
                        "servers": _servers(5)})
    out += [
        {"name": "twentyfive_default", "hash_type": "consistent", "servers": _servers(25)},
        {"name": "twentyfive_weights_crc32", "hash_type": "consistent crc32",
         "servers": [(f"s{i}", f"weight {i % 5 + 1}") for i in range(1, 26)]},
        {"name": "twentyfive_djb2", "hash_type": "consistent djb2",
         "servers": _servers(25)},
        {"name": "five_weights", "hash_type": "consistent",
         "servers": [("s1", "weight 1"), ("s2", "weight 2"), ("s3", "weight 3"),
                     ("s4", "weight 0"), ("s5", "weight 10")]},
        {"name": "five_removed_auto_ids", "hash_type": "consistent",
         "servers": [s for s in _servers(5) if s[0] != "s3"]},
        {"name": "five_explicit_ids", "hash_type": "consistent wt6 avalanche",
         "servers": [(f"s{i}", f"id {10 + i}") for i in range(1, 6)]},
        {"name": "five_explicit_ids_removed", "hash_type": "consistent wt6 avalanche",
         "servers": [(f"s{i}", f"id {10 + i}") for i in range(1, 6) if i != 3]},
        {"name": "five_mixed_ids", "hash_type": "consistent sdbm",
         "servers": [("s1", ""), ("s2", "id 1"), ("s3", ""), ("s4", "id 9"), ("s5", "")]},
        {"name": "five_disabled", "hash_type": "consistent",
         "servers": [("s1", ""), ("s2", "disabled"), ("s3", ""), ("s4", ""), ("s5", "")]},
        {"name": "backup_first", "hash_type": "consistent",
         "servers": [("s1", "disabled"), ("s2", "disabled"), ("s3", "backup"),
                     ("s4", "backup")]},
        {"name": "backup_all", "hash_type": "consistent djb2 avalanche",
         "servers": [("s1", "disabled"), ("s2", "backup"), ("s3", "backup weight 3"),
                     ("s4", "backup")], "extra": ["option allbackups"]},
        {"name": "from_defaults_wt6", "hash_type": None, "servers": _servers(5),
         "from": "wt6defs"},
        # keys in the request target instead of a header
        {"name": "uri_default", "hash_type": "consistent", "servers": _servers(5),
         "via": {"kind": "uri"}},
        {"name": "uri_whole_len", "hash_type": "consistent crc32 avalanche",
         "servers": _servers(5), "via": {"kind": "uri", "whole": True, "length": 24}},
        {"name": "uri_depth", "hash_type": "consistent djb2 avalanche", "servers": _servers(5),
         "via": {"kind": "uri", "depth": 2}},
        {"name": "url_param", "hash_type": "consistent wt6", "servers": _servers(5),
         "via": {"kind": "url_param", "param": "id"}},
        {"name": "source_default", "hash_type": "consistent", "servers": _servers(5),
         "via": {"kind": "source"}},
        {"name": "hdr_use_domain_only", "hash_type": "consistent sdbm avalanche",
         "servers": _servers(5), "via": {"kind": "hdr", "domain": True}},
    ]
    return out


def keyed_configs() -> list[dict[str, Any]]:
    """The backends whose key is in the request (all but balance source)."""
    return [c for c in configs() if (c.get("via") or {}).get("kind") != "source"]


def balance_line(c: dict[str, Any]) -> str:
    via = c.get("via")
    if via is None:
        return "balance hdr(X-Key)"
    if via["kind"] == "hdr":
        return "balance hdr(X-Key)" + (" use_domain_only" if via.get("domain") else "")
    if via["kind"] == "url_param":
        return f"balance url_param {via['param']}"
    if via["kind"] == "source":
        return "balance source"
    words = ["balance uri"]
    if via.get("whole"):
        words.append("whole")
    if via.get("length"):
        words.append(f"len {via['length']}")
    if via.get("depth") is not None:
        words.append(f"depth {via['depth']}")
    return " ".join(words)


def server_names(cfgs: list[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for c in cfgs:
        for n, _ in c["servers"]:
            if n not in names:
                names.append(n)
    return names


def config_text(cfgs: list[dict[str, Any]], fe_ports: dict[str, int],
                srv_ports: dict[str, int]) -> str:
    """The whole haproxy.cfg: frontends, backends be_<name>, responders."""
    lines = ["global", "    maxconn 4000", "",
             "defaults", "    mode http", "    timeout connect 5s", "    timeout client 30s",
             "    timeout server 30s", "    option http-keep-alive", ""]
    for c in cfgs:
        lines += [f"frontend fe_{c['name']}", f"    bind {HOST}:{fe_ports[c['name']]}",
                  f"    default_backend be_{c['name']}", ""]
    for c in cfgs:
        if c.get("from"):
            continue
        lines += [f"backend be_{c['name']}", f"    {balance_line(c)}",
                  f"    hash-type {c['hash_type']}"]
        lines += [f"    {e}" for e in c.get("extra", [])]
        lines += [f"    server {n} {HOST}:{srv_ports[n]} {o}".rstrip() for n, o in c["servers"]]
        lines.append("")
    lines += ["defaults wt6defs", "    mode http", "    timeout connect 5s",
              "    timeout client 30s", "    timeout server 30s", "    balance hdr(X-Key)",
              "    hash-type consistent wt6", ""]
    for c in cfgs:
        if not c.get("from"):
            continue
        lines += [f"backend be_{c['name']} from {c['from']}"]
        lines += [f"    server {n} {HOST}:{srv_ports[n]} {o}".rstrip() for n, o in c["servers"]]
        lines.append("")
    for n, p in srv_ports.items():
        lines += [f"listen srv_{n}", f"    bind {HOST}:{p}",
                  f'    http-request return status 200 content-type text/plain lf-string "{n}"',
                  ""]
    return "\n".join(lines)


def keys(seed: str, n: int) -> list[bytes]:
    """n raw X-Key header values: a third plain ASCII, a third random printable bytes (spaces,
    commas and quotes included), a third raw UTF-8."""
    rng = random.Random(seed)
    out: list[bytes] = []
    ranges = [(0xA0, 0x17F), (0x400, 0x4FF), (0x3040, 0x30FF), (0x4E00, 0x9FFF),
              (0x1F300, 0x1F64F)]
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append(rng.choice([f"user:{rng.randrange(10**6)}",
                                   f"session-{rng.getrandbits(64):x}", f"k{i}",
                                   f"/img/{rng.randrange(1000)}.png"]).encode())
        elif kind == 1:
            out.append(bytes(rng.randrange(0x20, 0x7F) for _ in range(rng.randrange(1, 40))))
        else:
            s = "".join(chr(rng.randrange(*rng.choice(ranges))) if rng.random() < 0.7
                        else chr(rng.randrange(0x21, 0x7F)) for _ in range(rng.randrange(1, 16)))
            out.append(s.encode("utf-8"))
    return out


_URL_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$'()*+,;=:@%"


def targets(seed: str, n: int, param: str = "id") -> list[bytes]:
    """n request targets /seg/seg...?a=1&id=...: segments of URL characters, a query string
    (sometimes none, sometimes without the parameter, sometimes with it empty or twice)."""
    rng = random.Random(seed)
    out: list[bytes] = []
    for _ in range(n):
        segs = ["".join(rng.choice(_URL_CHARS) for _ in range(rng.randrange(0, 9)))
                for _ in range(rng.randrange(1, 5))]
        path = "/" + "/".join(segs)
        r = rng.random()
        if r < 0.1:
            out.append(path.encode())
            continue
        params = [f"{rng.choice(['a', 'b', 'ids', 'i', 'xid'])}={rng.randrange(1000)}"
                  for _ in range(rng.randrange(0, 3))]
        if r > 0.2:
            value = "".join(rng.choice(_URL_CHARS) for _ in
                            range(rng.randrange(0, 12)))
            params.insert(rng.randrange(len(params) + 1), f"{param}={value}")
        if r > 0.9:
            params.append(f"{param}=second")
        out.append((path + "?" + "&".join(params)).encode())
    return out


def domains(seed: str, n: int) -> list[bytes]:
    """n host-like X-Key values: 1 to 5 labels joined by dots, some labels empty (leading,
    trailing or double dots), some one character long."""
    rng = random.Random(seed)
    alnum = "abcdefghijklmnopqrstuvwxyz0123456789-"
    out: list[bytes] = []
    for _ in range(n):
        labels = ["".join(rng.choice(alnum) for _ in range(rng.choice([0, 1, 2, 5, 9])))
                  for _ in range(rng.randrange(1, 6))]
        out.append(".".join(labels).encode() or b"x")
    return out


def key_source(c: dict[str, Any]) -> Any:
    """The key generator for a backend: header values, host names or request targets."""
    via = c.get("via")
    if via is None:
        return keys
    if via["kind"] == "hdr":
        return domains
    return targets




class _Client:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None
        self.buf = b""

    def _connect(self) -> None:
        self.sock = socket.create_connection((HOST, self.port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _read_until(self, marker: bytes) -> bytes:
        assert self.sock is not None
        while marker not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        head, _, self.buf = self.buf.partition(marker)
        return head

    def _read_n(self, n: int) -> bytes:
        assert self.sock is not None
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def ask(self, value: bytes, target: bytes = b"/", after: bytes = b"X-Pad") -> tuple[int, str]:
        # A header follows X-Key: with use_domain_only HAProxy 2.6 reads the byte after the
        # value, which is then the next header's name (see docs/agreeing-with-haproxy.md).
        req = (b"GET " + target + b" HTTP/1.1\r\nHost: t\r\nX-Key: " + value
               + b"\r\n" + after + b": 1\r\n\r\n")
        for attempt in range(3):
            try:
                if self.sock is None:
                    self._connect()
                assert self.sock is not None
                self.sock.sendall(req)
                head = self._read_until(b"\r\n\r\n").decode("latin-1")
                status = int(head.split(" ", 2)[1])
                length = 0
                close = False
                for line in head.split("\r\n")[1:]:
                    k, _, v = line.partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v.strip())
                    if k.strip().lower() == "connection" and "close" in v.lower():
                        close = True
                body = self._read_n(length).decode("latin-1")
                if close:
                    self.close()
                return status, body
            except (ConnectionError, OSError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


class Live:
    """A running haproxy over ``cfgs``; ``text`` is its whole config."""

    def __init__(self, binary: str, cfgs: list[dict[str, Any]]) -> None:
        self.binary, self.cfgs = binary, cfgs
        names = server_names(cfgs)
        ports = _free_ports(len(cfgs) + len(names))
        self.fe_ports = {c["name"]: p for c, p in zip(cfgs, ports, strict=False)}
        self.srv_ports = dict(zip(names, ports[len(cfgs):], strict=True))
        self.text = config_text(cfgs, self.fe_ports, self.srv_ports)
        self._local = threading.local()
        self._all: list[_Client] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close every client connection (each thread keeps one per frontend)."""
        with self._lock:
            for c in self._all:
                c.close()
            self._all.clear()

    def _client(self, port: int) -> _Client:
        d = getattr(self._local, "clients", None)
        if d is None:
            d = self._local.clients = {}
        if port not in d:
            d[port] = _Client(port)
            with self._lock:
                self._all.append(d[port])
        return d[port]

    def ask_many(self, name: str, values: list[bytes], pool: ThreadPoolExecutor,
                 chunk: int = 250, after: bytes = b"X-Pad") -> list[str | None]:
        """The server HAProxy picked for each key (None for a non-200 answer): an X-Key
        header value, or for a backend with "via", a request target."""
        port = self.fe_ports[name]
        via = next(c for c in self.cfgs if c["name"] == name).get("via")
        in_target = bool(via) and via["kind"] != "hdr"

        def run(part: list[bytes]) -> list[str | None]:
            c = self._client(port)
            res: list[str | None] = []
            for v in part:
                status, body = c.ask(b"x", v, after) if in_target else c.ask(v, after=after)
                res.append(body if status == 200 else None)
            return res

        parts = [values[i:i + chunk] for i in range(0, len(values), chunk)]
        out: list[str | None] = []
        for r in pool.map(run, parts):
            out += r
        return out


@contextmanager
def running(binary: str, cfgs: list[dict[str, Any]]) -> Iterator[Live]:
    """Start haproxy in the foreground (-db) on free ports; stop it after."""
    from consistent_hash.cli._servers import PortTaken, ServerError

    for _ in range(5):
        live = Live(binary, cfgs)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "haproxy.cfg")
            with open(path, "w") as f:
                f.write(live.text)
            proc = subprocess.Popen([binary, "-db", "-f", path], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
            try:
                ports = list(live.fe_ports.values()) + list(live.srv_ports.values())
                try:
                    _wait_ports(proc, ports)
                except PortTaken:
                    continue  # a port was taken meanwhile (haproxy is stopped below)
                except ServerError as why:
                    dead = proc.poll() is not None and proc.stderr
                    err = proc.stderr.read().decode() if dead and proc.stderr else ""
                    if "cannot bind" in err or "Address already in use" in err:
                        continue  # a port was taken meanwhile: new ports
                    raise RuntimeError(f"haproxy did not start ({why}): {err[-2000:]}") from None
                try:
                    yield live
                finally:
                    live.close()
                return
            finally:
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                if proc.stderr:
                    proc.stderr.close()
    raise RuntimeError("haproxy could not bind free ports in 5 attempts")


def _wait_ports(proc: subprocess.Popen[bytes], ports: list[int], timeout: float = 15) -> None:
    """Until haproxy itself listens on every port; raises ServerError if it exits or times
    out, PortTaken if another process holds a port (the caller then retries on new ones)."""
    from consistent_hash.cli._servers import wait_port

    end = time.monotonic() + timeout
    for p in ports:
        wait_port(p, proc, timeout=max(end - time.monotonic(), 0.1))
