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
    assert "Traceback" not in r.stderr
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
    exe = shutil.which("consistent-hash")
    if exe is None:
        pytest.skip("the consistent-hash console script is not installed (pip install .)")
    r = run("plan", "a,b", "a,b,c", "--format", "json", prefix=[exe])
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert json.loads(r.stdout)["moved"] == movement(HashRing(["a", "b"]),
                                                      HashRing(["a", "b", "c"])).moved
    bad = run("plan", "missing.json", "a", prefix=[exe])
    assert bad.returncode == 2 and bad.stderr.startswith("consistent-hash: error:")
