"""``consistent-hash assign``: route keys (text lines, a CSV column or a Parquet column) to the
nodes of a layout, writing CSV, Parquet or JSON lines (``key``, ``node`` and the ``--keep``
columns).

Input: a file or ``-`` (stdin), in the format ``--input-format`` names or else recognised
without guessing away a line: Parquet by its ``PAR1`` magic (or a ``.parquet`` / ``.pq``
name); CSV with a header row when ``--column`` or ``--keep`` names a column (the header must
name it) or the name ends in ``.csv``; text (one key a line, every line a key, CRLF endings
allowed) for a ``.txt`` name or any other content.  Content whose every line has the same
number (>= 2) of comma-separated fields (``Smith, John``, ``tenant-a,1``) could be either, so
it is an error that says to pass ``--input-format text`` or ``--input-format csv``.  Text and
CSV must be UTF-8 (a byte-order mark is dropped); a line that is not is reported by its number.
Output: CSV (the default), Parquet or JSON lines, from ``--output-format``, ``--json`` or the
extension of ``-o`` (``.parquet`` / ``.pq``, ``.jsonl`` / ``.ndjson`` / ``.json``).
Everything streams in batches of keys, so memory stays bounded for any input size
(Parquet on stdin is spooled to a temporary file first: Parquet is read from its footer).
``--nulls none`` routes a missing key (a Parquet null) to no node (an empty cell, null);
``raise`` (the default) stops at the first one, naming its row.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from consistent_hash import HashRing
from consistent_hash.cli import _common
from consistent_hash.cli._common import Subparsers, UserError

NAME = "assign"

_BOM = b"\xef\xbb\xbf"
_MAGIC = b"PAR1"
_SNIFF = 1 << 16  # bytes looked at to recognise the input
_CHUNK = 1 << 20  # bytes read at a time from text and CSV input
OUTPUT_FORMATS = ("csv", "parquet", "jsonl")
_EXTENSIONS = {".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl",
               ".json": "jsonl"}


def add_parser(subparsers: Subparsers) -> None:
    a = subparsers.add_parser(NAME, help="route keys to nodes: CSV, Parquet or JSON lines",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("input", nargs="?", default="-", help="keys file, or - for stdin (default)")
    a.add_argument("--ring", help="ring file, or a proxy's configuration file (nginx.conf, "
                                  "haproxy.cfg, Envoy cluster, nutcracker pools)")
    a.add_argument("--nodes", help="node list: a,b,c, a=2,b=1, or @file")
    _common.add_layout_options(a)
    _common.add_config_options(a)
    a.add_argument("--input-format", choices=["auto", "text", "csv", "parquet"], default="auto",
                   help="auto (default): recognised from the content")
    a.add_argument("--column", help="key column for CSV / Parquet (default: the first)")
    a.add_argument("--keep", nargs="+", action="extend", default=[], metavar="COL",
                   help="CSV / Parquet columns to carry through to the output")
    a.add_argument("--nulls", choices=["raise", "none"], default="raise",
                   help="a missing key: raise (default) or none (routed to no node)")
    a.add_argument("-o", "--output", help="output file (default stdout)")
    a.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None,
                   help="csv, parquet or jsonl (default: from -o's extension, else csv)")
    a.add_argument("--json", action="store_true", help="write JSON lines (--output-format jsonl)")
    a.add_argument("--batch", type=_common.batch, default=100_000, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    if (args.ring is None) == (args.nodes is None):
        raise UserError("give exactly one of --ring FILE or --nodes LIST")
    ring = (_common.layout_from_spec(args.ring, args) if args.ring is not None
            else _common.router_from_spec(args.nodes, args))
    if len(ring) == 0:
        raise UserError("the layout has no nodes")
    out_fmt = _output_format(args)
    keep = list(dict.fromkeys(args.keep))
    for col in keep:
        if col in ("key", "node"):
            raise UserError(f"--keep {col}: the output already has a {col!r} column")
    if out_fmt == "parquet":
        _pyarrow("Parquet output")
        if args.output in (None, "-") and sys.stdout.isatty():
            raise UserError("Parquet output is binary: give -o FILE or redirect stdout")
    source = _open_input(args.input, args.input_format, args.column, keep)
    try:
        return _assign(ring, source, args, out_fmt, keep)
    finally:
        source.close()


def _output_format(args: argparse.Namespace) -> str:
    if args.output_format is not None:
        if args.json and args.output_format != "jsonl":
            raise UserError(f"--json writes JSON lines, not --output-format {args.output_format}")
        return str(args.output_format)
    if args.json:
        return "jsonl"
    if args.output not in (None, "-"):
        return _EXTENSIONS.get(os.path.splitext(args.output)[1].lower(), "csv")
    return "csv"


def _assign(ring: HashRing, source: _Input, args: argparse.Namespace, out_fmt: str,
            keep: list[str]) -> int:
    batches = source.batches(args.batch)
    # Read and route the first batch before any output is opened or written, so that a bad
    # input or column is reported without clobbering an existing output file.
    batch = next(batches, None)
    progress = _common.Progress(source.total, "assign")  # a Parquet file's rows are known now
    nodes = _route(ring, batch, args.nulls, source) if batch is not None else None
    tmp = None
    if args.output in (None, "-"):
        stream: IO[bytes] = sys.stdout.buffer
    else:
        tmp = f"{args.output}.tmp{os.getpid()}"
        try:
            stream = open(tmp, "wb")
        except OSError as e:
            raise UserError(f"cannot write {args.output!r}: {e.strerror}") from None
    ok = False
    try:
        writer = _WRITERS[out_fmt](stream, keep, source)
        while batch is not None and nodes is not None:
            writer.write(batch, nodes)
            progress.advance(batch.size)
            batch = next(batches, None)
            nodes = _route(ring, batch, args.nulls, source) if batch is not None else None
        writer.close()
        stream.flush()
        ok = True
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            raise
        raise UserError(f"cannot write {args.output or 'stdout'!r}: {e.strerror or e}") from None
    finally:
        progress.close()
        if tmp is not None:
            stream.close()
            try:
                if ok:
                    os.replace(tmp, args.output)
            except OSError as e:
                raise UserError(f"cannot write {args.output!r}: {e.strerror or e}") from None
            finally:
                if os.path.lexists(tmp):  # a failed run or rename leaves nothing behind
                    os.unlink(tmp)
    return 0


# -- input -----------------------------------------------------------------------------------

@dataclass
class _Batch:
    """Up to --batch keys (a list of str, or an Arrow array), the kept columns beside them,
    the number of the first key's row (1 = the first data row) and the input it took."""

    keys: Any
    columns: dict[str, Any]
    first_row: int
    size: int  # bytes or rows consumed, for the progress bar


