"""Spark: route a DataFrame column with any router, and partition a DataFrame by node.

    from consistent_hash import HashRing
    from consistent_hash.spark import partition, route

    ring = HashRing([f"shard-{i}" for i in range(16)])
    routed = route(df, "user_id", ring)                   # df + a string column "node"
    both = route(df, "user_id", ring, output="both")      # + "node" and "node_index" (int)
    by_shard = partition(df, "user_id", ring)             # Spark partition i = ring.nodes[i]

How the router travels: ``route`` pickles the router once, when it is called, and the bytes
are captured in the closure of the ``mapInArrow`` function, so the DataFrame keeps the router
as it was then (later changes to ``router`` never reach it). Spark serializes that function
once per query and sends it with every task; a router pickles as its parameters, a few KB,
and PySpark turns a function of more than 1 MB into a broadcast by itself. Each Python worker
process rebuilds the router once, on its first task, and keeps it for the tasks after that
(Spark reuses its Python workers). An explicit broadcast variable would save nothing at this
size, and it would have to be destroyed by someone and does not exist under Spark Connect.

Each Arrow batch goes straight into the compiled batch path (``router.get_indices`` reads the
Arrow string, binary and integer buffers without making Python objects). Only if the
DataFrame has no ``mapInArrow`` does it fall back to ``mapInPandas``. Every column of the
frame passes through the Python worker as Arrow, and comes back unchanged.

Key columns: string, binary and integer (tinyint, smallint, int, bigint) columns. An int key is
routed as the router routes Python ints, so 7 gives the same node whatever the column's width.
Nulls: ``nulls="raise"`` (the default) fails the Spark job on the first batch with a missing
key, with the ValueError of the batch call; ``nulls="none"`` gives a missing key a null node
and the index -1, as ``get_many`` / ``get_indices`` do.

Threads: Spark already runs one task per core (``local[2]``: two at a time), so each task
routes its batches with ``threads=1`` by default, and the cores are never oversubscribed.
Pass ``threads=n`` when each task has n cores to itself (for example with
``spark.task.cpus=n``).

pyspark, pyarrow and pandas are optional dependencies (``pip install
'consistent-hash-ring[spark]'``), imported when ``route`` or ``partition`` is first called
(an ImportError naming the extra without them). The package must be installed on the workers
as well.
"""

from __future__ import annotations

import pickle
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import numpy as np

from consistent_hash._router import Router
from consistent_hash._threads import check_threads
from consistent_hash._validate import check_nulls

__all__ = ["partition", "route"]

_EXTRA = "pip install 'consistent-hash-ring[spark]'"
_OUTPUTS = ("node", "index", "both")
_INDEX_COLUMN = "__consistent_hash_node_index"


def _imports() -> Any:
    """pyspark.sql (and pyarrow, which every worker needs), or an ImportError naming the
    extra."""
    try:
        import pandas  # noqa: F401  (pyspark's Arrow functions need it)
        import pyarrow  # noqa: F401
        import pyspark.sql
    except ImportError as e:
        missing = (e.name or "a module").split(".")[0]
        raise ImportError(f"consistent_hash.spark needs pyspark, pyarrow and pandas ({missing} "
                          f"is missing): {_EXTRA}") from None
    return pyspark.sql


# -- the worker side ------------------------------------------------------------------------------

# Routers rebuilt in this (worker) process, by their pickled bytes: each is unpickled once
# however many tasks use it.  A few entries: a worker serves few queries at a time.
_CACHE: OrderedDict[bytes, tuple[Any, Any]] = OrderedDict()
_CACHE_SIZE = 8


def _load(blob: bytes) -> tuple[Any, Any]:
    """The router pickled in ``blob`` and its node names as an Arrow string array."""
    hit = _CACHE.get(blob)
    if hit is None:
        import pyarrow as pa

        router = pickle.loads(blob)
        hit = (router, pa.array(list(router.nodes), type=pa.string()))
        _CACHE[blob] = hit
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(blob)
    return hit


