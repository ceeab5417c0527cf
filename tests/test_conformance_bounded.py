"""Conformance: BoundedLoad over the routers it takes (live loads through copy and pickle,
assign_many)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from conformance_cases import (
    BAD_KEYS,
    STR_KEYS,
    STR_N,
    ids,
    names_of,
    pa,
    pd,
    pl,
    router,
)
from routers import BOUNDED, RouterSpec

from consistent_hash import BoundedLoad

# --------------------------------------------------------------------------------------------
# BoundedLoad over some routers
# --------------------------------------------------------------------------------------------

BL_KEYS = [f"session-{i}" for i in range(60)]


def loads(bl: Any) -> dict[str, int]:
    """The live loads (``loads`` as a property or a method)."""
    v = bl.loads
    return dict(v() if callable(v) else v)


def _loaded(spec: RouterSpec) -> Any:
    bl = BoundedLoad(router(spec), c=1.25)
    for k in BL_KEYS:
        bl.acquire(k)
    return bl


@pytest.mark.parametrize("spec", BOUNDED, ids=ids(BOUNDED))
def test_bounded_copy_keeps_live_loads(spec: RouterSpec) -> None:
    bl = _loaded(spec)
    before = loads(bl)
    assert sum(before.values()) == len(BL_KEYS)
    c = bl.copy()
    assert type(c) is BoundedLoad
    assert loads(c) == before
    assert c.router == bl.router
    for k in ("more-1", "more-2", "more-3"):
        c.acquire(k)
    assert loads(bl) == before
    assert sum(loads(c).values()) == len(BL_KEYS) + 3
    bl.release(next(iter(before)))
    assert sum(loads(c).values()) == len(BL_KEYS) + 3


@pytest.mark.parametrize("spec", BOUNDED, ids=ids(BOUNDED))
def test_bounded_pickle_keeps_live_loads(spec: RouterSpec) -> None:
    bl = _loaded(spec)
    before = loads(bl)
    p = pickle.loads(pickle.dumps(bl))
    assert type(p) is BoundedLoad
    assert loads(p) == before
    assert p.router == bl.router and p.c == bl.c
    for k in ("more-1", "more-2"):
        p.acquire(k)
    assert sum(loads(p).values()) == len(BL_KEYS) + 2
    assert loads(bl) == before


@pytest.mark.parametrize("spec", BOUNDED, ids=ids(BOUNDED))
def test_bounded_copy_and_pickle_place_the_next_keys_alike(spec: RouterSpec) -> None:
    a, b = _loaded(spec), _loaded(spec)
    c = pickle.loads(pickle.dumps(_loaded(spec)))
    d = _loaded(spec).copy()
    nxt = [f"next-{i}" for i in range(20)]
    expected = [a.acquire(k) for k in nxt]
    assert [b.acquire(k) for k in nxt] == expected  # a fresh build: the reference
    assert [c.acquire(k) for k in nxt] == expected
    assert [d.acquire(k) for k in nxt] == expected


@pytest.mark.parametrize("spec", BOUNDED, ids=ids(BOUNDED))
def test_bounded_assign_many_nulls(spec: RouterSpec) -> None:
    bl = BoundedLoad(router(spec), c=1.25)
    keys = list(STR_N)
    with pytest.raises((ValueError, TypeError)):
        bl.assign_many(keys)
    with pytest.raises((ValueError, TypeError)):
        bl.assign_many(keys, nulls="raise")
    with pytest.raises((ValueError, TypeError)):
        bl.assign_many(pa.array(keys))
    got = bl.assign_many(keys, nulls="none")
    assert got.dtype == object and got.shape == (len(keys),)
    for k, n in zip(keys, got.tolist(), strict=True):
        assert (n is None) if k is None else (n in bl.router.nodes)
    assert bl.assign_many(pa.array(keys), nulls="none").tolist() == got.tolist()
    idx = bl.assign_indices(keys, nulls="none")
    assert idx.dtype == np.int32
    assert [i == -1 for i in idx.tolist()] == [k is None for k in keys]
    clean = STR_KEYS[:80]
    assert bl.assign_many(clean, nulls="none").tolist() == bl.assign_many(clean).tolist()
    for bad in ("drop", True):
        with pytest.raises(ValueError, match="nulls"):
            bl.assign_many(clean, nulls=bad)


@pytest.mark.parametrize("spec", BOUNDED, ids=ids(BOUNDED))
def test_bounded_assign_many_errors_and_containers(spec: RouterSpec) -> None:
    bl = BoundedLoad(router(spec), c=1.25)
    for bad in BAD_KEYS.values():
        with pytest.raises(TypeError) as ei:
            bl.assign_many(["a", bad])
        assert type(bad).__name__ in str(ei.value)
    for keys in ("abc", 5):
        with pytest.raises(TypeError):
            bl.assign_many(keys)
    with pytest.raises(ValueError):
        bl.assign_many(np.array([["a", "b"], ["c", "d"]]))
    expected = bl.assign_many(list(STR_KEYS)).tolist()
    for c in (np.array(STR_KEYS), pa.array(STR_KEYS), pd.Series(STR_KEYS, dtype=object),
              pl.Series("k", STR_KEYS), tuple(STR_KEYS)):
        assert bl.assign_many(c).tolist() == expected
        idx = bl.assign_indices(c)
        assert idx.dtype == np.int32 and names_of(bl.router, idx) == expected
    assert repr(bl).startswith("BoundedLoad(")
