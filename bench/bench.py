#!/usr/bin/env python3
"""Benchmark consistent_hash against its peers, in one process, on the same keys.

    python bench/bench.py [--quick] [--json out.json] [--keys N] [--runs N] [--seed N]

Builds the inputs once (str keys like "user:{i}:{random}" of mixed lengths 8-24, and random
uint64), checks that ours and every peer agree wherever they compute the same thing, then
times each case as the median of several runs and prints a markdown table on stdout
(progress goes to stderr). Exit status 1 if any correctness check failed.

Peers are imported lazily; a missing one prints "not installed". Slow peers (Python loops)
are timed on a subset of the keys and reported per key. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib
import importlib.metadata
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _p in (HERE, ROOT):  # the in-place build of the repo, and pyring.py beside this file
    if _p not in sys.path:
        sys.path.insert(0, _p)

import numpy as np  # noqa: E402
from pyring import PyRing, md5_128  # noqa: E402

NOT_INSTALLED = "not installed"


# -- configuration -----------------------------------------------------------------------------

@dataclass
class Config:
    n_keys: int = 1_000_000      # ours and the NumPy peer run on all of them
    runs: int = 5                # median of this many runs (ours and fast peers)
    slow_runs: int = 3           # runs for peers that loop in Python / slow builds
    loop_keys: int = 100_000     # subset for peers that loop in Python, and for scalar get
    check_keys: int = 20_000     # subset for the pure-Python cross-checks
    rendezvous_work: int = 2_000_000  # clandestined: keys = this // nodes (O(nodes) per key)
    seed: int = 20240601
    quick: bool = False
    clock: str = "wall"          # "cpu": process CPU time, less hurt by other work on the box

    @classmethod
    def make(cls, quick: bool, n_keys: int | None = None, runs: int | None = None,
             seed: int | None = None, clock: str = "wall") -> Config:
        c = cls(n_keys=100_000, runs=3, slow_runs=1, loop_keys=10_000, check_keys=5_000,
                rendezvous_work=200_000, quick=True) if quick else cls()
        if n_keys is not None:
            c.n_keys = n_keys
        if runs is not None:
            c.runs = runs
            c.slow_runs = min(c.slow_runs, runs)
        if seed is not None:
            c.seed = seed
        c.clock = clock
        c.loop_keys = min(c.loop_keys, c.n_keys)
        c.check_keys = min(c.check_keys, c.n_keys)
        return c


@dataclass
class Row:
    case: str
    unit: str                  # "ns/key", "ns/call" or "ms"
    ours: float | None
    peer: str
    peer_value: float | None
    ours_note: str = ""        # why ours is missing ("n/a: ...")
    peer_note: str = ""        # "not installed", or how the peer was measured
    ours_keys: int = 0
    peer_keys: int = 0

    @property
    def ratio(self) -> float | None:
        if self.ours and self.peer_value is not None:
            return self.peer_value / self.ours
        return None


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class Bench:
    cfg: Config
    rows: list[Row] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, bool(ok), detail))
        log(f"  check {'ok  ' if ok else 'FAIL'} {name}" + (f" ({detail})" if detail else ""))
        return bool(ok)

    def row(self, *args: Any, **kw: Any) -> None:
        r = Row(*args, **kw)
        self.rows.append(r)
        log(f"  {r.case} | ours {fmt(r.ours)} | {r.peer} {fmt(r.peer_value)}"
            f"{' ' + r.peer_note if r.peer_note else ''}")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- timing --------------------------------------------------------------------------------------

CLOCKS = {"wall": time.perf_counter_ns, "cpu": time.process_time_ns}
_clock = time.perf_counter_ns


def median_ns(fn: Callable[[], object], runs: int, warmup: int = 1) -> float:
    """Median time of fn() in ns (wall clock, or this process's CPU time with --clock cpu);
    the garbage collector is off while timing (as timeit does)."""
    clock = _clock
    for _ in range(warmup):
        fn()
    times = []
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            t0 = clock()
            fn()
            times.append(clock() - t0)
    finally:
        if was_enabled:
            gc.enable()
    return float(statistics.median(times))


def per_key(fn: Callable[[], object], n: int, runs: int, warmup: int = 1) -> float:
    return median_ns(fn, runs, warmup) / n


def ms(fn: Callable[[], object], runs: int, warmup: int = 1) -> float:
    return median_ns(fn, runs, warmup) / 1e6


# -- peers (lazy) -------------------------------------------------------------------------------

def try_import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class NumpyRing:
    """The NumPy peer: hash in a Python loop (xxhash XXH3-64) + np.searchsorted + take.

    Same labels (f"{node}#{j}") and hash as HashRing's defaults, so results must be equal."""

    def __init__(self, nodes: list[str], vnodes: int = 160) -> None:
        import xxhash

        self._h = xxhash.xxh3_64_intdigest
        self.vnodes = vnodes
        self.names = sorted(nodes)
        h = self._h
        pos = np.fromiter((h(f"{n}#{j}".encode()) for n in self.names for j in range(vnodes)),
                          dtype=np.uint64, count=len(self.names) * vnodes)
        own = np.repeat(np.arange(len(self.names), dtype=np.int32), vnodes)
        order = np.lexsort((own, pos))
        self.pos, self.own = pos[order], own[order]
        self.names_arr = np.array(self.names, dtype=object)

    def hash(self, keys: list[str]) -> np.ndarray:
        h = self._h
        return np.fromiter((h(k.encode()) for k in keys), dtype=np.uint64, count=len(keys))

    def get_indices(self, keys: list[str]) -> np.ndarray:
        i = np.searchsorted(self.pos, self.hash(keys))
        i[i == len(self.pos)] = 0
        return self.own[i]

    def get_many(self, keys: list[str]) -> np.ndarray:
        out: np.ndarray = self.names_arr[self.get_indices(keys)]
        return out

    def add(self, node: str) -> None:
        h = self._h
        new = np.sort(np.fromiter((h(f"{node}#{j}".encode()) for j in range(self.vnodes)),
                                  dtype=np.uint64, count=self.vnodes))
        r = int(np.searchsorted(np.array(self.names, dtype=object), node))
        own = self.own + (self.own >= r)
        at = np.searchsorted(self.pos, new)
        self.pos = np.insert(self.pos, at, new)
        self.own = np.insert(own, at, np.int32(r)).astype(np.int32)
        self.names.insert(r, node)
        self.names_arr = np.array(self.names, dtype=object)

    def remove(self, node: str) -> None:
        r = self.names.index(node)
        keep = self.own != r
        self.pos = self.pos[keep]
        own = self.own[keep]
        self.own = (own - (own > r)).astype(np.int32)
        del self.names[r]
        self.names_arr = np.array(self.names, dtype=object)


def balanced(values: list[Any], outputs: list[Any]) -> tuple[bool, str]:
    """All values are valid outputs, each output within 6 sigma of a uniform share: a sanity
    check for peers that use another algorithm (so cannot be compared result by result)."""
    counts, mean = Counter(values), len(values) / len(outputs)
    if not set(counts) <= set(outputs):
        return False, "returned values outside the node set"
    if mean < 20:
        return True, f"values valid; {len(values):,} keys too few to test balance"
    worst = max(abs(counts.get(x, 0) - mean) for x in outputs)
    return worst <= 6 * math.sqrt(mean) + 1, f"max deviation {worst / mean:.1%} of the mean"


# -- inputs --------------------------------------------------------------------------------------

def make_keys(n: int, seed: int) -> list[str]:
    """n keys f"user:{i}:{random a-z0-9}" with target lengths uniform in 8..24 (the random
    part is at least 1 char, so keys with long prefixes are 13-24 chars)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(8, 25, size=n).tolist()
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
    pool = alphabet[rng.integers(0, len(alphabet), size=n * 24)].tobytes().decode("ascii")
    keys = []
    for i in range(n):
        prefix = f"user:{i}:"
        r = max(1, lengths[i] - len(prefix))
        keys.append(prefix + pool[24 * i: 24 * i + r])
    return keys


def make_hashes(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed + 1).integers(0, 2**64, size=n, dtype=np.uint64,
                                                    endpoint=False)


def node_names(k: int) -> list[str]:
    return [f"node-{i}" for i in range(k)]


# -- machine description --------------------------------------------------------------------

def _run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10,
                              cwd=ROOT).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return NOT_INSTALLED


def _extension_id() -> str:
    """The compiled module's file, mtime and sha256 prefix: which build was measured."""
    import hashlib

    from consistent_hash import _ring

    path = getattr(_ring, "__file__", None)
    if not path:
        return "extension: unknown"
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    built = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc)
    return (f"extension {os.path.basename(path)} built {built:%Y-%m-%d %H:%M} UTC, "
            f"sha256 {digest}")


