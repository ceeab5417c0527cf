"""Conformance: routers with no nodes, and empty batches."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conformance_cases import (
    EMPTY_OK,
    ids,
    pa,
    pd,
    pl,
    router,
)
from routers import NODES, ROUTERS, RouterSpec

from consistent_hash import EmptyRingError

# --------------------------------------------------------------------------------------------
# empty routers
# --------------------------------------------------------------------------------------------


def _empty_states(specs: list[RouterSpec]) -> list[Any]:
    out = []
    for s in specs:
        out.append(pytest.param(s, "built", id=f"{s.name}-built"))
        if s.mutable:
            out.append(pytest.param(s, "emptied", id=f"{s.name}-emptied"))
    return out


def empty_router(spec: RouterSpec, how: str) -> Any:
    if how == "built":
        return router(spec, [])
    r = router(spec, NODES[:2])
    for n in reversed(r.nodes):  # the last first: JumpHash removes only its last bucket
        spec.remove(r, n)
    assert len(r) == 0
    return r


EMPTY_BATCHES: dict[str, Callable[[], Any]] = {
    "list": lambda: [],
    "tuple": lambda: (),
    "np_U": lambda: np.array([], dtype="U1"),
    "np_S": lambda: np.array([], dtype="S1"),
    "np_O": lambda: np.array([], dtype=object),
    "np_int64": lambda: np.array([], dtype=np.int64),
    "pa_string": lambda: pa.array([], pa.string()),
    "pa_chunked_no_chunks": lambda: pa.chunked_array([], type=pa.string()),
    "pd_series": lambda: pd.Series([], dtype=object),
    "pl_string": lambda: pl.Series("k", [], dtype=pl.String),
}


def _empty_batch_params() -> list[Any]:
    out = []
    for p in _empty_states(EMPTY_OK):
        s, how = p.values
        for b in EMPTY_BATCHES:
            if b == "np_int64" and s.int_keys == "refused":
                continue
            out.append(pytest.param(s, how, b, id=f"{s.name}-{how}-{b}"))
    return out


@pytest.mark.parametrize(("spec", "how"), _empty_states(EMPTY_OK))
def test_empty_router_get_raises(spec: RouterSpec, how: str) -> None:
    """Every router with no nodes, SlotMap's too (it raised a plain LookupError)."""
    r = empty_router(spec, how)
    assert len(r) == 0 and r.nodes == () and list(r) == []
    with pytest.raises(EmptyRingError) as ei:
        r.get("k")
    assert isinstance(ei.value, LookupError)
    assert re.search(r"empty|no nodes", str(ei.value)), str(ei.value)


@pytest.mark.parametrize(("spec", "how"), _empty_states(EMPTY_OK))
def test_empty_router_non_empty_batch(spec: RouterSpec, how: str) -> None:
    r = empty_router(spec, how)
    one = np.array([12345], dtype=np.uint64)
    if spec.empty_batch == "unassigned":
        assert r.get_indices(["k", "j"]).tolist() == [-1, -1]
        assert r.get_many(["k", "j"]).tolist() == [None, None]
        assert r.lookup(one).tolist() == [-1]
        return
    for call in (lambda: r.get_many(["k"]), lambda: r.get_indices(["k"]),
                 lambda: r.get_indices(np.array(["k"])), lambda: r.get_many(np.array(["k"])),
                 lambda: r.get_many(pa.array(["k"])),
                 lambda: r.lookup(one)):
        with pytest.raises(EmptyRingError, match="empty|no nodes"):
            call()
    if spec.replicas:
        for call in (lambda: r.replicas("k", 2), lambda: r.replicas_many(["k"], 2),
                     lambda: r.replica_indices(["k"], 2)):
            with pytest.raises(EmptyRingError, match="empty|no nodes"):
                call()


@pytest.mark.parametrize(("spec", "how", "batch"), _empty_batch_params())
def test_empty_router_empty_batch(spec: RouterSpec, how: str, batch: str) -> None:
    r = empty_router(spec, how)
    keys = EMPTY_BATCHES[batch]()
    many = r.get_many(keys)
    assert isinstance(many, np.ndarray) and many.dtype == object and many.shape == (0,)
    idx = r.get_indices(keys)
    assert isinstance(idx, np.ndarray) and idx.dtype == np.int32 and idx.shape == (0,)
    out = np.empty(0, dtype=np.int32)
    assert r.get_indices(keys, out=out) is out
    h = r.hash_many(keys)
    assert isinstance(h, np.ndarray) and h.dtype == np.uint64 and h.shape == (0,)
    got = r.lookup(np.empty(0, dtype=np.uint64))
    assert got.dtype == np.int32 and got.shape == (0,)
    cat = r.get_many(keys, categorical=True)
    assert isinstance(cat, pd.Categorical) and len(cat) == 0
    if spec.replicas:  # as many columns as nodes: none
        assert r.replica_indices(keys, 2).shape == (0, 0)
        assert r.replicas_many(keys, 2).shape == (0, 0)


@pytest.mark.parametrize("spec", ROUTERS, ids=ids(ROUTERS))
@pytest.mark.parametrize("batch", list(EMPTY_BATCHES))
def test_empty_batch_on_a_router_with_nodes(spec: RouterSpec, batch: str) -> None:
    if batch == "np_int64" and spec.int_keys == "refused":
        batch = "np_U"
    r = router(spec)
    keys = EMPTY_BATCHES[batch]()
    assert r.get_many(keys).shape == (0,) and r.get_many(keys).dtype == object
    assert r.get_indices(keys).shape == (0,) and r.get_indices(keys).dtype == np.int32
    assert r.hash_many(keys).shape == (0,) and r.hash_many(keys).dtype == np.uint64
    got = r.lookup(np.empty(0, dtype=np.uint64))
    assert got.dtype == np.int32 and got.shape == (0,)
    if spec.replicas:
        assert r.replica_indices(keys, 2).shape == (0, 2)
        assert r.replicas_many(keys, 2).shape == (0, 2)
        assert r.replica_indices(keys, len(r) + 4).shape == (0, len(r))
