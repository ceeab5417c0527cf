"""consistent_hash: consistent hashing at C speed.

A NumPy/Cython hash ring with virtual nodes, weights and replicas, batch lookups that create
no Python object per key, and a stable, documented key -> node mapping.  Every router (the
ring, the algorithm family in ``consistent_hash.algorithms``, the exact reproductions of other
systems in ``consistent_hash.compat``) has the same surface, written once in
``consistent_hash._router``.
"""

from consistent_hash._core import EmptyRingError
from consistent_hash._ringbase import RingRouter
from consistent_hash._threads import get_threads, set_thread_placement, set_threads
from consistent_hash.algorithms import (
    AnchorHash,
    BinomialHash,
    BoundedLoad,
    CapacityError,
    DxHash,
    FlipHash,
    JumpBackAnchorHash,
    JumpBackHash,
    JumpHash,
    Maglev,
    MementoHash,
    MultiProbe,
    PowerHash,
    Rendezvous,
)
from consistent_hash.compat.cassandra import TokenRing, murmur3_token, murmur3_tokens
from consistent_hash.compat.ketama import KetamaRing
from consistent_hash.compat.redis import SlotMap, redis_slot, redis_slots
from consistent_hash.ring import HashRing, vnode_count

__version__ = "0.1.0"

__all__ = [
    "BoundedLoad",
    "CapacityError",
    "EmptyRingError",
    "HashRing",
    "JumpHash",
    "KetamaRing",
    "Maglev",
    "MementoHash",
    "MultiProbe",
    "Rendezvous",
    "RingRouter",
    "SlotMap",
    "TokenRing",
    "__version__",
    "get_threads",
    "murmur3_token",
    "murmur3_tokens",
    "redis_slot",
    "redis_slots",
    "set_thread_placement",
    "set_threads",
    "vnode_count",
]
__all__ += ["AnchorHash", "BinomialHash", "DxHash", "FlipHash", "JumpBackAnchorHash",
            "JumpBackHash", "PowerHash"]