class _Route:
    """The function each task runs over its batches (a class, so it pickles as its fields)."""

    def __init__(self, blob: bytes, column: str, position: int, output: str, nulls: str,
                 threads: int, partitioning: bool, names: list[str]) -> None:
        self.blob = blob
        self.names = names  # the output columns
        self.column = column
        self.position = position
        self.output = output
        self.nulls = nulls
        self.threads = threads
        self.partitioning = partitioning  # partition(): also the index column, no -1 allowed

    def indices(self, router: Any, keys: Any) -> Any:
        try:
            idx = router.get_indices(keys, nulls=self.nulls, threads=self.threads)
        except (TypeError, ValueError) as e:  # the batch call's message, naming the column
            kind = TypeError if isinstance(e, TypeError) else ValueError
            raise kind(f"consistent_hash.spark: column {self.column!r}: {e}") from None
        if self.partitioning and idx.size and int(idx.min()) < 0:
            raise ValueError(f"consistent_hash.spark.partition: column {self.column!r}: a key "
                             "routes to no node (an unassigned slot), so it has no partition")
        return idx

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        router, node_names = _load(self.blob)
        for batch in batches:
            idx = self.indices(router, batch.column(self.position))
            columns = list(batch.columns)
            if self.output in ("node", "both"):
                missing = idx < 0
                where = pa.array(idx, mask=missing if missing.any() else None)
                columns.append(pc.take(node_names, where))  # index -1: a null name
            if self.output in ("index", "both") or self.partitioning:
                columns.append(pa.array(idx, type=pa.int32()))
            yield pa.RecordBatch.from_arrays(columns, names=self.names)

    def pandas(self, frames: Iterator[Any]) -> Iterator[Any]:
        """The same over pandas DataFrames (the mapInPandas fallback)."""
        import pandas as pd

        router, _ = _load(self.blob)
        nodes = np.array(list(router.nodes) + [None], dtype=object)  # index -1: None
        for frame in frames:
            keys = frame.iloc[:, self.position]
            if keys.dtype.kind == "f":  # an integer column with nulls arrives as float64
                keys = keys.astype("Int64")
            idx = self.indices(router, keys)
            columns = [frame.iloc[:, i] for i in range(frame.shape[1])]
            if self.output in ("node", "both"):
                columns.append(pd.Series(nodes[idx], index=frame.index))
            if self.output in ("index", "both") or self.partitioning:
                columns.append(pd.Series(idx, index=frame.index))
            out = pd.concat(columns, axis=1, ignore_index=True)
            out.columns = self.names
            yield out


# -- the driver side ------------------------------------------------------------------------------

def _check_frame(df: Any) -> None:
    sql = _imports()
    module = type(df).__module__
    if not (isinstance(df, sql.DataFrame) or module.startswith("pyspark.sql.connect")):
        raise TypeError(f"df must be a pyspark DataFrame, got {type(df).__name__!r}")


def _check_router(router: Any) -> bytes:
    """The router's snapshot: its pickle (its state, nodes marked down included)."""
    if not isinstance(router, Router):
        name = type(router).__name__
        if name == "BoundedLoad":
            raise TypeError("router must be a router of this library, not a BoundedLoad: it "
                            "places keys against loads the whole batch shares, which Spark's "
                            "partitions, routed apart, cannot share; route with a plain "
                            "router, or assign_many in one process")
        raise TypeError("router must be a router of this library (HashRing, KetamaRing, ...), "
                        f"got {name!r}")
    if len(router.nodes) == 0:
        raise ValueError("router has no nodes")
    from pyspark import cloudpickle  # a router with a hash callable pickles its callable too

    blob: bytes = cloudpickle.dumps(  # type: ignore[no-untyped-call, unused-ignore]
        router, protocol=pickle.HIGHEST_PROTOCOL)
    return blob