@dataclass
class _Input:
    name: str  # for messages: the path, or "stdin"
    fmt: str  # "text", "csv" or "parquet"
    raw: IO[bytes]
    head: bytes  # what was read to recognise the input (the BOM dropped)
    column: str | None
    keep: list[str]
    total: int = 0  # for the progress bar: bytes (text, CSV) or rows (Parquet); 0 unknown
    key_name: str = "key"
    _close: list[Any] = field(default_factory=list)

    def close(self) -> None:
        for f in self._close:
            f.close()

    def batches(self, size: int) -> Iterator[_Batch]:
        if self.fmt == "parquet":
            return self._parquet(size)
        if self.fmt == "csv":
            return self._csv(size)
        return self._text(size)

    # text and CSV: UTF-8 lines, decoded a chunk at a time, errors named by line number

    def _chunks(self) -> Iterator[tuple[str, int, int]]:
        """(text of whole lines, number of its first line, bytes it took)."""
        line = 1
        pending = b""
        # read1: what the pipe holds now (up to a chunk), so output follows input as it comes
        read = getattr(self.raw, "read1", self.raw.read)
        for data in itertools.chain([self.head], iter(lambda: read(_CHUNK), b"")):
            data = pending + data
            cut = data.rfind(b"\n") + 1
            pending, data = data[cut:], data[:cut]
            if data:
                yield self._decode(data, line), line, len(data)
                line += data.count(b"\n")
        if pending:
            yield self._decode(pending, line), line, len(pending)

    def _decode(self, data: bytes, line: int) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            bad = line + data.count(b"\n", 0, e.start)
            start = data.rfind(b"\n", 0, e.start) + 1
            raise UserError(
                f"{self.name}: line {bad} is not UTF-8 (byte {data[e.start]:#04x} at column "
                f"{e.start - start + 1}): keys are read as UTF-8 text, CSV or Parquet") from None

    def _text(self, size: int) -> Iterator[_Batch]:
        keys: list[str] = []
        first, used = 1, 0
        for text, _, n in self._chunks():
            lines = text.split("\n")
            if text.endswith("\n"):
                lines.pop()
            keys.extend(k[:-1] if k.endswith("\r") else k for k in lines)
            used += n
            while len(keys) >= size:
                yield _Batch(keys[:size], {}, first, used)
                del keys[:size]
                first, used = first + size, 0
        if keys:
            yield _Batch(keys, {}, first, used)

    def _csv(self, size: int) -> Iterator[_Batch]:
        consumed = [0]

        def lines() -> Iterator[str]:
            for text, _, n in self._chunks():
                consumed[0] += n
                parts = text.split("\n")
                last = parts.pop()
                yield from (p + "\n" for p in parts)
                if last:
                    yield last

        reader = csv.reader(lines())
        try:
            header = next(reader, None)
            if header is None:
                return
            j, kept = self._columns(header)
            keys: list[str] = []
            cols: list[list[str]] = [[] for _ in kept]
            first, row = 1, 0
            for cells in reader:
                if not cells:
                    continue  # a blank line
                row += 1
                if len(cells) != len(header):
                    raise UserError(f"{self.name}: line {reader.line_num} has {len(cells)} "
                                    f"fields, the header {len(header)}")
                keys.append(cells[j])
                for c, i in zip(cols, kept, strict=True):
                    c.append(cells[i])
                if len(keys) == size:
                    yield _Batch(keys, dict(zip(self.keep, cols, strict=True)), first,
                                 consumed[0])
                    keys, cols, consumed[0] = [], [[] for _ in kept], 0
                    first = row + 1
            if keys:
                yield _Batch(keys, dict(zip(self.keep, cols, strict=True)), first, consumed[0])
        except csv.Error as e:
            raise UserError(f"{self.name}: line {reader.line_num}: bad CSV: {e}") from None

    def _columns(self, header: list[str]) -> tuple[int, list[int]]:
        """The key column's index and the kept columns' (a missing one is an error)."""
        if not any(header):
            raise UserError(f"{self.name}: the CSV header row (its first line) is empty")
        col = self.column if self.column is not None else header[0]
        for c in (col, *self.keep):
            if c not in header:
                raise UserError(f"{self.name}: no column {c!r} (columns: "
                                f"{', '.join(map(repr, header))})")
        self.key_name = col
        return header.index(col), [header.index(c) for c in self.keep]

    def _parquet(self, size: int) -> Iterator[_Batch]:
        pq = _pyarrow("Parquet input").parquet
        try:
            pf = pq.ParquetFile(self.raw)
            names = list(pf.schema_arrow.names)
        except Exception as e:  # pyarrow raises ArrowInvalid, OSError, ... for a bad file
            raise UserError(f"{self.name}: not a readable Parquet file ({_one_line(e)})"
                            ) from None
        if not names:
            raise UserError(f"{self.name}: the Parquet file has no columns")
        self._columns(names)
        self.total = int(pf.metadata.num_rows)
        wanted = list(dict.fromkeys([self.key_name, *self.keep]))
        first = 1
        try:
            for rb in pf.iter_batches(batch_size=size, columns=wanted):
                cols = {c: rb.column(wanted.index(c)) for c in self.keep}
                yield _Batch(rb.column(0), cols, first, rb.num_rows)
                first += rb.num_rows
        except (OSError, ValueError) as e:
            raise UserError(f"{self.name}: cannot read row {first} on ({_one_line(e)})"
                            ) from None


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())[:300]


