"""consistent_hash.integrations.spark on a real local Spark (local[2], one SparkSession for the
module).

Every result is compared with the one-process batch path (``router.get_many`` /
``get_indices`` over the same keys, built here with pyarrow), row by row and partition by
partition.  Without pyspark or a Java runtime the tests skip with the reason, unless
CONSISTENT_HASH_REQUIRE_SERVERS=1 (as .ci/run sets): then they fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from live_servers import require
from routers import NODES, ROUTERS, by_name

import consistent_hash
from consistent_hash import BoundedLoad, HashRing, JumpHash, SlotMap

try:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    from consistent_hash.integrations.spark import partition, route
except ImportError as e:  # the fixture below skips or fails, naming it
    MISSING: str | None = str(e)
else:
    MISSING = None

# pyspark 4.x warns about pandas 3 each time it plans an Arrow function: not ours to fix.
pytestmark = pytest.mark.filterwarnings(
    "ignore:PySpark does not yet fully support pandas:FutureWarning")

N = 1_000_000


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    if MISSING is not None:
        reason = f"pyspark is not importable ({MISSING}; pip install -e '.[spark]')"
        if os.environ.get("CONSISTENT_HASH_REQUIRE_SERVERS") == "1":
            pytest.fail(reason + " and CONSISTENT_HASH_REQUIRE_SERVERS=1 is set")
        pytest.skip(reason)
    require("java")
    from pyspark.sql import SparkSession

    # The Python workers run this interpreter and import the package this test imports.
    root = os.path.dirname(os.path.dirname(os.path.abspath(consistent_hash.__file__)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYSPARK_PYTHON", sys.executable)
        mp.setenv("PYTHONPATH", os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
        mp.setenv("SPARK_LOCAL_IP", "127.0.0.1")
        session = (SparkSession.builder.master("local[2]").appName("consistent_hash-tests")
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "4")
                   .config("spark.driver.host", "127.0.0.1")
                   .config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.pyspark.python", sys.executable)
                   .getOrCreate())
        session.sparkContext.setLogLevel("ERROR")
        # A router class defined outside the library (tests/ringrouter_example.py) reaches the
        # executors the way a user's own module does: shipped with addPyFile.
        session.sparkContext.addPyFile(
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "ringrouter_example.py"))
        try:
            yield session
        finally:
            session.stop()


def user_keys(ids: Any) -> Any:
    """The keys the Spark expression concat('user:', id) makes, built here with pyarrow."""
    return pc.binary_join_element_wise(pa.scalar("user:"), pa.array(ids).cast(pa.string()), "")


def users(spark: Any, n: int, parts: int) -> Any:
    """A frame of n rows: key "user:<id>" (string), id (bigint), in ``parts`` partitions."""
    return spark.range(n, numPartitions=parts).selectExpr("concat('user:', id) AS key", "id")


def collect(df: Any, *cols: Any) -> Any:
    """The columns as a pyarrow Table, in the frame's order (partition by partition)."""
    sel = df.select(*cols)
    if hasattr(sel, "toArrow"):  # pyspark >= 4
        return sel.toArrow()
    return pa.Table.from_pandas(sel.toPandas(), preserve_index=False)  # pragma: no cover


def by_id(df: Any, *cols: str) -> Any:
    """The columns (and "id") as a pyarrow Table in id order, sorted here rather than by a
    Spark sort (one job less)."""
    t = collect(df, "*") if cols == ("*",) else collect(df, "id", *cols)
    return t.take(np.argsort(np_col(t, "id"), kind="stable"))


def np_col(table: Any, name: str) -> Any:
    return table.column(name).to_numpy(zero_copy_only=False)


def per_partition(df: Any) -> list[tuple[int, int, list[Any]]]:
    """(partition index, row count, the distinct node names) of each partition, read through
    df.rdd.mapPartitionsWithIndex."""
    def summary(i: int, rows: Iterator[Any]) -> Iterator[tuple[int, int, list[Any]]]:
        count, seen = 0, set()
        for row in rows:
            count += 1
            seen.add(row["node"])
        yield i, count, sorted(seen, key=str)

    return sorted(df.rdd.mapPartitionsWithIndex(summary).collect())


