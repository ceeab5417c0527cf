"""Multi-probe consistent hashing (Appleton & O'Reilly 2015): one point per node, k probes.

Kernel: ``src/_multiprobe.pxi`` over ``src/ch_multiprobe.h``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash import _format
from consistent_hash._core import _Hasher, _MultiProbe
from consistent_hash._validate import check_int
from consistent_hash.algorithms._nodes import NodeSet

__all__ = ["MAX_PROBES", "MultiProbe"]

KIND_MULTIPROBE = _format.KINDS["MultiProbe"]
MAX_PROBES = 1024


class MultiProbe(NodeSet):
    """Multi-probe consistent hashing (Appleton & O'Reilly 2015): one point per node, ``probes``
    probes per key.

    Each node has a single point ``H(utf8(name), seed)`` on the ring (memory O(nodes), not
    O(nodes x vnodes)).  A key with hash ``h`` probes ``q_j = mix64(h + j * 0x9E3779B97F4A7C15)``
    for ``j < probes``; each probe's candidate is the first point clockwise, and the candidate
    nearest to its probe wins (ties to the earlier probe).  With the default 21 probes the
    peak-to-mean load is typically 1.02-1.05, but it is a property of the placement: a node
    whose point closely follows another's can get far less than its share (check a layout
    with ``analysis.balance``; the documentation's MultiProbe page shows the spread).  Adding a
    node moves keys only to it; removing one moves only its keys.  No weights (use Rendezvous,
    Maglev or HashRing).  Cost: ``probes`` ring searches per key.

    Examples
    --------
    >>> mp = MultiProbe(["a", "b", "c"])
    >>> mp.get("user:42") in mp
    True
    """

    __slots__ = ("_probes",)
    _kind = KIND_MULTIPROBE
    _weighted = False
    _options = (("probes", "I", 21),)

    def __init__(self, nodes: Iterable[str] = (), *, probes: int = 21,
                 hash: str | Callable[[bytes], int] = "xxh3", seed: int = 0) -> None:
        self._probes = check_int(probes, "probes", 1, MAX_PROBES)
        self._init_nodes(nodes, self._init_hasher(hash, seed))

    def _make_core(self, names: tuple[str, ...], weights: dict[str, float], hasher: _Hasher
                   ) -> Any:
        return _MultiProbe(names, hasher, self._probes)

    @property
    def probes(self) -> int:
        return self._probes

    @property
    def points(self) -> npt.NDArray[np.uint64]:
        """The nodes' points on the ring, ascending (``owners`` gives each one's node)."""
        return self._core.positions  # type: ignore[no-any-return]

    @property
    def owners(self) -> npt.NDArray[np.int32]:
        """The node index of each point."""
        return self._core.owners  # type: ignore[no-any-return]

