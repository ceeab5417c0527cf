"""consistent_hash.integrations.dask on a real distributed cluster (workers on 127.0.0.1)."""

from __future__ import annotations

import hashlib
import pickle

import numpy as np
import pytest
from routers import NODES, ROUTERS

from consistent_hash import HashRing

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

from consistent_hash.integrations.dask import assign, assign_indices, partition_by_node  # noqa: E402

PARTS = 20
PER_PART = 500_000  # 10,000,000 keys in all


def make_keys(i: int, n: int = PER_PART) -> pd.Series:
    """Keys user:<i*n> .. user:<(i+1)*n - 1> as an Arrow-backed string Series (built in C)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    nums = pa.array(np.arange(i * n, (i + 1) * n)).cast(pa.string())
    keys = pc.binary_join_element_wise(pa.scalar("user:"), nums, "")
    return pd.Series(pd.arrays.ArrowStringArray(keys), name="key",
                     index=pd.RangeIndex(i * n, (i + 1) * n))


def digest(s: pd.Series) -> str:
    return hashlib.sha256(np.ascontiguousarray(s.to_numpy(), dtype="<i4").tobytes()).hexdigest()


@pytest.fixture(scope="module")
def client():  # type: ignore[no-untyped-def]
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_router_pickles_small() -> None:
    # the state, not the 10,240 positions, crosses to the workers (how fast it loads: bench/)
    ring = HashRing([f"shard-{i}" for i in range(64)])
    blob = pickle.dumps(ring)
    assert len(blob) < 4096 < ring.positions.nbytes
    again = pickle.loads(blob)
    assert again == ring and (again.positions == ring.positions).all()


def test_ten_million_keys_on_a_cluster_equal_the_local_assignment(client) -> None:  # type: ignore[no-untyped-def]
    ring = HashRing([f"shard-{i}" for i in range(16)])
    keys = dd.from_map(make_keys, range(PARTS))
    got = assign_indices(keys, ring).map_partitions(
        lambda s: pd.Series([digest(s)]), meta=pd.Series([], dtype=object)).compute()
    expected = [digest(pd.Series(ring.get_indices(make_keys(i)))) for i in range(PARTS)]
    assert got.tolist() == expected
    # The router went into the graph once, not once per partition.
    graph = dict(assign_indices(keys, ring).__dask_graph__())
    rings = [k for k, v in graph.items()
             if isinstance(v, HashRing) or isinstance(getattr(v, "value", None), HashRing)]
    assert len(rings) == 1


def test_assign_names_and_nulls(client) -> None:  # type: ignore[no-untyped-def]
    ring = HashRing(["a", "b", "c"])
    s = pd.Series(["x", None, "y", "z"] * 1000, name="key")
    ks = dd.from_pandas(s, npartitions=3)
    got = assign(ks, ring, nulls="none").compute()
    assert isinstance(got.dtype, pd.CategoricalDtype)
    exp = ring.get_many(s, nulls="none")
    assert [None if isinstance(x, float) else x for x in got.tolist()] == exp.tolist()
    with pytest.raises((TypeError, ValueError)):
        assign(ks, ring).compute()


def test_partition_by_node(client) -> None:  # type: ignore[no-untyped-def]
    ring = HashRing([f"n{i}" for i in range(5)])
    pdf = pd.DataFrame({"key": [f"k{i}" for i in range(20_000)], "v": np.arange(20_000)})
    out = partition_by_node(dd.from_pandas(pdf, npartitions=4), "key", ring)
    assert out.npartitions == 5
    expected = ring.get_many(pdf["key"])
    total = 0
    for i in range(5):
        part = out.get_partition(i).compute()
        assert set(part["node"].astype(object)) <= {ring.nodes[i]}
        assert sorted(part["v"]) == sorted(pdf["v"][expected == ring.nodes[i]])
        total += len(part)
    assert total == len(pdf)


def test_invalid_inputs() -> None:
    ring = HashRing(["a"])
    with pytest.raises(TypeError):
        assign(pd.Series(["x"]), ring)
    with pytest.raises(TypeError):
        assign(dd.from_pandas(pd.Series(["x"]), npartitions=1), object())
    with pytest.raises(ValueError):
        assign(dd.from_pandas(pd.Series(["x"]), npartitions=1), HashRing())
    with pytest.raises(ValueError):
        partition_by_node(dd.from_pandas(pd.DataFrame({"k": ["x"]}), npartitions=1), "nope",
                          ring)


# -- every router, Series and Index, and the graph's snapshot of the router ----------------------

@pytest.mark.parametrize("router", [spec.make(NODES) for spec in ROUTERS],  # tests/routers.py
                         ids=[spec.name for spec in ROUTERS])
def test_every_router_with_a_series_and_an_index(router) -> None:  # type: ignore[no-untyped-def]
    pdf = pd.DataFrame({"user": [f"user:{i}" for i in range(3000)], "v": np.arange(3000)})
    ddf = dd.from_pandas(pdf, npartitions=3)
    expected = router.get_many(pdf["user"])
    with dask_sync():
        got = assign(ddf["user"], router).compute()
        assert got.astype(object).tolist() == expected.tolist()
        assert (got.index == pdf.index).all()
        idx = ddf.set_index("user").index
        want = dict(zip(pdf["user"], expected.tolist(), strict=True))
        by_index = assign(idx, router).compute()  # aligned on the index itself
        assert dict(zip(by_index.index, by_index.astype(object), strict=True)) == want
        ind = assign_indices(idx, router).compute()
        assert {k: router.nodes[i] for k, i in zip(ind.index, ind, strict=True)} == want


def test_the_graph_keeps_the_router_as_it_was_when_built() -> None:
    ring = HashRing(["a", "b", "c"])
    pdf = pd.DataFrame({"key": [f"k{i}" for i in range(6000)], "v": np.arange(6000)})
    ddf = dd.from_pandas(pdf, npartitions=3)
    expected = ring.get_many(pdf["key"])
    names = assign(ddf["key"], ring)
    parts = partition_by_node(ddf, "key", ring)
    ring.add("d")  # after the graphs were built: they must not see it
    assert len(set(ring.get_many(pdf["key"])) - {"a", "b", "c"}) == 1
    with dask_sync():
        got = names.compute()
        assert list(got.dtype.categories) == ["a", "b", "c"]
        assert got.astype(object).tolist() == expected.tolist()
        assert parts.npartitions == 3
        for i, node in enumerate(["a", "b", "c"]):
            part = parts.get_partition(i).compute()
            assert set(part["node"].astype(object)) == {node}
            assert sorted(part["v"]) == sorted(pdf["v"][expected == node])


def test_bad_nulls_value_is_refused_when_the_graph_is_built() -> None:
    ks = dd.from_pandas(pd.Series(["x"]), npartitions=1)
    with pytest.raises(ValueError, match="nulls"):
        assign(ks, HashRing(["a"]), nulls="drop")


def dask_sync():  # type: ignore[no-untyped-def]
    import dask

    # In this process, whatever cluster another test started: tasks-based shuffles.
    return dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks"})