# -- a million keys, against the one-process result ----------------------------------------------

@pytest.fixture(scope="module")
def million(spark: Any) -> tuple[Any, Any, Any]:
    ring = HashRing([f"shard-{i}" for i in range(16)])
    return ring, users(spark, N, 4), ring.get_indices(user_keys(np.arange(N)))


def test_route_a_million_keys_equals_one_process_partition_by_partition(million) -> None:  # type: ignore[no-untyped-def]
    ring, df, expected = million
    out = route(df, "key", ring, output="both")
    assert out.columns == ["key", "id", "node", "node_index"]
    assert dict(out.dtypes)["node"] == "string" and dict(out.dtypes)["node_index"] == "int"
    t = collect(out, F.spark_partition_id().alias("p"), "id", "key", "node", "node_index")
    assert t.num_rows == N
    part, ids = np_col(t, "p"), np_col(t, "id")
    assert sorted(set(part.tolist())) == [0, 1, 2, 3]  # the input's partitions, unshuffled
    for p in range(4):
        mine = part == p
        pid = ids[mine]
        assert (np.diff(pid) == 1).all()  # the partition's rows, in their order
        keys = t.column("key").filter(pa.array(mine)).combine_chunks()
        assert keys.equals(user_keys(pid).cast(keys.type))
        want = ring.get_indices(user_keys(pid))  # the partition routed in one process
        assert np.array_equal(np_col(t, "node_index")[mine], want)
        assert np.array_equal(np_col(t, "node")[mine], ring.get_many(user_keys(pid)))
    assert np.array_equal(np_col(t, "node_index")[np.argsort(ids)], expected)


def test_partition_a_million_keys_puts_node_i_in_partition_i(million) -> None:  # type: ignore[no-untyped-def]
    ring, df, expected = million
    out = partition(df, "key", ring, output="both").persist()  # routed and shuffled once
    assert out.rdd.getNumPartitions() == 16
    t = collect(out, F.spark_partition_id().alias("p"), "id", "node", "node_index")
    ids = np_col(t, "id")
    assert t.num_rows == N and np.array_equal(np.sort(ids), np.arange(N))
    assert np.array_equal(np_col(t, "p"), expected[ids])  # every row in its node's partition
    assert np.array_equal(np_col(t, "node_index"), expected[ids])
    counts = np.bincount(expected, minlength=16)
    assert per_partition(out) == [(i, int(counts[i]), [ring.nodes[i]]) for i in range(16)]
    out.unpersist()


# -- every router of the registry, every key type -------------------------------------------------

@pytest.mark.parametrize("spec", ROUTERS, ids=[s.name for s in ROUTERS])  # tests/routers.py
def test_every_router(spark, spec) -> None:  # type: ignore[no-untyped-def]
    router = spec.make(NODES)
    n = 6000
    df = spark.range(n, numPartitions=3).selectExpr(
        "id", "concat('user:', id) AS s", "CAST(concat('user:', id) AS binary) AS b",
        "id * 7919 - 20000000 AS i")  # negative and positive ints
    ids = np.arange(n)
    keys = user_keys(ids)
    ints = (ids * 7919 - 20000000).tolist()
    out = route(route(df, "s", router, name="by_s"), "b", router, output="both",
                name=("by_b", "by_b_index"))
    if spec.int_keys == "refused":
        with pytest.raises(TypeError, match="'i'"):
            route(out, "i", router, output="index", name="by_i")
    else:
        out = route(out, "i", router, output="index", name="by_i")
    t = by_id(out, "*")
    expected = router.get_many(keys)
    assert np.array_equal(np_col(t, "by_s"), expected)
    assert np.array_equal(np_col(t, "by_b"), expected)  # the same bytes, the same node
    assert np.array_equal(np_col(t, "by_b_index"), router.get_indices(keys))
    if spec.int_keys != "refused":
        assert np.array_equal(np_col(t, "by_i"), router.get_indices(ints))
    parts = partition(df, "s", router)
    counts = np.bincount(router.get_indices(keys), minlength=len(router.nodes))
    assert per_partition(parts) == [(i, int(c), [router.nodes[i]] if c else [])
                                    for i, c in enumerate(counts)]


