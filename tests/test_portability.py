"""The core's platform-specific C, built for the platforms this machine can build for and run:
glibc (gcc), musl (musl-gcc, static) and Windows (mingw-w64, run under Wine).

``tools/portable/core_check.c`` includes the core's own headers (the worker pool of
ch_threads.h with its pthreads and Win32 branches, XXH3-64, the ring search) without CPython,
runs parallel lookups (1-8 workers, three callers at once, every result checked against the
serial one) and writes its hashes and owners; they are checked here against xxhash,
np.searchsorted and the installed package on the same ring.  What this does not cover: macOS
(no toolchain here) and the CPython glue of a musl or Windows wheel (no such interpreter here).
"""

from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from live_servers import require

from consistent_hash import HashRing

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "tools" / "portable" / "core_check.c"
FLAGS = ["-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function", "-std=c11"]
xxhash = pytest.importorskip("xxhash")

pytestmark = pytest.mark.skipif(
    not (SOURCE.is_file() and (REPO / "src" / "ch_threads.h").is_file()),
    reason="needs the source tree (tools/portable, src/) beside tests/")


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, HashRing, list[bytes]]:
    """A 40-node ring (weights 1-4, so owners repeat unevenly) and 150,000 keys of 0-60 bytes,
    written as core_check.c reads them."""
    d = tmp_path_factory.mktemp("portable")
    ring = HashRing({f"cache-{i}.example:11211": 1 + i % 4 for i in range(40)})
    rng = np.random.default_rng(7)
    keys = [f"k{i}:".encode() + rng.bytes(int(rng.integers(0, 56))) for i in range(150_000)]
    keys[:3] = [b"", b"a", "ключ".encode()]
    pos = np.asarray(ring.positions, dtype="<u8")
    owners = np.asarray(ring.owners, dtype="<i4")
    with open(d / "in.bin", "wb") as f:
        f.write(struct.pack("<II", len(pos), len(keys)))
        f.write(pos.tobytes())
        f.write(owners.tobytes())
        for k in keys:
            f.write(struct.pack("<I", len(k)) + k)
    return d, ring, keys


def check(d: Path, ring: HashRing, keys: list[bytes], cmd: list[str],
          env: dict[str, str] | None = None) -> None:
    out = d / "out.bin"
    if out.exists():
        out.unlink()
    r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    assert r.stdout.startswith(f"ok {3 * 40} jobs"), r.stdout
    raw = out.read_bytes()
    m = len(keys)
    assert len(raw) == 12 * m
    hashes = np.frombuffer(raw[: 8 * m], dtype="<u8")
    got = np.frombuffer(raw[8 * m:], dtype="<i4")
    want_h = np.array([xxhash.xxh3_64_intdigest(k) for k in keys], dtype=np.uint64)
    assert (hashes == want_h).all()
    pos = np.asarray(ring.positions)
    i = np.searchsorted(pos, want_h, side="left")
    i[i == len(pos)] = 0
    assert (got == np.asarray(ring.owners)[i]).all()
    assert (got == ring.get_indices(keys)).all()


def build(cc: str, out: Path, *extra: str) -> None:
    r = subprocess.run([cc, *FLAGS, *extra, "-o", str(out), str(SOURCE)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


def test_glibc(case: tuple[Path, HashRing, list[bytes]]) -> None:
    d, ring, keys = case
    build(require("gcc"), d / "check_glibc", "-pthread")
    check(d, ring, keys, [str(d / "check_glibc")])


def test_musl(case: tuple[Path, HashRing, list[bytes]]) -> None:
    d, ring, keys = case
    build(require("musl-gcc"), d / "check_musl", "-static")
    assert b"musl" in (d / "check_musl").read_bytes()  # linked against musl, not glibc
    check(d, ring, keys, [str(d / "check_musl")])


def test_windows_under_wine(case: tuple[Path, HashRing, list[bytes]],
                            tmp_path_factory: pytest.TempPathFactory) -> None:
    d, ring, keys = case
    build(require("x86_64-w64-mingw32-gcc"), d / "check_win.exe", "-static")
    assert (d / "check_win.exe").read_bytes()[:2] == b"MZ"  # a PE executable
    wine = require("wine")
    env = dict(os.environ, WINEPREFIX=str(tmp_path_factory.mktemp("wineprefix")),
               WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
    check(d, ring, keys, [wine, "check_win.exe"], env=env)
