"""threads=: one batch call split over threads gives exactly the serial result.

Every router of the registry, every batch call (get_indices, get_many, hash_many, lookup, the
replica calls, BoundedLoad's assign calls) and every input kind, for threads = 1, 2, 3, 8 and
None (the process default).  The parallel threshold is lowered for the module so that batches
of a few thousand keys (a few chunks of 2,048) go parallel and the tests stay fast.  Keys that
the workers must leave to the calling thread (big ints, str subclasses, bytearray, memoryview,
very long non-ASCII str, missing keys) are spread over the batches, so both the worker path and
the hand-back path run.  No timing is asserted here (see bench/bench_threads.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from routers import BOUNDED, NODES, ROUTERS, RouterSpec

import consistent_hash
from consistent_hash import BoundedLoad, HashRing, _ring, get_threads, set_threads

THREADS: list[int | None] = [2, 3, 8, None]
N = 9_000  # five chunks of 2,048 keys: the last one short


@pytest.fixture(autouse=True, scope="module")
def low_threshold() -> Iterator[None]:
    old = _ring._set_parallel_min(1)
    old_default = set_threads(4)  # threads=None: 4 threads, whatever the machine has
    yield
    _ring._set_parallel_min(old)
    set_threads(old_default)


class Sub(str):
    """A str subclass: not compact, so workers leave it to the calling thread."""


def str_keys(n: int = N) -> list[str]:
    keys = [f"user:{i}:{(i * 2654435761) % 10**9}" for i in range(n)]
    for i in range(0, n, 997):
        keys[i] = f"ключ-{i}-日本"
    keys[n // 2] = "é" * 5000  # too long for the kernels' scratch: the Python path
    keys[n - 3] = ""
    return keys


def bytes_keys(n: int = N) -> list[bytes]:
    return [k.encode("utf-8") for k in str_keys(n)]


def int_keys(n: int = N) -> list[int]:
    keys = [(i * 0x9E3779B97F4A7C15) % 2**63 - 2**62 for i in range(n)]
    keys[2500] = 2**64 - 1  # a big int (not a C long long): the Python path
    keys[7777] = 2**63 + 5
    return keys


def mixed_keys(spec: RouterSpec, n: int = N) -> list[Any]:
    """Every key type the router accepts, including those workers hand back."""
    keys: list[Any] = list(str_keys(n))
    for i in range(5, n, 1201):
        keys[i] = Sub(f"sub-{i}")
    for i in range(7, n, 1499):
        keys[i] = f"b-{i}".encode()
    keys[3001] = bytearray(b"ba")
    keys[6002] = memoryview(b"mv")
    if spec.int_keys != "refused":
        for i in range(11, n, 577):
            keys[i] = i * 7919
        keys[4099] = 2**64 - 2
    return keys


def obj_array(values: list[Any]) -> np.ndarray:
    a = np.empty(len(values), dtype=object)
    a[:] = values
    return a


def chunked(values: list[Any], typ: Any) -> Any:
    cuts = [values[:3000], [], values[3000:3001], values[3001:]]
    return pa.chunked_array([pa.array(c, type=typ) for c in cuts], type=typ)


# name -> (key type, build): build(n) gives the container
CONTAINERS: dict[str, tuple[str, Callable[[], Any]]] = {
    "list_str": ("str", lambda: str_keys()),
    "list_bytes": ("bytes", lambda: bytes_keys()),
    "list_int": ("int", lambda: int_keys()),
    "tuple_str": ("str", lambda: tuple(str_keys())),
    "np_U": ("str", lambda: np.array(str_keys())),
    "np_S": ("bytes", lambda: np.array(bytes_keys())),
    "np_O": ("str", lambda: obj_array(str_keys())),
    "np_int64": ("int", lambda: np.array(int_keys()[:2500] + int_keys()[2501:7777], np.int64)),
    "np_uint64": ("int", lambda: np.array([k % 2**64 for k in int_keys()], np.uint64)),
    "np_int32": ("int", lambda: np.arange(-N // 2, N // 2, dtype=np.int32)),
    "np_int8": ("int", lambda: (np.arange(N) % 256 - 128).astype(np.int8)),
    "np_uint16": ("int", lambda: (np.arange(N) * 7).astype(np.uint16)),
    "np_uint32": ("int", lambda: (np.arange(N, dtype=np.uint64) * 2654435761 % 2**32
                                  ).astype(np.uint32)),
    # strided or byte-swapped narrow ints: widened through NumPy, on the calling thread
    "np_int16_strided_serial": ("int", lambda: np.arange(-N, N, dtype=np.int16)[::2]),
    "np_int32_swapped_serial": ("int", lambda: np.arange(N, dtype=">i4")),
    "pa_string": ("str", lambda: pa.array(str_keys(), pa.string())),
    "pa_large_string": ("str", lambda: pa.array(str_keys(), pa.large_string())),
    "pa_string_view": ("str", lambda: pa.array(str_keys(), pa.string_view())),
    "pa_binary": ("bytes", lambda: pa.array(bytes_keys(), pa.binary())),
    "pa_dictionary": ("str", lambda: pa.array([f"k{i % 3000}" for i in range(N)],
                                              pa.string()).dictionary_encode()),
    "pa_chunked": ("str", lambda: chunked(str_keys(), pa.string())),
    "pa_sliced": ("str", lambda: pa.array(["pad"] + str_keys() + ["pad"]).slice(1, N)),
    "pd_object": ("str", lambda: pd.Series(str_keys(), dtype=object)),
    "pd_string_pyarrow": ("str", lambda: pd.Series(str_keys(), dtype="string[pyarrow]")),
    "pd_int64": ("int", lambda: pd.Series(np.arange(N, dtype=np.int64) * 31)),
    "pl_string": ("str", lambda: pl.Series("k", str_keys(), dtype=pl.String)),
    "pl_int64": ("int", lambda: pl.Series("k", np.arange(N) * 17, dtype=pl.Int64)),
    "tuple_bytes": ("bytes", lambda: tuple(bytes_keys())),
    "np_O_bytes": ("bytes", lambda: obj_array(bytes_keys())),
    "pa_large_binary": ("bytes", lambda: pa.array(bytes_keys(), pa.large_binary())),
    "pa_binary_view": ("bytes", lambda: pa.array(bytes_keys(), pa.binary_view())),
    "pa_int64": ("int", lambda: pa.array(np.arange(N, dtype=np.int64) - 4000)),
    "pa_table": ("str", lambda: pa.table({"k": str_keys()})),
    "pd_categorical": ("str", lambda: pd.Series([f"k{i % 3000}" for i in range(N)],
                                                dtype="category")),
    "pd_string_python": ("str", lambda: pd.Series(str_keys(), dtype="string[python]")),
    "pd_index": ("str", lambda: pd.Index(str_keys(), dtype=object)),
    "pd_frame": ("str", lambda: pd.DataFrame({"k": str_keys()})),
    "pl_categorical": ("str", lambda: pl.Series("k", [f"k{i % 3000}" for i in range(N)],
                                                dtype=pl.Categorical)),
    "pl_binary": ("bytes", lambda: pl.Series("k", bytes_keys(), dtype=pl.Binary)),
    "pl_frame": ("str", lambda: pl.DataFrame({"k": str_keys()})),
    "mixed_list": ("mixed", lambda: None),  # built per router: mixed_keys(spec)
    # past 8 declined keys in one chunk, the rest of it goes to the calling thread whole
    "list_dense_subclass": ("str", lambda: [Sub(k) if 2048 <= i < 4096 and i % 3 == 0 else k
                                            for i, k in enumerate(str_keys())]),
}
if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    CONTAINERS["np_T"] = ("str", lambda: np.array(str_keys(), dtype=np.dtypes.StringDType()))

# containers with missing keys (nulls="none")
NULL_AT = (0, 2047, 2048, 5000, N - 1)


def _nulls(values: list[Any]) -> list[Any]:
    out = list(values)
    for i in NULL_AT:
        out[i] = None
    return out


NULL_CONTAINERS: dict[str, tuple[str, Callable[[], Any]]] = {
    "list_str": ("str", lambda: _nulls(str_keys())),
    "np_O": ("str", lambda: obj_array(_nulls(str_keys()))),
    "list_nan": ("str", lambda: [float("nan") if i in NULL_AT else k
                                 for i, k in enumerate(str_keys())]),
    "pa_string": ("str", lambda: pa.array(_nulls(str_keys()), pa.string())),
    "pa_string_view": ("str", lambda: pa.array(_nulls(str_keys()), pa.string_view())),
    "pa_chunked": ("str", lambda: chunked(_nulls(str_keys()), pa.large_string())),
    "pd_string_pyarrow": ("str", lambda: pd.Series(_nulls(str_keys()), dtype="string[pyarrow]")),
    "pd_Int64": ("int", lambda: pd.Series(_nulls(list(range(N))), dtype="Int64")),
    "pl_string": ("str", lambda: pl.Series("k", _nulls(str_keys()), dtype=pl.String)),
    "list_dense": ("str", lambda: [None if i % 7 == 0 or i in NULL_AT else k
                                   for i, k in enumerate(str_keys())]),
}


def accepts(spec: RouterSpec, kind: str) -> bool:
    return not (kind == "int" and spec.int_keys == "refused")


def params(containers: dict[str, tuple[str, Any]], specs: list[RouterSpec]) -> list[Any]:
    return [pytest.param(s, name, id=f"{s.name}-{name}") for s in specs
            for name, (kind, _) in containers.items() if accepts(s, kind)]


def build(spec: RouterSpec, name: str, containers: dict[str, tuple[str, Any]]) -> Any:
    if name == "mixed_list":
        return mixed_keys(spec)
    return containers[name][1]()


def router(spec: RouterSpec) -> Any:
    return spec.make(list(NODES) + [f"10.0.2.{i}:6379" for i in range(20)])


def same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tolist() == b.tolist()


# --------------------------------------------------------------------------------------------
# identical results
# --------------------------------------------------------------------------------------------



@pytest.mark.parametrize(("spec", "name"), params(CONTAINERS, ROUTERS))
def test_batch_calls_identical_for_every_thread_count(spec: RouterSpec, name: str) -> None:
    r = router(spec)
    keys = build(spec, name, CONTAINERS)
    runs = _ring._parallel_runs()
    r.get_indices(keys, threads=2)
    went_parallel = _ring._parallel_runs() > runs
    assert went_parallel != name.endswith("_serial")
    idx = r.get_indices(keys, threads=1)
    names = r.get_many(keys, threads=1)
    hashes = r.hash_many(keys, threads=1)
    for t in THREADS:
        same(r.get_indices(keys, threads=t), idx)
        same(r.get_many(keys, threads=t), names)
        same(r.hash_many(keys, threads=t), hashes)
        out = np.full(len(idx), -7, np.int32)
        assert r.get_indices(keys, out, threads=t) is out
        same(out, idx)
    if spec.replicas:
        reps = r.replica_indices(keys, 3, threads=1)
        rep_names = r.replicas_many(keys, 3, threads=1)
        assert reps[:, 0].tolist() == idx.tolist()
        for t in THREADS:
            same(r.replica_indices(keys, 3, threads=t), reps)
            same(r.replicas_many(keys, 3, threads=t), rep_names)


@pytest.mark.parametrize("spec", ROUTERS, ids=[s.name for s in ROUTERS])
def test_lookup_of_prehashed_uint64_identical(spec: RouterSpec) -> None:
    r = router(spec)
    rng = np.random.default_rng(7)
    bits = 64 - type(r)._hash_shift
    hashes = rng.integers(0, 2**bits, size=N, dtype=np.uint64)
    ref = r.lookup(hashes, threads=1)
    assert ref[::97].tolist() == [r.lookup(hashes[i : i + 1], threads=1)[0]
                                  for i in range(0, N, 97)]
    for t in THREADS:
        same(r.lookup(hashes, threads=t), ref)
        out = np.empty(N, np.int32)
        assert r.lookup(hashes, out, threads=t) is out
        same(out, ref)
    keys = str_keys()
    same(r.lookup(r.hash_many(keys, threads=2), threads=2), r.get_indices(keys, threads=1))


@pytest.mark.parametrize(("spec", "name"), params(NULL_CONTAINERS, ROUTERS))
def test_missing_keys_identical(spec: RouterSpec, name: str) -> None:
    r = router(spec)
    keys = build(spec, name, NULL_CONTAINERS)
    idx = r.get_indices(keys, nulls="none", threads=1)
    assert [int(idx[i]) for i in NULL_AT] == [-1] * len(NULL_AT)
    for t in THREADS:
        same(r.get_indices(keys, nulls="none", threads=t), idx)
        same(r.get_many(keys, nulls="none", threads=t), r.get_many(keys, nulls="none",
                                                                     threads=1))
    if spec.replicas:
        reps = r.replica_indices(keys, 2, nulls="none", threads=1)
        for t in THREADS:
            same(r.replica_indices(keys, 2, nulls="none", threads=t), reps)


@pytest.mark.parametrize("spec", BOUNDED, ids=[s.name for s in BOUNDED])
def test_bounded_assign_identical(spec: RouterSpec) -> None:
    b = BoundedLoad(router(spec), c=1.25)
    keys = str_keys()
    ref = b.assign_indices(keys, threads=1)
    names = b.assign_many(keys, threads=1)
    with_nulls = b.assign_indices(_nulls(keys), nulls="none", threads=1)
    for t in THREADS:
        same(b.assign_indices(keys, threads=t), ref)
        same(b.assign_many(keys, threads=t), names)
        same(b.assign_indices(np.array(keys), threads=t), ref)
        same(b.assign_indices(_nulls(keys), nulls="none", threads=t), with_nulls)


def test_hash_callable_and_compat_dropins_take_threads() -> None:
    r = HashRing(["a", "b", "c"], hash=lambda b: int.from_bytes(b[:8].ljust(8, b"\0"), "little"))
    keys = str_keys()
    same(r.get_indices(keys, threads=3), r.get_indices(keys, threads=1))
    from consistent_hash.compat.hashring import HashRing as HR
    from consistent_hash.compat.uhashring import HashRing as UHR

    for ring in (HR(["a", "b", "c"]), UHR(["a", "b", "c"])):
        same(ring.get_indices(keys, threads=2), ring.get_indices(keys, threads=1))
        same(ring.get_many(keys, threads=2), ring.get_many(keys, threads=1))


def test_big_batch_across_many_chunks() -> None:
    r = HashRing([f"node-{i}" for i in range(100)], vnodes=160)
    keys = [f"k{i}" for i in range(300_000)]
    ref = r.get_indices(keys, threads=1)
    same(r.get_indices(keys, threads=2), ref)
    same(r.get_indices(np.array(keys), threads=8), ref)
    same(r.get_indices(pa.array(keys), threads=3), ref)


# --------------------------------------------------------------------------------------------
# errors: the serial path's exception, whichever thread met the key
# --------------------------------------------------------------------------------------------

def _error(call: Callable[[], Any]) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:  # noqa: PT011 - compared with the serial one
        call()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("spec", ROUTERS, ids=[s.name for s in ROUTERS])
@pytest.mark.parametrize("bad", ["object", "float", "bool", "none", "two"])
def test_bad_key_deep_in_a_big_list_raises_as_serial(spec: RouterSpec, bad: str) -> None:
    r = router(spec)
    keys: list[Any] = str_keys()
    value = {"object": object(), "float": 1.5, "bool": True, "none": None, "two": 2.5}[bad]
    keys[7000] = value
    if bad == "two":
        keys[3000] = None  # the first bad key is the one reported
    ref = _error(lambda: r.get_indices(keys, threads=1))
    for t in THREADS:
        assert _error(lambda t=t: r.get_indices(keys, threads=t)) == ref
        assert _error(lambda t=t: r.hash_many(keys, threads=t)) == _error(
            lambda: r.hash_many(keys, threads=1))
        assert _error(lambda t=t: r.get_indices(tuple(keys), threads=t)) == ref
    if spec.replicas:
        rep = _error(lambda: r.replica_indices(keys, 2, threads=1))
        assert _error(lambda: r.replica_indices(keys, 2, threads=2)) == rep


@pytest.mark.parametrize("at", [2050, 2100, 4000, N - 1])
def test_bad_key_after_many_declined_keys_raises_as_serial(at: int) -> None:
    r = HashRing(["a", "b", "c"])
    keys: list[Any] = [Sub(k) if i % 5 == 0 else k for i, k in enumerate(str_keys())]
    keys[at] = object()
    if at + 1 < N:
        keys[at + 1] = 1.5  # the first bad key is the one reported
    ref = _error(lambda: r.get_indices(keys, threads=1))
    assert ref[0] is TypeError and f"position {at}" in ref[1]
    for t in THREADS:
        assert _error(lambda t=t: r.get_indices(keys, threads=t)) == ref
        assert _error(lambda t=t: r.replica_indices(keys, 2, threads=t)) == ref
    nulls = [None if i % 3 == 0 else k for i, k in enumerate(keys)]
    ref = _error(lambda: r.get_indices(nulls, nulls="none", threads=1))
    assert _error(lambda: r.get_indices(nulls, nulls="none", threads=2)) == ref


def test_big_int_refused_as_serial_with_raw_ints() -> None:
    r = consistent_hash.JumpHash([f"n{i}" for i in range(7)])
    keys: list[Any] = list(range(N))
    keys[6000] = 2**70
    ref = _error(lambda: r.get_indices(keys, threads=1))
    assert ref[0] is ValueError
    assert _error(lambda: r.get_indices(keys, threads=2)) == ref


# --------------------------------------------------------------------------------------------
# Python threads calling threaded batch calls at once
# --------------------------------------------------------------------------------------------

def test_concurrent_python_threads_with_threaded_calls() -> None:
    r = HashRing([f"node-{i}" for i in range(50)], vnodes=64)
    keys = str_keys(30_000)
    inputs = [keys, np.array(keys), pa.array(keys), r.hash_many(keys, threads=1)]
    ref = r.get_indices(keys, threads=1)
    errors: list[str] = []
    counts = [0] * 6
    stop = threading.Event()

    def work(w: int) -> None:
        t = (2, 3, None, 8, 2, 1)[w]
        while not stop.is_set():
            x = inputs[(w + counts[w]) % len(inputs)]
            got = r.lookup(x, threads=t) if isinstance(x, np.ndarray) and x.dtype == np.uint64 \
                else r.get_indices(x, threads=t)
            if got.tolist() != ref.tolist():
                errors.append(f"worker {w} round {counts[w]}")
            counts[w] += 1

    workers = [threading.Thread(target=work, args=(w,)) for w in range(6)]
    for th in workers:
        th.start()
    # At least 1.5 s together, and on until every worker has done two rounds (a loaded
    # machine or a ThreadSanitizer build is slow): a worker starved for a minute fails.
    stop.wait(1.5)
    deadline = time.monotonic() + 60
    while min(counts) < 2 and time.monotonic() < deadline and not errors:
        time.sleep(0.05)
    stop.set()
    for th in workers:
        th.join()
    assert errors == []
    assert all(c >= 2 for c in counts), counts


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_pool_after_fork() -> None:
    r = HashRing(["a", "b", "c"])
    keys = str_keys()
    ref = r.get_indices(keys, threads=1)
    same(r.get_indices(keys, threads=2), ref)  # the pool is running in the parent now
    code = (
        "import os, sys, numpy as np\n"
        "from consistent_hash import HashRing, _ring\n"
        "_ring._set_parallel_min(1)\n"
        "r = HashRing(['a', 'b', 'c'])\n"
        "keys = [f'k{i}' for i in range(20000)]\n"
        "ref = r.get_indices(keys, threads=1)\n"
        "assert (r.get_indices(keys, threads=2) == ref).all()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    ok = (r.get_indices(keys, threads=2) == ref).all()\n"
        "    os._exit(0 if ok else 1)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=60,
                          env={**os.environ, "PYTHONPATH": _root()})
    assert done.returncode == 0


# --------------------------------------------------------------------------------------------
# the setting
# --------------------------------------------------------------------------------------------

def _root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(consistent_hash.__file__)))


@pytest.mark.parametrize("bad", ["2", 2.0, True, np.bool_(True), [2]])
def test_threads_type_checked(bad: Any) -> None:
    r = HashRing(["a", "b"])
    for call in (lambda: r.get_indices(["x"], threads=bad), lambda: r.lookup([1], threads=bad),
                 lambda: r.get_many(["x"], threads=bad), lambda: r.hash_many(["x"], threads=bad),
                 lambda: r.replica_indices(["x"], 1, threads=bad),
                 lambda: BoundedLoad(r).assign_indices(["x"], threads=bad),
                 lambda: set_threads(bad)):
        with pytest.raises(TypeError, match="threads"):
            call()


@pytest.mark.parametrize("bad", [0, -1, np.int64(0)])
def test_threads_value_checked(bad: Any) -> None:
    r = HashRing(["a", "b"])
    for call in (lambda: r.get_indices(["x"], threads=bad), lambda: r.lookup([1], threads=bad),
                 lambda: r.replicas_many(["x"], 1, threads=bad), lambda: set_threads(bad)):
        with pytest.raises(ValueError, match="threads"):
            call()


def test_numpy_integer_threads_accepted() -> None:
    r = HashRing(["a", "b"])
    keys = str_keys()
    same(r.get_indices(keys, threads=np.int64(2)), r.get_indices(keys, threads=1))


def test_set_and_get_threads() -> None:
    old = set_threads(3)
    try:
        assert get_threads() == 3
        assert set_threads(1) == 3
        assert get_threads() == 1
    finally:
        set_threads(old)
    assert consistent_hash.get_threads is get_threads
    assert "set_threads" in consistent_hash.__all__ and "get_threads" in consistent_hash.__all__


def _default_in_subprocess(env_value: str | None) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CONSISTENT_HASH_THREADS"}
    env["PYTHONPATH"] = _root()
    if env_value is not None:
        env["CONSISTENT_HASH_THREADS"] = env_value
    code = ("import warnings; warnings.simplefilter('always')\n"
            "import consistent_hash as ch\n"
            "from consistent_hash import _threads\n"
            "print(ch.get_threads(), _threads.usable_cores())\n"
            "ch.set_threads(5); ch.set_threads(None); print(ch.get_threads())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=60, check=True)
    return done.stdout, done.stderr


def test_default_is_usable_cores_or_the_environment() -> None:
    out, _ = _default_in_subprocess(None)
    first, second = out.split("\n")[:2]
    default, cores = first.split()
    assert default == cores and second == cores
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count()
    assert int(cores) == expected
    out, _ = _default_in_subprocess("3")
    assert out.split("\n")[0].split()[0] == "3" and out.split("\n")[1] == "3"
    out, err = _default_in_subprocess("zero")
    assert out.split("\n")[0].split()[0] == out.split("\n")[0].split()[1]
    assert "CONSISTENT_HASH_THREADS" in err


def test_serial_below_the_threshold_and_for_one_thread() -> None:
    r = HashRing(["a", "b", "c"])
    keys = str_keys()
    runs = _ring._parallel_runs()
    r.get_indices(keys, threads=1)
    r.get_indices(keys[:2048], threads=2)  # one chunk
    old = _ring._set_parallel_min(N + 1)
    try:
        r.get_indices(keys, threads=2)
        r.lookup(r.hash_many(keys, threads=1), threads=2)
    finally:
        _ring._set_parallel_min(old)
    assert _ring._parallel_runs() == runs
    r.get_indices(keys, threads=2)
    assert _ring._parallel_runs() == runs + 1


def test_dask_tasks_take_threads() -> None:
    dd = pytest.importorskip("dask.dataframe")
    import dask

    from consistent_hash.integrations import dask as chd

    assert chd._task_threads(None) == 1 and chd._task_threads(3) == 3
    with pytest.raises(TypeError, match="threads"):
        chd._task_threads("2")
    ring = HashRing(["a", "b", "c"])
    keys = str_keys()
    ddf = dd.from_pandas(pd.DataFrame({"k": keys}), npartitions=2)
    with dask.config.set(scheduler="sync"):
        got = chd.assign_indices(ddf["k"], ring, threads=2).compute()
        names = chd.assign(ddf["k"], ring).compute()
    assert got.tolist() == ring.get_indices(keys, threads=1).tolist()
    assert names.astype(str).tolist() == ring.get_many(keys, threads=1).tolist()
    with pytest.raises(ValueError, match="threads"):
        chd.assign(ddf["k"], ring, threads=0)


def test_threshold_hook() -> None:
    old = _ring._set_parallel_min(123)
    try:
        assert _ring._get_parallel_min() == 123
    finally:
        _ring._set_parallel_min(old)
    with pytest.raises(ValueError):
        _ring._set_parallel_min(0)
