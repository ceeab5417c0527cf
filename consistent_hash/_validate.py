"""Argument checks shared by every router: one place for the messages users see."""

from __future__ import annotations

import functools
import ipaddress
import math
import operator
import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

MAX_VNODES = 1_000_000
MAX_TOTAL_VNODES = (1 << 31) - 9
# What a ring of V positions holds (uint64 position + int32 owner) and what building it needs at
# its peak (those, the hashed labels and the sort's (position, owner) pairs beside them).
RING_BYTES_PER_VNODE = 12
BUILD_BYTES_PER_VNODE = 40


@functools.cache
def physical_memory() -> int | None:
    """This machine's physical memory in bytes, or None where the OS does not say (read once
    a process: every add() checks against it)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not on Linux
        return None


def _gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB"


def check_ring_memory(vnodes: int, memory: int | None = None) -> None:
    """Refuse at once a ring whose build would need more memory than the machine has, with
    the figures, instead of running for a minute into a bare MemoryError."""
    memory = physical_memory() if memory is None else memory
    need = vnodes * BUILD_BYTES_PER_VNODE
    if memory is not None and need > memory:
        raise ValueError(f"the ring would have {vnodes:,} vnodes: about {_gb(need)} of memory "
                         f"to build ({_gb(vnodes * RING_BYTES_PER_VNODE)} to hold), more than "
                         f"this machine's {_gb(memory)} (lower vnodes or the weights)")


def check_int(value: Any, name: str, lo: int, hi: int | None = None) -> int:
    """An int argument (not bool) within [lo, hi]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__!r}")
    v = operator.index(value)
    if v < lo or (hi is not None and v > hi):
        bound = f">= {lo}" if hi is None else f"between {lo} and {hi}"
        raise ValueError(f"{name} must be {bound}, got {v}")
    return v


def check_weight(weight: Any, name: str = "weight") -> float:
    """A weight: a real number, finite and > 0."""
    if isinstance(weight, (bool, np.bool_)) or not isinstance(weight, (int, float, np.integer,
                                                                       np.floating)):
        raise TypeError(f"{name} must be a number, got {type(weight).__name__!r}")
    w = float(weight)
    if not math.isfinite(w) or w <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {weight!r}")
    return w


def check_name(node: Any) -> None:
    """The name of a node to look up (remove, set_weight, mark_down...): a str."""
    if not isinstance(node, str):
        raise TypeError(f"node names must be str, got {type(node).__name__!r}")


def check_node(node: Any) -> str:
    """A node name: a str that UTF-8 can encode (lone surrogates raise UnicodeEncodeError)."""
    check_name(node)
    node.encode("utf-8")
    return str(node)


def node_weights(nodes: Iterable[str] | Mapping[str, float]) -> dict[str, float]:
    """Normalise the nodes argument (names, or a mapping name -> weight) to a dict."""
    if isinstance(nodes, (str, bytes)):
        raise TypeError("nodes must be an iterable of names or a mapping name -> weight, "
                        f"not a single {type(nodes).__name__}")
    if isinstance(nodes, (list, tuple)) and type(nodes) in (list, tuple) and all(
            type(n) is str for n in nodes):
        # The usual case, a list of names, checked in bulk: distinct, and UTF-8 encodable (a
        # lone surrogate anywhere fails the one encode); any failure takes the loop below,
        # which raises the error naming the node.
        fast = dict.fromkeys(nodes, 1.0)
        if len(fast) == len(nodes):
            try:
                "".join(nodes).encode("utf-8")
                return fast
            except UnicodeEncodeError:
                pass
    out: dict[str, float] = {}
    if isinstance(nodes, Mapping):
        items: Iterable[tuple[Any, Any]] = nodes.items()
    else:
        try:
            items = ((n, 1.0) for n in nodes)
        except TypeError:
            raise TypeError("nodes must be an iterable of names or a mapping name -> weight, "
                            f"got {type(nodes).__name__!r}") from None
    for node, weight in items:
        name = check_node(node)
        if name in out:
            raise ValueError(f"duplicate node {name!r} in nodes")
        out[name] = check_weight(weight, f"weight of node {name!r}")
    return out


def check_n(n: Any) -> int:
    return check_int(n, "n", 1)


def check_nulls(policy: str) -> bool:
    """The nulls= policy of the batch calls: "raise" (False) or "none" (True)."""
    if policy == "raise":
        return False
    if policy == "none":
        return True
    raise ValueError(f'nulls must be "raise" or "none", got {policy!r}')


def is_ip(text: str, v6: bool = False) -> bool:
    """Whether text is an IP address literal (IPv4 or IPv6; only IPv6 with ``v6``), an IPv6
    zone (``%eth0``) allowed: how server specs, node names and CLI lists tell an address from
    a host name."""
    try:
        addr = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    return addr.version == 6 or not v6
