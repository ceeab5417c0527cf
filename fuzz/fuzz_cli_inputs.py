"""Fuzz the CLI's key readers (``consistent-hash assign``): text lines, a CSV column and a
Parquet column, in every format ``--input-format`` offers (a new reader is fuzzed as soon as
it is listed there), then the routing of what was read.

Text and CSV inputs are the bytes as a file (any encoding damage, any CSV quoting); Parquet
inputs are files written by pyarrow from a table decoded from the bytes (string, binary,
large_string, int64 and dictionary columns, missing values), sometimes truncated, or the raw
bytes. A damaged input must be a UserError (one line, exit 2), never a traceback; what is read
must not depend on the batch size, text lines must be the lines of the file, and every batch
must route as ``ring.get`` routes each key.

    python fuzz/fuzz_cli_inputs.py [-atheris_runs=N] fuzz/corpus/cli_inputs
"""

from __future__ import annotations

import os
import re
import tempfile

import _harness  # noqa: I001
import pyarrow as pa
import pyarrow.parquet as pq

from consistent_hash import HashRing
from consistent_hash.cli import _common, assign

RING = HashRing(["a", "b", "c"], vnodes=16)
TMP = os.path.join(tempfile.gettempdir(), f"fuzz_cli_inputs.{os.getpid()}")


def _formats() -> list[str]:
    p = _common.Parser()
    assign.add_parser(p.add_subparsers(dest="command", parser_class=_common.Parser))
    sub = next(a for a in p._actions if a.dest == "command").choices["assign"]  # type: ignore
    choices = next(a for a in sub._actions if a.dest == "input_format").choices
    return [c for c in choices if c != "auto"]


FORMATS = _formats()


def parquet_file(b: _harness.Bytes) -> bytes:
    n = b.int(0, 12)
    cols = {}
    for j in range(b.int(1, 3)):
        kind = b.int(0, 4)
        vals = [None if not b.int(0, 5) else (b.text(6) if kind in (0, 2, 4) else
                                               b.bytes(6) if kind == 1 else b.int(-9, 9))
                for _ in range(n)]
        typ = [pa.string(), pa.binary(), pa.large_string(), pa.int64(), pa.string()][kind]
        arr = pa.array(vals, type=typ)
        if kind == 4:
            arr = arr.dictionary_encode()
        cols[b.pick(["key", "k", "", "é", f"c{j}"])] = arr
    table = pa.table(list(cols.values()), names=list(cols))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, row_group_size=b.int(1, 8))
    blob = sink.getvalue().to_pybytes()
    if not b.int(0, 7):
        blob = blob[: b.int(0, len(blob))]
    return blob


def lines_of(data: bytes) -> list[str]:
    """The model: the lines of a UTF-8 text, split at \\n, \\r\\n or \\r, without them."""
    text = data.decode("utf-8")
    parts = re.split(r"\r\n|\r|\n", text)
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def read_all(fmt: str, column: str | None, size: int) -> list[object] | None:
    try:
        batches = list(assign._read_keys(TMP, fmt, column, size))
    except _common.UserError:
        return None
    assert all(0 < len(batch) <= size for batch in batches)
    return [k for batch in batches for k in batch]


def test_one(data: bytes) -> None:
    b = _harness.Bytes(data)
    fmt = b.pick(FORMATS)
    column = None if b.int(0, 2) else b.pick(["key", "k", "", "é", "c0", "c1"])
    size = b.int(1, 5)
    if fmt == "parquet" and b.int(0, 7):
        body = parquet_file(b)
    else:
        body = b.rest()
    with open(TMP, "wb") as f:
        f.write(body)
    keys = read_all(fmt, column, size)
    whole = read_all(fmt, column, 1 << 20)
    assert keys == whole, (keys, whole)
    if keys is None:
        return
    if fmt == "text":
        assert keys == lines_of(body), (keys, body)
    for i in range(0, len(keys), size):
        batch = keys[i : i + size]
        try:
            routed = assign._route_batch(RING, batch)
        except _common.UserError:
            for k in batch:  # refused: some key is one the ring refuses (None, a list, ...)
                try:
                    RING.get(k)
                except (TypeError, ValueError):
                    break
            else:
                raise AssertionError(f"batch {batch!r} refused but every key routes")
            continue
        assert routed == [RING.get(k) for k in batch]


if __name__ == "__main__":
    _harness.main(test_one)
