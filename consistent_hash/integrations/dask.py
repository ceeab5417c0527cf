"""Dask: route data beyond one machine through the same batch path.

The router goes into the task graph once (as one ``dask.delayed`` object), so each worker
receives and unpickles it once, however many partitions it processes; routers pickle as their
parameters, a few hundred bytes, and rebuild in milliseconds. Each partition is routed by the
compiled batch path, and the result equals the single-process assignment key for key.

    import dask.dataframe as dd
    from consistent_hash import HashRing
    from consistent_hash.integrations.dask import assign, partition_by_node

    ring = HashRing([f"shard-{i}" for i in range(16)])
    df["shard"] = assign(df["user_id"], ring)             # a categorical column of node names
    by_shard = partition_by_node(df, "user_id", ring)      # partition i holds node i's rows

Threads: dask already runs one task per core (a worker runs ``nthreads`` tasks at once over
its cores), so each task routes its partition with ``threads=1`` by default: the cores are
shared out by partition, never oversubscribed.  Pass ``threads=n`` to give each task n threads
instead (e.g. a worker with one task slot and several cores, or few large partitions).

dask is an optional dependency, imported only when this module is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from consistent_hash._router import Router
from consistent_hash._threads import check_threads
from consistent_hash._validate import check_nulls

__all__ = ["assign", "assign_indices", "partition_by_node"]


def _dd() -> Any:
    try:
        import dask.dataframe as dd
    except ImportError:
        raise ImportError("consistent_hash.integrations.dask needs dask: "
                          "pip install 'dask[dataframe]'"
                          ) from None
    return dd


def _snapshot(keys: Any, router: Any, nulls: str) -> Any:
    """The router as it is now, as one graph node: later changes to ``router`` never reach
    a graph already built (its declared categories and divisions stay true)."""
    dd = _dd()
    if not isinstance(keys, (dd.Series, dd.Index)):
        raise TypeError(f"keys must be a dask Series or Index, got {type(keys).__name__!r}")
    if not isinstance(router, Router):
        raise TypeError("router must be a router of this library (HashRing, KetamaRing, ...), "
                        f"got {type(router).__name__!r}")
    check_nulls(nulls)
    if len(router.nodes) == 0:
        raise ValueError("router has no nodes")
    return router.copy()


def _delayed(router: Any) -> Any:
    from dask.delayed import delayed

    return delayed(router, pure=True, traverse=False)


def _aligned(values: Any, part: Any) -> Any:
    """A pandas Series of values aligned with a partition of a Series (its index) or of an
    Index (the index itself)."""
    import pandas as pd

    index = part if isinstance(part, pd.Index) else part.index
    return pd.Series(values, index=index, name=part.name)


def _indices_partition(part: Any, router: Any, nulls: str, threads: int) -> Any:
    return _aligned(router.get_indices(part, nulls=nulls, threads=threads), part)


def _names_partition(part: Any, router: Any, nulls: str, threads: int) -> Any:
    return _aligned(router.get_many(part, nulls=nulls, categorical=True, threads=threads),
                    part)


def _task_threads(threads: int | None) -> int:
    """The threads each task routes with: 1 unless given (see the module's docstring)."""
    n = check_threads(threads)
    return 1 if n is None else n


def assign_indices(keys: Any, router: Any, *, nulls: str = "raise",
                   threads: int | None = None) -> Any:
    """A dask Series of int32 node indices (into ``router.nodes`` as it is now), aligned with
    ``keys``; with ``nulls="none"`` a missing key gets -1 instead of raising.  ``threads``:
    per task (None: 1, dask's own parallelism gives each task its core)."""
    t = _task_threads(threads)
    snap = _snapshot(keys, router, nulls)
    meta = _meta_series(keys, np.dtype(np.int32))
    return keys.map_partitions(_indices_partition, _delayed(snap), nulls, t, meta=meta)


def assign(keys: Any, router: Any, *, nulls: str = "raise", threads: int | None = None) -> Any:
    """A dask Series of node names (pandas categorical over ``router.nodes`` as it is now)
    aligned with ``keys``; with ``nulls="none"`` a missing key gets NaN instead of raising.
    ``threads`` as in ``assign_indices``."""
    import pandas as pd

    t = _task_threads(threads)
    snap = _snapshot(keys, router, nulls)
    dtype = pd.CategoricalDtype(pd.Index(snap.nodes, dtype=object))
    meta = _meta_series(keys, dtype)
    return keys.map_partitions(_names_partition, _delayed(snap), nulls, t, meta=meta)


def partition_by_node(df: Any, column: str, router: Any, *, node_column: str = "node",
                      threads: int | None = None) -> Any:
    """Repartition a dask DataFrame so that partition i holds exactly the rows whose key (in
    ``column``) routes to ``router.nodes[i]``; adds a categorical ``node_column`` and indexes
    the result by node index.  ``threads`` as in ``assign_indices``."""
    check_threads(threads)
    dd = _dd()
    if not isinstance(df, dd.DataFrame):
        raise TypeError(f"df must be a dask DataFrame, got {type(df).__name__!r}")
    if column not in df.columns:
        raise ValueError(f"df has no column {column!r}")
    snap = _snapshot(df[column], router, "raise")  # one layout for the names and the split
    n = len(snap.nodes)
    out = df.assign(**{node_column: assign(df[column], snap, threads=threads),
                       "_node_index": assign_indices(df[column], snap, threads=threads)})
    # Divisions 0, 1, ..., n: partition i holds index values in [i, i + 1), that is node i.
    return out.set_index("_node_index", divisions=list(range(n + 1)), sorted=False)


def _meta_series(keys: Any, dtype: Any) -> Any:
    import pandas as pd

    dd = _dd()
    index = keys._meta if isinstance(keys, dd.Index) else keys._meta.index
    return pd.Series([], dtype=dtype, index=index, name=getattr(keys, "name", None))
