"""The harness that starts real servers for the compatibility tests (and the CLI's demos):
a server counts as up only when it is the process listening on its port, a port taken by
another process is retried on a fresh one, and a server that dies says why.

The stand-in server is a small Python listener, so these checks need no server binary."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from live_servers import _started, spawn  # noqa: E402
from ports import free_cluster_port, free_ports  # noqa: E402

from consistent_hash.cli._servers import (  # noqa: E402
    PortTaken,
    ServerError,
    _listener,
    servers,
    stop,
    wait_port,
)

LINUX_PROC = os.path.exists("/proc/net/tcp")
needs_proc = pytest.mark.skipif(not LINUX_PROC, reason="who listens is read from /proc")


def _listener_script(port: int, linger: float = 30.0, say: str = "listening") -> list[str]:
    """A process that listens on 127.0.0.1:port, prints ``say`` and lingers."""
    code = ("import socket, sys, time\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('127.0.0.1', {port})); s.listen(8)\n"
            f"print({say!r}, flush=True); time.sleep({linger})\n")
    return [sys.executable, "-c", code]


def test_the_server_itself_listening_counts_as_up(tmp_path: os.PathLike[str]) -> None:
    (port,) = free_ports(1)
    log = os.path.join(tmp_path, "a.log")
    proc = spawn(_listener_script(port), log)
    try:
        wait_port(port, proc, log=log)
        if LINUX_PROC:
            assert _listener(port, proc.pid) == "ours"
    finally:
        stop([proc])


@needs_proc
def test_a_port_held_by_another_process_is_refused(tmp_path: os.PathLike[str]) -> None:
    # the port is taken (here by this test process) before the "server" could bind it; a
    # plain connect succeeds, but the listener is not the server: refused at once, not
    # mistaken for it (the server here never binds: it just lingers)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            t = time.monotonic()
            with pytest.raises(PortTaken, match=f"port {port} is held by another process"):
                wait_port(port, proc, timeout=10)
            assert time.monotonic() - t < 5
            assert _listener(port, os.getpid()) == "ours"
            assert _listener(port, proc.pid) == "other"
        finally:
            stop([proc])


def test_cluster_ports_leave_room_for_the_bus() -> None:
    # redis-server --cluster-enabled refuses a port above 55535 (its bus is port + 10000);
    # the ephemeral range free_ports draws from reaches 60999, which failed a CI run
    for _ in range(50):
        port = free_cluster_port()
        assert 20000 <= port <= 55535
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", port))
            b.bind(("127.0.0.1", port + 10000))
    # a taken bus port is never handed out: in a range of six, hold the bus ports of five
    held = []
    try:
        for p in range(55530, 55535):
            s = socket.socket()
            held.append(s)
            try:
                s.bind(("127.0.0.1", p + 10000))
            except OSError:
                pass  # taken already: not free either way
        for _ in range(30):
            try:
                port = free_cluster_port(low=55530)
            except RuntimeError:
                break  # 55535 or its bus port is taken by something else here
            assert port == 55535
    finally:
        for s in held:
            s.close()


@needs_proc
def test_nobody_listening() -> None:
    (port,) = free_ports(1)
    assert _listener(port, os.getpid()) == "none"


def test_a_server_that_exits_says_why(tmp_path: os.PathLike[str]) -> None:
    (port,) = free_ports(1)
    log = os.path.join(tmp_path, "b.log")
    proc = spawn(["sh", "-c", "echo 'bind: Address already in use' >&2; exit 3"], log)
    with pytest.raises(ServerError, match=r"exited with status 3(.|\n)*Address already in use"):
        wait_port(port, proc, log=log)


@needs_proc
def test_started_retries_on_a_fresh_port(tmp_path: os.PathLike[str]) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        taken = held.getsockname()[1]
        tried: list[int] = []

        def launch(log: str) -> tuple[int, subprocess.Popen[bytes]]:
            # the first attempt is given the taken port (the race free_ports cannot close)
            port = taken if not tried else free_ports(1)[0]
            tried.append(port)
            return port, spawn(_listener_script(port if port != taken else 0), log)

        with _started("stand-in", launch) as ([port], proc):
            assert tried[0] == taken and port == tried[-1] != taken
            assert _listener(port, proc.pid) == "ours"
            assert proc.poll() is None


def test_a_server_that_dies_during_the_tests_fails_the_fixture() -> None:
    def launch(log: str) -> tuple[int, subprocess.Popen[bytes]]:
        (port,) = free_ports(1)
        return port, spawn(_listener_script(port, linger=0.5, say="about to go"), log)

    with pytest.raises(RuntimeError, match=r"exited with status 0 before(.|\n)*about to go"):
        with _started("stand-in", launch) as (_, proc):
            proc.wait(timeout=10)


def test_package_servers_retry_and_stop(tmp_path: os.PathLike[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # the CLI's helper (the demos use it) on the same stand-in: two up, both stopped at exit
    script = os.path.join(tmp_path, "stand-in")
    with open(script, "w") as f:
        f.write(f"#!{sys.executable}\n"
                "import socket, sys, time\n"
                "s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[2]))); s.listen(8)\n"
                "time.sleep(60)\n")
    os.chmod(script, 0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with servers("stand-in", 2, ["-p", "{port}"]) as ports:
        assert len(set(ports)) == 2
        for p in ports:
            socket.create_connection(("127.0.0.1", p), timeout=5).close()
    for p in ports:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", p), timeout=1).close()
