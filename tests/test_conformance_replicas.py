"""Conformance: replicas, replicas_many and replica_indices where a router orders distinct nodes,
and the error that says which routers do where it does not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conformance_cases import (
    BYTES_KEYS,
    INT_KEYS,
    NO_REPLICAS,
    REPLICA_ROUTER_NAMES,
    REPLICAS,
    STR_KEYS,
    ids,
    router,
)
from helpers import names_word
from routers import NODES, RouterSpec

# --------------------------------------------------------------------------------------------
# replicas
# --------------------------------------------------------------------------------------------


def _replica_ns() -> list[int]:
    return [1, 2, 3, len(NODES), len(NODES) + 3]


def _replica_keys(spec: RouterSpec) -> list[Any]:
    keys: list[Any] = STR_KEYS[:150] + BYTES_KEYS[-5:]
    if spec.int_keys != "refused":
        keys += INT_KEYS[::7]
    return keys


@pytest.mark.parametrize("spec", REPLICAS, ids=ids(REPLICAS))
def test_replicas(spec: RouterSpec) -> None:
    r = router(spec)
    for n in _replica_ns():
        for k in _replica_keys(spec):
            rep = r.replicas(k, n)
            assert isinstance(rep, list)
            assert len(rep) == min(n, len(r))
            assert len(set(rep)) == len(rep)
            assert all(isinstance(x, str) and x in r for x in rep)
            assert rep[0] == r.get(k)
        if n > 1:  # a prefix of the longer list
            k = STR_KEYS[10]
            assert r.replicas(k, n - 1) == r.replicas(k, n)[: min(n - 1, len(r))]


@pytest.mark.parametrize("spec", REPLICAS, ids=ids(REPLICAS))
def test_replicas_many_and_replica_indices(spec: RouterSpec) -> None:
    r = router(spec)
    keys = _replica_keys(spec)
    first = r.get_indices(keys).tolist()
    for n in _replica_ns():
        width = min(n, len(r))
        many = r.replicas_many(keys, n)
        idx = r.replica_indices(keys, n)
        assert isinstance(many, np.ndarray) and many.dtype == object
        assert isinstance(idx, np.ndarray) and idx.dtype == np.int32
        assert many.shape == (len(keys), width) and idx.shape == (len(keys), width)
        assert idx[:, 0].tolist() == first
        assert many.tolist() == [[r.nodes[i] for i in row] for row in idx.tolist()]
        assert many.tolist() == [r.replicas(k, n) for k in keys]


@pytest.mark.parametrize("spec", REPLICAS, ids=ids(REPLICAS))
def test_replicas_bad_n(spec: RouterSpec) -> None:
    r = router(spec)
    for n, exc in ((0, ValueError), (-1, ValueError), (-(2**40), ValueError),
                   (1.5, (TypeError, ValueError)), ("2", (TypeError, ValueError)),
                   (None, (TypeError, ValueError)), (True, (TypeError, ValueError))):
        for call, keys in ((r.replicas, "k"), (r.replicas_many, ["k"]),
                           (r.replica_indices, ["k"])):
            with pytest.raises(exc) as ei:
                call(keys, n)
            assert names_word(str(ei.value), "n"), str(ei.value)


NO_REPLICA_CALLS: dict[str, Callable[[Any], Any]] = {
    "replicas": lambda r: r.replicas("k", 2),
    "replicas_many": lambda r: r.replicas_many(["k"], 2),
    "replica_indices": lambda r: r.replica_indices(["k"], 2),
}


@pytest.mark.parametrize("spec", NO_REPLICAS, ids=ids(NO_REPLICAS))
@pytest.mark.parametrize("call", list(NO_REPLICA_CALLS))
def test_no_replicas_says_which_router_has_them(spec: RouterSpec, call: str) -> None:
    r = router(spec)
    with pytest.raises(TypeError) as ei:
        NO_REPLICA_CALLS[call](r)
    msg = str(ei.value)
    assert any(name in msg for name in REPLICA_ROUTER_NAMES), msg