def test_integer_widths_route_as_python_ints(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.range(-300, 300, numPartitions=2).selectExpr(
        "id", "CAST(id % 128 AS tinyint) AS i8", "CAST(id * 100 AS smallint) AS i16",
        "CAST(id * 1000003 AS int) AS i32", "id * 1000000007 AS i64")
    ids = np.arange(-300, 300)
    cols = {"i8": [int(x) for x in np.fmod(ids, 128)], "i16": (ids * 100).tolist(),
            "i32": (ids * 1000003).tolist(), "i64": (ids * 1000000007).tolist()}
    for router in (HashRing(NODES), JumpHash(NODES)):  # hashed and raw int keys
        out = df
        for c in cols:
            out = route(out, c, router, name=f"n_{c}")
        t = by_id(out, *[f"n_{c}" for c in cols])
        for c, values in cols.items():
            assert np.array_equal(np_col(t, f"n_{c}"), router.get_many(values)), c


def test_the_router_is_the_one_at_call_time(spark) -> None:  # type: ignore[no-untyped-def]
    ring = HashRing(["a", "b", "c"])
    ring.mark_down("b")  # part of the routing state: the pickle (and to_bytes) keep it
    df = users(spark, 5000, 2)
    keys = user_keys(np.arange(5000))
    expected, idx = ring.get_many(keys), ring.get_indices(keys)
    assert "b" not in set(expected)
    out = route(df, "key", ring)
    parts = partition(df, "key", ring, output="index")
    ring.add("d")  # after the frames were built: they must not see it
    ring.mark_up("b")
    assert set(ring.get_many(keys)) == {"a", "b", "c", "d"}
    assert np.array_equal(np_col(by_id(out, "node"), "node"), expected)
    t = collect(parts, F.spark_partition_id().alias("p"), "id", "node_index")
    assert parts.rdd.getNumPartitions() == 3
    assert np.array_equal(np_col(t, "p"), idx[np_col(t, "id")])
    assert 1 not in set(np_col(t, "p").tolist())  # b's partition is empty: b was down


def test_threads_and_a_hash_callable(spark) -> None:  # type: ignore[no-untyped-def]
    ring = HashRing(NODES, hash=lambda b: int.from_bytes(b[-8:].rjust(8, b"\0"), "little"))
    df = users(spark, 20000, 2)
    expected = ring.get_many(user_keys(np.arange(20000)))
    for threads in (None, 1, 2):
        out = by_id(route(df, "key", ring, threads=threads), "node")
        assert np.array_equal(np_col(out, "node"), expected)


def test_the_router_travels_as_one_small_pickle(spark) -> None:  # type: ignore[no-untyped-def]
    import pickle

    from pyspark import cloudpickle

    from consistent_hash.integrations.spark import _load, _plan

    ring = HashRing([f"shard-{i}" for i in range(64)])
    _, fn, _ = _plan(users(spark, 10, 1), "key", ring, "node", None, "raise", None, False)
    assert pickle.loads(fn.blob) == ring  # the snapshot, captured in the closure
    assert len(cloudpickle.dumps(fn)) < 8192  # what Spark sends with each task
    router, names = _load(fn.blob)
    assert _load(fn.blob)[0] is router  # rebuilt once per worker process, then reused
    assert router == ring and names.to_pylist() == list(ring.nodes)
    assert fn.threads == 1  # one thread per task: Spark gives each task its core


# -- nulls ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def with_nulls(spark: Any) -> Any:
    return spark.range(3000, numPartitions=2).selectExpr(
        "id", "IF(id % 7 = 3, NULL, concat('k', id)) AS s",
        "IF(id % 5 = 1, NULL, CAST(concat('k', id) AS binary)) AS b",
        "IF(id % 3 = 2, NULL, id) AS i")


def test_nulls_none(with_nulls) -> None:  # type: ignore[no-untyped-def]
    ring = HashRing(NODES)
    ids = np.arange(3000)
    keys = {"s": [None if i % 7 == 3 else f"k{i}" for i in ids],
            "b": [None if i % 5 == 1 else f"k{i}".encode() for i in ids],
            "i": [None if i % 3 == 2 else int(i) for i in ids]}
    out = with_nulls
    for c in keys:
        out = route(out, c, ring, output="both", name=f"n_{c}", nulls="none")
    t = by_id(out, "*")
    for c, ks in keys.items():
        assert np_col(t, f"n_{c}").tolist() == ring.get_many(ks, nulls="none").tolist()
        assert np.array_equal(np_col(t, f"n_{c}_index"), ring.get_indices(ks, nulls="none"))
        assert (np_col(t, f"n_{c}_index") == -1).sum() == sum(k is None for k in ks) > 0


@pytest.mark.parametrize("column", ["s", "b", "i"])
def test_nulls_raise_fails_the_job_naming_the_column(with_nulls, column) -> None:  # type: ignore[no-untyped-def]
    from pyspark.errors import PythonException

    ring = HashRing(NODES)
    out = route(with_nulls, column, ring)  # lazy: the job fails, not the call
    with pytest.raises(PythonException, match=f"column '{column}': keys contain .* missing"):
        out.collect()
    with pytest.raises(PythonException, match="missing"):
        partition(with_nulls, column, ring).collect()
    ok = route(with_nulls.where(F.col(column).isNotNull()), column, ring).count()
    assert ok == with_nulls.where(F.col(column).isNotNull()).count()


def test_partition_refuses_an_unassigned_slot(spark) -> None:  # type: ignore[no-untyped-def]
    half = SlotMap([(0, 8191, "a:6379")])  # slots 8192.. have no node
    out = partition(users(spark, 2000, 2), "key", half)
    from pyspark.errors import PythonException

    with pytest.raises(PythonException, match="unassigned slot"):
        out.collect()
    got = by_id(route(users(spark, 2000, 2), "key", half), "node")
    assert np_col(got, "node").tolist() == half.get_many(user_keys(np.arange(2000))).tolist()


# -- the pandas fallback (taken only without mapInArrow) -----------------------------------------

def test_the_mapinpandas_fallback_gives_the_same_result(with_nulls) -> None:  # type: ignore[no-untyped-def]
    from consistent_hash.integrations.spark import _plan

    ring = HashRing(NODES)
    for column in ("s", "b", "i"):
        schema, fn, _ = _plan(with_nulls, column, ring, "both", None, "none", None, False)
        fallback = by_id(with_nulls.mapInPandas(fn.pandas, schema), "*")
        arrow = by_id(route(with_nulls, column, ring, output="both", nulls="none"), "*")
        assert fallback.equals(arrow), column


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@pytest.mark.parametrize("key", ["user", "user.id", "a`b"])
def test_dotted_column_names(spark, key) -> None:  # type: ignore[no-untyped-def]
    """A DataFrame whose column names hold dots (or backticks), the key column's or another's:
    PySpark's mapInArrow resolved each name as a path (AnalysisException), so route and
    partition failed for any such frame.  Every name comes back as it was."""
    ring = HashRing(NODES)
    df = (users(spark, 2000, 3).withColumnRenamed("key", key)
          .withColumn("geo.country", F.lit("fr")).withColumn("x.y.z", F.col("id") * 2))
    want = ring.get_many(user_keys(np.arange(2000))).tolist()
    for fn in (route, partition):
        out = fn(df, key, ring, output="both", name=("node.name", "node.index"))
        assert out.columns == [*df.columns, "node.name", "node.index"]
        t = collect(out, *(F.col(_quoted(c)) for c in out.columns))
        t = t.take(np.argsort(np_col(t, "id"), kind="stable"))
        assert t.column_names == out.columns
        assert np_col(t, "node.name").tolist() == want
        assert np_col(t, key).tolist() == user_keys(np.arange(2000)).to_pylist()
        assert np_col(t, "node.index").tolist() == [ring.nodes.index(n) for n in want]
        assert set(np_col(t, "geo.country")) == {"fr"}
        assert (np_col(t, "x.y.z") == 2 * np.arange(2000)).all()
    # the pandas fallback, given the frame as route gives it to Spark
    from consistent_hash.integrations.spark import _plan, _safe_names

    schema, fn, _ = _plan(df, key, ring, "node", None, "raise", None, False)
    fallback = _safe_names(df).mapInPandas(fn.pandas, schema)
    t = collect(fallback, *(F.col(_quoted(c)) for c in fallback.columns))
    t = t.take(np.argsort(np_col(t, "id"), kind="stable"))
    assert np_col(t, "node").tolist() == want


def test_the_documentation_examples_run(spark) -> None:  # type: ignore[no-untyped-def]
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "spark.md"
    if not page.exists():
        pytest.skip("docs/spark.md is not beside tests/")
    blocks = re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), re.S)
    assert len(blocks) >= 2
    namespace: dict[str, Any] = {}
    for block in blocks:  # one after the other, as a reader runs them
        exec(compile(block, str(page), "exec"), namespace)
    assert namespace["spark"] is spark  # getOrCreate: this module's session


