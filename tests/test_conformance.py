"""The conformance suite: the one router surface (DESIGN.md, "The router protocol") checked for
every router in the registry (tests/routers.py).

Every test is parametrized over ``ROUTERS`` (ids = the spec names) and, where it is about key
containers or null kinds, over those too.  Expected values never come from the path under test:
a container's result is compared with the result on the same keys as a plain Python list, the
batch calls with ``get`` per key, ``lookup`` with ``hash_many``, a copy / pickle / from_bytes
with a fresh build.  Nothing here is marked xfail or skipped: a router that lacks part of the
surface fails the tests for that part.

The suite is split by what it checks: this file, every path and container gives the same
node; test_conformance_{nulls,outputs,errors,surface,replicas,empty,hash,bounded}.py the
rest; conformance_cases.py the cases they share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conformance_cases import (
    CONTAINERS,
    INT_KEYS,
    INT_OK,
    INT_REFUSED,
    REPLICAS,
    container_params,
    ids,
    keys_for,
    names_of,
    pa,
    pd,
    pl,
    router,
)
from helpers import obj_array
from routers import ROUTERS, RouterSpec

# --------------------------------------------------------------------------------------------
# the same key gives the same node through every path
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_same_node_through_get_get_many_get_indices(spec: RouterSpec) -> None:
    r = router(spec)
    keys = keys_for(spec)
    expected = [r.get(k) for k in keys]
    assert all(isinstance(n, str) and n in r.nodes for n in expected)
    many = r.get_many(keys)
    assert isinstance(many, np.ndarray) and many.dtype == object and many.shape == (len(keys),)
    assert many.tolist() == expected
    idx = r.get_indices(keys)
    assert isinstance(idx, np.ndarray) and idx.dtype == np.int32 and idx.shape == (len(keys),)
    assert names_of(r, idx) == expected
    assert r.get_many(obj_array(keys)).tolist() == expected
    assert r.get_indices(tuple(keys)).tolist() == idx.tolist()


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
def test_hash_and_lookup_agree_with_get_indices(spec: RouterSpec) -> None:
    r = router(spec)
    keys = keys_for(spec)
    hashes = r.hash_many(keys)
    assert isinstance(hashes, np.ndarray) and hashes.dtype == np.uint64
    assert hashes.shape == (len(keys),)
    singles = [r.hash(k) for k in keys]
    assert all(isinstance(h, int) and 0 <= h < 2**64 for h in singles)
    assert hashes.tolist() == singles
    for k in keys[::37]:
        assert r.hash(k) == int(r.hash_many([k])[0])
    got = r.lookup(hashes)
    assert isinstance(got, np.ndarray) and got.dtype == np.int32
    assert got.tolist() == r.get_indices(keys).tolist()
    assert r.lookup(hashes[::-1].copy()).tolist() == r.get_indices(keys[::-1]).tolist()


# --------------------------------------------------------------------------------------------
# containers
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "kind"), container_params(ROUTERS))
def test_container_routes_like_a_list(spec: RouterSpec, kind: str) -> None:
    r = router(spec)
    container, plain = CONTAINERS[kind][1]()
    expected = r.get_indices(list(plain)).tolist()
    got = r.get_indices(container)
    assert isinstance(got, np.ndarray) and got.dtype == np.int32
    assert got.tolist() == expected
    many = r.get_many(container)
    assert isinstance(many, np.ndarray) and many.dtype == object
    assert many.tolist() == names_of(r, expected)


@pytest.mark.parametrize(("spec", "kind"), container_params(ROUTERS))
def test_container_hashes_like_a_list(spec: RouterSpec, kind: str) -> None:
    r = router(spec)
    container, plain = CONTAINERS[kind][1]()
    got = r.hash_many(container)
    assert isinstance(got, np.ndarray) and got.dtype == np.uint64
    assert got.tolist() == r.hash_many(list(plain)).tolist()


@pytest.mark.parametrize(("spec", "kind"), container_params(REPLICAS))
def test_container_replicas_like_a_list(spec: RouterSpec, kind: str) -> None:
    r = router(spec)
    container, plain = CONTAINERS[kind][1]()
    got = r.replica_indices(container, 3)
    assert got.dtype == np.int32
    assert got.tolist() == r.replica_indices(list(plain), 3).tolist()
    assert r.replicas_many(container, 2).tolist() == r.replicas_many(list(plain), 2).tolist()


@pytest.mark.parametrize("spec", INT_OK, ids=ids(INT_OK))
def test_int_keys_hashed_as_decimal_or_used_raw(spec: RouterSpec) -> None:
    """"hashed": an int key is its ASCII decimal digits (DESIGN.md, placement recipe), so it
    routes as its str; "raw": the int is the 64-bit value routed by (its two's complement)."""
    r = router(spec)
    ints = INT_KEYS[::3]
    if spec.int_keys == "hashed":
        assert [r.get(k) for k in ints] == [r.get(str(k)) for k in ints]
        assert r.get_indices(ints).tolist() == r.get_indices([str(k) for k in ints]).tolist()
        assert r.hash_many(ints).tolist() == r.hash_many([str(k) for k in ints]).tolist()
    else:
        assert [r.hash(k) for k in ints] == [k % 2**64 for k in ints]
        raw = np.array([k % 2**64 for k in ints], dtype=np.uint64)
        assert r.lookup(raw).tolist() == r.get_indices(ints).tolist()
        assert r.get_indices(raw).tolist() == r.get_indices(ints).tolist()


INT_BATCHES: dict[str, Callable[[], Any]] = {
    "list": lambda: [5, 6],
    "list_mixed": lambda: ["a", 5],
    "np_int64": lambda: np.arange(3),
    "np_uint8": lambda: np.arange(3, dtype=np.uint8),
    "pa_int64": lambda: pa.array([1, 2], pa.int64()),
    "pd_Int64": lambda: pd.Series([1, 2], dtype="Int64"),
    "pl_int64": lambda: pl.Series("k", [1, 2], dtype=pl.Int64),
}


@pytest.mark.parametrize("spec", INT_REFUSED, ids=ids(INT_REFUSED))
@pytest.mark.parametrize("batch", list(INT_BATCHES))
def test_int_keys_refused(spec: RouterSpec, batch: str) -> None:
    r = router(spec)
    with pytest.raises(TypeError, match="int"):
        r.get(5)
    for call in ("get_many", "get_indices", "hash_many"):
        try:
            got = getattr(r, call)(INT_BATCHES[batch]())
        except TypeError:
            continue
        pytest.fail(f"{call} routed int keys ({batch}) instead of raising TypeError: {got!r}")
