"""Conformance: what the batch calls return: categorical results and out= arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conformance_cases import (
    REPEATED,
    STR_KEYS,
    STR_N,
    ids,
    names_of,
    pa,
    pd,
    router,
)
from helpers import names_word
from routers import ROUTERS, RouterSpec

# --------------------------------------------------------------------------------------------
# categorical results
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_get_many_categorical(spec: RouterSpec) -> None:
    r = router(spec)
    for keys in (STR_KEYS, pa.array(STR_KEYS), pd.Series(REPEATED, dtype="category")):
        plain = list(keys) if not isinstance(keys, pa.Array) else keys.to_pylist()
        idx = r.get_indices(plain).tolist()
        cat = r.get_many(keys, categorical=True)
        assert isinstance(cat, pd.Categorical)
        assert list(cat.categories) == list(r.nodes)
        assert cat.codes.tolist() == idx
        assert list(cat.astype(object)) == names_of(r, idx)
    present = r.get_indices([k for k in STR_N if k is not None]).tolist()
    for keys in (STR_N, pd.Series(STR_N, dtype="category"), pa.array(STR_N)):
        cat = r.get_many(keys, nulls="none", categorical=True)
        it = iter(present)
        assert cat.codes.tolist() == [-1 if k is None else next(it) for k in STR_N]
    assert r.get_many(STR_KEYS, categorical=False).dtype == object


# --------------------------------------------------------------------------------------------
# out=
# --------------------------------------------------------------------------------------------

OUT_KEYS = STR_KEYS[:100]


def _bad_out(case: str, n: int) -> Any:
    if case == "int64":
        return np.zeros(n, dtype=np.int64)
    if case == "uint32":
        return np.zeros(n, dtype=np.uint32)
    if case == "short":
        return np.zeros(n - 1, dtype=np.int32)
    if case == "long":
        return np.zeros(n + 1, dtype=np.int32)
    if case == "strided":
        return np.zeros(2 * n, dtype=np.int32)[::2]
    if case == "readonly":
        a = np.zeros(n, dtype=np.int32)
        a.flags.writeable = False
        return a
    if case == "two_d":
        return np.zeros((n, 1), dtype=np.int32)
    if case == "list":
        return [0] * n
    if case == "bytearray":
        return bytearray(4 * n)
    raise AssertionError(case)


OUT_CASES = ["int64", "uint32", "short", "long", "strided", "readonly", "two_d", "list",
             "bytearray"]
OUT_CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "get_indices": lambda r, out: r.get_indices(OUT_KEYS, out=out),
    "lookup": lambda r, out: r.lookup(r.hash_many(OUT_KEYS), out=out),
}


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("call", list(OUT_CALLS))
def test_out_is_filled_and_returned(spec: RouterSpec, call: str) -> None:
    r = router(spec)
    expected = r.get_indices(list(OUT_KEYS)).tolist()
    out = np.full(len(OUT_KEYS), -7, dtype=np.int32)
    res = OUT_CALLS[call](r, out)
    assert res is out
    assert out.tolist() == expected
    res = r.get_indices(pa.array(OUT_KEYS), out=out) if call == "get_indices" else res
    assert res is out and out.tolist() == expected
    buf = np.full(len(OUT_KEYS) + 20, -1, dtype=np.int32)  # a view into a bigger buffer
    res = OUT_CALLS[call](r, buf[10:-10])
    assert np.shares_memory(res, buf) and res.tolist() == expected
    assert buf[:10].tolist() == [-1] * 10 and buf[-10:].tolist() == [-1] * 10
    if call == "get_indices":
        assert r.get_indices(list(OUT_KEYS), out) is out  # out may be passed by position
        assert out.tolist() == expected
        # with nulls="none": -1 where a key is missing
        keys = list(OUT_KEYS)
        keys[3] = None
        out = np.full(len(keys), -7, dtype=np.int32)
        assert r.get_indices(keys, out=out, nulls="none") is out
        assert out.tolist() == expected[:3] + [-1] + expected[4:]


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("call", list(OUT_CALLS))
@pytest.mark.parametrize("case", OUT_CASES)
def test_bad_out_rejected_naming_out(spec: RouterSpec, call: str, case: str) -> None:
    r = router(spec)
    OUT_CALLS[call](r, np.empty(len(OUT_KEYS), dtype=np.int32))  # a good out= is accepted
    with pytest.raises((TypeError, ValueError)) as ei:
        OUT_CALLS[call](r, _bad_out(case, len(OUT_KEYS)))
    assert names_word(str(ei.value), "out"), str(ei.value)
