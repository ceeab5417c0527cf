"""Smoke test of the benchmark harness (not in the default test run: `pytest bench/`)."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench  # noqa: E402


def test_main_tiny(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert bench.main(["--quick", "--keys", "3000", "--runs", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| case | ours ns/key | peer | peer ns/key | ratio (peer/ours) |" in text
    data = json.loads(out.read_text())
    assert data["checks"] and all(c["ok"] for c in data["checks"])
    cases = {r["case"] for r in data["rows"]}
    assert any(c.startswith("lookup") for c in cases)
    assert any(c.startswith("build") for c in cases)


def test_bench_threads_tiny(capsys):
    import bench_threads

    bench_threads.main(["--keys", "5000", "--runs", "1", "--small", "3000", "--big", "6000"])
    text = capsys.readouterr().out
    from consistent_hash import get_threads

    counts = bench_threads.thread_counts(get_threads())
    assert counts[0] == 1 and counts[-1] == get_threads()
    assert "| case | " + " | ".join(f"threads={t} ns/key" for t in counts) in text
    assert "list of str" in text and "peak extra" in text
    bench_threads.main(["--threshold", "--runs", "1"])
    assert "Where a second thread pays" in capsys.readouterr().out


@pytest.mark.filterwarnings(
    "ignore:PySpark does not yet fully support pandas:FutureWarning")
def test_bench_spark_tiny(capsys):
    import shutil

    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime for Spark")
    import bench_spark

    bench_spark.main(["--keys", "20000", "--runs", "1"])
    text = capsys.readouterr().out
    assert "| setup | keys/s | ns/key |" in text
    assert "Spark local[2], make + `route(output=\"index\")`" in text and "get_many" in text


def test_bench_family_tiny(capsys):
    import bench_family

    assert bench_family.main(["--quick", "--keys", "3000", "--runs", "1"]) == 0
    text = capsys.readouterr().out
    assert "| JumpBackAnchorHash |" in text and "Checks (issue 22):" in text
    assert "| jumpback_bucket >= 8x JumpHash.lookup at n = 1,000 |" in text