# -- errors, all raised by the call, before Spark runs anything ----------------------------------

def test_invalid_arguments(spark) -> None:  # type: ignore[no-untyped-def]
    ring = HashRing(NODES)
    df = spark.range(10).selectExpr("id", "CAST(id AS double) AS x", "array(id) AS arr",
                                    "current_date() AS d", "concat('k', id) AS key")
    with pytest.raises(ValueError, match=r"no column 'nope' \(columns: \['id', 'x'"):
        route(df, "nope", ring)
    for col, kind in (("x", "double"), ("arr", "array<bigint>"), ("d", "date")):
        with pytest.raises(TypeError, match=f"column '{col}' is {kind}.*string, binary"):
            route(df, col, ring)
    with pytest.raises(TypeError, match="column must be a column name"):
        route(df, F.col("key"), ring)
    with pytest.raises(TypeError, match="pyspark DataFrame"):
        route(pd.DataFrame({"key": ["a"]}), "key", ring)
    with pytest.raises(TypeError, match="router must be a router"):
        route(df, "key", {"a": 1})
    with pytest.raises(TypeError, match="BoundedLoad"):
        route(df, "key", BoundedLoad(ring))
    with pytest.raises(ValueError, match="no nodes"):
        route(df, "key", HashRing())
    with pytest.raises(ValueError, match="output must be"):
        route(df, "key", ring, output="names")
    with pytest.raises(ValueError, match="nulls"):
        route(df, "key", ring, nulls="drop")
    with pytest.raises(ValueError, match="threads"):
        route(df, "key", ring, threads=0)
    with pytest.raises(TypeError, match="threads"):
        partition(df, "key", ring, threads="2")
    with pytest.raises(ValueError, match="already has a column 'id'"):
        route(df, "key", ring, name="id")
    with pytest.raises(TypeError, match="name"):
        route(df, "key", ring, output="both", name=("a", "b", "c"))
    with pytest.raises(TypeError, match="name"):
        route(df, "key", ring, name="")
    with pytest.raises(ValueError, match="different names"):
        route(df, "key", ring, output="both", name=("n", "n"))
    with pytest.raises(TypeError, match="column 'id'.*int"):
        route(df, "id", by_name("TokenRing").make(NODES))  # refuses int keys
    dup = df.select("key", F.col("id").alias("key"))
    with pytest.raises(ValueError, match="2 columns named 'key'"):
        route(dup, "key", ring)


def test_import_error_names_the_extra() -> None:
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "import consistent_hash.spark as s  # importable: pyspark is imported when used\n"
            "from consistent_hash import HashRing\n"
            "try:\n    s.route(object(), 'k', HashRing(['a']))\n"
            "except ImportError as e:\n    print(e)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(consistent_hash.__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, check=True).stdout
    assert "pyspark" in out and "pip install 'consistent-hash-ring[spark]'" in out
