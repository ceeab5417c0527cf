"""Dask: route data beyond one machine through the same batch path.

The router goes into the task graph once (as one ``dask.delayed`` object), so each worker
receives and unpickles it once, however many partitions it processes; routers pickle as their
parameters, a few hundred bytes, and rebuild in milliseconds. Each partition is routed by the
compiled batch path, and the result equals the single-process assignment key for key.

    import dask.dataframe as dd
    from consistent_hash import HashRing
    from consistent_hash.dask import assign, partition_by_node

    ring = HashRing([f"shard-{i}" for i in range(16)])
    df["shard"] = assign(df["user_id"], ring)             # a categorical column of node names
    by_shard = partition_by_node(df, "user_id", ring)      # partition i holds node i's rows

dask is an optional dependency, imported only when this module is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["assign", "assign_indices", "partition_by_node"]


def _dd() -> Any:
    try:
        import dask.dataframe as dd
    except ImportError:
        raise ImportError("consistent_hash.dask needs dask: pip install 'dask[dataframe]'"
                          ) from None
    return dd


def _check(keys: Any, router: Any) -> Any:
    dd = _dd()
    if not isinstance(keys, (dd.Series, dd.Index)):
        raise TypeError(f"keys must be a dask Series or Index, got {type(keys).__name__!r}")
    if not hasattr(router, "get_indices") or not hasattr(router, "nodes"):
        raise TypeError(f"router must be a router (HashRing, ...), got {type(router).__name__!r}")
    if len(router.nodes) == 0:
        raise ValueError("router has no nodes")
    from dask.delayed import delayed

    return delayed(router, pure=True, traverse=False)


def _indices_partition(part: Any, router: Any, nulls: str) -> Any:
    import pandas as pd

    idx = router.get_indices(part, nulls=nulls)
    return pd.Series(idx, index=part.index, name=part.name)


def _names_partition(part: Any, router: Any, nulls: str) -> Any:
    import pandas as pd

    idx = router.get_indices(part, nulls=nulls)
    cat = pd.Categorical.from_codes(idx, categories=pd.Index(router.nodes, dtype=object),
                                    validate=False)
    return pd.Series(cat, index=part.index, name=part.name)


def assign_indices(keys: Any, router: Any, *, nulls: str = "raise") -> Any:
    """A dask Series of int32 node indices (into ``router.nodes``), aligned with ``keys``."""
    r = _check(keys, router)
    meta = _meta_series(keys, np.dtype(np.int32))
    return keys.map_partitions(_indices_partition, r, nulls, meta=meta)


def assign(keys: Any, router: Any, *, nulls: str = "raise") -> Any:
    """A dask Series of node names (pandas categorical over ``router.nodes``) aligned with
    ``keys``; with ``nulls="none"`` a missing key gets NaN instead of raising."""
    import pandas as pd

    r = _check(keys, router)
    dtype = pd.CategoricalDtype(pd.Index(router.nodes, dtype=object))
    meta = _meta_series(keys, dtype)
    return keys.map_partitions(_names_partition, r, nulls, meta=meta)


def partition_by_node(df: Any, column: str, router: Any, *, node_column: str = "node") -> Any:
    """Repartition a dask DataFrame so that partition i holds exactly the rows whose key (in
    ``column``) routes to ``router.nodes[i]``; adds a categorical ``node_column`` and indexes
    the result by node index."""
    dd = _dd()
    if not isinstance(df, dd.DataFrame):
        raise TypeError(f"df must be a dask DataFrame, got {type(df).__name__!r}")
    if column not in df.columns:
        raise ValueError(f"df has no column {column!r}")
    n = len(router.nodes)
    out = df.assign(**{node_column: assign(df[column], router),
                       "_node_index": assign_indices(df[column], router)})
    # Divisions 0, 1, ..., n: partition i holds index values in [i, i + 1), that is node i.
    return out.set_index("_node_index", divisions=list(range(n + 1)), sorted=False)


def _meta_series(keys: Any, dtype: Any) -> Any:
    import pandas as pd

    return pd.Series([], dtype=dtype, name=getattr(keys, "name", None))
