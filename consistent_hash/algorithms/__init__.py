"""The consistent-hashing algorithm family, one module each, behind the router protocol.

Every class has the whole lookup surface of HashRing (``consistent_hash._router.Router``):
``get``, ``get_many``, ``get_indices``, ``lookup``, ``hash``, ``hash_many``, ``nodes``, ``len``,
``in``, ``==``, ``copy()``, pickling, ``to_bytes()`` / ``from_bytes()``, ``fingerprint()``, and
replicas where the algorithm orders distinct nodes.  Each module's kernel is the ``.pxi`` /
``.h`` pair of the same name in ``src/`` (see docs/algorithms.md for when to use which).

    JumpHash     Lamping & Veach 2014, bit-identical to Guava's Hashing.consistentHash
    Rendezvous   highest random weight, weighted by -w / ln(u) computed exactly
    Maglev       Eisenbud et al. 2016, a prime-sized lookup table
    MultiProbe   Appleton & O'Reilly 2015, one point per node and k probes per key
    MementoHash  Coluzzi et al. 2023: jump hash with arbitrary removal and restore
    BoundedLoad  Mirrokni, Thorup & Zadimoghaddam 2018: bounded loads over any of them
"""

from consistent_hash.algorithms.bounded import BoundedLoad, CapacityError
from consistent_hash.algorithms.jump import JumpHash, jump_hash
from consistent_hash.algorithms.maglev import Maglev, is_prime
from consistent_hash.algorithms.memento import MementoHash
from consistent_hash.algorithms.multiprobe import MultiProbe
from consistent_hash.algorithms.rendezvous import Rendezvous

__all__ = ["BoundedLoad", "CapacityError", "JumpHash", "Maglev", "MementoHash", "MultiProbe",
           "Rendezvous", "is_prime", "jump_hash"]
