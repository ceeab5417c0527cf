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

Here: the parser, the run and the routing; the input is in ``cli._readers``, the output
in ``cli._writers``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import IO, Any

import numpy as np

from consistent_hash import HashRing
from consistent_hash.cli import _common
from consistent_hash.cli._common import Subparsers, UserError
from consistent_hash.cli._readers import (
    _Batch,
    _Input,
    _open_input,
    _pyarrow,
)
from consistent_hash.cli._writers import (
    _WRITERS,
)

NAME = "assign"

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
