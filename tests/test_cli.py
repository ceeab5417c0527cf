"""The command line (python -m consistent_hash / consistent-hash), run as subprocesses.

Every subcommand is checked against the library's own figures (analysis.movement,
migration_plan, ring.ownership, ring.get), plus exit codes, one-line user errors, the progress
bar (only on a terminal) and the PNGs --plot writes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from consistent_hash import HashRing, ringfile
from consistent_hash.analysis import balance, migration_plan, movement

REPO = Path(__file__).resolve().parents[1]
FULL = 1 << 64


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.pop("MPLBACKEND", None)
    return env


def run(*args: str, input: str | bytes | None = None, cwd: str | Path | None = None,
        prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    cmd = (prefix or [sys.executable, "-m", "consistent_hash"]) + [str(a) for a in args]
    text = not isinstance(input, bytes)
    return subprocess.run(cmd, input=input, capture_output=True, text=text, timeout=120,
                          cwd=str(cwd or REPO), env=_env())


def ok(*args: str, **kw) -> subprocess.CompletedProcess:
    r = run(*args, **kw)
    assert r.returncode == 0, (args, r.stdout[-2000:], r.stderr[-2000:])
    err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode(errors="replace")
    assert "Traceback" not in err
    return r


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def table_rows(text: str, first_header: str) -> list[list[str]]:
    """The body rows of the markdown table whose first header cell is first_header."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("|") and ln.strip("| ").split("|")[0].strip() == first_header:
            rows = []
            for body in lines[i + 2:]:
                if not body.startswith("|"):
                    break
                rows.append([c.strip() for c in body.strip().strip("|").split("|")])
            return rows
    raise AssertionError(f"no table starting with {first_header!r} in:\n{text}")


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG, after checking the signature, IHDR and IEND chunks."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    ihdr = data[16:29]
    (crc,) = struct.unpack(">I", data[29:33])
    assert zlib.crc32(b"IHDR" + ihdr) == crc, "IHDR checksum"
    assert data[-12:] == b"\x00\x00\x00\x00IEND\xaeB`\x82", "no IEND chunk at the end"
    assert b"IDAT" in data
    w, h = struct.unpack(">II", ihdr[:8])
    return w, h


def write_keys(path: Path, keys: list[str]) -> None:
    path.write_text("".join(k + "\n" for k in keys), encoding="utf-8")


def parse_assign(text: str) -> list[tuple[str, str]]:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["key", "node"]
    return [(k, n) for k, n in rows[1:]]


KEYS = [f"user:{i}" for i in range(3000)] + ["café", "日本語", "with,comma", 'quo"te', " pad "]


# --------------------------------------------------------------------------------------------
# simulate
# --------------------------------------------------------------------------------------------


def test_default_run_prints_plausible_tables():
    r = ok()
    assert r.stderr == ""  # piped: no progress bar
    out = r.stdout
    assert "1,000,000 keys" in out and "8 nodes" in out
    rows = {row[0].split(" (")[0]: row for row in table_rows(out, "change")}
    join, leave = rows["8 -> 9"], rows["8 -> 7"]
    as_float = lambda c: float(c.rstrip("%"))  # noqa: E731
    assert 87.0 <= as_float(join[1]) <= 91.0       # hash % N
    assert 8.0 <= as_float(join[2]) <= 15.0         # ring
    assert join[3] == "11.1%" and join[4] == "yes"
    assert 85.0 <= as_float(leave[1]) <= 90.0
    assert 8.0 <= as_float(leave[2]) <= 17.0 and leave[3] == "12.5%" and leave[4] == "yes"
    spread = table_rows(out, "vnodes")
    assert [row[0] for row in spread] == ["1", "10", "100", "160", "500"]
    for _, light, heavy, ratio in spread:
        lo, hi = as_float(light), as_float(heavy)
        assert 0 < lo <= 12.5 <= hi
        assert abs(float(ratio.rstrip("x")) - hi / lo) < 0.02 + 0.01 * hi / lo
    assert float(spread[-1][3].rstrip("x")) < 1.5  # 500 vnodes: well balanced


def test_simulate_json_fields():
    r = ok("simulate", "--keys", "100000", "--json")
    assert r.stderr == ""
    d = json.loads(r.stdout)
    assert {"keys", "nodes", "vnodes", "changes", "algorithms", "spread", "loads",
            "seconds"} <= set(d)
    assert d["keys"] == 100_000 and d["nodes"] == 8 and d["vnodes"] == 160
    join, leave = d["changes"]
    assert join["change"].startswith("8 -> 9") and leave["change"].startswith("8 -> 7")
    assert 0.87 <= join["modulo_moved"] <= 0.91 and 0.08 <= join["ring_moved"] <= 0.15
    assert join["ideal"] == pytest.approx(1 / 9) and leave["ideal"] == pytest.approx(1 / 8)
    assert join["only_changed_node"] is True and leave["only_changed_node"] is True
    assert [s["vnodes"] for s in d["spread"]] == [1, 10, 100, 160, 500]
    for s in d["spread"]:
        assert s["lightest"] <= 1 / 8 <= s["heaviest"]
        assert s["ratio"] == pytest.approx(s["heaviest"] / s["lightest"])
    assert sorted(d["loads"]) == [f"cache-{i}" for i in range(8)]
    assert sum(d["loads"].values()) == pytest.approx(1.0)
    # the ring's moved share matches an independent brute force on the same keys
    keys = np.char.add("key-", np.arange(100_000).astype("U"))
    names = [f"cache-{i}" for i in range(9)]
    a = HashRing(names[:8]).get_many(keys)
    assert join["ring_moved"] == pytest.approx(np.mean(a != HashRing(names).get_many(keys)))
    assert leave["ring_moved"] == pytest.approx(np.mean(a != HashRing(names[:7]).get_many(keys)))
    h = HashRing(names[:8]).hash_many(keys)
    assert join["modulo_moved"] == pytest.approx(np.mean(h % np.uint64(8) != h % np.uint64(9)))


def test_simulate_options():
    r = ok("--keys", "50000", "--nodes", "5", "--vnodes", "100", "--spread-vnodes", "2,50",
           "--json")
    d = json.loads(r.stdout)
    assert d["keys"] == 50_000 and d["nodes"] == 5 and d["vnodes"] == 100
    assert d["changes"][0]["change"] == "5 -> 6 (cache-5 joins)"
    assert d["changes"][1]["change"] == "5 -> 4 (cache-4 leaves)"
    assert [s["vnodes"] for s in d["spread"]] == [2, 50]
    assert len(d["loads"]) == 5
    expect = np.bincount(HashRing([f"cache-{i}" for i in range(5)], vnodes=100).get_indices(
        np.char.add("key-", np.arange(50_000).astype("U"))), minlength=5) / 50_000
    assert list(d["loads"].values()) == pytest.approx(expect.tolist())
    text = ok("simulate", "--keys", "20000", "--nodes", "3").stdout
    assert "20,000 keys" in text and "3 -> 4 (cache-3 joins)" in text
    assert "3 -> 2 (cache-2 leaves)" in text


