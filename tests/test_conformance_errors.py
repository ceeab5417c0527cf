"""Conformance: bad input (key types, non-containers, shapes, dtypes, lone surrogates, lookup
values, arguments) raises the right error, naming what it got, for every router."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conformance_cases import (
    BAD_KEYS,
    ids,
    pa,
    pd,
    pl,
    router,
    routes,
)
from helpers import names_word, obj_array
from routers import ROUTERS, RouterSpec

# --------------------------------------------------------------------------------------------
# errors: key types, non-containers, shapes
# --------------------------------------------------------------------------------------------

def names_type(msg: str, obj: Any) -> bool:
    """The message names the type of ``obj`` (as a word, or quoted)."""
    name = type(obj).__name__
    return names_word(msg, name) or repr(name) in msg


KEY_CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "get": lambda r, k: r.get(k),
    "hash": lambda r, k: r.hash(k),
    "get_many": lambda r, k: r.get_many(["a", k, "b"]),
    "get_indices": lambda r, k: r.get_indices(["a", "b", k]),
    "hash_many": lambda r, k: r.hash_many([k]),
    "get_many_array": lambda r, k: r.get_many(obj_array(["a", k])),
}


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("call", list(KEY_CALLS))
@pytest.mark.parametrize("bad", list(BAD_KEYS))
def test_unsupported_key_type_named(spec: RouterSpec, call: str, bad: str) -> None:
    r = router(spec)
    key = BAD_KEYS[bad]
    with pytest.raises(TypeError) as ei:
        KEY_CALLS[call](r, key)
    assert names_type(str(ei.value), key), str(ei.value)


BATCH_CALLS = ["get_many", "get_indices", "hash_many"]


def batch_calls(spec: RouterSpec) -> list[str]:
    """The calls that take a batch of keys (the replica ones with n=2)."""
    return BATCH_CALLS + (["replicas_many", "replica_indices"] if spec.replicas else [])


def call_batch(r: Any, call: str, keys: Any) -> Any:
    return getattr(r, call)(keys, 2) if call.startswith("replica") else getattr(r, call)(keys)


NOT_CONTAINERS: dict[str, Callable[[], Any]] = {
    "str": lambda: "abc", "bytes": lambda: b"abc", "int": lambda: 5, "none": lambda: None,
    "float": lambda: 2.5, "generator": lambda: (k for k in "ab")}


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("call", BATCH_CALLS)
@pytest.mark.parametrize("keys", list(NOT_CONTAINERS))
def test_keys_not_a_container(spec: RouterSpec, call: str, keys: str) -> None:
    r = router(spec)
    bad = NOT_CONTAINERS[keys]()
    with pytest.raises(TypeError) as ei:
        getattr(r, call)(bad)
    assert type(bad).__name__ in str(ei.value), str(ei.value)


# Containers outside the supported set (issue 20): (how to make one, what the TypeError must
# name as what it got, what it must name as taken instead).  They were "len() of unsized
# object", AttributeError, NotImplementedError and "fixed_size_binary[8]".
UNSUPPORTED_CONTAINERS: dict[str, tuple[Callable[[], Any], str, str]] = {
    "0d_str_array": (lambda: np.array("a"), "0-d NumPy array", "get("),
    "0d_int_array": (lambda: np.array(7), "0-d NumPy array", "get("),
    "polars_lazyframe": (lambda: pl.DataFrame({"k": ["a", "b"]}).lazy(), "LazyFrame",
                         "collect()"),
    "polars_expr": (lambda: pl.col("k"), "Expr", "polars Series"),
    "pandas_multiindex": (lambda: pd.MultiIndex.from_tuples([("a", 1), ("b", 2)]),
                          "MultiIndex", "get_level_values"),
    "polars_object": (lambda: pl.Series([object(), object()], dtype=pl.Object), "Object",
                      "String"),
    "pandas_sparse": (lambda: pd.Series(pd.arrays.SparseArray([1, 0])), "Sparse", "to_dense"),
    "pyarrow_scalar": (lambda: pa.scalar("a"), "StringScalar", "pyarrow Array"),
}


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("kind", list(UNSUPPORTED_CONTAINERS))
def test_unsupported_container_named(spec: RouterSpec, kind: str) -> None:
    r = router(spec)
    make, got, takes = UNSUPPORTED_CONTAINERS[kind]
    for call in batch_calls(spec):
        with pytest.raises(TypeError) as ei:
            call_batch(r, call, make())
        msg = str(ei.value)
        if spec.int_keys == "refused" and kind in ("0d_int_array", "pandas_sparse"):
            # integers in any container: refused first, for what they are (TokenRing)
            assert "integer keys" in msg and "bytes or str" in msg, f"{call}: {msg}"
            continue
        assert got in msg and takes in msg, f"{call}: {msg}"
    assert r == router(spec)


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_multidimensional_arrays_refused(spec: RouterSpec) -> None:
    r = router(spec)
    arrays = [np.array([["a", "b"], ["c", "d"]]), np.array([[b"a"], [b"b"]]),
              obj_array(["a", "b"]).reshape(2, 1), np.zeros((2, 2, 2), dtype=object)]
    if spec.int_keys != "refused":
        arrays.append(np.arange(6).reshape(2, 3))
    for a in arrays:
        for call in batch_calls(spec):
            with pytest.raises(ValueError) as ei:
                call_batch(r, call, a)
            msg = str(ei.value)
            assert str(a.shape) in msg or "dimension" in msg, f"{call}: {msg}"


BAD_DTYPES: dict[str, Any] = {
    "float64": np.array([1.0, 2.0]),
    "float32": np.array([1.0], dtype=np.float32),
    "bool": np.array([True, False]),
    "complex128": np.array([1 + 1j]),
    "datetime64[D]": np.array(["2024-01-01"], dtype="datetime64[D]"),
    "timedelta64[s]": np.array([5], dtype="timedelta64[s]"),
    "void": np.zeros(2, dtype="V4"),
}


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("dtype", list(BAD_DTYPES))
def test_unsupported_dtype_named(spec: RouterSpec, dtype: str) -> None:
    """Even on an empty array of that dtype."""
    r = router(spec)
    arr = BAD_DTYPES[dtype]
    for call in batch_calls(spec):
        for a in (arr, arr[:0]):
            with pytest.raises(TypeError) as ei:
                call_batch(r, call, a)
            assert str(arr.dtype) in str(ei.value), f"{call}: {ei.value}"


SURROGATE_KEYS = ["\ud800", "ab\udfff", "é\udc00x", "x" * 5000 + "\ud800"]


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("key", range(len(SURROGATE_KEYS)))
def test_lone_surrogate_keys(spec: RouterSpec, key: int) -> None:
    """A str that has no UTF-8 form: UnicodeEncodeError, as str.encode, in every call."""
    r = router(spec)
    k = SURROGATE_KEYS[key]
    with pytest.raises(UnicodeEncodeError):
        k.encode("utf-8")
    for scalar in (r.get, r.hash) + ((lambda x: r.replicas(x, 2)),) * spec.replicas:
        with pytest.raises(UnicodeEncodeError):
            scalar(k)
    batch = ["fine", "é"] * 2000 + [k] + ["tail"]
    for container in (batch, tuple(batch), np.array(batch), obj_array(batch)):
        for call in batch_calls(spec):
            with pytest.raises(UnicodeEncodeError):
                call_batch(r, call, container)
    assert r == router(spec)


_FAR = [f"k{i}" for i in range(130_000)]


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("container", ["list", "object_array", "unicode_array"])
def test_lone_surrogate_names_its_batch_position(spec: RouterSpec, container: str) -> None:
    """Deep in a batch (past the first chunks, over several threads) the UnicodeEncodeError
    names the key's batch position, as every other bad key does ("in position 0" was only
    the position inside the key)."""
    r = router(spec)
    keys = list(_FAR)
    keys[120_000] = "x\ud800"
    batch: Any = {"list": keys, "object_array": obj_array(keys),
                  "unicode_array": np.array(keys)}[container]
    for call in batch_calls(spec):
        for threads in (1, 2):
            with pytest.raises(UnicodeEncodeError) as ei:
                getattr(r, call)(*((batch, 2) if call.startswith("replica") else (batch,)),
                                 threads=threads)
            assert names_word(str(ei.value), "120000"), f"{call}: {ei.value}"
            assert ei.value.object == "x\ud800" and ei.value.start == 1
    with pytest.raises(UnicodeEncodeError) as ei:  # one key: exactly str.encode's error
        r.get("x\ud800")
    assert str(ei.value) == str(pytest.raises(UnicodeEncodeError, "x\ud800".encode).value)


LOOKUP_OUT_OF_RANGE: dict[str, Any] = {
    "neg_list": [-1], "neg_list2": [5, -5], "neg_i64": np.array([-3], dtype=np.int64),
    "neg_i8": np.array([1, -1], dtype=np.int8), "2**64": [2**64], "too_big_list": [0, 2**64 + 1],
    "2d": np.zeros((2, 2), dtype=np.uint64)}
LOOKUP_NOT_INTEGERS: dict[str, Any] = {
    "f64": np.array([1.0]), "float_list": [1.5], "bool": np.array([True]),
    "U": np.array(["1"]), "str": "123", "None": [None]}


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("hashes", list(LOOKUP_OUT_OF_RANGE))
def test_lookup_rejects_out_of_range_values(spec: RouterSpec, hashes: str) -> None:
    with pytest.raises(ValueError):
        router(spec).lookup(LOOKUP_OUT_OF_RANGE[hashes])


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("hashes", list(LOOKUP_NOT_INTEGERS))
def test_lookup_rejects_non_integers_naming_hashes(spec: RouterSpec, hashes: str) -> None:
    with pytest.raises(TypeError, match="hashes"):
        router(spec).lookup(LOOKUP_NOT_INTEGERS[hashes])


BATCH_CONTAINERS: dict[str, Callable[[list[Any]], Any]] = {
    "list": list, "tuple": tuple, "object_array": obj_array}


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("container", list(BATCH_CONTAINERS))
@pytest.mark.parametrize("bad", list(BAD_KEYS))
def test_unsupported_key_in_a_batch_names_its_position(spec: RouterSpec, container: str,
                                                       bad: str) -> None:
    r = router(spec)
    keys = BATCH_CONTAINERS[container](["a", b"b", "c", "d", "e", BAD_KEYS[bad], "g"])
    for call in batch_calls(spec):
        with pytest.raises(TypeError) as ei:
            call_batch(r, call, keys)
        msg = str(ei.value)
        assert names_type(msg, BAD_KEYS[bad]) and names_word(msg, "5"), f"{call}: {msg}"
    if spec.replicas:
        with pytest.raises(TypeError, match=type(BAD_KEYS[bad]).__name__):
            r.replicas(BAD_KEYS[bad], 2)
    assert r == router(spec) and routes(r) == routes(router(spec))  # nothing half-applied


BAD_ARGUMENTS: dict[str, tuple[Callable[[Any], Any], type[Exception], str]] = {
    "float_array": (lambda r: r.get_many(np.array([1.5, 2.5])), TypeError, "dtype float64"),
    "two_d_array": (lambda r: r.get_many(np.array([["a"]])), ValueError, "one-dimensional"),
    "str_batch": (lambda r: r.get_many("abc"), TypeError, r"get\(\)"),
    "out_length": (lambda r: r.get_indices(["a", "b"], out=np.empty(3, dtype=np.int32)),
                   ValueError, "length"),
    "lookup_negative": (lambda r: r.lookup(np.array([-1])), ValueError, "non-negative"),
    "lookup_float": (lambda r: r.lookup(np.array([1.0])), TypeError, "integer"),
    "bool_array": (lambda r: r.get_indices(np.array([True, False])), TypeError, "bool"),
    "bool_series": (lambda r: r.get_indices(pd.Series([True, False])), TypeError, "bool"),
    "boolean_series": (lambda r: r.get_indices(pd.Series([True, None, False], dtype="boolean")),
                       TypeError, "boolean"),
    "pa_table_2_columns": (lambda r: r.get_indices(pa.table({"a": ["x"], "b": ["y"]})),
                           TypeError, "2 columns"),
    "pd_dataframe_2_columns": (lambda r: r.get_indices(pd.DataFrame({"a": ["x"], "b": ["y"]})),
                               TypeError, "2 columns"),
    "pl_dataframe_2_columns": (lambda r: r.get_indices(pl.DataFrame({"a": ["x"], "b": ["y"]})),
                               TypeError, "2 columns"),
}


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("case", list(BAD_ARGUMENTS))
def test_bad_argument_message(spec: RouterSpec, case: str) -> None:
    call, exc, pattern = BAD_ARGUMENTS[case]
    with pytest.raises(exc, match=pattern):
        call(router(spec))
