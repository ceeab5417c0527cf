"""memcached on a unix socket, on the IPv6 loopback and on other loopback addresses
(127.0.0.x), for the tests of server kinds; started and stopped by the caller's ``with``.

``ipv6_memcached`` skips (with the reason) when the kernel has no IPv6 loopback: that is a
missing kernel feature, not a missing binary, so it is a skip even under
CONSISTENT_HASH_REQUIRE_SERVERS=1.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from live_servers import require
from ports import free_ports

from consistent_hash.cli._servers import stop


def _root_args() -> list[str]:
    return ["-u", "nobody"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def _wait(connect: Callable[[], None], what: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"memcached on {what} exited with {proc.returncode}")
        try:
            connect()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"memcached on {what} did not start")


def _connect_unix(path: str) -> Callable[[], None]:
    def go() -> None:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(path)
    return go


def _connect_tcp(family: int, host: str, port: int) -> Callable[[], None]:
    def go() -> None:
        with socket.socket(family) as s:
            s.settimeout(0.5)
            s.connect((host, port))
    return go


@contextmanager
def unix_memcached(n: int) -> Iterator[list[str]]:
    """n memcached servers listening on unix sockets only; yields the socket paths."""
    binary = require("memcached")
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)  # memcached runs as nobody when we are root
        procs: list[subprocess.Popen[bytes]] = []
        paths = [os.path.join(d, f"mc{i}.sock") for i in range(n)]
        try:
            for path in paths:
                procs.append(subprocess.Popen(
                    [binary, "-s", path, "-a", "0777", "-m", "16", "-t", "1", *_root_args()],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            for path, proc in zip(paths, procs, strict=True):
                _wait(_connect_unix(path), path, proc)
            yield paths
        finally:
            stop(procs)




def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@contextmanager
def tcp_memcached(hosts: list[str]) -> Iterator[list[tuple[str, int]]]:
    """One memcached per host (an IPv4 loopback address or "::1"), each on a free port;
    yields [(host, port)]."""
    binary = require("memcached")
    if any(":" in h for h in hosts) and not ipv6_loopback():
        pytest.skip("the kernel has no IPv6 loopback (::1 cannot be bound)")
    procs: list[subprocess.Popen[bytes]] = []
    addrs: list[tuple[str, int]] = []
    try:
        for h in hosts:
            family = socket.AF_INET6 if ":" in h else socket.AF_INET
            for _ in range(5):
                (port,) = free_ports(1, h, family)
                proc = subprocess.Popen(
                    [binary, "-l", h, "-p", str(port), "-U", "0", "-m", "16", "-t", "1",
                     *_root_args()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                try:
                    _wait(_connect_tcp(family, h, port), f"{h}:{port}", proc)
                    break
                except RuntimeError:
                    stop([proc])
            else:
                raise RuntimeError(f"could not start memcached on {h}")
            procs.append(proc)
            addrs.append((h, port))
        yield addrs
    finally:
        stop(procs)
