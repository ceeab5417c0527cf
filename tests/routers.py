"""The registry of every router: one entry per router class, read by the conformance suite.

tests/test_conformance.py (and tests/test_conformance_threads.py) parametrize every surface
test over ``ROUTERS``.  A new router gets the whole suite by adding ONE ``RouterSpec`` entry
below: how to build it from a list of node names, and the few facts about its algorithm that
decide which expectations apply (does it order distinct nodes, how it treats integer keys,
whether it can add and remove nodes, whether it may have no nodes at all).

Node names are ``"host:port"`` strings (see ``node_names``) so that the compatibility routers
that parse them (KetamaRing) or that take cluster addresses (SlotMap) accept the same names and
report them back unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ringrouter_example import FastringRing

from consistent_hash import (
    HashRing,
    JumpHash,
    KetamaRing,
    Maglev,
    MementoHash,
    MultiProbe,
    Rendezvous,
    SlotMap,
    TokenRing,
)
from consistent_hash.algorithms import (
    AnchorHash,
    BinomialHash,
    DxHash,
    FlipHash,
    JumpBackAnchorHash,
    JumpBackHash,
    PowerHash,
)
from consistent_hash.compat.envoy import EnvoyMaglev, EnvoyRingHash
from consistent_hash.compat.haproxy import HAProxyBackend
from consistent_hash.compat.nginx import NginxUpstream
from consistent_hash.compat.twemproxy import TwemproxyPool

__all__ = ["BOUNDED", "EXTRA_NODE", "NODES", "ROUTERS", "RouterSpec", "by_name", "node_names",
           "spec_id"]


def node_names(n: int, port: int = 6379) -> list[str]:
    """``n`` distinct host:port node names (10.0.0.1:6379, 10.0.0.2:6379, ...)."""
    return [f"10.0.0.{i}:{port}" for i in range(1, n + 1)]


NODES: list[str] = node_names(5)
EXTRA_NODE = "10.0.1.99:6379"  # the node the suite adds and removes (sorts after NODES)


def _default_add(router: Any, node: str) -> None:
    router.add(node)


def _default_remove(router: Any, node: str) -> None:
    router.remove(node)


@dataclass(frozen=True)
class RouterSpec:
    """How to build one router class and what the suite may expect of it.

    name       the id of every parametrized test (the class name, or a variant of it)
    cls        the router class (``from_bytes`` is looked up on it)
    make       ``make(nodes, **kw)``: a router over the node names ``nodes`` (a list, possibly
               empty), deterministic: two calls with the same arguments build equal routers.
               Keyword arguments (``hash=``) are forwarded where the router takes them.
    replicas   the algorithm orders distinct nodes per key (replicas / replicas_many /
               replica_indices); otherwise those calls raise TypeError naming one that does
    int_keys   "hashed": an int key is hashed as its decimal digits; "raw": used as it is
               (jump-class algorithms); "refused": int keys raise TypeError
    mutable    has add / remove (``add`` / ``remove`` below say how to call them)
    empty_ok   can be built with no nodes (then lookups raise EmptyRingError)
    empty_batch  what a non-empty batch on an empty router does: "raise" (EmptyRingError) or
               "unassigned" (SlotMap: an unassigned slot is -1 / None in a batch, LookupError
               from ``get``)
    takes_hash ``make(nodes, hash=...)`` selects the key hash (the public ``hash=`` argument)
    bounded    the suite runs its BoundedLoad tests over this router
    add, remove  ``add(router, node)`` / ``remove(router, node)`` for mutable routers; adding
               ``EXTRA_NODE`` to ``make(NODES)`` must give a router equal to
               ``make(NODES + [EXTRA_NODE])`` and removing it again one equal to ``make(NODES)``
    """

    name: str
    cls: type
    make: Callable[..., Any]
    replicas: bool
    int_keys: Literal["hashed", "raw", "refused"]
    mutable: bool
    empty_ok: bool = True
    empty_batch: Literal["raise", "unassigned"] = "raise"
    takes_hash: bool = False
    bounded: bool = False
    add: Callable[[Any, str], None] = field(default=_default_add)
    remove: Callable[[Any, str], None] = field(default=_default_remove)

    def __str__(self) -> str:
        return self.name


def _tokens(node: str, count: int = 4) -> list[int]:
    """``count`` signed 64-bit tokens for a node, derived from its name only (so a node gets
    the same tokens whichever ring it joins)."""
    out = []
    for j in range(count):
        d = hashlib.sha256(f"{node}#{j}".encode()).digest()
        out.append(int.from_bytes(d[:8], "big", signed=True))
    return out


def _token_ring(nodes: Sequence[str], **kw: Any) -> TokenRing:
    return TokenRing({n: _tokens(n) for n in nodes}, **kw)


def _token_add(router: Any, node: str) -> None:
    router.add(node, _tokens(node))


def _weight(node: str) -> float:
    """A weight of 1, 2 or 3 for a node, derived from its name only."""
    return 1.0 + hashlib.sha256(node.encode()).digest()[5] % 3


def _weighted(cls: Any, **fixed: Any) -> Callable[..., Any]:
    return lambda nodes, **kw: cls({n: _weight(n) for n in nodes}, **fixed, **kw)


def _weighted_add(router: Any, node: str) -> None:
    router.add(node, _weight(node))


ROUTERS: list[RouterSpec] = [
    RouterSpec("HashRing", HashRing, lambda nodes, **kw: HashRing(nodes, vnodes=64, **kw),
               replicas=True, int_keys="hashed", mutable=True, takes_hash=True, bounded=True),
    RouterSpec("KetamaRing", KetamaRing,
               lambda nodes, **kw: KetamaRing(nodes, mode="ketama", **kw),
               replicas=True, int_keys="hashed", mutable=True),
    # libmemcached's num_replicas: the replicas are the next servers in the server list
    RouterSpec("KetamaRing-server-list", KetamaRing,
               lambda nodes, **kw: KetamaRing(nodes, mode="ketama", replica_order="server_list",
                                              **kw),
               replicas=True, int_keys="hashed", mutable=True),
    RouterSpec("TokenRing", TokenRing, _token_ring,
               replicas=True, int_keys="refused", mutable=True, add=_token_add),
    RouterSpec("SlotMap", SlotMap, lambda nodes, **kw: SlotMap.even(nodes, **kw),
               replicas=False, int_keys="hashed", mutable=False, empty_batch="unassigned"),
    RouterSpec("JumpHash", JumpHash, lambda nodes, **kw: JumpHash(nodes, **kw),
               replicas=False, int_keys="raw", mutable=True, takes_hash=True),
    RouterSpec("Rendezvous", Rendezvous, lambda nodes, **kw: Rendezvous(nodes, **kw),
               replicas=True, int_keys="hashed", mutable=True, takes_hash=True, bounded=True),
    RouterSpec("Rendezvous-weighted", Rendezvous, _weighted(Rendezvous),
               replicas=True, int_keys="hashed", mutable=True, takes_hash=True, bounded=True,
               add=_weighted_add),
    RouterSpec("Maglev", Maglev, lambda nodes, **kw: Maglev(nodes, table_size=2053, **kw),
               replicas=False, int_keys="hashed", mutable=True, takes_hash=True, bounded=True),
    RouterSpec("Maglev-weighted", Maglev, _weighted(Maglev, table_size=1009),
               replicas=False, int_keys="hashed", mutable=True, takes_hash=True,
               add=_weighted_add),
    RouterSpec("MultiProbe", MultiProbe, lambda nodes, **kw: MultiProbe(nodes, **kw),
               replicas=False, int_keys="hashed", mutable=True, takes_hash=True, bounded=True),
    RouterSpec("MementoHash", MementoHash, lambda nodes, **kw: MementoHash(nodes, **kw),
               replicas=False, int_keys="raw", mutable=True, takes_hash=True),
    RouterSpec("HAProxyBackend", HAProxyBackend,
               lambda nodes, **kw: HAProxyBackend(nodes, {n: int(_weight(n)) for n in nodes},
                                                  **kw),
               replicas=False, int_keys="hashed", mutable=True,
               add=lambda r, node: r.add(node, int(_weight(node)))),
]

# Envoy's ring_hash and maglev (consistent_hash.compat.envoy): integer weights.
ROUTERS += [
    RouterSpec("EnvoyRingHash", EnvoyRingHash,
               lambda nodes, **kw: EnvoyRingHash(nodes, minimum_ring_size=256, **kw),
               replicas=False, int_keys="hashed", mutable=True),
    RouterSpec("EnvoyMaglev-weighted", EnvoyMaglev,
               lambda nodes, **kw: EnvoyMaglev({n: int(_weight(n)) for n in nodes},
                                               table_size=1009, **kw),
               replicas=False, int_keys="hashed", mutable=True,
               add=lambda r, node: r.add(node, int(_weight(node)))),
    RouterSpec("NginxUpstream", NginxUpstream,
               lambda nodes, **kw: NginxUpstream(nodes, **kw),
               replicas=True, int_keys="hashed", mutable=True),
    RouterSpec("NginxUpstream-plain", NginxUpstream,
               lambda nodes, **kw: NginxUpstream(nodes, consistent=False, **kw),
               replicas=False, int_keys="hashed", mutable=True),
    RouterSpec("TwemproxyPool", TwemproxyPool,
               lambda nodes, **kw: TwemproxyPool(nodes, **kw),
               replicas=False, int_keys="hashed", mutable=True),
]

# The modern family (consistent_hash.algorithms; issue 22): integer keys are their own 64-bit
# hash, as for JumpHash.  The first four are LIFO (add appends, remove takes the last); AnchorHash
# and DxHash have a fixed capacity of slots, JumpBackAnchorHash grows.
ROUTERS += [
    RouterSpec(cls.__name__, cls, lambda nodes, cls=cls, **kw: cls(nodes, **kw),
               replicas=False, int_keys="raw", mutable=True, takes_hash=True)
    for cls in (JumpBackHash, FlipHash, PowerHash, BinomialHash, JumpBackAnchorHash)
] + [
    RouterSpec(cls.__name__, cls, lambda nodes, cls=cls, **kw: cls(nodes, capacity=64, **kw),
               replicas=False, int_keys="raw", mutable=True, takes_hash=True)
    for cls in (AnchorHash, DxHash)
]

# A ring defined outside the library on the public base (tests/ringrouter_example.py).
ROUTERS += [
    RouterSpec("FastringRing", FastringRing,
               lambda nodes, **kw: FastringRing(nodes, vnodes=32, **kw),
               replicas=True, int_keys="hashed", mutable=True, takes_hash=True),
]

BOUNDED: list[RouterSpec] = [s for s in ROUTERS if s.bounded]


def spec_id(spec: RouterSpec) -> str:
    return spec.name


def by_name(name: str) -> RouterSpec:
    for s in ROUTERS:
        if s.name == name:
            return s
    raise KeyError(name)
