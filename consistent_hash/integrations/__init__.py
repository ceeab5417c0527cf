"""Integrations with the clients and frameworks users route through, each imported only when
used: ``consistent_hash.integrations.pymemcache`` (HashClient hashers, re-exported here; they
need pymemcache only to be handed to it) and ``consistent_hash.integrations.dask``."""

from consistent_hash.integrations.pymemcache import KetamaHasher, ModuloHasher, RingHasher

__all__ = ["KetamaHasher", "ModuloHasher", "RingHasher"]
