"""``consistent-hash assign`` never guesses away data (issue 20).

The input format it recognises by itself keeps every input line as a row, or the run stops with
one line that says to pass ``--input-format``; the output writes keys and kept columns as the
data they are: text as text, bytes as their UTF-8 text (the bytes that are not UTF-8 as
``\\xNN``), never a Python repr, the same in CSV, JSON lines and Parquet.

Most cases run the CLI in this process (``consistent_hash.cli.main`` over in-memory stdin and
stdout), so that Hypothesis can try many inputs; the first ones also run as a subprocess.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import io
import json
import re
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from consistent_hash import HashRing
from consistent_hash.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from test_cli import ok, parse_assign, run  # noqa: E402

RING = HashRing(["a", "b", "c"])


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)

    def isatty(self) -> bool:
        return False


class _Stdout:
    def __init__(self) -> None:
        self.buffer = io.BytesIO()

    def isatty(self) -> bool:
        return False


def assign(data: bytes, *args: str) -> tuple[int, bytes, str]:
    """(exit status, stdout, stderr) of ``assign --nodes a,b,c ARGS`` with data on stdin."""
    out, err = _Stdout(), io.StringIO()
    with mock.patch.object(sys, "stdin", _Stdin(data)), \
            mock.patch.object(sys, "stdout", out), contextlib.redirect_stderr(err):
        rc = main(["assign", "--nodes", "a,b,c", *args])
    return rc, out.buffer.getvalue(), err.getvalue()


def json_rows(out: bytes) -> list[dict]:
    return [json.loads(ln) for ln in out.decode("utf-8").split("\n") if ln]


def asks_for_input_format(rc: int, err: str) -> bool:
    lines = err.splitlines()
    return (rc == 2 and len(lines) == 1 and lines[0].startswith("consistent-hash: error: ")
            and "--input-format text" in lines[0] and "--input-format csv" in lines[0])


# -- point 2: one key a line, commas in the keys --------------------------------------------

NAMES = "Smith, John\nDoe, Jane\nRoe, Richard\n"
TENANTS = "tenant-a,1\ntenant-b,2\n"


@pytest.mark.parametrize("text", [NAMES, TENANTS, "user,id\n", "a,b,c\nd,e,f\n"],
                         ids=["names", "tenants", "one-line", "three-fields"])
def test_lines_with_commas_are_never_cut_into_csv(text, tmp_path):
    """The issue's cases: these were read as CSV with a header (3 keys in, 2 rows out; 2 in,
    1 out), exit 0.  Now the run stops before any output, saying how to say which it is."""
    rc, out, err = assign(text.encode())
    assert asks_for_input_format(rc, err), (rc, out, err)
    assert out == b""
    # the same as a subprocess, from stdin and from a file whose name says nothing
    r = run("assign", "--nodes", "a,b,c", input=text)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
    assert "--input-format" in r.stderr and r.stdout == ""
    (tmp_path / "keys.dat").write_text(text)
    r = run("assign", tmp_path / "keys.dat", "--nodes", "a,b,c")
    assert r.returncode == 2 and "--input-format" in r.stderr and r.stdout == ""
    # and each way it suggests works: every line a key, or CSV with a header
    lines = text.splitlines()
    got = parse_assign(ok("assign", "--nodes", "a,b,c", "--input-format", "text",
                          input=text).stdout)
    assert got == [(k, RING.get(k)) for k in lines]
    rows = list(csv.reader(lines))
    got = parse_assign(ok("assign", "--nodes", "a,b,c", "--input-format", "csv",
                          input=text).stdout)
    assert got == [(r[0], RING.get(r[0])) for r in rows[1:]]


def test_csv_when_the_header_names_the_column():
    text = "user,id\nu1,1\nu2,2\n"
    rc, out, err = assign(text.encode(), "--column", "user", "--json")
    assert rc == 0 and err == ""
    assert json_rows(out) == [{"key": k, "node": RING.get(k)} for k in ("u1", "u2")]
    # a column the first line does not name: an error listing what the first line holds
    rc, out, err = assign(NAMES.encode(), "--column", "user")
    assert rc == 2 and "no column 'user'" in err and out == b""


def test_mixed_lines_stay_lines():
    """Lines with different numbers of commas cannot be CSV rows: each is one key."""
    lines = ["user:1", "Smith, John", "a,b,c", 'quo"te', " pad ", "", "x\ty"]
    rc, out, err = assign("".join(k + "\n" for k in lines).encode(), "--json")
    assert rc == 0 and err == ""
    assert json_rows(out) == [{"key": k, "node": RING.get(k)} for k in lines]


LINE = st.text(st.sampled_from('ab,"\r \t;\x0b\x1c\u2028é'), max_size=8)


@given(lines=st.lists(LINE.filter(lambda s: "\n" not in s), max_size=12),
       final_newline=st.booleans())
@example(lines=["Smith, John", "Doe, Jane"], final_newline=True)
@example(lines=["a,b", 'c,"d\r'], final_newline=False)
def test_recognised_input_keeps_every_line(lines, final_newline):
    """Whatever the lines, the recognised input keeps every one as a row (CRLF ends a line
    too), or the run stops with one line asking for --input-format; nothing in between."""
    if lines and not final_newline and lines[-1] == "":
        final_newline = True  # a last line with no text and no newline is not a line
    data = "\n".join(lines) + ("\n" if final_newline and lines else "")
    rc, out, err = assign(data.encode(), "--json")
    if rc != 0:
        assert asks_for_input_format(rc, err), (data, rc, err)
        assert out == b""
        return
    assert err == ""
    want = [k[:-1] if k.endswith("\r") else k for k in lines]
    assert [r["key"] for r in json_rows(out)] == want


# -- point 3: the output is the data, never a repr -------------------------------------------

def _parquet(tmp_path, **columns):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table(columns), path)
    return path


# binary keys: UTF-8 ones are their text; a byte outside UTF-8 is written \xNN
BINARY_KEYS = [b"user:1", "café".encode(), b"caf\xe9", b"\xff\xfe", b"a\\b", b""]
BINARY_TEXT = ["user:1", "café", "caf\\xe9", "\\xff\\xfe", "a\\b", ""]


REPR = re.compile(r"""(?<![\w"\\])b['"]""")  # a Python bytes repr: b'...' or b"..."


def _outputs(tmp_path, path, *args):
    """The CSV rows, JSON lines rows and Parquet table of one assign run each."""
    pq = pytest.importorskip("pyarrow.parquet")
    csv_out = ok("assign", path, "--nodes", "a,b,c", *args).stdout
    assert not REPR.search(csv_out), csv_out
    rows = list(csv.reader(io.StringIO(csv_out, newline="")))
    js = ok("assign", path, "--nodes", "a,b,c", "--json", *args).stdout
    assert not REPR.search(js), js
    ok("assign", path, "--nodes", "a,b,c", "-o", tmp_path / "out.parquet", *args)
    return rows, [json.loads(ln) for ln in js.splitlines()], pq.read_table(
        tmp_path / "out.parquet")


def test_binary_keys_and_columns_are_text_not_reprs(tmp_path):
    pa = pytest.importorskip("pyarrow")
    path = _parquet(tmp_path, key=pa.array(BINARY_KEYS, pa.binary()),
                    blob=pa.array(list(reversed(BINARY_KEYS)), pa.large_binary()))
    nodes = [RING.get(k) for k in BINARY_KEYS]
    rows, js, table = _outputs(tmp_path, path, "--keep", "blob")
    assert rows[0] == ["key", "node", "blob"]
    assert rows[1:] == [[t, n, b] for t, n, b in
                        zip(BINARY_TEXT, nodes, reversed(BINARY_TEXT), strict=True)]
    assert js == [{"key": t, "node": n, "blob": b} for t, n, b in
                  zip(BINARY_TEXT, nodes, reversed(BINARY_TEXT), strict=True)]
    # Parquet keeps the bytes themselves (and their type)
    assert table.column("key").to_pylist() == BINARY_KEYS
    assert table.schema.field("key").type == pa.binary()
    assert table.column("blob").to_pylist() == list(reversed(BINARY_KEYS))
    assert table.column("node").to_pylist() == nodes


def test_kept_columns_of_every_kind_are_written_as_data(tmp_path):
    pa = pytest.importorskip("pyarrow")
    when = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456)
    path = _parquet(
        tmp_path, key=pa.array(["k1", "k2"]),
        flag=pa.array([True, None]),
        n=pa.array([1, -2], pa.int64()),
        x=pa.array([1.5, None]),
        at=pa.array([when, None], pa.timestamp("us")),
        day=pa.array([when.date(), None], pa.date32()),
        tags=pa.array([[b"t1", b"\xff"], []], pa.list_(pa.binary())),
        pair=pa.array([{"s": "v", "b": b"w"}, None],
                      pa.struct([("s", pa.string()), ("b", pa.binary())])))
    cols = ["flag", "n", "x", "at", "day", "tags", "pair"]
    rows, js, table = _outputs(tmp_path, path, "--keep", *cols)
    assert rows[0] == ["key", "node", *cols]
    assert rows[1] == ["k1", RING.get("k1"), "true", "1", "1.5", "2024-05-06T07:08:09.123456",
                       "2024-05-06", '["t1", "\\\\xff"]', '{"s": "v", "b": "w"}']
    assert rows[2] == ["k2", RING.get("k2"), "", "-2", "", "", "", "[]", ""]
    assert js[0] == {"key": "k1", "node": RING.get("k1"), "flag": True, "n": 1, "x": 1.5,
                     "at": "2024-05-06T07:08:09.123456", "day": "2024-05-06",
                     "tags": ["t1", "\\xff"], "pair": {"s": "v", "b": "w"}}
    assert js[1] == {"key": "k2", "node": RING.get("k2"), "flag": None, "n": -2, "x": None,
                     "at": None, "day": None, "tags": [], "pair": None}
    # the CSV cell of a nested value is its JSON text
    assert json.loads(rows[1][7]) == js[0]["tags"] and json.loads(rows[1][8]) == js[0]["pair"]
    assert table.column_names == ["key", "node", *cols]
    assert table.column("tags").to_pylist() == [[b"t1", b"\xff"], []]
    assert table.column("at").to_pylist() == [when, None]


def test_text_input_is_the_same_in_every_output(tmp_path):
    keys = ["user:1", "café", "with,comma", 'quo"te', "a\\xff", "日本"]
    (tmp_path / "k.txt").write_text("".join(k + "\n" for k in keys), encoding="utf-8")
    rows, js, table = _outputs(tmp_path, tmp_path / "k.txt")
    nodes = [RING.get(k) for k in keys]
    assert rows[1:] == [[k, n] for k, n in zip(keys, nodes, strict=True)]
    assert js == [{"key": k, "node": n} for k, n in zip(keys, nodes, strict=True)]
    assert table.column("key").to_pylist() == keys
