"""What the subcommands share: the user-error type, output formatting (markdown tables, strict
JSON, percentages), the progress bar, the plotting helpers, number arguments and layouts (a
ring file or a node list)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypeAlias

from consistent_hash import HashRing, ringfile


class UserError(Exception):
    """A mistake in the command line or its inputs: one line on stderr, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2, no usage dump
        raise UserError(message)


# What Parser.add_subparsers() returns: each subcommand module adds its parser to it.
Subparsers: TypeAlias = "argparse._SubParsersAction[Parser]"


# -- output ----------------------------------------------------------------------------------

def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table with right-aligned columns (except the first)."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths, strict=True))) + " |"
    sep = "|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def to_json(doc: Any) -> str:
    """Strict JSON: a non-finite float (a ratio with a zero denominator) becomes null."""
    def clean(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x
    return json.dumps(clean(doc), indent=1, ensure_ascii=False, allow_nan=False)


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


class Progress:
    """A progress bar on stderr when it is a terminal; silent when piped."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and total > 0
        self.total, self.label, self.done = total, label, 0
        self._last = 0.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(30 * frac)
            self.stream.write(f"\r{self.label} [{bar:<30}] {100 * frac:5.1f}%")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * (len(self.label) + 40) + "\r")
            self.stream.flush()


# -- plots (--plot PNG) ----------------------------------------------------------------------

def pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'consistent-hash-ring[plot]'"
                        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_plot_path(path: str | None) -> None:
    """Refuse a bad --plot before any work is done (not a .png, no matplotlib, no directory)."""
    if path is None:
        return
    if not path.lower().endswith(".png"):
        raise UserError(f"--plot: expected a .png file name, got {path!r}")
    pyplot()
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise UserError(f"--plot: directory {d!r} does not exist")


def save_figure(fig: Any, path: str) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot().close(fig)
    print(f"wrote {path}", file=sys.stderr)


# -- arguments -------------------------------------------------------------------------------

def _whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= minimum."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"expected a number >= {minimum}, got {v}")
        return v
    return parse


positive = _whole_number(1)
non_negative = _whole_number(0)


# -- layouts ---------------------------------------------------------------------------------

def add_layout_options(parser: argparse.ArgumentParser) -> None:
    """The ring parameters a node list is built with."""
    parser.add_argument("--vnodes", type=positive, default=160,
                        help="vnodes per unit weight, for node lists (160)")
    parser.add_argument("--hash", default="xxh3", choices=["xxh3", "xxh64", "murmur3", "md5"],
                        help="hash for node lists (xxh3)")
    parser.add_argument("--seed", type=int, default=0, help="hash seed for node lists (0)")


def parse_nodes(text: str) -> dict[str, float]:
    """'a,b,c' | 'a:2,b:1' | '@file' (one 'name [weight]' per line) -> {name: weight}."""
    if text.startswith("@"):
        path = text[1:]
        try:
            with open(path, encoding="utf-8") as f:
                items = [ln.split() for ln in f if ln.strip() and not ln.startswith("#")]
        except OSError as e:
            raise UserError(f"cannot read node list {path!r}: {e.strerror}") from None
        pairs = [(p[0], p[1] if len(p) > 1 else "1") for p in items]
    else:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        pairs = []
        for p in parts:
            name, colon, w = p.rpartition(":")  # 'name:weight', or a name of weight 1
            pairs.append((name, w) if colon else (p, "1"))
    if not pairs:
        raise UserError(f"empty node list {text!r}")
    out: dict[str, float] = {}
    for name, w in pairs:
        try:
            weight = float(w)
        except ValueError:
            raise UserError(f"bad weight {w!r} for node {name!r}") from None
        if name in out:
            raise UserError(f"node {name!r} is listed twice")
        out[name] = weight
    return out


def layout(spec: str, args: argparse.Namespace) -> HashRing:
    """A ring from a ring-file path or a node list (built with the layout options in args)."""
    if not spec.startswith("@") and os.path.exists(spec):
        if os.path.isdir(spec):
            raise UserError(f"{spec!r} is a directory, not a ring file")
        try:
            return ringfile.load(spec)
        except (ValueError, OSError) as e:
            raise UserError(f"{spec}: {e}") from None
    if not spec.startswith("@") and (os.sep in spec or "/" in spec
                                     or spec.endswith((".json", ".ring", ".txt", ".csv"))):
        raise UserError(f"ring file {spec!r} not found (a node list is 'a,b,c')")
    try:
        return HashRing(parse_nodes(spec), vnodes=args.vnodes, hash=args.hash, seed=args.seed)
    except (TypeError, ValueError) as e:
        raise UserError(str(e)) from None
