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

The modern family, each bit-identical to its reference implementation (docs/routers/):

    JumpBackHash        Ertl 2025 (hash4j): O(1) jump hash;        jumpback_bucket(h, n)
    FlipHash            Masson & Lee 2024 (fliphash-rs);            fliphash_bucket(h, n, seed)
    PowerHash           Leu 2023 (power-consistent-hash, PCG32);   power_bucket(h, n)
    BinomialHash        Coluzzi et al. 2024 (SUPSI BinomialEngine); binomial_bucket(h, n)
    AnchorHash          Mendelson et al. 2021 (cpp-anchorhash);    AnchorBuckets(a, w)
    DxHash              Dong et al. 2023 (ChaosD/DxHash);          DxBuckets(a, w)
    JumpBackAnchorHash  hash4j's jumpBackAnchorHash;               JumpBackAnchorBuckets()
"""

from consistent_hash.algorithms.anchor import AnchorBuckets, AnchorHash
from consistent_hash.algorithms.binomial import BinomialHash, binomial_bucket
from consistent_hash.algorithms.bounded import BoundedLoad, CapacityError
from consistent_hash.algorithms.dxhash import DxBuckets, DxHash
from consistent_hash.algorithms.fliphash import FlipHash, fliphash_bucket
from consistent_hash.algorithms.jump import JumpHash, jump_hash
from consistent_hash.algorithms.jumpback import JumpBackHash, jumpback_bucket
from consistent_hash.algorithms.jumpback_anchor import JumpBackAnchorBuckets, JumpBackAnchorHash
from consistent_hash.algorithms.maglev import Maglev, is_prime
from consistent_hash.algorithms.memento import MementoHash
from consistent_hash.algorithms.multiprobe import MultiProbe
from consistent_hash.algorithms.power import PowerHash, power_bucket
from consistent_hash.algorithms.rendezvous import Rendezvous

__all__ = ["BoundedLoad", "CapacityError", "JumpHash", "Maglev", "MementoHash", "MultiProbe",
           "Rendezvous", "is_prime", "jump_hash"]
__all__ += ["AnchorBuckets", "AnchorHash", "BinomialHash", "DxBuckets", "DxHash", "FlipHash",
            "JumpBackAnchorBuckets", "JumpBackAnchorHash", "JumpBackHash", "PowerHash",
            "binomial_bucket", "fliphash_bucket", "jumpback_bucket", "power_bucket"]
