"""Start and stop local memcached / redis-server processes on 127.0.0.1 (free ports).

Used by ``python -m consistent_hash demo memcached`` / ``demo resize`` and by the tests.
Every server binds only to the loopback address and is stopped when the context exits.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence

__all__ = ["ServerError", "free_port", "memcached_servers", "redis_servers", "stop", "wait_port"]


class ServerError(RuntimeError):
    """A server binary is missing or did not start."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"server on port {port} exited with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise ServerError(f"server on port {port} did not start within {timeout} s")


@contextlib.contextmanager
def servers(binary: str, count: int, args: Sequence[str] = ()) -> Iterator[list[int]]:
    """Start ``count`` instances of a server binary that takes ``-p PORT``-style arguments
    formatted into ``args`` ({port}); yields their ports and stops them all on exit."""
    path = shutil.which(binary)
    if path is None:
        raise ServerError(f"{binary} is not installed (on Debian: apt-get install {binary})")
    procs: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    try:
        for _ in range(count):
            for attempt in range(5):
                port = free_port()
                proc = subprocess.Popen([path, *(a.format(port=port) for a in args)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                try:
                    wait_port(port, proc)
                except ServerError:
                    proc.kill()
                    proc.wait()
                    if attempt == 4:
                        raise
                    continue
                procs.append(proc)
                ports.append(port)
                break
        yield ports
    finally:
        stop(procs)


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Terminate server processes (kill any that do not exit within 5 s)."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if p.stderr is not None:
            p.stderr.close()


def memcached_servers(count: int, memory_mb: int = 64) -> contextlib.AbstractContextManager[
        list[int]]:
    """``count`` memcached servers on 127.0.0.1 (TCP only); yields their ports."""
    args = ["-l", "127.0.0.1", "-p", "{port}", "-U", "0", "-m", str(memory_mb), "-t", "1"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # memcached refuses root without -u
        args += ["-u", "root"]
    return servers("memcached", count, args)


def redis_servers(count: int) -> contextlib.AbstractContextManager[list[int]]:
    """``count`` standalone redis-server processes on 127.0.0.1, without persistence (no RDB,
    no AOF, in the system's temporary directory); yields their ports."""
    args = ["--bind", "127.0.0.1", "--port", "{port}", "--save", "", "--appendonly", "no",
            "--protected-mode", "yes", "--dir", tempfile.gettempdir()]
    return servers("redis-server", count, args)
