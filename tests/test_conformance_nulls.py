"""Conformance: missing keys (nulls=) in every container and batch call, for every router."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conformance_cases import (
    BYTES_N,
    INT_N,
    NULL_AT,
    REPLICAS,
    STR_KEYS,
    STR_N,
    Build,
    _with_nulls,
    ids,
    int_values,
    names_of,
    pa,
    pd,
    pl,
    router,
)
from helpers import obj_array
from routers import NODES, ROUTERS, RouterSpec

# --------------------------------------------------------------------------------------------
# nulls
# --------------------------------------------------------------------------------------------


def _cycle_nulls(values: list[Any]) -> list[Any]:
    out = _with_nulls(values)
    for j, i in enumerate(NULL_AT):
        out[i] = (None, np.nan, pd.NA)[j % 3]
    return out


def _chunked_nulls(values: list[Any], typ: Any) -> Any:
    v = _with_nulls(values)
    return pa.chunked_array([pa.array(v[:3], typ), pa.array([], typ), pa.array(v[3:], typ)])


def _sliced_nulls(values: list[Any], typ: Any, pad: Any) -> Any:
    v = _with_nulls(values)
    return pa.array([None, pad, None] + v + [None] * 4, type=typ).slice(3, len(v))


# name -> (key kind, build() -> (container, plain list with None where a key is missing))
NULL_CONTAINERS: dict[str, tuple[str, Build]] = {
    "list_None": ("str", lambda: (list(STR_N), STR_N)),
    "list_NaN": ("str", lambda: (_with_nulls(STR_KEYS, float("nan")), STR_N)),
    "list_pd_NA": ("str", lambda: (_with_nulls(STR_KEYS, pd.NA), STR_N)),
    "tuple_None": ("str", lambda: (tuple(STR_N), STR_N)),
    "np_O_None": ("str", lambda: (obj_array(STR_N), STR_N)),
    "np_O_NaN": ("str", lambda: (obj_array(_with_nulls(STR_KEYS, np.nan)), STR_N)),
    "pd_object_mixed": ("str", lambda: (pd.Series(_cycle_nulls(STR_KEYS), dtype=object),
                                        STR_N)),
    "pd_string_python": ("str", lambda: (pd.Series(STR_N, dtype="string[python]"), STR_N)),
    "pd_string_pyarrow": ("str", lambda: (pd.Series(STR_N, dtype="string[pyarrow]"), STR_N)),
    "pd_categorical": ("str", lambda: (pd.Series(STR_N, dtype="category"), STR_N)),
    "pd_index": ("str", lambda: (pd.Index(STR_N, dtype=object), STR_N)),
    "pa_string": ("str", lambda: (pa.array(STR_N, pa.string()), STR_N)),
    "pa_large_string": ("str", lambda: (pa.array(STR_N, pa.large_string()), STR_N)),
    "pa_string_view": ("str", lambda: (pa.array(STR_N, pa.string_view()), STR_N)),
    "pa_dictionary": ("str", lambda: (pa.array(STR_N, pa.string()).dictionary_encode(), STR_N)),
    "pa_chunked": ("str", lambda: (_chunked_nulls(STR_KEYS, pa.string()), STR_N)),
    "pa_sliced": ("str", lambda: (_sliced_nulls(STR_KEYS, pa.string(), "pad"), STR_N)),
    "pl_string": ("str", lambda: (pl.Series("k", STR_N, dtype=pl.String), STR_N)),
    "pl_categorical": ("str", lambda: (pl.Series("k", STR_N, dtype=pl.Categorical), STR_N)),
    "pa_binary": ("bytes", lambda: (pa.array(BYTES_N, pa.binary()), BYTES_N)),
    "pa_binary_view": ("bytes", lambda: (pa.array(BYTES_N, pa.binary_view()), BYTES_N)),
    "np_O_bytes_None": ("bytes", lambda: (obj_array(BYTES_N), BYTES_N)),
    "list_int_None": ("int", lambda: (list(INT_N), INT_N)),
    "pa_int64": ("int", lambda: (pa.array(_with_nulls(int_values("int64")), pa.int64()),
                                 _with_nulls(int_values("int64")))),
    "pa_int64_chunked": ("int", lambda: (_chunked_nulls(int_values("int64"), pa.int64()),
                                         _with_nulls(int_values("int64")))),
    "pd_Int64": ("int", lambda: (pd.Series(_with_nulls(int_values("int64")), dtype="Int64"),
                                 _with_nulls(int_values("int64")))),
    "pd_UInt64": ("int", lambda: (pd.Series(_with_nulls(int_values("uint64")), dtype="UInt64"),
                                  _with_nulls(int_values("uint64")))),
    "pl_int64": ("int", lambda: (pl.Series("k", _with_nulls(int_values("int64")),
                                           dtype=pl.Int64), _with_nulls(int_values("int64")))),
    "pl_enum": ("str", lambda: (pl.Series("k", STR_N, dtype=pl.Enum(
        list(dict.fromkeys(k for k in STR_N if k is not None)))), STR_N)),
    "pd_Int32": ("int", lambda: (pd.Series(_with_nulls(int_values("int32")), dtype="Int32"),
                                 _with_nulls(int_values("int32")))),
    "pd_UInt8": ("int", lambda: (pd.Series(_with_nulls(int_values("uint8")), dtype="UInt8"),
                                 _with_nulls(int_values("uint8")))),
    "pd_array_Int64": ("int", lambda: (pd.array(_with_nulls(int_values("int64")), dtype="Int64"),
                                       _with_nulls(int_values("int64")))),
    "pd_array_string": ("str", lambda: (pd.array(STR_N, dtype="string"), STR_N)),
    "pa_table": ("str", lambda: (pa.table({"k": pa.array(STR_N)}), STR_N)),
}
# Python containers of objects raise TypeError at a missing key, columnar ones ValueError
PY_NULL_CONTAINERS = {"list_None", "list_NaN", "list_pd_NA", "tuple_None", "np_O_None",
                      "np_O_NaN", "np_O_bytes_None", "list_int_None"}


def null_params(specs: list[RouterSpec]) -> list[Any]:
    out = []
    for s in specs:
        for name, (kind, _) in NULL_CONTAINERS.items():
            if kind == "int" and s.int_keys == "refused":
                continue
            out.append(pytest.param(s, name, id=f"{s.name}-{name}"))
    return out


@pytest.mark.parametrize(("spec", "kind"), null_params(ROUTERS))
def test_nulls_raise_by_default(spec: RouterSpec, kind: str) -> None:
    r = router(spec)
    container, _ = NULL_CONTAINERS[kind][1]()
    exc = TypeError if kind in PY_NULL_CONTAINERS else ValueError
    for call in (lambda: r.get_indices(container), lambda: r.get_many(container)):
        with pytest.raises(exc) as ei:
            call()
        msg = str(ei.value)
        assert f"position {NULL_AT[0]}" in msg and "null" in msg.lower(), msg


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_nulls_keyword(spec: RouterSpec) -> None:
    """nulls="raise" is the default, spelled out; nulls="none" changes nothing without nulls."""
    r = router(spec)
    clean = STR_KEYS[:50]
    idx = r.get_indices(clean).tolist()
    names = r.get_many(clean).tolist()
    for policy in ("raise", "none"):
        assert r.get_indices(clean, nulls=policy).tolist() == idx
        assert r.get_many(clean, nulls=policy).tolist() == names
        assert r.get_indices(np.array(clean), nulls=policy).tolist() == idx
        assert r.get_many(pa.array(clean), nulls=policy).tolist() == names
    for keys in (STR_N, pa.array(STR_N), pd.Series(STR_N, dtype="string[pyarrow]")):
        for call in (r.get_indices, r.get_many):
            with pytest.raises((ValueError, TypeError)):
                call(keys, nulls="raise")


@pytest.mark.parametrize(("spec", "kind"), null_params(ROUTERS))
def test_nulls_none_gives_missing_and_routes_the_rest(spec: RouterSpec, kind: str) -> None:
    r = router(spec)
    container, plain = NULL_CONTAINERS[kind][1]()
    present = [k for k in plain if k is not None]
    routed = iter(r.get_indices(present).tolist())
    expected = [-1 if k is None else next(routed) for k in plain]
    got = r.get_indices(container, nulls="none")
    assert isinstance(got, np.ndarray) and got.dtype == np.int32
    assert got.tolist() == expected
    many = r.get_many(container, nulls="none")
    assert many.dtype == object
    assert many.tolist() == names_of(r, expected)


NO_NULLS_CALLS: dict[str, Callable[[Any], Any]] = {
    "get": lambda r: r.get(None),
    "hash": lambda r: r.hash(None),
    "hash_many": lambda r: r.hash_many(["a", None, "b"]),
    "hash_many_arrow": lambda r: r.hash_many(pa.array(["a", None, "b"])),
    "hash_many_pandas": lambda r: r.hash_many(pd.Series(["a", None, "b"], dtype=object)),
}
NO_NULLS_REPLICA_CALLS: dict[str, Callable[[Any], Any]] = {
    "replicas": lambda r: r.replicas(None, 2),
}
# The batch replica calls take nulls= like get_many: a missing key is a row of -1 / None.
NULLS_REPLICA_CALLS: dict[str, Callable[[Any], Any]] = {
    "replicas_many": lambda r: r.replicas_many(["a", None], 2),
    "replica_indices": lambda r: r.replica_indices(["a", None], 2),
    "replica_indices_arrow": lambda r: r.replica_indices(pa.array(["a", None]), 2),
}


def _no_nulls_params() -> list[Any]:
    out = []
    for s in ROUTERS:
        calls = list(NO_NULLS_CALLS) + (list(NO_NULLS_REPLICA_CALLS) if s.replicas else [])
        out += [pytest.param(s, c, id=f"{s.name}-{c}") for c in calls]
    return out


@pytest.mark.parametrize(("spec", "call"), _no_nulls_params())
def test_missing_key_message_recommends_nulls_only_where_accepted(spec: RouterSpec,
                                                                  call: str) -> None:
    r = router(spec)
    fn = NO_NULLS_CALLS.get(call) or NO_NULLS_REPLICA_CALLS[call]
    exc = ValueError if call in ("hash_many_arrow", "hash_many_pandas") else TypeError
    with pytest.raises(exc) as ei:
        fn(r)
    assert "nulls" not in str(ei.value), f"{call} takes no nulls=, yet: {ei.value}"


@pytest.mark.parametrize("spec", REPLICAS, ids=ids(REPLICAS))
@pytest.mark.parametrize("call", list(NULLS_REPLICA_CALLS))
def test_replica_batches_raise_on_a_missing_key_and_recommend_nulls(spec: RouterSpec,
                                                                    call: str) -> None:
    r = spec.make(NODES)
    with pytest.raises((TypeError, ValueError)) as ei:
        NULLS_REPLICA_CALLS[call](r)
    assert "nulls" in str(ei.value)


@pytest.mark.parametrize("spec", REPLICAS, ids=ids(REPLICAS))
@pytest.mark.parametrize("container", ["list", "arrow", "object_array"])
def test_replica_batches_with_nulls_none(spec: RouterSpec, container: str) -> None:
    r = spec.make(NODES)
    keys = ["a", None, "b", None, "c"]
    batch = {"list": keys, "arrow": pa.array(keys),
             "object_array": np.array(keys, dtype=object)}[container]
    idx = r.replica_indices(batch, 3, nulls="none")
    names = r.replicas_many(batch, 3, nulls="none")
    assert idx.shape == names.shape == (5, 3)
    for i, k in enumerate(keys):
        if k is None:
            assert idx[i].tolist() == [-1, -1, -1] and names[i].tolist() == [None] * 3
        else:
            assert names[i].tolist() == r.replicas(k, 3)
            assert [r.nodes[j] for j in idx[i]] == r.replicas(k, 3)


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("bad", ["drop", "None", "", True, 1])
def test_bad_nulls_value(spec: RouterSpec, bad: Any) -> None:
    r = router(spec)
    for call in (r.get_many, r.get_indices):
        with pytest.raises(ValueError, match="nulls"):
            call(["a", "b"], nulls=bad)