def test_simulate_json_is_strict_json():
    """--json is for machines: no NaN / Infinity (not JSON; jq and JSON.parse reject them),
    even when a node gets no key at all (a tiny --keys)."""
    r = ok("--keys", "3", "--json")

    def reject(name):
        raise AssertionError(f"non-standard JSON constant {name} in --json output")
    json.loads(r.stdout, parse_constant=reject)


# --------------------------------------------------------------------------------------------
# plan
# --------------------------------------------------------------------------------------------


OLD, NEW = "a,b,c,d", "a,b=2,c,e"


def rings(old=OLD, new=NEW, **kw):
    def parse(spec):
        return {(p.split("=")[0]): float(p.split("=")[1]) if "=" in p else 1.0
                for p in spec.split(",")}
    return HashRing(parse(old), **kw), HashRing(parse(new), **kw)


def test_plan_table():
    old, new = rings()
    mv, plan = movement(old, new), migration_plan(old, new)
    out = ok("plan", OLD, NEW).stdout
    first = out.splitlines()[0]
    assert first == f"moved: {pct(mv.moved)} of the key space (exact), {len(plan)} hash ranges"
    flows = table_rows(out, "from")
    assert {(a, b): s for a, b, s in flows} == {k: pct(v) for k, v in mv.flows.items()}
    shares = [v for _, _, v in flows]
    assert shares == [pct(v) for v in sorted(mv.flows.values(), reverse=True)]
    ranges = table_rows(out, "start")
    assert len(ranges) == 10 and len(plan) > 10
    assert [(int(s, 16), int(e, 16), a, b) for s, e, a, b in ranges] == plan.ranges[:10]
    assert f"... {len(plan) - 10} more" in out
    short = ok("plan", OLD, NEW, "--ranges", "0").stdout
    assert "0x" not in short and "more" not in short
    assert len(table_rows(ok("plan", OLD, NEW, "--ranges", "3").stdout, "start")) == 3
    assert ok("plan", OLD, NEW, "--format", "table").stdout == out  # the default, by name
    assert "--json" in ok("plan", "--help").stdout


def test_plan_json_consistent_with_analysis():
    old, new = rings()
    mv, plan = movement(old, new), migration_plan(old, new)
    d = json.loads(ok("plan", OLD, NEW, "--format", "json").stdout)
    assert d["old"] == old.fingerprint() and d["new"] == new.fingerprint()
    assert d["moved"] == mv.moved and d["exact"] is True and d["interval"] is None
    assert {(f["from"], f["to"]): f["share"] for f in d["flows"]} == mv.flows
    assert len(d["ranges"]) == len(plan)
    assert [(x["start"], x["end"], x["from"], x["to"]) for x in d["ranges"]] == plan.ranges
    assert sum(x["end"] - x["start"] + 1 for x in d["ranges"]) / FULL == mv.moved


def test_plan_csv():
    old, new = rings(hash="md5", seed=0, vnodes=50)
    out = ok("plan", OLD, NEW, "--format", "csv", "--hash", "md5", "--vnodes", "50").stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["start", "end", "from", "to"]
    got = [(int(s), int(e), a, b) for s, e, a, b in rows[1:]]
    plan = migration_plan(old, new)
    assert got == plan.ranges and len(got) == len(plan)
    assert sum(e - s + 1 for s, e, _, _ in got) / FULL == movement(old, new).moved


def test_plan_with_ring_files(tmp_path):
    old = HashRing({"a": 1.0, "b": 1.0, "c": 1.0}, vnodes=80, hash="xxh64", seed=7)
    new = old.copy()
    new.set_weight("b", 2.0)
    new.add("d", 0.5)
    ringfile.save(old, tmp_path / "old.json")
    ringfile.save(new, tmp_path / "new.json")
    d = json.loads(ok("plan", tmp_path / "old.json", tmp_path / "new.json",
                      "--format", "json").stdout)
    mv, plan = movement(old, new), migration_plan(old, new)
    assert d["old"] == old.fingerprint() and d["new"] == new.fingerprint()
    assert d["moved"] == mv.moved and len(d["ranges"]) == len(plan)
    assert {(f["from"], f["to"]) for f in d["flows"]} == set(mv.flows)
    table = ok("plan", "old.json", "new.json", cwd=tmp_path).stdout
    assert table.splitlines()[0].startswith(f"moved: {pct(mv.moved)} ")
    # a ring file made by the `ring` subcommand, against a node list with the same options
    ok("ring", "a,b,c", "--vnodes", "80", "-o", tmp_path / "abc.json")
    mixed = json.loads(ok("plan", tmp_path / "abc.json", "a,b,c,d", "--vnodes", "80",
                          "--format", "json").stdout)
    ref = movement(HashRing(["a", "b", "c"], vnodes=80), HashRing(list("abcd"), vnodes=80))
    assert mixed["moved"] == ref.moved


def test_plan_node_list_from_file(tmp_path):
    (tmp_path / "nodes.txt").write_bytes(b"\xef\xbb\xbf# cluster\na=1\nb = 2\n\nc\n")
    d = json.loads(ok("plan", "@" + str(tmp_path / "nodes.txt"), "a,b=2,c,d",
                      "--format", "json").stdout)
    old = HashRing({"a": 1.0, "b": 2.0, "c": 1.0})
    new = HashRing({"a": 1.0, "b": 2.0, "c": 1.0, "d": 1.0})
    assert d["moved"] == movement(old, new).moved
    assert {f["to"] for f in d["flows"]} == {"d"}


# --------------------------------------------------------------------------------------------
# assign
# --------------------------------------------------------------------------------------------


def test_assign_text_file_and_ring_file(tmp_path):
    ring = HashRing({"n1": 1.0, "n2": 2.0, "n3": 1.0}, vnodes=40)
    write_keys(tmp_path / "keys.txt", KEYS)
    by_nodes = ok("assign", tmp_path / "keys.txt", "--nodes", "n1,n2=2,n3", "--vnodes", "40")
    assert by_nodes.stderr == ""
    got = parse_assign(by_nodes.stdout)
    assert got == [(k, ring.get(k)) for k in KEYS]
    ringfile.save(ring, tmp_path / "r.json")
    by_file = ok("assign", "keys.txt", "--ring", "r.json", cwd=tmp_path)
    assert by_file.stdout == by_nodes.stdout


def test_assign_stdin():
    ring = HashRing(["x", "y", "z"])
    text = "".join(k + "\n" for k in KEYS)
    for args in (["assign", "-", "--nodes", "x,y,z"], ["assign", "--nodes", "x,y,z"]):
        got = parse_assign(ok(*args, input=text).stdout)
        assert got == [(k, ring.get(k)) for k in KEYS]
    crlf = ok("assign", "--nodes", "x,y,z", input="k1\r\nk2\r\n").stdout
    assert parse_assign(crlf) == [("k1", ring.get("k1")), ("k2", ring.get("k2"))]