def _load() -> str:
    """1-minute load average: other work on a 2-core machine skews every number."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (OSError, AttributeError):
        return "unknown"


def machine_info() -> dict[str, str]:
    cpu, flags = platform.processor() or platform.machine(), ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and cpu in ("", platform.machine(),
                                                               platform.processor()):
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = line
    except OSError:
        pass
    isa = [x for x in ("avx2", "avx512f", "avx512bw") if f" {x}" in flags]
    logical = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else logical
    os_name = platform.platform()
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    os_name += f" ({line.split('=', 1)[1].strip().strip(chr(34))})"
    except OSError:
        pass
    commit = _run(["git", "rev-parse", "--short=12", "HEAD"])
    if not commit:
        commit = "no commit yet (work tree)"
    elif _run(["git", "status", "--porcelain", "--", "src", "consistent_hash"]):
        commit += " + uncommitted changes in src/ or consistent_hash/"
    import consistent_hash

    gcc = (_run(["gcc", "--version"]).splitlines() or ["gcc not found"])[0]
    return {
        "cpu": cpu + (f" [{', '.join(isa)}]" if isa else ""),
        "cores": f"{logical} logical, {usable} usable by this process",
        "threads": (f"ours with threads=None -> {_threads_default()} per batch call "
                    "(CONSISTENT_HASH_THREADS=1 for the serial path; batches under "
                    "32,768 keys stay serial)"),
        "load": _load(),
        "os": os_name,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "numpy": np.__version__,
        "cython": _version("Cython"),
        "gcc": gcc,
        "library": f"consistent_hash {consistent_hash.__version__} from "
                   f"{os.path.dirname(consistent_hash.__file__)}; {_extension_id()}",
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "peers": ", ".join(f"{d} {_version(d)}" for d in (
            "pyarrow", "xxhash", "uhashring", "hashring", "jump-consistent-hash",
            "clandestined")),
    }


def _threads_default() -> int:
    import consistent_hash

    get = getattr(consistent_hash, "get_threads", None)
    return int(get()) if get is not None else 1


# -- the cases -----------------------------------------------------------------------------

class Inputs:
    def __init__(self, cfg: Config) -> None:
        t0 = time.perf_counter()
        self.keys = make_keys(cfg.n_keys, cfg.seed)
        self.keys_u = np.array(self.keys)  # dtype '<U24'
        pa = try_import("pyarrow")
        self.keys_pa = pa.array(self.keys, type=pa.string()) if pa else None
        self.hashes = make_hashes(cfg.n_keys, cfg.seed)
        self.sub = self.keys[: cfg.loop_keys]
        self.chk = self.keys[: cfg.check_keys]
        lens = [len(k) for k in self.keys]
        self.desc = (f"{cfg.n_keys:,} str keys (lengths {min(lens)}-{max(lens)}, mean "
                     f"{sum(lens) / len(lens):.1f}; U{self.keys_u.dtype.itemsize // 4} array, "
                     f"pyarrow {'string' if pa else NOT_INSTALLED}), {cfg.n_keys:,} uint64")
        log(f"inputs: {self.desc} built in {time.perf_counter() - t0:.1f} s")


def batch_cases(b: Bench, inp: Inputs) -> None:
    for k in (10, 1000):
        _batch_case(b, inp, k)


def _batch_case(b: Bench, inp: Inputs, k: int) -> None:
    from consistent_hash import HashRing

    cfg, keys, n = b.cfg, inp.keys, len(inp.keys)
    uh_mod, jump, cl = try_import("uhashring"), try_import("jump"), try_import("clandestined")
    xx = try_import("xxhash")
    nodes = node_names(k)
    ring = HashRing(nodes, vnodes=160)
    case = f"get_many, list of str, {k:,} nodes x 160"
    log(f"[{case}]")
    names = np.array(ring.nodes, dtype=object)
    ours_idx = ring.get_indices(keys)
    b.check(f"{k} nodes: get_many == nodes[get_indices]",
            np.array_equal(ring.get_many(keys), names[ours_idx]))
    b.check(f"{k} nodes: get(key) == get_many for {cfg.check_keys:,} keys",
            [ring.get(x) for x in inp.chk] == names[ours_idx[: cfg.check_keys]].tolist())
    ours = per_key(lambda: ring.get_many(keys), n, cfg.runs)

    # NumPy peer: the whole key set, same layout -> must be equal
    peer = "xxhash loop + np.searchsorted + take"
    if xx is None:
        b.row(case, "ns/key", ours, peer, None, peer_note=NOT_INSTALLED)
    else:
        npr = NumpyRing(nodes)
        b.check(f"{k} nodes: NumPy ring positions/owners == ours",
                np.array_equal(npr.pos, ring.positions)
                and np.array_equal(npr.own, ring.owners))
        b.check(f"{k} nodes: NumPy peer == ours on all {n:,} keys",
                np.array_equal(npr.get_many(keys), ring.get_many(keys)))
        b.row(case, "ns/key", ours, peer,
              per_key(lambda: npr.get_many(keys), n, cfg.runs), ours_keys=n, peer_keys=n)

    sub, m = inp.sub, len(inp.sub)
    # uhashring: md5 ring of its own; cross-checked against the pure-Python ring with
    # uhashring's layout, which is in turn the same code as the md5 PyRing checked below
    if uh_mod is None:
        b.row(case, "ns/key", ours, "uhashring get_node loop", None, peer_note=NOT_INSTALLED)
    else:
        uh = uh_mod.HashRing(nodes)
        ref = PyRing(nodes, 160, hash_fn=md5_128, label="{}-{}", side="right")
        b.check(f"{k} nodes: uhashring == pure-Python ring with its layout",
                [uh.get_node(x) for x in inp.chk] == [ref.get(x) for x in inp.chk])
        b.row(case, "ns/key", ours, "uhashring get_node loop",
              per_key(lambda: [uh.get_node(x) for x in sub], m, cfg.slow_runs),
              peer_note=f"on {m:,} keys", ours_keys=n, peer_keys=m)

    pr = PyRing(nodes)
    pr_md5 = HashRing(nodes, vnodes=160, hash="md5")
    b.check(f"{k} nodes: pure-Python md5 ring == HashRing(hash='md5')",
            [pr.get(x) for x in inp.chk] == pr_md5.get_many(inp.chk).tolist())
    b.row(case, "ns/key", ours, "pure-Python md5/bisect ring loop",
          per_key(lambda: [pr.get(x) for x in sub], m, cfg.slow_runs),
          peer_note=f"on {m:,} keys", ours_keys=n, peer_keys=m)

    if jump is None or xx is None:
        b.row(case, "ns/key", ours, "jump hash (xxhash + jump.hash loop)", None,
              peer_note=NOT_INSTALLED + " (pip install jump-consistent-hash)")
    else:
        jh, x3 = jump.hash, xx.xxh3_64_intdigest
        hs = [x3(x.encode()) for x in inp.chk]
        got = [jh(h, k) for h in hs]
        b.check(f"{k} buckets: jump C == jump.py_hash",
                got == [jump.py_hash(h, k) for h in hs])
        ok, d = balanced(got, list(range(k)))
        b.check(f"{k} buckets: jump balanced", ok, d)
        b.row(case, "ns/key", ours, "jump hash (xxhash + jump.hash loop)",
              per_key(lambda: np.fromiter((jh(x3(x.encode()), k) for x in sub),
                                          dtype=np.int32, count=m), m, cfg.slow_runs),
              peer_note=f"on {m:,} keys; other algorithm", ours_keys=n, peer_keys=m)

    if cl is None:
        b.row(case, "ns/key", ours, "clandestined rendezvous loop", None,
              peer_note=NOT_INSTALLED + " (pip install clandestined)")
    else:
        rz = cl.RendezvousHash(nodes=list(nodes))
        mc = max(100, min(m, cfg.rendezvous_work // k))
        csub = inp.sub[:mc]
        got = [rz.find_node(x) for x in csub]
        ok, d = balanced(got, nodes)
        b.check(f"{k} nodes: clandestined balanced", ok, d)
        b.row(case, "ns/key", ours, "clandestined rendezvous loop",
              per_key(lambda: [rz.find_node(x) for x in csub], mc, cfg.slow_runs,
                      warmup=0),
              peer_note=f"on {mc:,} keys; other algorithm, O(nodes)/key",
              ours_keys=n, peer_keys=mc)


def container_cases(b: Bench, inp: Inputs) -> None:
    from consistent_hash import HashRing

    cfg, keys, n = b.cfg, inp.keys, len(inp.keys)
    nodes = node_names(10)
    ring = HashRing(nodes, vnodes=160)
    expect = ring.get_many(keys)
    xx, uh_mod = try_import("xxhash"), try_import("uhashring")
    npr = NumpyRing(nodes) if xx else None
    uh = uh_mod.HashRing(nodes) if uh_mod else None

    # extra row: indices only (no object array)
    case = "get_indices, list of str, 10 nodes x 160"
    log(f"[{case}]")
    if npr is not None:
        b.check("10 nodes: get_indices == NumPy peer indices",
                np.array_equal(ring.get_indices(keys), npr.get_indices(keys)))
    ours = per_key(lambda: ring.get_indices(keys), n, cfg.runs)
    b.row(case, "ns/key", ours, "xxhash loop + np.searchsorted + take",
          per_key(lambda: npr.get_indices(keys), n, cfg.runs) if npr else None,
          peer_note="" if npr else NOT_INSTALLED, ours_keys=n, peer_keys=n)

    for label, container, to_list in (
        ("NumPy U array", inp.keys_u, lambda c: c.tolist()),
        ("pyarrow string array", inp.keys_pa, lambda c: c.to_pylist()),
    ):
        _container_case(b, inp, ring, expect, npr, uh, label, container, to_list)


def _container_case(b: Bench, inp: Inputs, ring: Any, expect: np.ndarray, npr: Any, uh: Any,
                    label: str, container: Any, to_list: Callable[[Any], list[str]]) -> None:
    cfg, n, m = b.cfg, len(inp.keys), len(inp.sub)
    case = f"get_many, {label}, 10 nodes x 160"
    log(f"[{case}]")
    if container is None:
        b.row(case, "ns/key", None, "-", None, ours_note="n/a: pyarrow " + NOT_INSTALLED)
        return
    ours, ours_note = None, ""
    try:
        got = ring.get_many(container)
    except Exception as e:  # support may be unfinished: report, do not fail the run
        ours_note = f"n/a: {type(e).__name__}: {str(e)[:80]}"
        log(f"  ours raised on {label}: {ours_note}")
    else:
        if b.check(f"get_many({label}) == get_many(list)", np.array_equal(got, expect)):
            ours = per_key(lambda: ring.get_many(container), n, cfg.runs)
        else:
            ours_note = "n/a: wrong results"
    cm = container[:m]
    if npr is not None:
        b.row(case, "ns/key", ours, "to list + xxhash loop + searchsorted + take",
              per_key(lambda: npr.get_many(to_list(container)), n, cfg.runs),
              ours_note=ours_note, ours_keys=n, peer_keys=n)
    else:
        b.row(case, "ns/key", ours, "xxhash loop + np.searchsorted + take", None,
              ours_note=ours_note, peer_note=NOT_INSTALLED)
    if uh is not None:
        b.row(case, "ns/key", ours, "to list + uhashring get_node loop",
              per_key(lambda: [uh.get_node(x) for x in to_list(cm)], m,
                      cfg.slow_runs),
              ours_note=ours_note, peer_note=f"on {m:,} keys", ours_keys=n, peer_keys=m)
    else:
        b.row(case, "ns/key", ours, "uhashring get_node loop", None, ours_note=ours_note,
              peer_note=NOT_INSTALLED)


def lookup_hash_replica_cases(b: Bench, inp: Inputs) -> None:
    from consistent_hash import HashRing

    cfg, keys, n, h = b.cfg, inp.keys, len(inp.keys), inp.hashes
    ring = HashRing(node_names(100), vnodes=160)
    pos, own = np.ascontiguousarray(ring.positions), np.ascontiguousarray(ring.owners)
    V = len(pos)
    case = f"lookup, uint64 hashes, {V:,} positions (100 nodes x 160)"
    log(f"[{case}]")

    def reference() -> np.ndarray:
        i = np.searchsorted(pos, h)  # side="left": first position >= h
        i[i == V] = 0
        return own[i]

    b.check(f"lookup == owners[np.searchsorted(positions, h) % V] on {n:,} hashes",
            np.array_equal(ring.lookup(h), reference()))
    edge = np.concatenate([pos[:50], pos[-50:], pos[:50] + np.uint64(1),
                           np.array([0, 2**64 - 1], dtype=np.uint64)])
    i = np.searchsorted(pos, edge)
    i[i == V] = 0
    b.check("lookup == reference at positions, position+1, 0 and 2**64-1",
            np.array_equal(ring.lookup(edge), own[i]))
    ours = per_key(lambda: ring.lookup(h), n, cfg.runs)
    b.row(case, "ns/key", ours, "np.searchsorted", per_key(lambda: np.searchsorted(pos, h), n,
                                                          cfg.runs), ours_keys=n, peer_keys=n)
    b.row(case, "ns/key", ours, "np.searchsorted + wrap + take owners",
          per_key(reference, n, cfg.runs), ours_keys=n, peer_keys=n)

    ring10 = HashRing(node_names(10), vnodes=160)
    case = "hash_many, list of str (XXH3-64)"
    log(f"[{case}]")
    xx = try_import("xxhash")
    ours = per_key(lambda: ring10.hash_many(keys), n, cfg.runs)
    if xx is None:
        b.row(case, "ns/key", ours, "xxhash loop into np.fromiter", None,
              peer_note=NOT_INSTALLED)
    else:
        x3 = xx.xxh3_64_intdigest

        def peer() -> np.ndarray:
            return np.fromiter((x3(k.encode()) for k in keys), dtype=np.uint64, count=n)

        b.check(f"hash_many == xxhash.xxh3_64 of UTF-8 on {n:,} keys",
                np.array_equal(ring10.hash_many(keys), peer()))
        b.row(case, "ns/key", ours, "xxhash loop into np.fromiter",
              per_key(peer, n, cfg.runs), ours_keys=n, peer_keys=n)

    case = "replicas_many(keys, 3), list of str, 10 nodes x 160"
    log(f"[{case}]")
    rep = ring10.replicas_many(keys, 3)
    idx = ring10.get_many(keys)
    b.check("replicas_many[:, 0] == get_many, and each row distinct",
            rep.shape == (n, 3) and np.array_equal(rep[:, 0], idx)
            and all(len(set(r)) == 3 for r in rep[: cfg.check_keys].tolist()))
    pr = PyRing(node_names(10), 160, hash_fn=xx.xxh3_64_intdigest) if xx else None
    if pr is not None:
        b.check(f"replicas_many == pure-Python ring walk on {cfg.check_keys:,} keys",
                rep[: cfg.check_keys].tolist() == [pr.replicas(k, 3) for k in inp.chk])
    ours = per_key(lambda: ring10.replicas_many(keys, 3), n, cfg.runs)
    sub, m = inp.sub, len(inp.sub)
    uh_mod = try_import("uhashring")
    if uh_mod is None:
        b.row(case, "ns/key", ours, "uhashring range(key, 3) loop", None,
              peer_note=NOT_INSTALLED)
    else:
        uh = uh_mod.HashRing(node_names(10))
        ref = PyRing(node_names(10), 160, hash_fn=md5_128, label="{}-{}", side="right")
        b.check("uhashring range(key, 3) == pure-Python ring walk with its layout",
                [[d["nodename"] for d in uh.range(k, 3)] for k in inp.chk]
                == [ref.replicas(k, 3) for k in inp.chk])
        b.row(case, "ns/key", ours, "uhashring range(key, 3) loop",
              per_key(lambda: [[d["nodename"] for d in uh.range(k, 3)] for k in sub], m,
                      cfg.slow_runs), peer_note=f"on {m:,} keys", ours_keys=n, peer_keys=m)
    if pr is not None:
        b.row(case, "ns/key", ours, "pure-Python ring walk loop",
              per_key(lambda: [pr.replicas(k, 3) for k in sub], m, cfg.slow_runs),
              peer_note=f"on {m:,} keys", ours_keys=n, peer_keys=m)


def scalar_cases(b: Bench, inp: Inputs) -> None:
    from consistent_hash import HashRing

    cfg, sub, m = b.cfg, inp.sub, len(inp.sub)
    nodes = node_names(10)
    ring = HashRing(nodes, vnodes=160)
    case = "get(str), per call (ns/call), 10 nodes x 160"
    log(f"[{case}]")
    get = ring.get
    ours = per_key(lambda: [get(k) for k in sub], m, cfg.runs)

    def add(peer: str, fn: Callable[[str], object] | None, note: str = "") -> None:
        if fn is None:
            b.row(case, "ns/call", ours, peer, None, peer_note=NOT_INSTALLED)
        else:
            b.row(case, "ns/call", ours, peer,
                  per_key(lambda: [fn(k) for k in sub], m, cfg.slow_runs),
                  peer_note=note, ours_keys=m, peer_keys=m)

    uh_mod, hr_mod = try_import("uhashring"), try_import("hashring")
    add("uhashring get_node", uh_mod.HashRing(nodes).get_node if uh_mod else None)
    if uh_mod and hr_mod:
        uk3 = uh_mod.HashRing(nodes, hash_fn="ketama", replicas=3)
        hr = hr_mod.HashRing(nodes)
        b.check("hashring == uhashring(hash_fn='ketama', replicas=3)",
                [uk3.get_node(k) for k in inp.chk] == [hr.get_node(k) for k in inp.chk])
    add("uhashring ketama get_node",
        uh_mod.HashRing(nodes, hash_fn="ketama").get_node if uh_mod else None)
    add("hashring get_node", hr_mod.HashRing(nodes).get_node if hr_mod else None,
        "fixed 40 x 3 points per node")
    add("pure-Python md5/bisect ring get", PyRing(nodes).get)
    jump, xx = try_import("jump"), try_import("xxhash")
    if jump and xx:
        jh, x3 = jump.hash, xx.xxh3_64_intdigest
        add("jump.hash(xxh3(key), 10)", lambda k: jh(x3(k.encode()), 10), "other algorithm")
    else:
        add("jump.hash(xxh3(key), 10)", None)
    cl = try_import("clandestined")
    add("clandestined find_node", cl.RendezvousHash(nodes=list(nodes)).find_node if cl
        else None, "other algorithm")


def build_cases(b: Bench, inp: Inputs) -> None:
    from consistent_hash import HashRing

    cfg = b.cfg
    uh_mod, hr_mod, xx = try_import("uhashring"), try_import("hashring"), try_import("xxhash")

    def peer_ms(case: str, ours: float, peer: str, fn: Callable[[], object] | None,
                note: str = "", warmup: int = 0) -> None:
        b.row(case, "ms", ours, peer, ms(fn, cfg.slow_runs, warmup) if fn else None,
              peer_note=note if fn else NOT_INSTALLED)

    nodes = node_names(1000)
    case = "build 1,000 nodes x 160 vnodes (ms)"
    log(f"[{case}]")
    ours = ms(lambda: HashRing(nodes, vnodes=160), cfg.runs)
    peer_ms(case, ours, "uhashring (160 vnodes)",
            (lambda: uh_mod.HashRing(nodes)) if uh_mod else None)
    peer_ms(case, ours, "uhashring ketama (40 x 4 points)",
            (lambda: uh_mod.HashRing(nodes, hash_fn="ketama")) if uh_mod else None)
    peer_ms(case, ours, "hashring (fixed 40 x 3 points)",
            (lambda: hr_mod.HashRing(nodes)) if hr_mod else None)
    peer_ms(case, ours, "pure-Python md5/bisect ring", lambda: PyRing(nodes))
    peer_ms(case, ours, "NumPy ring (xxhash loop + lexsort)",
            (lambda: NumpyRing(nodes)) if xx else None, warmup=1)

    case = "add + remove one node, 100-node ring (ms)"
    log(f"[{case}]")
    nodes = node_names(100)
    ring = HashRing(nodes, vnodes=160)
    before_pos = ring.positions.copy()
    before = ring.get_many(inp.chk)
    ring.add("node-new")
    after = ring.get_many(inp.chk)
    moved = before != after
    b.check("add moves keys only to the new node",
            bool(np.all(after[moved] == "node-new")) and bool(np.any(moved)),
            f"{moved.mean():.2%} moved")
    ring.remove("node-new")
    b.check("add + remove restores positions and results",
            np.array_equal(ring.positions, before_pos)
            and np.array_equal(ring.get_many(inp.chk), before))

    def churn(r: Any, add_name: str, rm_name: str) -> Callable[[], None]:
        add, rm = getattr(r, add_name), getattr(r, rm_name)

        def f() -> None:
            add("node-new")
            rm("node-new")
        return f

    ours = ms(churn(ring, "add", "remove"), cfg.runs)
    peer_ms(case, ours, "uhashring add_node + remove_node",
            churn(uh_mod.HashRing(nodes), "add_node", "remove_node") if uh_mod else None,
            warmup=1)
    peer_ms(case, ours, "uhashring ketama add_node + remove_node",
            churn(uh_mod.HashRing(nodes, hash_fn="ketama"), "add_node", "remove_node")
            if uh_mod else None, "rebuilds the ring", warmup=1)
    plus = nodes + ["node-new"]
    peer_ms(case, ours, "hashring: build with the node, then without",
            (lambda: (hr_mod.HashRing(plus), hr_mod.HashRing(nodes))) if hr_mod else None,
            "no add/remove API", warmup=1)
    peer_ms(case, ours, "pure-Python md5/bisect ring add + remove",
            churn(PyRing(nodes), "add", "remove"), warmup=1)
    npr = None
    if xx:
        npr = NumpyRing(nodes)
        npr.add("node-new")
        full = HashRing(plus, vnodes=160)
        b.check("NumPy ring add == HashRing built with the node",
                np.array_equal(npr.pos, full.positions) and np.array_equal(npr.own, full.owners))
        npr.remove("node-new")
    peer_ms(case, ours, "NumPy ring np.insert + mask",
            churn(npr, "add", "remove") if npr else None, warmup=1)


# -- output --------------------------------------------------------------------------------------

def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v < 10:
        return f"{v:.2f}"
    if v < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def render(meta: dict[str, str], b: Bench, inputs: str, total_s: float) -> str:
    cfg = b.cfg
    out = ["Benchmark of consistent_hash (`python bench/bench.py`):", ""]
    for k in ("cpu", "cores", "threads", "load", "os", "python", "numpy", "cython", "gcc",
              "library", "commit", "peers", "date"):
        out.append(f"- {k}: {meta[k]}")
    out.append(f"- inputs: {inputs}, seed {cfg.seed}")
    out.append(f"- method: one process; ours on all {cfg.n_keys:,} keys, median of {cfg.runs} "
               f"runs; Python-loop peers on {cfg.loop_keys:,} keys, median of {cfg.slow_runs}; "
               f"{'wall' if cfg.clock == 'wall' else 'process CPU'} time"
               f"{'; QUICK MODE' if cfg.quick else ''}")
    out += ["", "| case | ours ns/key | peer | peer ns/key | ratio (peer/ours) |",
            "|---|---:|---|---:|---:|"]
    for r in b.rows:
        ours = fmt(r.ours) if r.ours is not None else (r.ours_note.split(":")[0] or "n/a")
        if r.peer_value is not None:
            peer_v = fmt(r.peer_value)
        else:
            peer_v = r.peer_note.split(" (")[0] if r.peer_note else "-"
        peer = r.peer + (f" ({r.peer_note})" if r.peer_note and r.peer_value is not None
                         else "")
        ratio = f"{r.ratio:,.1f}x" if r.ratio is not None else "-"
        if r.ratio is not None and r.ratio < 10:
            ratio = f"{r.ratio:.2f}x"
        out.append(f"| {r.case} | {ours} | {peer} | {peer_v} | {ratio} |")
    failed = [c for c in b.checks if not c.ok]
    out += ["", f"Correctness checks, run before timing: {len(b.checks) - len(failed)} ok, "
            f"{len(failed)} failed."]
    out += [f"- FAILED: {c.name}" + (f" ({c.detail})" if c.detail else "") for c in failed]
    notes = sorted({r.ours_note for r in b.rows if r.ours_note})
    notes += sorted({f"{r.peer}: {r.peer_note}" for r in b.rows
                     if r.peer_value is None and r.peer_note})
    out += [f"- note: {n}" for n in notes + b.notes]
    out += ["", f"Total runtime: {total_s:.1f} s"]
    return "\n".join(out)


# -- entry point -------------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="smoke test: 100,000 keys, fewer runs (< 60 s)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--keys", type=int, help="number of keys (default 1,000,000; quick 100,000)")
    p.add_argument("--runs", type=int, help="runs per case (default 5; quick 3)")
    p.add_argument("--seed", type=int, help="seed of the inputs")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                   help="wall time (default) or this process's CPU time (steadier when other "
                        "work shares the machine; both single-threaded here)")
    return p.parse_args(argv)


def run(cfg: Config) -> tuple[dict[str, Any], str]:
    """Run every case; return (results as a JSON-able dict, the markdown report)."""
    global _clock
    _clock = CLOCKS[cfg.clock]
    t0 = time.perf_counter()
    try:
        import consistent_hash  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"cannot import consistent_hash ({e}); build it first: "
                         f"cd {ROOT} && python3 setup.py build_ext --inplace") from None
    meta = machine_info()
    b = Bench(cfg)
    inp = Inputs(cfg)
    for part in (batch_cases, container_cases, lookup_hash_replica_cases, scalar_cases,
                 build_cases):
        try:
            part(b, inp)
        except Exception as e:  # one broken case (e.g. a half-rebuilt library) must not
            import traceback  # hide the others: record it as a failed check and go on

            traceback.print_exc()
            b.check(f"{part.__name__} raised", False, f"{type(e).__name__}: {str(e)[:160]}")
    total = time.perf_counter() - t0
    end = _load()
    busy = any(x != "unknown" and float(x) > 0.5 for x in (meta["load"], end))
    meta["load"] = (f"1-min load average {meta['load']} at start, {end} at end"
                    + (": other work was running; wall times are skewed (--clock cpu is "
                       "steadier)" if busy and cfg.clock == "wall" else
                       ": other work was running (CPU-time clock)" if busy else ""))
    report = render(meta, b, inp.desc, total)
    results = {"meta": meta, "config": asdict(cfg), "inputs": inp.desc,
               "rows": [dict(asdict(r), ratio=r.ratio) for r in b.rows],
               "checks": [asdict(c) for c in b.checks], "total_seconds": total}
    return results, report


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    cfg = Config.make(a.quick, a.keys, a.runs, a.seed, a.clock)
    results, report = run(cfg)
    print(report, flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(c["ok"] for c in results["checks"]) else 1


if __name__ == "__main__":
    sys.exit(main())
