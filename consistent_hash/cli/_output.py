"""What a subcommand prints and draws: markdown tables, strict JSON, percentages, the progress
bar, and --plot PNG."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from consistent_hash.cli._base import (
    UserError,
)

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
