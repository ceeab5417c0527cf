"""Start real memcached / redis-server processes on 127.0.0.1 for the compatibility tests.

A test that needs a server binary that is missing is skipped with the reason, unless
CONSISTENT_HASH_REQUIRE_SERVERS=1 is set (as .ci/run sets it): then it fails, so CI can never
pass by skipping the proof.  Every process started here is stopped by the fixture that
started it; nothing listens on anything but the loopback address.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager

import pytest
from ports import free_cluster_port, free_ports

from consistent_hash.cli import _servers
from consistent_hash.cli._servers import _output_tail, stop, wait_port

HOST = "127.0.0.1"


def require(binary: str) -> str:
    """The path of a server binary, or skip (fail under CONSISTENT_HASH_REQUIRE_SERVERS=1)."""
    path = shutil.which(binary)
    for d in ("/usr/bin", "/usr/sbin", "/usr/local/bin"):
        if path is None and os.access(os.path.join(d, binary), os.X_OK):
            path = os.path.join(d, binary)
    if path is None:
        reason = f"{binary} is not installed (apt-get install {binary}; .ci/run does)"
        if os.environ.get("CONSISTENT_HASH_REQUIRE_SERVERS") == "1":
            pytest.fail(reason + " and CONSISTENT_HASH_REQUIRE_SERVERS=1 is set")
        pytest.skip(reason)
    return path




Launch = Callable[[str], tuple[int | list[int], subprocess.Popen[bytes]]]


def spawn(args: list[str], log: str) -> subprocess.Popen[bytes]:
    """A server process appending its stdout and stderr to the file ``log`` (appending, so
    a server told to log there too, like nutcracker's -o, does not overwrite it)."""
    with open(log, "ab") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)


@contextmanager
def _started(what: str, launch: Launch, *, must_survive: bool = True
             ) -> Iterator[tuple[list[int], subprocess.Popen[bytes]]]:
    """Start one server with launch(log) (which picks its free port, or ports, and writes
    its output to the file ``log``), retrying on fresh ports if one was taken meanwhile;
    yields (ports, process) once it listens on all of them, and stops it.  With
    ``must_survive``, a server that died before the end fails the fixture with its output
    (a test that then met "connection refused" says why)."""
    with tempfile.TemporaryDirectory(prefix="consistent-hash-test-") as logs:
        errors = []
        for attempt in range(5):
            log = os.path.join(logs, f"{what}-{attempt}.log")
            port, proc = launch(log)
            ports = port if isinstance(port, list) else [port]
            try:
                for p in ports:
                    wait_port(p, proc, log=log)
                break
            except RuntimeError as e:
                errors.append(str(e))
                stop([proc])
        else:
            raise RuntimeError(f"could not start {what}: " + " | ".join(errors))
        try:
            yield ports, proc
        finally:
            died = proc.poll()
            stop([proc])
            if must_survive and died is not None:
                raise RuntimeError(f"{what} on ports {ports} exited with status {died} before "
                                   "the tests that use it ended" + _output_tail(log))


@contextmanager
def _one_server(what: str, launch: Launch) -> Iterator[int]:
    """_started for one port, yielding it."""
    with _started(what, launch) as (ports, _):
        yield ports[0]


def memcached_servers(n: int, memory_mb: int = 16) -> AbstractContextManager[list[int]]:
    """n memcached servers on 127.0.0.1; yields their ports (the package's own helper, which
    the memcached demo uses too)."""
    require("memcached")
    return _servers.memcached_servers(n, memory_mb)


def redis_servers(n: int) -> AbstractContextManager[list[int]]:
    """n standalone redis-server processes on 127.0.0.1 (no persistence); yields their
    ports."""
    require("redis-server")
    return _servers.redis_servers(n)