def test_assign_csv_column(tmp_path):
    ring = HashRing(["x", "y", "z"])
    path = tmp_path / "users.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "user"])
        for i, k in enumerate(KEYS):
            w.writerow([str(i), k])
    got = parse_assign(ok("assign", path, "--nodes", "x,y,z", "--column", "user").stdout)
    assert got == [(k, ring.get(k)) for k in KEYS]
    first = parse_assign(ok("assign", path, "--nodes", "x,y,z").stdout)  # the first column
    assert first == [(str(i), ring.get(str(i))) for i in range(len(KEYS))]
    # a .txt name read as CSV on request
    (tmp_path / "u.txt").write_bytes(path.read_bytes())
    forced = ok("assign", tmp_path / "u.txt", "--nodes", "x,y,z", "--input-format", "csv",
                "--column", "user").stdout
    assert parse_assign(forced) == got


def test_assign_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    ring = HashRing(["x", "y", "z"])
    table = pa.table({"id": [str(i) for i in range(len(KEYS))], "user": KEYS})
    pq.write_table(table, tmp_path / "keys.parquet", row_group_size=1000)
    got = parse_assign(ok("assign", tmp_path / "keys.parquet", "--nodes", "x,y,z",
                          "--column", "user").stdout)
    assert got == [(k, ring.get(k)) for k in KEYS]
    first = parse_assign(ok("assign", tmp_path / "keys.parquet", "--nodes", "x,y,z").stdout)
    assert first == [(str(i), ring.get(str(i))) for i in range(len(KEYS))]


def test_assign_output_file(tmp_path):
    ring = HashRing(["x", "y"])
    write_keys(tmp_path / "k.txt", KEYS[:500])
    r = ok("assign", tmp_path / "k.txt", "--nodes", "x,y", "-o", tmp_path / "out.csv")
    assert r.stdout == "" and r.stderr == ""
    got = parse_assign((tmp_path / "out.csv").read_text(encoding="utf-8"))
    assert got == [(k, ring.get(k)) for k in KEYS[:500]]


