"""BoundedLoad: consistent hashing with bounded loads, over any router.

Mirrokni, Thorup & Zadimoghaddam, "Consistent Hashing with Bounded Loads" (SODA 2018): with
``m`` keys on ``n`` nodes every node gets a capacity of ``ceil(c * m / n)`` (``c >= 1``, default
1.25), and each key goes to the first node of its preference walk that is below capacity, so no
node ever holds more than ``c`` times the average while most keys stay where the router put
them.  With weights (HashRing, Rendezvous, Maglev) a node's capacity is
``ceil(c * m * w / sum(w))``.

Two forms:

- batch: ``assign_many(keys)`` places the keys in order, each counted as one unit of load;
- live load: ``acquire(key)`` places one key given the load now held (capacity computed for
  the held load plus this key), ``release(node)`` gives a unit back.

Hot keys: ``spread=k`` serves each key by the least-loaded of its first ``k`` replicas (its
first ``k`` distinct nodes), which spreads a single hot key over ``k`` nodes.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from consistent_hash._core import _BoundedBase, _LiveLoad, bounded_assign, take_names
from consistent_hash._router import Key, Router
from consistent_hash._threads import check_threads
from consistent_hash._validate import check_int, check_name, check_nulls

__all__ = ["BoundedLoad", "CapacityError"]


class CapacityError(LookupError):
    """Every node that could take the key is at its capacity."""


def _check_c(c: Any) -> float:
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, float, np.integer, np.floating)):
        raise TypeError(f"c must be a number, got {type(c).__name__!r}")
    v = float(c)
    if not math.isfinite(v) or v < 1.0:
        raise ValueError(f"c must be finite and >= 1 (capacity ceil(c * m / n) must leave room "
                         f"for every key), got {c!r}")
    return v


class BoundedLoad(_BoundedBase):
    """Bounded-load assignment over a router (HashRing, JumpHash, Rendezvous, Maglev,
    MultiProbe or MementoHash).

    Parameters
    ----------
    router
        Gives each key its preference walk: a HashRing walks its positions clockwise (nodes
        marked down are skipped), Rendezvous its ranking, the others a probe sequence.
    c : float, default 1.25
        The load bound factor, >= 1: capacity ``ceil(c * m / n)`` for ``m`` keys on ``n``
        nodes (weighted: ``ceil(c * m * w / sum(w))``).
    capacity : int, optional
        A fixed capacity per node instead (for example a connection limit); then the bound can
        be unsatisfiable, which raises (``ValueError`` in a batch, ``CapacityError`` in
        ``acquire``), never hangs.

    Examples
    --------
    >>> from consistent_hash import HashRing
    >>> bl = BoundedLoad(HashRing(["a", "b", "c"]), c=1.0)
    >>> names = bl.assign_many([f"k{i}" for i in range(9)])
    >>> sorted(np.unique(names, return_counts=True)[1].tolist())
    [3, 3, 3]
    >>> node = bl.acquire("session-1")
    >>> bl.loads[node]
    1
    >>> bl.release(node)
    """

    # _router, _live and _lock are the base's (the core's _BoundedBase: acquire, release).
    __slots__ = ("_c", "_c_ratio", "_capacity", "_orphans", "__weakref__")

    def __init__(self, router: Any, c: float = 1.25, *, capacity: int | None = None) -> None:
        if not isinstance(router, Router):
            raise TypeError("router must be a router of this library (HashRing, JumpHash, "
                            "Rendezvous, Maglev, MultiProbe, MementoHash, ...), got "
                            f"{type(router).__name__!r}")
        self._router = router
        self._c = _check_c(c)
        self._c_ratio = Fraction(repr(self._c)).as_integer_ratio()
        self._capacity = None if capacity is None else check_int(capacity, "capacity", 1)
        # The live load: by node index in _live (over the router's snapshot it was built for),
        # by name in _orphans for the nodes holding load that snapshot does not have.
        self._orphans: dict[str, int] = {}
        self._live: _LiveLoad | None = None
        self._live = self._new_live(0)

    @property
    def router(self) -> Any:
        return self._router

    @property
    def c(self) -> float:
        return self._c

    @property
    def capacity(self) -> int | None:
        """The fixed per-node capacity, or None (capacity from c)."""
        return self._capacity

    # -- capacities ---------------------------------------------------------------------------

    def _shares(self, core: Any) -> tuple[tuple[str, ...], list[int] | None]:
        """Node names and each one's weight as an exact integer (floats are dyadic rationals:
        all are scaled to one power-of-two denominator), or None when all live nodes weigh the
        same; a node marked down weighs 0."""
        nodes: tuple[str, ...] = core.nodes
        down: frozenset[str] = getattr(core, "down", frozenset())
        weights = getattr(self._router, "weights", None)
        ws = [0.0 if n in down else (weights[n] if weights is not None else 1.0) for n in nodes]
        if len(set(ws)) <= 1 and (not ws or ws[0] > 0):  # all live and of one weight
            return nodes, None
        ratios = [w.as_integer_ratio() for w in ws]
        den = max(q for _, q in ratios)
        return nodes, [p * (den // q) for p, q in ratios]

    def _caps(self, core: Any, m: int) -> npt.NDArray[np.int64]:
        return self._caps_from(self._shares(core)[1], len(core.nodes), m)

    def _caps_from(self, shares: list[int] | None, n: int, m: int) -> npt.NDArray[np.int64]:
        """Capacities for m keys: ceil(c * m * w / sum(w)) in exact integer arithmetic (c taken
        as the decimal it is written as, so c = 1.1 means 11/10)."""
        if self._capacity is not None:
            caps = np.full(n, self._capacity, dtype=np.int64)
            if shares is not None:
                caps[np.array(shares) == 0] = 0
            return caps
        num, den = self._c_ratio
        if shares is None:
            return np.full(n, -(-(num * m) // (den * max(n, 1))), dtype=np.int64)
        total = den * sum(shares)
        if total == 0:  # every node is down
            return np.zeros(n, dtype=np.int64)
        return np.array([-(-(num * m * a) // total) for a in shares], dtype=np.int64)

    def capacities(self, m: int) -> dict[str, int]:
        """The capacity of each node for ``m`` keys."""
        m = check_int(m, "m", 0)
        core = self._router._core
        return dict(zip(core.nodes, self._caps(core, m).tolist(), strict=True))

    # -- batch -------------------------------------------------------------------------------

    def assign_indices(self, keys: Any, *, spread: int = 1, nulls: str = "raise",
                       threads: int | None = None) -> npt.NDArray[np.int32]:
        """Place the keys in order under the bound: int32 indices into ``router.nodes``.

        Every key (each occurrence of a repeated key too) is one unit of load; no node gets
        more than its capacity for ``m = len(keys)``.  ``nulls="none"`` gives a missing key
        -1 (it takes no load) instead of raising.  ``threads`` (as in ``get_many``) applies
        to hashing the keys; the placement itself is sequential (each key's node depends on
        the loads the keys before it left), so it stays on the calling thread.
        """
        threads = check_threads(threads)
        spread = check_int(spread, "spread", 1)
        router = self._router
        core = router._core
        if check_nulls(nulls):
            missing = router.get_indices(keys, nulls="none", threads=threads) < 0
            if missing.any():
                present = [k for k, gone in zip(_objects(keys), missing.tolist(), strict=True)
                           if not gone]
                out = np.full(len(missing), -1, dtype=np.int32)
                out[~missing] = self.assign_indices(present, spread=spread, threads=threads)
                return out
        hashes = np.ascontiguousarray(router.hash_many(keys, threads=threads), dtype=np.uint64)
        m = len(hashes)
        if m == 0:
            return np.empty(0, dtype=np.int32)
        core.check_nonempty()
        caps = self._caps(core, m)
        if int(caps.sum()) < m:
            raise ValueError(f"unsatisfiable bound: the nodes hold at most {int(caps.sum())} "
                             f"keys in all, {m} were given")
        loads = np.zeros(len(core.nodes), dtype=np.int64)
        out = np.empty(m, dtype=np.int32)
        result: npt.NDArray[np.int32] = bounded_assign(core, hashes, caps, loads,
                                                       min(spread, 1 << 30), out)
        return result

    def assign_many(self, keys: Any, *, spread: int = 1, nulls: str = "raise",
                    threads: int | None = None) -> npt.NDArray[np.object_]:
        """Place the keys in order under the bound: an object array of node names (None for a
        missing key with ``nulls="none"``); ``threads`` as in ``assign_indices``."""
        core = self._router._core
        idx = self.assign_indices(keys, spread=spread, nulls=nulls, threads=threads)
        result: npt.NDArray[np.object_] = take_names(core.nodes, idx)
        return result

    # -- live load ---------------------------------------------------------------------------

    def _new_live(self, held: int) -> _LiveLoad:
        """The live load over the router's current snapshot, the loads carried over by name."""
        router = self._router
        core = router._core
        state = getattr(router, "_weights", None)
        old, orphans = self._live, self._orphans
        if old is not None:
            orphans.update(old.items())
        loads = [orphans.pop(n, 0) for n in core.nodes]
        # The router's own hash when it checks keys or narrows hashes; else the core's hasher.
        py_hash = (type(router)._check_keys is not Router._check_keys
                   or router._hash_shift != 0)
        shares = self._shares(core)[1]
        n = len(core.nodes)
        if self._capacity is not None:
            caps = self._caps_from(shares, n, 0) if shares is not None else [self._capacity]
            return _LiveLoad(core, state, loads, held, py_hash, caps=caps)
        # ceil(m * num / den) per node: the rule of _caps_from, each ratio in lowest terms.
        num, den = self._c_ratio
        if shares is None:
            ratios = [(num, den * max(n, 1))]
        else:
            total = den * sum(shares)
            ratios = ([(num * a, total) for a in shares] if total else [(0, 1)] * n)
        ratios = [(p // g, q // g) for p, q in ratios for g in (math.gcd(p, q) or 1,)]
        return _LiveLoad(core, state, loads, held, py_hash, ratios=ratios)

    # acquire(key, *, spread=1) and release(node) are the base's, in C: the plain case in
    # one call under self._lock; the rest comes here.

    def _acquire_slow(self, key: Key, spread: Any) -> str:
        spread = min(check_int(spread, "spread", 1), 1 << 30)
        with self._lock:
            live = self._live
            node = live.acquire(self._router, key, spread) if live is not None else None
            if node is None:  # the router changed: a new snapshot, the loads by name
                live = self._live = self._new_live(live.held if live is not None else 0)
                node = live.acquire(self._router, key, spread)
            if node is False:
                raise CapacityError(f"every node is at its capacity ({self._capacity}); "
                                    "release load or raise the capacity")
            assert isinstance(node, str)
            return node

    def _release_slow(self, node: Any) -> None:
        check_name(node)
        with self._lock:
            live = self._live
            assert live is not None
            if live.release(node):
                return
            held = self._orphans.get(node, 0)
            if held <= 0:
                raise KeyError(node)
            if held == 1:
                del self._orphans[node]
            else:
                self._orphans[node] = held - 1
            live.held -= 1

    def _held_loads(self) -> dict[str, int]:
        live = self._live
        assert live is not None
        loads = dict(self._orphans)
        loads.update(live.items())
        return loads

    @property
    def loads(self) -> dict[str, int]:
        """The live load of each node (nodes holding none are omitted)."""
        with self._lock:
            return self._held_loads()

    def reset(self) -> None:
        """Forget all live load."""
        with self._lock:
            self._orphans.clear()
            self._live = None
            self._live = self._new_live(0)

    def __repr__(self) -> str:
        cap = f", capacity={self._capacity}" if self._capacity is not None else ""
        return f"BoundedLoad({self._router!r}, c={self._c}{cap})"

    # -- copies and pickling: the live loads travel with the assigner -------------------------

    def copy(self) -> BoundedLoad:
        """An independent assigner over a copy of the router, holding the same live loads."""
        with self._lock:
            return BoundedLoad._restore(self._router.copy(), self._c, self._capacity,
                                        self._held_loads())

    def __copy__(self) -> BoundedLoad:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, object]) -> BoundedLoad:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        with self._lock:
            return (BoundedLoad._restore, (self._router, self._c, self._capacity,
                                           self._held_loads()))

    @staticmethod
    def _restore(router: Any, c: float, capacity: int | None, loads: dict[str, int]
                 ) -> BoundedLoad:
        new = BoundedLoad(router, c, capacity=capacity)
        new._orphans = {n: int(v) for n, v in loads.items() if v > 0}
        new._live = None
        new._live = new._new_live(sum(new._orphans.values()))
        return new


def _objects(keys: Any) -> list[Any]:
    """The keys of any container as Python objects (the slow path that drops missing keys)."""
    to_pylist = getattr(keys, "to_pylist", None)
    if to_pylist is not None:
        return list(to_pylist())
    if hasattr(keys, "columns"):  # a one-column table
        return _objects(keys[list(keys.columns)[0]])
    return list(keys)
