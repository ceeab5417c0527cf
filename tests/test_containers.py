"""Every key container gives the same nodes as a plain list of the same keys."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from consistent_hash import HashRing

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

RING = HashRing([f"node-{i}" for i in range(7)], vnodes=64)
KEYS = [f"key-{i}" * (i % 4) + ("é" if i % 5 == 0 else "") for i in range(3000)]
EXPECTED = RING.get_indices(KEYS)


def check(container: object, lo: int = 0, hi: int = len(KEYS)) -> None:
    """container holds KEYS[lo:hi]."""
    expected = EXPECTED[lo:hi]
    assert RING.get_indices(container).tolist() == expected.tolist()
    assert RING.get_many(container).tolist() == [RING.nodes[i] for i in expected]
    assert RING.hash_many(container).tolist() == [RING.hash(k) for k in KEYS[lo:hi]]
    assert RING.replica_indices(container, 2)[:, 0].tolist() == expected.tolist()


@pytest.mark.parametrize("typ", ["string", "large_string", "string_view", "binary",
                                 "large_binary", "binary_view"])
def test_arrow_arrays(typ: str) -> None:
    t = getattr(pa, typ)()
    values = KEYS if "string" in typ else [k.encode() for k in KEYS]
    arr = pa.array(values, type=t)
    check(arr)
    check(arr.slice(100, 1000), 100, 1100)
    check(pa.chunked_array([arr.slice(0, 7), arr.slice(7, 2000), arr.slice(2007)]))
    check(pa.table({"k": arr}))
    check(pa.record_batch([arr], names=["k"]))


def test_arrow_dictionary_and_integers() -> None:
    check(pa.array(KEYS).dictionary_encode())
    ints = list(range(-500, 2500))
    assert RING.get_indices(pa.array(ints, pa.int64())).tolist() == RING.get_indices(ints).tolist()
    assert RING.get_indices(pa.array(ints[600:], pa.uint16())).tolist() == \
        RING.get_indices(ints[600:]).tolist()


def test_arrow_nulls() -> None:
    arr = pa.array(["a", None, "b", None])
    with pytest.raises(ValueError, match="null"):
        RING.get_indices(arr)
    got = RING.get_indices(arr, nulls="none")
    assert got.tolist() == [RING.get_indices(["a"])[0], -1, RING.get_indices(["b"])[0], -1]
    assert RING.get_many(arr, nulls="none").tolist()[1] is None
    with pytest.raises(ValueError):
        RING.hash_many(arr)
    d = arr.dictionary_encode()
    assert RING.get_indices(d, nulls="none").tolist() == got.tolist()
    with pytest.raises(ValueError):
        RING.get_indices(d)


def test_pandas_series_kinds() -> None:
    s = pd.Series(KEYS)
    check(s)
    check(s.astype("string[pyarrow]"))
    check(s.astype("string[python]"))
    check(s.astype("category"))
    check(pd.DataFrame({"k": KEYS}))
    check(pd.Index(KEYS))
    ints = pd.Series(np.arange(-50, 2950))
    assert RING.get_indices(ints).tolist() == RING.get_indices(list(range(-50, 2950))).tolist()


def test_pandas_nulls_and_categorical_result() -> None:
    s = pd.Series(["a", None, "b", np.nan, pd.NA], dtype=object)
    with pytest.raises((TypeError, ValueError)):
        RING.get_indices(s)
    got = RING.get_indices(s, nulls="none")
    assert got.tolist()[1:2] == [-1] and got.tolist()[3:] == [-1, -1]
    cat = RING.get_many(KEYS, categorical=True)
    assert isinstance(cat, pd.Categorical)
    assert list(cat.categories) == list(RING.nodes)
    assert cat.codes.tolist() == EXPECTED.tolist()
    assert cat.astype(object).tolist() == RING.get_many(KEYS).tolist()
    c2 = RING.get_many(pd.Series(["a", None], dtype="category"), nulls="none", categorical=True)
    assert c2.codes.tolist()[1] == -1
    for kind in ("category", "string[pyarrow]"):
        with pytest.raises(ValueError):
            RING.get_indices(pd.Series(["a", None], dtype=kind))


def test_polars() -> None:
    pl = pytest.importorskip("polars")
    check(pl.Series("k", KEYS))
    check(pl.DataFrame({"k": KEYS}))
    assert RING.get_indices(pl.Series("k", ["a", None]), nulls="none").tolist()[1] == -1


def test_multi_column_tables_are_refused() -> None:
    with pytest.raises(TypeError, match="2 columns"):
        RING.get_indices(pa.table({"a": ["x"], "b": ["y"]}))
    with pytest.raises(TypeError, match="2 columns"):
        RING.get_indices(pd.DataFrame({"a": ["x"], "b": ["y"]}))


def test_import_does_not_import_pyarrow_or_pandas() -> None:
    code = ("import sys, consistent_hash; r = consistent_hash.HashRing(['a']); "
            "r.get_many(['x']); import numpy as np; r.get_many(np.array(['x'])); "
            "bad = [m for m in ('pyarrow', 'pandas', 'polars', 'dask', 'matplotlib') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# --------------------------------------------------------------------------------------------
# consistent_hash._containers: the one place that knows containers
# --------------------------------------------------------------------------------------------

from consistent_hash import EmptyRingError, _containers, _ring  # noqa: E402
from consistent_hash.algorithms import JumpHash, Rendezvous  # noqa: E402

CORE = RING._core


def test_polars_categorical_and_enum() -> None:
    pl = pytest.importorskip("polars")
    values = KEYS[:500]
    for dtype in (pl.Categorical, pl.Enum(sorted(set(values)))):
        s = pl.Series("k", values, dtype=dtype)
        check(s, 0, 500)
        with_null = pl.Series("k", [KEYS[1], None, KEYS[2]], dtype=dtype)
        with pytest.raises(ValueError, match="position 1"):
            RING.get_indices(with_null)
        got = RING.get_indices(with_null, nulls="none").tolist()
        assert got == [EXPECTED[1], -1, EXPECTED[2]]


@pytest.mark.parametrize("dtype", ["Int64", "UInt64", "Int32", "UInt8"])
def test_pandas_nullable_integers(dtype: str) -> None:
    ints = list(range(0, 200))
    assert RING.get_indices(pd.Series(ints, dtype=dtype)).tolist() == \
        RING.get_indices(ints).tolist()
    s = pd.Series([5, None, 7], dtype=dtype)
    with pytest.raises(ValueError, match="position 1"):
        RING.get_indices(s)
    want = RING.get_indices([5, 7]).tolist()
    assert RING.get_indices(s, nulls="none").tolist() == [want[0], -1, want[1]]
    assert RING.get_many(s, nulls="none").tolist()[1] is None


def test_pandas_nullable_integers_raw_ints() -> None:
    jump = JumpHash([f"n{i}" for i in range(9)])
    s = pd.Series([2**64 - 1, 3, None], dtype="UInt64")
    got = jump.get_indices(s, nulls="none").tolist()
    assert got[:2] == jump.get_indices([2**64 - 1, 3]).tolist() and got[2] == -1


def test_pandas_boolean_is_refused() -> None:
    with pytest.raises(TypeError, match="boolean"):
        RING.get_indices(pd.Series([True, None, False], dtype="boolean"))
    with pytest.raises(TypeError, match="bool"):
        RING.get_indices(pd.Series([True, False]))
    with pytest.raises(TypeError, match="bool"):
        RING.get_indices(np.array([True, False]))


def test_every_numpy_integer_kind_strided_and_read_only() -> None:
    ints = np.arange(-100, 1900)
    want = RING.get_indices(ints.tolist())
    for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
               np.uint64):
        lo = 0 if np.dtype(dt).kind == "u" else -100
        hi = min(int(np.iinfo(dt).max) + 1, 1900)
        a = np.arange(lo, hi, dtype=dt)
        assert RING.get_indices(a).tolist() == want[lo + 100 : hi + 100].tolist(), dt
        assert RING.get_indices(a[::3]).tolist() == want[lo + 100 : hi + 100 : 3].tolist()
        a.flags.writeable = False
        assert RING.get_indices(a).tolist() == want[lo + 100 : hi + 100].tolist()


def test_numpy_string_kinds() -> None:
    check(np.array(KEYS))
    check(np.array(KEYS, dtype=object))
    check(np.array(KEYS)[::1])
    check(np.array([k.encode() for k in KEYS], dtype=object))
    sk = np.array([k.encode() for k in KEYS if k.isascii()])
    assert RING.get_indices(sk).tolist() == RING.get_indices(sk.tolist()).tolist()
    stringdtype = getattr(np.dtypes, "StringDType", None)
    if stringdtype is not None:
        check(np.array(KEYS, dtype=stringdtype()))


def test_check_out_errors_name_out() -> None:
    with pytest.raises(TypeError, match="out must be a NumPy int32 array, got 'list'"):
        _containers.check_out([0, 0], 2)
    with pytest.raises(TypeError, match="out must be a NumPy int32 array, got .*int64"):
        _containers.check_out(np.zeros(2, dtype=np.int64), 2)
    with pytest.raises(ValueError, match="out has length 3"):
        _containers.check_out(np.zeros(3, dtype=np.int32), 2)
    with pytest.raises(ValueError, match="out has shape"):
        _containers.check_out(np.zeros((2, 1), dtype=np.int32), 2)
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        _containers.check_out(np.zeros(4, dtype=np.int32)[::2], 2)
    ro = np.zeros(2, dtype=np.int32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        _containers.check_out(ro, 2)
    for bad in ([0, 0], np.zeros(2, np.int64), np.zeros(4, np.int32)[::2], ro):
        with pytest.raises((TypeError, ValueError), match="out"):
            RING.get_indices(["a", "b"], out=bad)
    out = np.full(2, 7, dtype=np.int32)
    assert RING.get_indices(["a", "b"], out=out) is out
    assert out.tolist() == RING.get_indices(["a", "b"]).tolist()


def test_containers_api() -> None:
    keys = KEYS[:100]
    assert _containers.route(CORE, keys).tolist() == EXPECTED[:100].tolist()
    rep = _containers.replicas(CORE, keys, 3)
    assert rep.shape == (100, 3) and rep[:, 0].tolist() == EXPECTED[:100].tolist()
    h = _containers.hash_many(CORE.hasher, keys)
    assert h.dtype == np.uint64 and h.tolist() == [RING.hash(k) for k in keys]
    assert _containers.route_hashes(CORE, h).tolist() == EXPECTED[:100].tolist()
    assert _containers.replicas_of_hashes(CORE, h, 3).tolist() == rep.tolist()
    assert _containers.as_hashes([1, 2]).dtype == np.uint64
    # missing keys: -1, or a row of -1, under nulls
    got = _containers.route(CORE, [KEYS[1], None], nulls=True)
    assert got.tolist() == [EXPECTED[1], -1]
    rows = _containers.replicas(CORE, [KEYS[1], None], 2, nulls=True)
    assert rows[1].tolist() == [-1, -1] and rows[0, 0] == EXPECTED[1]


def test_missing_key_hint_only_when_asked() -> None:
    with pytest.raises(TypeError, match='nulls="none"'):
        _containers.route(CORE, ["a", None])
    with pytest.raises(TypeError) as ei:
        _containers.route(CORE, ["a", None], hint=False)
    assert "nulls" not in str(ei.value) and "position 1" in str(ei.value)
    with pytest.raises(TypeError) as ei:
        _containers.hash_many(CORE.hasher, ["a", None])
    assert "nulls" not in str(ei.value)


def test_core_reads_only_plain_containers() -> None:
    out = np.empty(1, dtype=np.int32)
    for bad in (pa.array(["a"]), pd.Series(["a"]), {"a"}, "a", iter(["a"])):
        with pytest.raises(TypeError, match="list, tuple, 1-D NumPy array"):
            _ring.route_keys(CORE, bad, out)
    _ring.route_keys(CORE, [KEYS[1]], out)
    assert out[0] == EXPECTED[1]
    src = _ring.keys_source(np.array([KEYS[1]]))
    _ring.route_keys(CORE, src, out)
    assert out[0] == EXPECTED[1]


def test_empty_batch_on_empty_router() -> None:
    for core in (HashRing()._core, Rendezvous([])._core, JumpHash([])._core):
        assert _containers.route(core, []).shape == (0,)
        assert _containers.hash_many(core.hasher, []).shape == (0,)
        assert _containers.route_hashes(core, np.empty(0, np.uint64)).shape == (0,)
        with pytest.raises(EmptyRingError):
            _containers.route(core, ["a"])
        with pytest.raises(EmptyRingError):
            _containers.route_hashes(core, [1])
    empty = HashRing()._core
    assert _containers.replicas(empty, [], 2).shape == (0, 2)
    with pytest.raises(EmptyRingError):
        _containers.replicas(empty, ["a"], 2)


def test_router_base_scalar_paths() -> None:
    rdv = Rendezvous([f"n{i}" for i in range(5)])
    core = rdv._core
    for c in (CORE, core):
        assert isinstance(c, _ring._Router) and c.has_replicas
        assert c.replica_row(KEYS[1], 3) == _containers.replicas(c, ["key-1"], 3)[0].tolist()
        assert c.index("key-1") == c.index_of_hash(c.hash("key-1"))
        assert c.get("key-1") == c.nodes[c.index("key-1")]
        assert c.nodes_array()[-1] is None and c.live == len(c.nodes)
    jump = JumpHash(["a", "b", "c"])._core
    assert not jump.has_replicas and jump.hasher.raw_ints and jump.hash(7) == 7
    assert jump.hash(-1) == 2**64 - 1
    with pytest.raises(TypeError, match="replica"):
        _containers.replicas(jump, ["a"], 1)


def test_pandas_arrays() -> None:
    check(pd.array(KEYS, dtype="string"))
    check(pd.Categorical(KEYS))
    ints = pd.array([1, None, 3], dtype="Int64")
    assert RING.get_indices(ints, nulls="none").tolist()[1] == -1
