"""The output of ``consistent-hash assign``: CSV, JSON lines or Parquet, by one rule for
values that are not text."""

from __future__ import annotations

import csv
import datetime
import json
from typing import IO, Any

from consistent_hash.cli._readers import (
    _Batch,
    _Input,
    _pyarrow,
)

# -- output ----------------------------------------------------------------------------------

# CSV and JSON lines are text, so a value that is not text is written as the data it is, by one
# rule for both (Parquet keeps every column's Arrow type, the bytes themselves included):
#   bytes               its UTF-8 text; a byte that is not part of UTF-8 as \xNN
#                       (b"caf\xc3\xa9" -> café, b"caf\xe9" -> caf\xe9)
#   null                an empty CSV cell; JSON null
#   bool                true / false
#   int, float          its decimal text; a JSON number
#   date, time          ISO 8601 (2024-05-06, 2024-05-06T07:08:09.123456)
#   list, struct, map   JSON (in a CSV cell, its JSON text), its items by the same rule
#   anything else       str() of its Python value (a decimal: 1.50)

def _plain(x: Any) -> Any:
    """A value as JSON data (str, int, float, bool, None, list, dict), by the rule above."""
    if x is None or isinstance(x, (str, int, float)):
        return x
    if isinstance(x, (bytes, bytearray, memoryview)):
        return bytes(x).decode("utf-8", "backslashreplace")
    if isinstance(x, (datetime.date, datetime.time)):  # a datetime is a date
        return x.isoformat()
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return str(x)


def _csv_cell(x: Any) -> Any:
    x = _plain(x)
    if x is None:
        return ""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, (list, dict)):
        return json.dumps(x, ensure_ascii=False)
    return x


def _cells(values: Any, cell: Any) -> list[Any]:
    """A column's values as cells: ``cell`` applied unless they are text or whole numbers
    already (a text or CSV input's str, an Arrow string or integer column)."""
    if not hasattr(values, "to_pylist"):
        return list(values)
    out: list[Any] = values.to_pylist()
    pa = _pyarrow("Arrow columns")
    t = values.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t):
        return out
    return [cell(x) for x in out]


class _CSVWriter:
    def __init__(self, stream: IO[bytes], keep: list[str], source: _Input) -> None:
        import io

        self.text = io.TextIOWrapper(stream, encoding="utf-8", newline="", write_through=True)
        self.w = csv.writer(self.text, lineterminator="\n")
        self.w.writerow(["key", "node", *keep])
        self.keep = keep

    def write(self, batch: _Batch, nodes: Any) -> None:
        cols = [_cells(batch.columns[c], _csv_cell) for c in self.keep]
        self.w.writerows(zip(_cells(batch.keys, _csv_cell), nodes.tolist(), *cols,
                             strict=True))

    def close(self) -> None:
        self.text.flush()
        self.text.detach()


class _JSONLinesWriter:
    def __init__(self, stream: IO[bytes], keep: list[str], source: _Input) -> None:
        self.stream, self.keep = stream, keep

    def write(self, batch: _Batch, nodes: Any) -> None:
        names = ["key", "node", *self.keep]
        cols = [_cells(batch.keys, _plain), nodes.tolist(),
                *(_cells(batch.columns[c], _plain) for c in self.keep)]
        dumps = json.JSONEncoder(ensure_ascii=False).encode
        self.stream.write("".join(dumps(dict(zip(names, row, strict=True))) + "\n"
                                  for row in zip(*cols, strict=True)).encode("utf-8"))

    def close(self) -> None:
        pass


class _ParquetWriter:
    def __init__(self, stream: IO[bytes], keep: list[str], source: _Input) -> None:
        self.pa = _pyarrow("Parquet output")
        self.stream, self.keep = stream, keep
        self.writer: Any = None

    def write(self, batch: _Batch, nodes: Any) -> None:
        pa = self.pa
        cols = {"key": _arrow(pa, batch.keys), "node": pa.array(nodes, type=pa.string())}
        cols.update((c, _arrow(pa, batch.columns[c])) for c in self.keep)
        table = pa.table(cols)
        if self.writer is None:
            self.writer = pa.parquet.ParquetWriter(self.stream, table.schema)
        self.writer.write_table(table)

    def close(self) -> None:
        pa = self.pa
        if self.writer is None:  # no keys: an empty table of the output's columns
            schema = pa.schema([("key", pa.string()), ("node", pa.string())]
                               + [(c, pa.string()) for c in self.keep])
            self.writer = pa.parquet.ParquetWriter(self.stream, schema)
        self.writer.close()


def _arrow(pa: Any, values: Any) -> Any:
    return values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(
        values, type=pa.string())


_WRITERS: dict[str, Any] = {"csv": _CSVWriter, "jsonl": _JSONLinesWriter,
                            "parquet": _ParquetWriter}