def _pyarrow(what: str) -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise UserError(f"{what} needs pyarrow: pip install 'consistent-hash-ring[arrow]'"
                        ) from None
    return pyarrow


def _open_input(src: str, fmt: str, column: str | None, keep: list[str]) -> _Input:
    """Open the input and settle its format (``fmt`` "auto": from its content)."""
    name = "stdin" if src == "-" else src
    closers: list[Any] = []
    try:
        raw: IO[bytes] = sys.stdin.buffer if src == "-" else open(src, "rb")
        if src != "-":
            closers.append(raw)
        head = raw.read(_SNIFF)
    except OSError as e:
        raise UserError(f"cannot read {src!r}: {e.strerror}") from None
    try:
        total = os.fstat(raw.fileno()).st_size if src != "-" and os.path.isfile(src) else 0
        ext = "" if src == "-" else os.path.splitext(src)[1].lower()
        parquet = head.startswith(_MAGIC)
        if fmt == "auto":
            fmt = ("parquet" if parquet or ext in (".parquet", ".pq") else
                   "csv" if ext == ".csv" or column is not None or keep else "text")
            if fmt == "text" and ext != ".txt":
                _check_not_csv(name, head)
        if fmt == "parquet":
            if not parquet:
                raise UserError(f"{name}: not a Parquet file (it does not start with PAR1)")
            if src == "-" or not raw.seekable():
                raw = _spool(head, raw)
                closers.append(raw)
            else:
                raw.seek(0)
            head = b""
        elif parquet:
            raise UserError(f"{name} is Parquet (it starts with PAR1), not {fmt}: give "
                            "--input-format parquet, or leave it out")
        if head.startswith(_BOM):
            head = head[len(_BOM):]
        if fmt == "text" and (column is not None or keep):
            raise UserError("--column and --keep apply to CSV and Parquet input, not text lines")
    except BaseException:
        for f in closers:  # a refused input leaves no file open
            f.close()
        raise
    return _Input(name, fmt, raw, head, column, keep, total, _close=closers)