def _key_arrow_type(field: Any) -> Any:
    """The Arrow type of a key column's batches, or TypeError naming the column."""
    import pyarrow as pa
    from pyspark.sql import types as T

    t = field.dataType
    if isinstance(t, T.StringType):
        return pa.string()
    if isinstance(t, T.BinaryType):
        return pa.binary()
    ints = {T.ByteType: pa.int8(), T.ShortType: pa.int16(), T.IntegerType: pa.int32(),
            T.LongType: pa.int64()}
    for cls, at in ints.items():
        if isinstance(t, cls):
            return at
    raise TypeError(f"column {field.name!r} is {t.simpleString()}: the key column must be "
                    "string, binary or an integer type (tinyint, smallint, int, bigint); "
                    "cast it first (e.g. df.withColumn(c, df[c].cast('string')))")


def _names(output: str, name: Any, partitioning: bool) -> tuple[str | None, str | None]:
    """The (node column, index column) names that ``output`` and ``name`` ask for."""
    if not isinstance(output, str) or output not in _OUTPUTS:
        raise ValueError(f'output must be "node", "index" or "both", got {output!r}')
    if name is None:
        name = {"node": "node", "index": "node_index", "both": ("node", "node_index")}[output]
    elif output == "both" and isinstance(name, str):
        name = (name, f"{name}_index")
    if output == "both":
        if not (isinstance(name, tuple) and len(name) == 2):
            raise TypeError('with output="both", name must be a str (the node column; the '
                            'index column is its name + "_index") or a pair of str, got '
                            f"{name!r}")
        node, index = name
    elif output == "node":
        node, index = name, None
    else:
        node, index = None, name
    for n in (node, index):
        if n is not None and (not isinstance(n, str) or not n):
            raise TypeError(f"name must be a non-empty str, got {n!r}")
    if node is not None and node == index:
        raise ValueError(f"the node and index columns must have different names, got {node!r}")
    return node, index


def _plan(df: Any, column: Any, router: Any, output: str, name: Any, nulls: str,
          threads: int | None, partitioning: bool) -> tuple[Any, _Route, Any]:
    """Validate everything on the driver, before Spark runs anything: (the routing function,
    the output schema, the node / index column names)."""
    _check_frame(df)  # first: it imports pyspark, or names the extra
    from pyspark.sql import types as T

    if not isinstance(column, str):
        raise TypeError(f"column must be a column name (str), got {type(column).__name__!r}")
    node_col, index_col = _names(output, name, partitioning)
    check_nulls(nulls)
    n = check_threads(threads)
    t = 1 if n is None else n
    fields = list(df.schema.fields)
    columns = [f.name for f in fields]
    where = [i for i, c in enumerate(columns) if c == column]
    if not where:
        raise ValueError(f"df has no column {column!r} (columns: {columns})")
    if len(where) > 1:
        raise ValueError(f"df has {len(where)} columns named {column!r}: rename them first")
    position = where[0]
    for new in (node_col, index_col):
        if new is not None and new in columns:
            raise ValueError(f"df already has a column {new!r}: pass name= to choose "
                             "another name for the output")
    probe = _key_arrow_type(fields[position])
    blob = _check_router(router)
    _probe(router, column, probe, nulls)
    out = list(fields)
    if node_col is not None:
        out.append(T.StructField(node_col, T.StringType(), True))
    if index_col is not None or partitioning:
        out.append(T.StructField(index_col or _INDEX_COLUMN, T.IntegerType(), False))
    fn = _Route(blob, column, position, output, nulls, t, partitioning, [f.name for f in out])
    return T.StructType(out), fn, (node_col, index_col)


def _probe(router: Any, column: str, arrow_type: Any, nulls: str) -> None:
    """Route one key of the column's type here, so that a router refusing that key type
    (TokenRing and int keys) says so now rather than in a task."""
    import pyarrow as pa

    sample = {pa.string(): "", pa.binary(): b""}.get(arrow_type, 0)
    try:
        router.get_indices(pa.array([sample], type=arrow_type), nulls=nulls, threads=1)
    except TypeError as e:
        raise TypeError(f"column {column!r} ({arrow_type} keys): {e}") from None