@contextmanager
def killable_server(binary: str, memory_mb: int = 64
                    ) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """One memcached or standalone redis-server on 127.0.0.1, yielding (port, process) so a
    test can kill it mid-run; stopped on exit if still running."""
    path = require(binary)

    def launch(log: str) -> tuple[int, subprocess.Popen[bytes]]:
        (port,) = free_ports(1)
        if binary == "memcached":
            args = ["-l", HOST, "-p", str(port), "-U", "0", "-m", str(memory_mb), "-t", "1"]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                args += ["-u", "nobody"]
        else:
            args = ["--bind", HOST, "--port", str(port), "--save", "", "--appendonly", "no",
                    "--dir", tempfile.gettempdir()]
        return port, spawn([path, *args], log)

    with _started(binary, launch, must_survive=False) as (ports, proc):
        yield ports[0], proc


@contextmanager
def redis_cluster_server() -> Iterator[int]:
    """One redis-server with --cluster-enabled yes (enough for CLUSTER KEYSLOT)."""
    binary = require("redis-server")
    with tempfile.TemporaryDirectory() as d:
        def launch(log: str) -> tuple[int, subprocess.Popen[bytes]]:
            port = free_cluster_port()
            return port, spawn(
                [binary, "--bind", HOST, "--port", str(port), "--cluster-enabled", "yes",
                 "--cluster-config-file", os.path.join(d, f"nodes-{port}.conf"), "--dir", d,
                 "--save", "", "--appendonly", "no", "--protected-mode", "yes"], log)

        with _one_server("redis-server", launch) as port:
            yield port


@contextmanager
def nutcracker_proxy(servers: list[str], *, hash: str = "md5") -> Iterator[int]:
    """twemproxy (nutcracker) in front of the given "host:port:weight [name]" servers, with
    distribution ketama; yields the proxy's port."""
    binary = require("nutcracker")
    with tempfile.TemporaryDirectory() as d:
        def launch(log: str) -> tuple[int, subprocess.Popen[bytes]]:
            port, stats = free_ports(2)
            conf = os.path.join(d, "nutcracker.yml")
            with open(conf, "w") as f:
                f.write("pool:\n"
                        f"  listen: {HOST}:{port}\n"
                        f"  hash: {hash}\n"
                        "  distribution: ketama\n"
                        "  timeout: 2000\n"
                        "  auto_eject_hosts: false\n"
                        "  servers:\n" + "".join(f"   - {s}\n" for s in servers))
            return port, spawn([binary, "-c", conf, "-s", str(stats), "-a", HOST,
                                "-o", log], log)

        with _one_server("nutcracker", launch) as port:
            yield port


@contextmanager
def nutcracker_pools(pools: list[str], binary: str | None = None) -> Iterator[list[int]]:
    """One twemproxy (nutcracker) process serving several pools: each entry of ``pools`` is
    the body of one pool in nutcracker.yml (its directives, two-space indented, without
    ``listen:``); yields each pool's port, in order.  ``binary``: another nutcracker build."""
    binary = binary or require("nutcracker")
    with tempfile.TemporaryDirectory() as d:
        def launch(log: str) -> tuple[list[int], subprocess.Popen[bytes]]:
            ports = free_ports(len(pools) + 1)  # the pools', then the stats port
            conf = os.path.join(d, "nutcracker.yml")
            with open(conf, "w") as f:
                for i, body in enumerate(pools):
                    f.write(f"pool{i}:\n  listen: {HOST}:{ports[i]}\n{body}")
            return ports[:-1], spawn([binary, "-c", conf, "-s", str(ports[-1]), "-a", HOST,
                                      "-o", log], log)

        with _started("nutcracker", launch) as (ports, _):
            yield ports


@contextmanager
def memcached_clusters() -> Iterator[Callable[[int], list[int]]]:
    """Memcached clusters by size: get(n) starts n servers the first time n is asked for and
    returns the same ports after; all are stopped on exit (for module-scoped fixtures)."""
    with ExitStack() as stack:
        started: dict[int, list[int]] = {}

        def get(n: int) -> list[int]:
            if n not in started:
                started[n] = stack.enter_context(memcached_servers(n))
            return started[n]

        yield get
