"""``consistent-hash assign``: route keys (text lines, a CSV column or a Parquet column) to the
nodes of a layout, writing ``key,node`` CSV."""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from consistent_hash import HashRing
from consistent_hash.cli import _common
from consistent_hash.cli._common import Subparsers, UserError

NAME = "assign"


def add_parser(subparsers: Subparsers) -> None:
    a = subparsers.add_parser(NAME, help="route keys to nodes: key,node CSV")
    a.add_argument("input", nargs="?", default="-", help="keys file, or - for stdin")
    a.add_argument("--ring", help="ring file")
    a.add_argument("--nodes", help="node list")
    _common.add_layout_options(a)
    a.add_argument("--input-format", choices=["auto", "text", "csv", "parquet"], default="auto")
    a.add_argument("--column", help="key column for CSV / Parquet (default: the first)")
    a.add_argument("-o", "--output", help="output file (default stdout)")
    a.add_argument("--batch", type=_common.positive, default=100_000, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    if (args.ring is None) == (args.nodes is None):
        raise UserError("give exactly one of --ring FILE or --nodes LIST")
    ring = _common.layout(args.ring if args.ring is not None else args.nodes, args)
    if len(ring) == 0:
        raise UserError("the layout has no nodes")
    fmt = args.input_format
    if fmt == "auto":
        fmt = ("parquet" if args.input.endswith(".parquet") else
               "csv" if args.input.endswith(".csv") else "text")
    if args.column is not None and fmt == "text":
        raise UserError("--column applies to CSV and Parquet input, not text lines")
    total = os.path.getsize(args.input) if args.input != "-" and os.path.isfile(args.input) else 0
    progress = _common.Progress(total, "assign")
    batches = _read_keys(args.input, fmt, args.column, args.batch)
    # Read and route the first batch before any output is opened or written, so that a bad
    # input or column is reported without clobbering an existing output file.
    first = next(batches, [])
    routed = _route_batch(ring, first)
    tmp = None
    if args.output in (None, "-"):
        out: TextIO = sys.stdout
    else:
        tmp = f"{args.output}.tmp{os.getpid()}"
        try:
            out = open(tmp, "w", encoding="utf-8", newline="")
        except OSError as e:
            raise UserError(f"cannot write {args.output!r}: {e.strerror}") from None
    ok = False
    try:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["key", "node"])
        batch = first
        while batch:
            w.writerows(zip(batch, routed, strict=True))
            progress.advance(sum(len(k) + 1 for k in batch if isinstance(k, str)))
            batch = next(batches, [])
            routed = _route_batch(ring, batch)
        ok = True
    finally:
        progress.close()
        if tmp is not None:
            out.close()
            if ok:
                os.replace(tmp, args.output)
            else:
                os.unlink(tmp)
    return 0


def _route_batch(ring: HashRing, batch: list[Any]) -> list[str]:
    if not batch:
        return []
    try:
        return ring.get_many(batch).tolist()  # type: ignore[no-any-return]
    except (TypeError, ValueError) as e:
        raise UserError(str(e)) from None


def _read_keys(src: str, fmt: str, column: str | None, size: int) -> Iterator[list[Any]]:
    """Keys in batches of ``size``, from text lines, a CSV column or a Parquet column
    (``fmt``: "text", "csv" or "parquet"; ``column``: None for the first). A damaged input
    (not UTF-8, a bad CSV row, a damaged Parquet file) is a UserError, wherever it is met."""
    try:
        yield from _read_keys_from(src, fmt, column, size)
    except UnicodeDecodeError as e:
        raise UserError(f"{src}: not UTF-8 text ({e.reason} at byte {e.start} of a read "
                        "block); text and CSV input must be UTF-8") from None
    except csv.Error as e:
        raise UserError(f"{src}: bad CSV: {e}") from None
    except (OSError, ValueError) as e:  # pyarrow: a damaged Parquet file, read in batches
        if fmt != "parquet":
            raise
        raise UserError(f"{src}: {e}") from None


def _read_keys_from(src: str, fmt: str, column: str | None, size: int
                    ) -> Iterator[list[Any]]:
    if fmt == "parquet":
        yield from _read_parquet(src, column, size)
        return
    try:
        f = sys.stdin if src == "-" else open(src, encoding="utf-8", newline="")
    except OSError as e:
        raise UserError(f"cannot read {src!r}: {e.strerror}") from None
    with f:
        if fmt == "csv":
            yield from _batched(_csv_column(f, src, column), size)
        else:
            yield from _batched((line.rstrip("\r\n") for line in f), size)


def _read_parquet(src: str, column: str | None, size: int) -> Iterator[list[Any]]:
    if src == "-":
        raise UserError("Parquet input must be a file, not stdin")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError("Parquet input needs pyarrow: pip install pyarrow") from None
    try:
        pf = pq.ParquetFile(src)
    except (OSError, ValueError) as e:
        raise UserError(f"{src}: {e}") from None
    if not pf.schema_arrow.names:
        raise UserError(f"{src}: the Parquet file has no columns")
    col = column or pf.schema_arrow.names[0]
    if col not in pf.schema_arrow.names:
        raise UserError(f"{src}: no column {col!r} (columns: {pf.schema_arrow.names})")
    for record_batch in pf.iter_batches(batch_size=size, columns=[col]):
        yield record_batch.column(0).to_pylist()


def _csv_column(f: TextIO, src: str, column: str | None) -> Iterator[str]:
    """The cells of one column of a CSV file with a header row (None: the first column);
    blank lines after the header are skipped, as csv.DictReader skips them."""
    reader = csv.reader(f)
    header = next(reader, None)
    if header is None:
        return
    if not header:
        raise UserError(f"{src}: the first line (the CSV header row) is blank")
    col = column or header[0]
    if col not in header:
        raise UserError(f"{src}: no column {col!r} (columns: {header})")
    j = header.index(col)
    for row in reader:
        if not row:
            continue
        if len(row) <= j:
            raise UserError(f"{src}: line {reader.line_num} has no column {col!r}")
        yield row[j]


def _batched(items: Iterable[str], size: int) -> Iterator[list[str]]:
    """Lists of up to ``size`` items; none for no items."""
    it = iter(items)
    while batch := list(itertools.islice(it, size)):
        yield batch
