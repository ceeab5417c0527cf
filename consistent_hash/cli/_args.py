"""The number arguments of the command line: each a type= that names what it takes."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from consistent_hash._validate import MAX_VNODES

# -- arguments -------------------------------------------------------------------------------

def _whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from minimum (to maximum)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if v < minimum or (maximum is not None and v > maximum):
            bound = (f">= {minimum:,}" if maximum is None else
                     f"from {minimum:,} to {maximum:,}")
            raise argparse.ArgumentTypeError(f"expected a number {bound}, got {v:,}")
        return v
    return parse


def _real_number(what: str, *, infinite: bool = False) -> Callable[[str], float]:
    """An argparse type: a number > 0 (infinity allowed only where it means "no limit")."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (v > 0 and (infinite or math.isfinite(v))):
            raise argparse.ArgumentTypeError(f"expected {what} > 0"
                                             + ("" if infinite else " (finite)")
                                             + f", got {text!r}")
        return v
    return parse


positive = _whole_number(1)
non_negative = _whole_number(0)
vnodes = _whole_number(1, MAX_VNODES)  # what every router takes
seed = _whole_number(0, (1 << 64) - 1)  # the widest seed; router_from_spec checks the hash's
batch = _whole_number(1, 10_000_000)  # keys a batch holds in memory at once
redis_db = _whole_number(0, (1 << 31) - 1)  # redis' "databases" is an int
seconds = _real_number("seconds")
per_second = _real_number("a number per second", infinite=True)