def _check_not_csv(name: str, head: bytes) -> None:
    """Refuse content that reads as CSV as well as text lines: every line of the head (all
    but a cut last one) has the same number (>= 2) of comma-separated fields.  Read as CSV,
    its first line would be taken as a header and each key cut at a comma; read as text, a
    CSV file's rows would be routed whole: only the user knows which it is."""
    if head.startswith(_BOM):
        head = head[len(_BOM):]
    if len(head) == _SNIFF:
        head = head[: head.rfind(b"\n") + 1]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return  # reading it as text reports the line
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    try:  # the lines as the CSV reader would take them
        widths = {len(r) for r in csv.reader(ln + "\n" for ln in lines) if r}
    except csv.Error:
        return  # not CSV: text lines
    if len(widths) == 1 and (w := widths.pop()) >= 2:
        raise UserError(f"{name}: every line has {w} comma-separated fields: one key a line "
                        "or CSV with a header row? pass --input-format text (each line is a "
                        "key) or --input-format csv (the first line names the columns; "
                        "--column picks the key)")


def _spool(head: bytes, raw: IO[bytes]) -> IO[bytes]:
    """Parquet from a pipe, copied to a temporary file (its footer is read first)."""
    tmp = tempfile.TemporaryFile()
    try:
        tmp.write(head)
        shutil.copyfileobj(raw, tmp, _CHUNK)
        tmp.seek(0)
    except OSError as e:
        tmp.close()
        raise UserError(f"cannot buffer Parquet from stdin: {e.strerror}") from None
    return tmp


# -- routing ---------------------------------------------------------------------------------

def _route(ring: HashRing, batch: _Batch, nulls: str, source: _Input) -> Any:
    """The node of each key of a batch (None for a missing key with nulls="none")."""
    keys = batch.keys
    if nulls == "raise" and int(getattr(keys, "null_count", 0) or 0):
        first = int(np.argmax(keys.is_null().to_numpy(zero_copy_only=False)))
        raise UserError(f"{source.name}: row {batch.first_row + first} has no key (column "
                        f"{source.key_name!r} is null): --nulls none routes it to no node")
    try:
        return ring.get_many(keys, nulls=nulls)
    except TypeError as e:
        if source.fmt == "parquet":
            raise UserError(f"{source.name}: column {source.key_name!r} is {keys.type}: keys "
                            "must be strings, binary or integers") from None
        raise UserError(str(e)) from None
    except ValueError as e:
        raise UserError(f"{source.name}: {e}") from None


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