@pytest.mark.parametrize("args", [
    ["missing.txt", "--nodes", "x,y"],
    ["k.csv", "--nodes", "x,y", "--column", "nope"],
], ids=["missing-input", "bad-column"])
def test_assign_error_does_not_clobber_output(tmp_path, args):
    """A failed run must not truncate an existing -o file (it is a user error, not output)."""
    (tmp_path / "k.csv").write_text("key\nk1\n")
    out = tmp_path / "precious.csv"
    out.write_text("key,node\nold,data\n")
    r = run("assign", *args, "-o", out, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("consistent-hash: error:")
    assert out.read_text() == "key,node\nold,data\n"


# --------------------------------------------------------------------------------------------
# inspect / ring
# --------------------------------------------------------------------------------------------


def test_inspect_table_and_json(tmp_path):
    ring = HashRing({"alpha": 1.0, "beta": 2.0, "gamma": 0.5}, vnodes=50, hash="murmur3",
                    seed=9)
    ringfile.save(ring, tmp_path / "r.json")
    own = ring.ownership()
    counts = np.bincount(ring.owners, minlength=len(ring))
    out = ok("inspect", tmp_path / "r.json").stdout
    assert out.splitlines()[0] == (f"HashRing: 3 nodes, {len(ring.positions)} positions, hash "
                                   "murmur3, seed 9, 50 vnodes per unit weight")
    assert f"fingerprint {ring.fingerprint()}" in out
    rows = table_rows(out, "node")
    assert rows == [[n, f"{ring.weights[n]:g}", str(c), pct(own[n])]
                    for n, c in zip(ring.nodes, counts.tolist(), strict=True)]
    b = balance(ring)
    assert f"max/mean {b.max_over_mean:.3f}" in out and f"cv {b.cv:.3f}" in out
    d = json.loads(ok("inspect", tmp_path / "r.json", "--json").stdout)
    assert d["kind"] == "HashRing" and d["hash"] == "murmur3" and d["seed"] == 9
    assert d["vnodes"] == 50 and d["fingerprint"] == ring.fingerprint()
    assert d["positions"] == len(ring.positions) == sum(x["vnodes"] for x in d["nodes"])
    assert [x["node"] for x in d["nodes"]] == list(ring.nodes)
    assert {x["node"]: x["share"] for x in d["nodes"]} == own
    assert {x["node"]: x["weight"] for x in d["nodes"]} == ring.weights
    assert [x["vnodes"] for x in d["nodes"]] == counts.tolist()
    expect = b.to_dict()
    expect.pop("shares")
    assert d["balance"] == expect


def test_ring_writes_loadable_file(tmp_path):
    ok("ring", "a=2,b,c", "--vnodes", "77", "--hash", "xxh64", "--seed", "5",
       "-o", tmp_path / "r.json")
    loaded = ringfile.load(tmp_path / "r.json")
    assert loaded == HashRing({"a": 2.0, "b": 1.0, "c": 1.0}, vnodes=77, hash="xxh64", seed=5)
    stdout = ok("ring", "a=2,b,c", "--vnodes", "77", "--hash", "xxh64", "--seed", "5").stdout
    assert ringfile.loads(stdout) == loaded
    assert stdout == (tmp_path / "r.json").read_text(encoding="utf-8")
    d = json.loads(ok("inspect", tmp_path / "r.json", "--json").stdout)
    assert d["fingerprint"] == loaded.fingerprint()


# --------------------------------------------------------------------------------------------
# --plot
# --------------------------------------------------------------------------------------------


def test_plot_simulate(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sim.png"
    r = ok("--keys", "100000", "--plot", png)
    assert "Keys moved" in r.stdout
    assert png_size(png) == (1500, 450)


def test_plot_plan_and_inspect(tmp_path):
    pytest.importorskip("matplotlib")
    ok("plan", OLD, NEW, "--plot", tmp_path / "plan.png")
    assert png_size(tmp_path / "plan.png") == (1200, 450)
    ok("inspect", "a,b,c", "--plot", tmp_path / "small.png")
    assert png_size(tmp_path / "small.png") == (600, 450)  # max(6, 0.4 * 3) in
    many = ",".join(f"n{i}" for i in range(25))
    ok("inspect", many, "--plot", tmp_path / "wide.png")
    assert png_size(tmp_path / "wide.png") == (1000, 450)  # 0.4 * 25 in


BLOCK_MPL = ("import sys; sys.modules['matplotlib'] = None; "
             "from consistent_hash.cli import main; sys.exit(main(sys.argv[1:]))")


@pytest.mark.parametrize("args", [
    ["--keys", "1000"], ["simulate", "--keys", "1000"], ["plan", "a,b", "a,b,c"],
    ["inspect", "a,b"],
], ids=["default", "simulate", "plan", "inspect"])
def test_plot_without_matplotlib(tmp_path, args):
    png = tmp_path / "x.png"
    r = run(*args, "--plot", png, prefix=[sys.executable, "-c", BLOCK_MPL])
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("consistent-hash: error:")
    assert "matplotlib" in lines[0] and "Traceback" not in r.stderr
    assert not png.exists()
    assert r.stdout == ""  # refused before doing the work


# --------------------------------------------------------------------------------------------
# user errors: one line on stderr, exit 2, no traceback
# --------------------------------------------------------------------------------------------


@pytest.fixture
def workdir(tmp_path):
    ringfile.save(HashRing(["a", "b"]), tmp_path / "good.json")
    ringfile.save(HashRing(["a", "b"], hash="md5"), tmp_path / "md5.json")
    (tmp_path / "corrupt.json").write_text('{"format": ')
    text = (tmp_path / "good.json").read_text()
    (tmp_path / "edited.json").write_text(text.replace('"b": 1.0', '"b": 2.0'))
    (tmp_path / "keys.txt").write_text("k1\nk2\n")
    (tmp_path / "keys.csv").write_text("id,user\n1,k1\n")
    (tmp_path / "bad.parquet").write_text("not parquet\n")
    return tmp_path


USER_ERRORS = {
    "missing-ring-file": ["plan", "missing.json", "a,b"],
    "inspect-missing": ["inspect", "missing.json"],
    "assign-missing-ring": ["assign", "keys.txt", "--ring", "missing.json"],
    "corrupt-ring-file": ["plan", "corrupt.json", "a,b"],
    "edited-ring-file": ["inspect", "edited.json"],
    "different-hashes": ["plan", "good.json", "md5.json"],
    "empty-node-list": ["plan", "", "a,b"],
    "commas-only": ["plan", ",,", "a,b"],
    "bad-weight": ["plan", "a=x,b", "a,b"],
    "zero-weight": ["plan", "a=0,b", "a,b"],
    "negative-weight": ["ring", "a=-1,b"],
    "duplicate-node": ["plan", "a,b,a", "a,b"],
    "missing-node-list-file": ["plan", "@missing.txt", "a,b"],
    "unknown-option": ["plan", "a,b", "a,b,c", "--bogus"],
    "unknown-option-default": ["--bogus"],
    "unknown-subcommand": ["frobnicate"],
    "bad-format": ["plan", "a,b", "a,c", "--format", "xml"],
    "bad-hash": ["ring", "a,b", "--hash", "sha1"],
    "vnodes-too-large": ["ring", "a,b", "--vnodes", "2000000"],
    "nodes-1": ["--nodes", "1"],
    "nodes-1-simulate": ["simulate", "--nodes", "1", "--keys", "1000"],
    "keys-0": ["--keys", "0"],
    "bad-spread": ["--spread-vnodes", "1,x", "--keys", "1000"],
    "bad-csv-column": ["assign", "keys.csv", "--nodes", "a,b", "--column", "nope"],
    "nonexistent-input": ["assign", "missing.txt", "--nodes", "a,b"],
    "bad-parquet": ["assign", "bad.parquet", "--nodes", "a,b"],
    "parquet-stdin": ["assign", "--nodes", "a,b", "--input-format", "parquet"],
    "no-layout": ["assign", "keys.txt"],
    "two-layouts": ["assign", "keys.txt", "--ring", "good.json", "--nodes", "a"],
    "plot-not-png": ["--keys", "1000", "--plot", "out.txt"],
    "plot-bad-dir": ["inspect", "a,b", "--plot", "no/such/dir/x.png"],
    "ring-unwritable": ["ring", "a,b", "-o", "no/such/dir/r.json"],
    "plan-missing-arg": ["plan", "a,b"],
}


@pytest.mark.parametrize("args", USER_ERRORS.values(), ids=USER_ERRORS.keys())
def test_user_errors_are_one_line(workdir, args):
    r = run(*args, cwd=workdir, input="")
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("consistent-hash: error: ") and len(lines[0]) > 25
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout


def test_help_and_version():
    r = ok("--help")
    for cmd in ("simulate", "plan", "assign", "inspect", "ring"):
        assert cmd in r.stdout
    v = ok("--version")
    assert v.stdout.strip().startswith("consistent_hash ")


def test_runs_from_another_directory(tmp_path):
    r = ok("plan", "a,b", "a,b,c", "--format", "json", cwd=tmp_path)
    assert json.loads(r.stdout)["moved"] == movement(HashRing(["a", "b"]),
                                                      HashRing(["a", "b", "c"])).moved


# --------------------------------------------------------------------------------------------
# progress bar: only on a terminal
# --------------------------------------------------------------------------------------------


def test_quiet_when_piped(tmp_path):
    r = ok("--keys", "100000")
    assert r.stderr == "" and "Keys moved" in r.stdout
    write_keys(tmp_path / "k.txt", KEYS)
    a = ok("assign", tmp_path / "k.txt", "--nodes", "a,b")
    assert a.stderr == ""
    assert "#" not in r.stdout and "\r" not in r.stdout and "\r" not in a.stdout


def run_with_tty_stderr(*args: str) -> tuple[int, str, str]:
    import pty

    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-m", "consistent_hash", *args], cwd=str(REPO),
                             env=_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=slave)
    finally:
        os.close(slave)
    err = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every slave end closed
                break
            if not chunk:
                break
            err += chunk
        elif p.poll() is not None:
            break
    out = p.stdout.read()
    p.stdout.close()
    rc = p.wait(timeout=30)
    os.close(master)
    return rc, out.decode(), err.decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_bar_on_a_terminal():
    rc, out, err = run_with_tty_stderr("--keys", "100000")
    assert rc == 0
    assert "Keys moved" in out and "#" not in out  # stdout (a pipe) holds only the results
    assert "simulate [" in err and "#" in err and "100.0%" in err and "\r" in err
    assert "Traceback" not in err


def test_console_script():
    # The script installed with this interpreter (a venv's bin/ need not be on PATH), else PATH's
    exe = (shutil.which("consistent-hash", path=os.path.dirname(sys.executable))
           or shutil.which("consistent-hash"))
    if exe is None:
        pytest.skip("the consistent-hash console script is not installed (pip install .)")
    r = run("plan", "a,b", "a,b,c", "--format", "json", prefix=[exe])
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert json.loads(r.stdout)["moved"] == movement(HashRing(["a", "b"]),
                                                      HashRing(["a", "b", "c"])).moved
    bad = run("plan", "missing.json", "a", prefix=[exe])
    assert bad.returncode == 2 and bad.stderr.startswith("consistent-hash: error:")


# --------------------------------------------------------------------------------------------
# issue 14: node names as written, weights as name=weight
# --------------------------------------------------------------------------------------------

ADDRS = ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]


