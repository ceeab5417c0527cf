"""consistent_hash: consistent hashing at C speed.

A NumPy/Cython hash ring with virtual nodes, weights and replicas, batch lookups that create
no Python object per key, and a stable, documented key -> node mapping.
"""

from consistent_hash._ring import EmptyRingError
from consistent_hash.algorithms import JumpHash, Maglev, MementoHash, MultiProbe, Rendezvous
from consistent_hash.bounded import BoundedLoad, CapacityError
from consistent_hash.cassandra import TokenRing, murmur3_token, murmur3_tokens
from consistent_hash.ketama import KetamaRing
from consistent_hash.redis import SlotMap, redis_slot, redis_slots
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
    "SlotMap",
    "TokenRing",
    "__version__",
    "murmur3_token",
    "murmur3_tokens",
    "redis_slot",
    "redis_slots",
    "vnode_count",
]
