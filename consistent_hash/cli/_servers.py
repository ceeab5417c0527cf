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

__all__ = ["PortTaken", "ServerError", "free_port", "memcached_servers", "redis_servers", "stop",
           "wait_port"]


class ServerError(RuntimeError):
    """A server binary is missing or did not start."""


class PortTaken(ServerError):
    """Another process listens on the port a server was given (start it on a fresh one)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0,
              log: str | None = None) -> None:
    """Return once ``proc`` itself listens on 127.0.0.1:``port``.

    A connection that succeeds is not proof on its own: another process may hold the port
    (taken between free_port() and the server's bind, which then fails), or the probe may
    connect to itself (a TCP self-connect when its ephemeral port is ``port``).  Where
    /proc shows who listens, the listener must be ``proc``: one held by another process
    raises PortTaken at once (the callers retry on a fresh port).  ``log``: a file the
    server writes to, whose tail goes into the error."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"server on port {port} exited with status {proc.returncode}"
                              + _output_tail(log))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                pass
        except OSError:
            time.sleep(0.02)
            continue
        owner = _listener(port, proc.pid)
        if owner in ("ours", "unknown"):
            return
        if owner == "other":
            raise PortTaken(f"port {port} is held by another process")
        time.sleep(0.02)  # "none": the probe met itself; the server is not up yet
    raise ServerError(f"server on port {port} did not start within {timeout} s"
                      + _output_tail(log))


def _listener(port: int, pid: int) -> str:
    """Who listens on TCP ``port`` per /proc: "ours" (process ``pid``), "other", "none",
    or "unknown" (no /proc, or its file descriptors are not readable)."""
    inodes = set()
    try:
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            if not os.path.exists(table):
                continue
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(f"socket:[{fields[9]}]")
    except (OSError, ValueError, IndexError, StopIteration):
        return "unknown"
    if not inodes:
        return "none" if os.path.exists("/proc/net/tcp") else "unknown"
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return "unknown"
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                return "ours"
        except OSError:
            continue
    return "other"


def _output_tail(log: str | None) -> str:
    """The last lines a server wrote to its log file."""
    if log is None:
        return ""
    try:
        with open(log, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace").strip()
    return f"; its output ends:\n{text[-2000:]}" if text else ""


@contextlib.contextmanager
def servers(binary: str, count: int, args: Sequence[str] = ()) -> Iterator[list[int]]:
    """Start ``count`` instances of a server binary that takes ``-p PORT``-style arguments
    formatted into ``args`` ({port}); yields their ports and stops them all on exit."""
    path = shutil.which(binary)
    if path is None:
        raise ServerError(f"{binary} is not installed (on Debian: apt-get install {binary})")
    procs: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    with tempfile.TemporaryDirectory(prefix="consistent-hash-servers-") as logs:
        try:
            for i in range(count):
                for attempt in range(5):
                    port = free_port()
                    log = os.path.join(logs, f"{binary}-{i}-{attempt}.log")
                    with open(log, "wb") as out:
                        proc = subprocess.Popen([path, *(a.format(port=port) for a in args)],
                                                stdout=out, stderr=subprocess.STDOUT)
                    try:
                        wait_port(port, proc, log=log)
                    except ServerError:
                        stop([proc])
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
