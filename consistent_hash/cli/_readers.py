"""The input of ``consistent-hash assign``: text lines, a CSV column or a Parquet column,
recognised without guessing, read in bounded batches."""

from __future__ import annotations

import csv
import itertools
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from consistent_hash.cli._common import UserError

_BOM = b"\xef\xbb\xbf"
_MAGIC = b"PAR1"
_SNIFF = 1 << 16  # bytes looked at to recognise the input
_CHUNK = 1 << 20  # bytes read at a time from text and CSV input


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