def test_host_port_is_a_name_everywhere(tmp_path):
    ring = HashRing(ADDRS)  # the API's ring of these three names, weight 1 each
    write_keys(tmp_path / "k.txt", KEYS)
    got = parse_assign(ok("assign", tmp_path / "k.txt", "--nodes", ",".join(ADDRS)).stdout)
    assert got == [(k, ring.get(k)) for k in KEYS]
    d = json.loads(ok("inspect", ",".join(ADDRS), "--json").stdout)
    assert [(n["node"], n["weight"], n["vnodes"]) for n in d["nodes"]] == \
        [(a, 1.0, 160) for a in ADDRS]
    assert d["fingerprint"] == ring.fingerprint()
    ringfile.save(ring, tmp_path / "r.json")
    assert ok("ring", ",".join(ADDRS)).stdout == (tmp_path / "r.json").read_text()
    p = json.loads(ok("plan", ",".join(ADDRS[:2]), ",".join(ADDRS), "--json").stdout)
    assert p["moved"] == movement(HashRing(ADDRS[:2]), ring).moved
    for other in ("[::1]:11211", "::1:11211", "cache-1:11211", "127.0.0.1:80"):
        d = json.loads(ok("inspect", f"{other},b", "--json").stdout)
        assert d["fingerprint"] == HashRing([other, "b"]).fingerprint()


def test_weights_are_name_equals_weight(tmp_path):
    spec = "a=2,b=1,10.0.0.1:11211=3,c:80=1"
    ring = HashRing({"a": 2.0, "b": 1.0, "10.0.0.1:11211": 3.0, "c:80": 1.0}, vnodes=50)
    write_keys(tmp_path / "k.txt", KEYS)
    got = parse_assign(ok("assign", tmp_path / "k.txt", "--nodes", spec,
                          "--vnodes", "50").stdout)
    assert got == [(k, ring.get(k)) for k in KEYS]
    d = json.loads(ok("inspect", spec, "--vnodes", "50", "--json").stdout)
    assert d["fingerprint"] == ring.fingerprint()
    # a nodes file: one node a line, optional =weight, comments, blank lines, a BOM, CRLF
    (tmp_path / "nodes.txt").write_bytes(
        b"\xef\xbb\xbfa=2\r\n# comment\n\nb\n10.0.0.1:11211 = 3\nc:80=1\n")
    d = json.loads(ok("inspect", "@" + str(tmp_path / "nodes.txt"), "--vnodes", "50",
                      "--json").stdout)
    assert d["fingerprint"] == ring.fingerprint()


AMBIGUOUS = ["a:2,b", "a,b:0.5", "10.0.0.1:11211:2,10.0.0.2:11211", "cache-1:80,b"]


@pytest.mark.parametrize("spec", AMBIGUOUS)
@pytest.mark.parametrize("command", ["assign", "inspect", "plan", "ring", "migrate"])
def test_old_weight_form_is_a_one_line_error(tmp_path, command, spec):
    (tmp_path / "k.txt").write_text("k\n")
    args = {"assign": ["assign", "k.txt", "--nodes", spec], "inspect": ["inspect", spec],
            "plan": ["plan", "a,b", spec], "ring": ["ring", spec],
            "migrate": ["migrate", "memcached", "--from", "127.0.0.1:1", "--to", spec]}[command]
    r = run(*args, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert "ambiguous" in lines[0] and "name=weight" in lines[0]
    # the same entries in a nodes file
    (tmp_path / "n.txt").write_text(spec.replace(",", "\n"))
    r = run("inspect", "@n.txt", cwd=tmp_path)
    assert r.returncode == 2 and "n.txt: line " in r.stderr and "name=weight" in r.stderr


# --------------------------------------------------------------------------------------------
# issue 14: every user error is one line and exit status 2 (run as subprocesses)
# --------------------------------------------------------------------------------------------


@pytest.fixture
def inputs(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"user": ["u1", None, "u3"], "n": [1, 2, 3]}), tmp_path / "k.parquet")
    pq.write_table(pa.table({"x": [1.5, 2.5]}), tmp_path / "floats.parquet")
    pq.write_table(pa.table({"user": ["u1"]}), tmp_path / "parquet.dat")
    (tmp_path / "keys.txt").write_text("k1\nk2\n")
    (tmp_path / "keys.csv").write_text("user,id\nu1,1\nu2,2\n")
    (tmp_path / "ragged.csv").write_text("user,id\nu1,1\nu2\n")
    (tmp_path / "latin1.txt").write_bytes(b"ok\nalso ok\ncaf\xe9\n")
    (tmp_path / "empty.parquet").write_bytes(b"")
    ringfile.save(HashRing(["a", "b"], hash="md5"), tmp_path / "md5.json")
    (tmp_path / "nodes.txt").write_text("a\nb 2\n")
    return tmp_path


BAD = {
    # node lists and layouts
    "ambiguous-weight": ["assign", "keys.txt", "--nodes", "a:2,b"],
    "ambiguous-host-port-weight": ["inspect", "10.0.0.1:11211:2"],
    "old-nodes-file-form": ["inspect", "@nodes.txt"],
    "weight-inf": ["ring", "a=inf,b"],
    "too-many-positions": ["ring", "a=100000,b", "--vnodes", "1000"],
    "vnodes-0": ["ring", "a,b", "--vnodes", "0"],
    "vnodes-word": ["inspect", "a,b", "--vnodes", "many"],
    "vnodes-huge": ["assign", "keys.txt", "--nodes", "a,b", "--vnodes", "99999999999"],
    "seed-negative": ["ring", "a,b", "--seed", "-1"],
    "plan-md5-vs-list": ["plan", "md5.json", "a,b,c"],
    "plan-json-and-csv": ["plan", "a,b", "a,b,c", "--json", "--csv"],
    # simulate and demo limits
    "simulate-70000-nodes": ["simulate", "--nodes", "70000"],
    "simulate-huge-keys": ["simulate", "--keys", "100000000000"],
    "default-huge-keys": ["--keys", "100000000000"],
    "simulate-huge-vnodes": ["simulate", "--vnodes", "2000000", "--keys", "1000"],
    "simulate-spread-0": ["--spread-vnodes", "1,0", "--keys", "1000"],
    "demo-1-server": ["demo", "memcached", "--servers", "1"],
    "demo-resize-1-server": ["demo", "resize", "--servers", "1"],
    "demo-many-servers": ["demo", "memcached", "--servers", "10000"],
    "demo-unknown": ["demo", "postgres"],
    # the command line itself
    "typo": ["simulat"],
    "typo-far": ["xyzzy"],
    "bad-nulls": ["assign", "keys.txt", "--nodes", "a,b", "--nulls", "skip"],
    "bad-output-format": ["assign", "keys.txt", "--nodes", "a,b", "--output-format", "xml"],
    "json-and-csv-output": ["assign", "keys.txt", "--nodes", "a,b", "--json",
                            "--output-format", "csv"],
    # inputs
    "csv-on-parquet": ["assign", "k.parquet", "--nodes", "a,b", "--input-format", "csv"],
    "text-on-parquet": ["assign", "parquet.dat", "--nodes", "a,b", "--input-format", "text"],
    "parquet-null-key": ["assign", "k.parquet", "--nodes", "a,b"],
    "parquet-float-keys": ["assign", "floats.parquet", "--nodes", "a,b"],
    "parquet-empty-file": ["assign", "empty.parquet", "--nodes", "a,b"],
    "parquet-missing-column": ["assign", "k.parquet", "--nodes", "a,b", "--column", "nope"],
    "parquet-missing-keep": ["assign", "k.parquet", "--nodes", "a,b", "--nulls", "none",
                             "--keep", "nope"],
    "csv-missing-column": ["assign", "keys.csv", "--nodes", "a,b", "--column", "nope"],
    "csv-missing-keep": ["assign", "keys.csv", "--nodes", "a,b", "--keep", "id", "nope"],
    "csv-keep-node": ["assign", "keys.csv", "--nodes", "a,b", "--keep", "node"],
    "csv-ragged": ["assign", "ragged.csv", "--nodes", "a,b"],
    "text-keep": ["assign", "keys.txt", "--nodes", "a,b", "--keep", "x", "--input-format",
                  "text"],
    "latin1-text-file": ["assign", "latin1.txt", "--nodes", "a,b"],
    "unreadable-input-dir": ["assign", ".", "--nodes", "a,b"],
    "unreadable-input-notdir": ["assign", "keys.txt/x", "--nodes", "a,b"],
    "unwritable-output": ["assign", "keys.txt", "--nodes", "a,b", "-o", "no/such/dir/o.csv"],
}


