"""How many threads a batch call uses: the ``threads=`` argument of every batch call.

``threads=None`` (the default of every batch call) takes the process default, ``threads=1`` is
the serial path, ``threads=n`` splits a large batch over the calling thread and ``n - 1``
workers of the compiled core's pool.  The process default starts at the usable cores (the CPU
affinity where the platform has one, else ``os.cpu_count()``), or at the environment variable
``CONSISTENT_HASH_THREADS`` when it is set, and ``set_threads`` changes it.  Batches below a
measured threshold stay on the calling thread whatever ``threads`` says (waking a worker costs
more than it saves there), and the result never depends on the thread count.

Placement (Linux): a worker woken for a call runs on any usable CPU but the calling thread's,
so on a machine whose other cores are busy with low-priority work (a nice-19 build) it takes one
of them instead of queueing behind the caller.  ``set_thread_placement(False)``, or
``CONSISTENT_HASH_PLACEMENT=0`` in the environment, leaves the workers where the scheduler puts
them (see src/ch_threads.h).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from consistent_hash._core import _set_placement

__all__ = ["ENV_VAR", "PLACEMENT_ENV_VAR", "check_threads", "get_threads", "resolve",
           "set_thread_placement", "set_threads", "usable_cores"]

ENV_VAR = "CONSISTENT_HASH_THREADS"
PLACEMENT_ENV_VAR = "CONSISTENT_HASH_PLACEMENT"


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the OS has one (Linux), else
    ``os.cpu_count()`` (at least 1)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        try:
            return max(1, len(affinity(0)))
        except OSError:  # pragma: no cover - a sandbox refusing the call
            pass
    return max(1, os.cpu_count() or 1)


def check_threads(threads: Any) -> int | None:
    """A ``threads=`` argument: None or an int >= 1 (TypeError / ValueError naming it)."""
    if threads is None:
        return None
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be an int >= 1 or None, got {type(threads).__name__!r}")
    n = int(threads)
    if n < 1:
        raise ValueError(f"threads must be >= 1 (1: the serial path) or None (the default), "
                         f"got {n}")
    return n


def _from_env() -> int:
    value = os.environ.get(ENV_VAR, "").strip()
    if value:
        try:
            n = int(value)
            if n >= 1:
                return n
        except ValueError:
            pass
        warnings.warn(f"{ENV_VAR}={value!r} is not an int >= 1: using the usable cores",
                      RuntimeWarning, stacklevel=2)
    return usable_cores()


_default = _from_env()


def set_threads(threads: int | None) -> int:
    """Set the process default of ``threads=`` (None: back to ``CONSISTENT_HASH_THREADS`` or
    the usable cores); returns the previous default."""
    global _default
    n = check_threads(threads)
    old = _default
    _default = _from_env() if n is None else n
    return old


def get_threads() -> int:
    """The process default of ``threads=``: what ``threads=None`` uses."""
    return _default


def resolve(threads: Any) -> int:
    """The thread count a batch call runs with (validated; None: the process default)."""
    n = check_threads(threads)
    return _default if n is None else n


def set_thread_placement(on: bool) -> bool:
    """Keep the pool's woken workers off the calling thread's CPU (True, the default) or leave
    them where the scheduler puts them (False); returns the previous setting.  Only Linux
    places threads: elsewhere the setting is kept and changes nothing."""
    if not isinstance(on, (bool, np.bool_)):
        raise TypeError(f"on must be a bool, got {type(on).__name__!r}")
    return bool(_set_placement(bool(on)))


def _placement_from_env() -> None:
    value = os.environ.get(PLACEMENT_ENV_VAR, "").strip()
    if value in ("", "1"):
        return
    if value == "0":
        set_thread_placement(False)
        return
    warnings.warn(f"{PLACEMENT_ENV_VAR}={value!r} is neither 0 nor 1: placement stays on",
                  RuntimeWarning, stacklevel=2)


_placement_from_env()
