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