@pytest.mark.parametrize("args", BAD.values(), ids=BAD.keys())
def test_bad_arguments_and_inputs_are_one_line(inputs, args):
    r = run(*args, cwd=inputs, input="")
    assert r.returncode == 2, (r.stdout[-500:], r.stderr[-2000:])
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("consistent-hash: error: ") and len(lines[0]) > 30
    assert "Traceback" not in r.stderr + r.stdout
    assert not (inputs / "no").exists()


STDIN = {
    "latin1-text": (["assign", "--nodes", "a,b"], b"k1\nk2\ncaf\xe9 cr\xe8me\n", "line 3"),
    "latin1-csv": (["assign", "--nodes", "a,b", "--column", "user"],
                   b"user,id\nu1,1\n\xff\xfe,2\n", "line 3"),
    "parquet-as-text": (["assign", "--nodes", "a,b", "--input-format", "text"], None, "PAR1"),
    "csv-no-column": (["assign", "--nodes", "a,b", "--column", "nope"], b"user,id\nu,1\n",
                      "'user', 'id'"),
}


@pytest.mark.parametrize("case", STDIN.values(), ids=STDIN.keys())
def test_bad_stdin_is_one_line_naming_the_place(inputs, case):
    args, data, where = case
    if data is None:
        data = (inputs / "parquet.dat").read_bytes()
    r = run(*args, cwd=inputs, input=data)
    err = r.stderr.decode()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("consistent-hash: error: stdin") and where in err


def test_error_messages_say_what_to_do(inputs):
    def err(*args):
        r = run(*args, cwd=inputs)
        assert r.returncode == 2
        return r.stderr

    assert "invalid choice: 'simulat'" in err("simulat") and "did you mean 'simulate'" in \
        err("simulat")
    assert "did you mean" not in err("xyzzy")
    assert "--hash md5" in err("plan", "md5.json", "a,b,c")
    assert "movement(" not in err("plan", "md5.json", "a,b,c")
    # and the suggestion works
    d = json.loads(ok("plan", "md5.json", "a,b,c", "--hash", "md5", "--json", cwd=inputs).stdout)
    assert d["moved"] == movement(HashRing(["a", "b"], hash="md5"),
                                  HashRing(["a", "b", "c"], hash="md5")).moved
    assert "a=2" in err("inspect", "a:2,b")
    assert "line 3" in err("assign", "latin1.txt", "--nodes", "a,b")
    assert "row 2" in err("assign", "k.parquet", "--nodes", "a,b")  # the null key
    assert "--input-format parquet" in err("assign", "k.parquet", "--nodes", "a,b",
                                           "--input-format", "csv")
    assert "10,000,000" in err("simulate", "--keys", "100000000000")
    assert "1,000" in err("simulate", "--nodes", "70000")
    assert "2 to 64 servers" in err("demo", "memcached", "--servers", "1")


# --------------------------------------------------------------------------------------------
# issue 14: assign's inputs and outputs
# --------------------------------------------------------------------------------------------


def test_bom_is_dropped(tmp_path):
    ring = HashRing(["a", "b", "c"])
    bom = b"\xef\xbb\xbf"
    text = ok("assign", "--nodes", "a,b,c", input=bom + b"k1\nk2\n").stdout.decode()
    assert parse_assign(text) == [("k1", ring.get("k1")), ("k2", ring.get("k2"))]
    (tmp_path / "u.csv").write_bytes(bom + "user,id\nü1,1\nu2,2\n".encode())
    got = parse_assign(ok("assign", tmp_path / "u.csv", "--nodes", "a,b,c",
                          "--column", "user").stdout)
    assert got == [("ü1", ring.get("ü1")), ("u2", ring.get("u2"))]
    got = parse_assign(ok("assign", "--nodes", "a,b,c", "--column", "user",
                          input=(tmp_path / "u.csv").read_bytes()).stdout.decode())
    assert got == [("ü1", ring.get("ü1")), ("u2", ring.get("u2"))]


