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
    """The model: the lines of a UTF-8 text (a leading byte-order mark dropped), split at
    \n, one \r before it dropped (\r\n), without a last empty line."""
    parts = data.decode("utf-8-sig").split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def _python(keys: object) -> list[object]:
    to_pylist = getattr(keys, "to_pylist", None)
    return to_pylist() if to_pylist is not None else list(keys)  # type: ignore[call-overload]


def read_all(fmt: str, column: str | None, size: int
             ) -> tuple[list[object], list[tuple[object, object]]] | None:
    """(every key read, [(batch, its _Input)]) or None for a clean refusal."""
    try:
        source = assign._open_input(TMP, fmt, column, [])
        try:
            batches = [(batch, source) for batch in source.batches(size)]
        finally:
            source.close()
    except _common.UserError:
        return None
    assert all(0 < len(_python(batch.keys)) <= size for batch, _ in batches)
    return [k for batch, _ in batches for k in _python(batch.keys)], batches


def test_one(data: bytes) -> None:
    b = _harness.Bytes(data)
    fmt = b.pick(FORMATS)
    column = None if b.int(0, 2) else b.pick(["key", "k", "", "é", "c0", "c1"])
    size = b.int(1, 5)
    if fmt == "parquet" and b.int(0, 7):
        body = parquet_file(b)
    else:
        body = b.rest()
    if fmt == "text":
        column = None  # --column is for CSV and Parquet
    with open(TMP, "wb") as f:
        f.write(body)
    small = read_all(fmt, column, size)
    whole = read_all(fmt, column, 1 << 20)
    assert (small is None) == (whole is None), (small, whole)
    if small is None or whole is None:
        return
    keys, batches = small
    assert keys == whole[0], (keys, whole[0])
    if fmt == "text":
        assert keys == lines_of(body), (keys, body)
    for batch, source in batches:
        python_keys = _python(batch.keys)
        try:
            routed = list(assign._route(RING, batch, "raise", source))
        except _common.UserError:
            for k in python_keys:  # refused: some key is one the ring refuses (a missing key)
                try:
                    RING.get(k)
                except (TypeError, ValueError):
                    break
            else:
                raise AssertionError(f"batch {python_keys!r} refused but every key routes")
            continue
        assert routed == [RING.get(k) for k in python_keys]


if __name__ == "__main__":
    _harness.main(test_one)