def _safe_names(df: Any) -> Any:
    """``df`` with its columns renamed ``_c0``, ``_c1``, ... by position.  mapInArrow and
    mapInPandas resolve every column of their frame by its name, which fails for a name
    with a dot (read as a struct field) or a backtick; ``_Route`` reads the key by position,
    and the output schema gives every column its name back."""
    return df.toDF(*(f"_c{i}" for i in range(len(df.columns))))


def _apply(df: Any, fn: _Route, schema: Any) -> Any:
    df = _safe_names(df)
    if hasattr(df, "mapInArrow"):
        return df.mapInArrow(fn, schema)
    return df.mapInPandas(fn.pandas, schema)  # pragma: no cover - pyspark < 3.3


def route(df: Any, column: str, router: Any, *, output: str = "node", name: Any = None,
          nulls: str = "raise", threads: int | None = None) -> Any:
    """``df`` with the node of each row's key (in ``column``) added as new columns.

    ``output="node"``: a string column of node names (``name``, default ``"node"``);
    ``"index"``: an int column of indices into ``router.nodes`` as it is now (``name``,
    default ``"node_index"``); ``"both"``: both (``name`` is the node column, the index
    column is its name + ``"_index"``, or a pair of names; default ``"node"``,
    ``"node_index"``).  Rows keep their partitions and their order.

    ``nulls="none"``: a missing key gets a null node and the index -1 instead of failing the
    job.  ``threads``: per Spark task (None: 1, Spark's own parallelism gives each task its
    core).  Everything is checked here, before Spark runs anything: ``df``, ``column`` (it
    must exist, once, and be string, binary or integer), ``router`` (one of this library's,
    with nodes), ``output``, ``name``, ``nulls``, ``threads``.
    """
    schema, fn, _ = _plan(df, column, router, output, name, nulls, threads, False)
    return _apply(df, fn, schema)


# Keys k(i) whose Spark hash sends a row to partition i of n: pmod(hash(k(i)), n) == i.
_TARGETS: dict[int, list[int]] = {}


def _targets(spark: Any, n: int) -> list[int]:
    """For each partition i of n, a bigint whose hash partitioning (``repartition(n, col)``:
    ``pmod(hash(col), n)``) is i, found by Spark itself on a small range."""
    if n not in _TARGETS:
        from pyspark.sql import functions as F

        size = 64 * n + 64
        while True:
            rows = (spark.range(0, size, numPartitions=1)
                    .select(F.col("id"), F.expr(f"pmod(hash(id), {n})").alias("p"))
                    .groupBy("p").agg(F.min("id").alias("id")).collect())
            found = {int(r["p"]): int(r["id"]) for r in rows}
            if len(found) == n:
                break
            size *= 4  # pragma: no cover - a miss has probability about exp(-64) per partition
        _TARGETS[n] = [found[i] for i in range(n)]
    return _TARGETS[n]


def partition(df: Any, column: str, router: Any, *, output: str = "node", name: Any = None,
              threads: int | None = None) -> Any:
    """``df`` routed as ``route`` does (same ``output`` and ``name``), repartitioned into
    ``len(router.nodes)`` partitions so that partition i holds exactly the rows whose key
    routes to ``router.nodes[i]`` (an empty partition for a node that gets no key).

    The rows are routed before the shuffle, then hash-partitioned by Spark on a bigint chosen
    per node so that its hash lands in that node's partition: the rows never leave the JVM for
    the shuffle.  A missing key fails the job (it has no partition); a later shuffle of the
    result (a join, a groupBy) may of course move rows again.
    """
    schema, fn, (node_col, index_col) = _plan(df, column, router, output, name, "raise",
                                              threads, True)
    from pyspark.sql import functions as F

    n = len(router.nodes)
    routed = _apply(df, fn, schema)
    index = index_col or _INDEX_COLUMN
    keys = F.array(*[F.lit(k).cast("bigint") for k in _targets(df.sparkSession, n)])
    column_of_index = F.col("`" + index.replace("`", "``") + "`")  # the name as it is
    out = routed.repartition(n, F.element_at(keys, column_of_index + 1))
    return out if index_col is not None else out.drop(_INDEX_COLUMN)