def test_stdin_is_sniffed(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    ring = HashRing(["a", "b", "c"])
    users = [f"user:{i}" for i in range(200)]
    csv_text = "user,id\n" + "".join(f"{u},{i}\n" for i, u in enumerate(users))
    got = parse_assign(ok("assign", "--nodes", "a,b,c", "--column", "user",
                          input=csv_text).stdout)
    assert got == [(u, ring.get(u)) for u in users]  # the header is not routed as a key
    # without a column named, CSV and one key a line are both readings: the user says which
    # (tests/test_cli_data.py)
    r = run("assign", "--nodes", "a,b,c", input=csv_text)
    assert r.returncode == 2 and "--input-format" in r.stderr and r.stdout == ""
    # text lines, some with commas, stay text lines
    got = parse_assign(ok("assign", "--nodes", "a,b,c", input="".join(
        k + "\n" for k in KEYS)).stdout)
    assert got == [(k, ring.get(k)) for k in KEYS]
    pq.write_table(pa.table({"user": users}), tmp_path / "u.parquet")
    data = (tmp_path / "u.parquet").read_bytes()
    got = parse_assign(ok("assign", "--nodes", "a,b,c", input=data).stdout.decode())
    assert got == [(u, ring.get(u)) for u in users]
    (tmp_path / "u.dat").write_bytes(data)  # a file's content counts, not its name
    got = parse_assign(ok("assign", tmp_path / "u.dat", "--nodes", "a,b,c").stdout)
    assert got == [(u, ring.get(u)) for u in users]


def test_nulls_as_in_the_api(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    ring = HashRing(["a", "b", "c"])
    keys = pa.array(["u1", None, "u3", None, "u5"])
    pq.write_table(pa.table({"user": keys}), tmp_path / "k.parquet")
    expected = ring.get_many(keys, nulls="none").tolist()  # the API's answer
    out = ok("assign", tmp_path / "k.parquet", "--nodes", "a,b,c", "--nulls", "none",
             "--json").stdout
    rows = [json.loads(ln) for ln in out.splitlines()]
    assert [r["key"] for r in rows] == keys.to_pylist()
    assert [r["node"] for r in rows] == expected
    r = run("assign", tmp_path / "k.parquet", "--nodes", "a,b,c", "--nulls", "raise")
    assert r.returncode == 2 and "row 2" in r.stderr and r.stdout == ""


@pytest.mark.parametrize("how", [["-o", "out.parquet"], ["-o", "out.bin",
                                                          "--output-format", "parquet"]])
def test_parquet_output_with_kept_columns(tmp_path, how):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    ring = HashRing(["a", "b", "c"])
    users = [f"user:{i}" for i in range(1000)]
    with open(tmp_path / "u.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "user", "country"])
        w.writerows([str(i), u, "c" + str(i % 7)] for i, u in enumerate(users))
    ok("assign", "u.csv", "--nodes", "a,b,c", "--column", "user", "--keep", "id", "country",
       "--batch", "128", *how, cwd=tmp_path)
    out = tmp_path / how[1]
    assert out.read_bytes()[:4] == b"PAR1"
    t = pq.read_table(out)
    assert t.column_names == ["key", "node", "id", "country"]
    assert t.column("key").to_pylist() == users
    assert t.column("node").to_pylist() == [ring.get(u) for u in users]
    assert t.column("id").to_pylist() == [str(i) for i in range(1000)]
    assert t.column("country").to_pylist() == ["c" + str(i % 7) for i in range(1000)]
    # from Parquet, columns keep their types
    pq.write_table(pa.table({"n": list(range(1000)), "user": users}), tmp_path / "u.parquet")
    ok("assign", "u.parquet", "--nodes", "a,b,c", "--column", "user", "--keep", "n",
       "-o", "o2.parquet", cwd=tmp_path)
    t2 = pq.read_table(tmp_path / "o2.parquet")
    assert t2.column("n").to_pylist() == list(range(1000)) and t2.schema.field("n").type == \
        pa.int64()
    assert t2.column("node").to_pylist() == [ring.get(u) for u in users]


@pytest.mark.parametrize("how", [["--json"], ["-o", "out.jsonl"], ["--output-format", "jsonl"]])
def test_json_lines_output(tmp_path, how):
    ring = HashRing(["a", "b"])
    (tmp_path / "u.csv").write_text("user,id\n" + "".join(f"{k},{i}\n" for i, k in enumerate(
        ["x", "café", "日本"])), encoding="utf-8")
    r = ok("assign", "u.csv", "--nodes", "a,b", "--keep", "id", *how, cwd=tmp_path)
    text = (tmp_path / "out.jsonl").read_text("utf-8") if "-o" in how else r.stdout
    rows = [json.loads(ln) for ln in text.splitlines()]
    assert rows == [{"key": k, "node": ring.get(k), "id": str(i)}
                    for i, k in enumerate(["x", "café", "日本"])]


def test_csv_keep_columns(tmp_path):
    ring = HashRing(["a", "b"])
    with open(tmp_path / "u.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "user", "note"])
        w.writerows([[str(i), k, f"n,{i}"] for i, k in enumerate(KEYS)])
    out = ok("assign", "u.csv", "--nodes", "a,b", "--column", "user", "--keep", "note",
             cwd=tmp_path).stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["key", "node", "note"]
    assert rows[1:] == [[k, ring.get(k), f"n,{i}"] for i, k in enumerate(KEYS)]


def test_assign_streams(tmp_path):
    """Output comes while the input is still being written: keys are routed batch by batch,
    not read whole first."""
    p = subprocess.Popen([sys.executable, "-m", "consistent_hash", "assign", "--nodes", "a,b",
                          "--batch", "1000"], cwd=str(REPO), env=_env(), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    import threading

    ring = HashRing(["a", "b"])
    keys = [f"user:{i}" for i in range(30_000)]  # ~330 KB: past the 64 KB looked at first
    data = "".join(k + "\n" for k in keys).encode()
    done = threading.Event()

    def feed() -> None:  # the keys, then stdin held open until the test saw output
        try:
            p.stdin.write(data)
            p.stdin.flush()
            done.wait(60)
        finally:
            p.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        first = ""
        deadline = time.monotonic() + 60
        while first.count("\n") < 3 and time.monotonic() < deadline:
            ready, _, _ = select.select([p.stdout], [], [], 1)
            if ready:
                first += os.read(p.stdout.fileno(), 4096).decode()
        assert not done.is_set() and p.poll() is None  # stdin is still open
        assert first.startswith(f"key,node\nuser:0,{ring.get('user:0')}\nuser:1,"), first
        done.set()
        rest = p.stdout.read().decode()
        assert parse_assign(first + rest) == [(k, ring.get(k)) for k in keys]
        assert p.wait(timeout=60) == 0
    finally:
        done.set()
        if p.poll() is None:
            p.kill()
            p.wait()
        writer.join(10)
        p.stdout.close()
        p.stderr.close()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_assign_progress_bar_on_a_terminal(tmp_path):
    keys = [f"user:{i}" for i in range(50_000)]
    write_keys(tmp_path / "k.txt", keys)
    rc, out, err = run_with_tty_stderr("assign", str(tmp_path / "k.txt"), "--nodes", "a,b",
                                       "--batch", "5000", "-o", str(tmp_path / "o.csv"))
    assert rc == 0 and "assign [" in err and "100.0%" in err and "\r" in err
    assert out == ""
    ring = HashRing(["a", "b"])
    assert parse_assign((tmp_path / "o.csv").read_text()) == [(k, ring.get(k)) for k in keys]


# --------------------------------------------------------------------------------------------
# issue 14: --json everywhere, the help the README describes
# --------------------------------------------------------------------------------------------


def test_json_on_every_subcommand(tmp_path):
    from consistent_hash.cli import COMMANDS

    for command in COMMANDS:
        assert "--json" in ok(command, "--help").stdout, command
    sim = json.loads(ok("--keys", "2000", "--json").stdout)
    assert sim["keys"] == 2000
    assert json.loads(ok("plan", "a,b", "a,b,c", "--json").stdout)["moved"] == movement(
        HashRing(["a", "b"]), HashRing(["a", "b", "c"])).moved
    # the first spelling still works and gives the same document
    assert ok("plan", "a,b", "a,b,c", "--format", "json").stdout == ok(
        "plan", "a,b", "a,b,c", "--json").stdout
    assert json.loads(ok("inspect", "a,b", "--json").stdout)["fingerprint"] == HashRing(
        ["a", "b"]).fingerprint()
    d = json.loads(ok("ring", "a,b", "-o", tmp_path / "r.json", "--json").stdout)
    assert d["fingerprint"] == ringfile.load(tmp_path / "r.json").fingerprint() == HashRing(
        ["a", "b"]).fingerprint()
    assert json.loads(ok("ring", "a,b", "--json").stdout)["fingerprint"] == d["fingerprint"]


def test_top_level_help_lists_the_default_options():
    out = ok("--help").stdout
    for option in ("--keys", "--nodes", "--vnodes", "--json"):  # what the README says
        assert option in out, option
    for cmd in ("simulate", "plan", "assign", "inspect", "ring", "migrate", "demo"):
        assert cmd in out
    assert "name=weight" in out


def test_default_job_still_runs_without_arguments():
    r = ok()
    assert "Keys moved when the node count changes" in r.stdout and r.stderr == ""


# --------------------------------------------------------------------------------------------
# issue 20: every numeric option of every subcommand is checked the same way
# --------------------------------------------------------------------------------------------

HUGE = "1" + "0" * 30
WHOLE = ["0", "-1", "x", "1.5", HUGE]  # refused by an option that takes a count >= 1
# (subcommand and its other arguments, {option: out-of-range values})
NUMERIC: list[tuple[list[str], dict[str, list[str]]]] = [
    (["simulate", "--keys", "1000"], {
        "--keys": WHOLE, "--nodes": [*WHOLE, "1", "1001"],
        "--vnodes": [*WHOLE, "1000001"],
        "--spread-vnodes": ["0", "1,1000001", "1,x", "", "1,-1", f"1,{HUGE}"]}),
    (["plan", "a,b", "a,b,c"], {"--vnodes": [*WHOLE, "1000001"],
                                "--seed": ["-1", "x", str(2**64)], "--ranges": ["-1", "x"]}),
    (["assign", "keys.txt", "--nodes", "a,b"], {
        "--vnodes": [*WHOLE, "1000001"], "--seed": ["-1", "x", str(2**64)],
        "--batch": WHOLE}),
    (["inspect", "a,b"], {"--vnodes": [*WHOLE, "1000001"], "--seed": ["-1", str(2**64)]}),
    (["ring", "a,b"], {"--vnodes": [*WHOLE, "1000001"], "--seed": ["-1", str(2**64)]}),
    (["migrate", "memcached", "--from", "127.0.0.1:1", "--to", "127.0.0.1:1,127.0.0.1:2"], {
        "--vnodes": [*WHOLE, "1000001"], "--seed": ["-1", str(2**64)],
        "--batch-size": WHOLE, "--rate": ["0", "-1", "nan", "x"],
        "--timeout": ["0", "-1", "nan", "inf", "1e400", "x"], "--db": ["-1", "x", HUGE]}),
    (["demo", "memcached"], {"--keys": WHOLE, "--servers": [*WHOLE, "1", "65"],
                             "--rounds": [*WHOLE, "101"]}),
]
NUMERIC_CASES = [(base, opt, v) for base, opts in NUMERIC for opt, vals in opts.items()
                 for v in vals]


def test_numeric_options_are_all_listed():
    """NUMERIC names every option of every subcommand that takes a number."""
    from consistent_hash.cli import SUBCOMMANDS, parser

    sub = next(a for a in parser()._actions if a.dest == "command")
    listed = {base[0]: set(opts) for base, opts in NUMERIC}
    for command in SUBCOMMANDS:
        numeric = {a.option_strings[-1] for a in sub.choices[command.NAME]._actions
                   if a.option_strings and a.type not in (None, str)}
        if command.NAME == "simulate":
            numeric.add("--spread-vnodes")  # a list of numbers, parsed by simulate
        assert numeric <= listed.get(command.NAME, set()), (command.NAME, numeric)


@pytest.mark.parametrize("base,option,value", NUMERIC_CASES,
                         ids=[f"{b[0]}{o}={v[:12]}" for b, o, v in NUMERIC_CASES])
def test_numeric_options_out_of_range_are_one_line(tmp_path, base, option, value):
    """simulate --vnodes 1000001 was a 19-line traceback (exit 1) where plan said one line."""
    (tmp_path / "keys.txt").write_text("k1\nk2\n")
    r = run(*base, f"{option}={value}", cwd=tmp_path, input="")
    assert r.returncode == 2, (r.stdout[-500:], r.stderr[-2000:])
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("consistent-hash: error: "), r.stderr
    assert option in lines[0], lines[0]
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_help_mentions_no_hidden_option():
    """assign --help said "batches of --batch keys", an option --help does not list."""
    from consistent_hash.cli import SUBCOMMANDS, parser

    sub = next(a for a in parser()._actions if a.dest == "command")
    for command in SUBCOMMANDS:
        p = sub.choices[command.NAME]
        hidden = [o for a in p._actions if a.help == "==SUPPRESS==" for o in a.option_strings]
        text = ok(command.NAME, "--help").stdout
        for option in hidden:
            assert not re.search(re.escape(option) + r"(?![\w-])", text), (command.NAME, option)


# --------------------------------------------------------------------------------------------
# issue 20: a failed write leaves nothing behind
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["ring", "a,b", "-o", "out"],
                                  ["assign", "keys.txt", "--nodes", "a,b", "-o", "out"]],
                         ids=["ring", "assign"])
def test_output_onto_a_directory_leaves_no_temporary_file(tmp_path, args):
    """The rename into place fails (the output is a directory): one line, exit 2, and no
    stray out.tmp<pid> beside it (assign also printed a traceback)."""
    (tmp_path / "keys.txt").write_text("k1\nk2\n")
    (tmp_path / "out").mkdir()
    r = run(*args, cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr and "'out'" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keys.txt", "out"]
    assert list((tmp_path / "out").iterdir()) == []


def test_ringfile_save_cleans_up_when_the_rename_fails(tmp_path, monkeypatch):
    ring = HashRing(["a", "b"])
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        ringfile.save(ring, tmp_path / "d")
    assert [p.name for p in tmp_path.iterdir()] == ["d"]

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError):
        ringfile.save(ring, tmp_path / "r.json")
    assert [p.name for p in tmp_path.iterdir()] == ["d"]
    monkeypatch.undo()
    ringfile.save(ring, tmp_path / "r.json")  # and a good save still works
    assert ringfile.load(tmp_path / "r.json") == ring
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "r.json"]
