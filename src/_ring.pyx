# The compiled core of consistent_hash: arithmetic over immutable arrays, nothing else.  It
# imports nothing from the package; consistent_hash/_containers.py hands it plain buffers.
#
# Pipeline:  keys --[_Hasher + _KeySource, in chunks]--> uint64 hashes --[_Router.route]--> int32
# Every C declaration is in _ring.pxd.  Cython looks for a module's own .pxd under its
# qualified name (consistent_hash/_ring.pxd), which src/ is not laid out as, so the one
# cimport below brings it in.  The shared pieces come first (each needs only those above it);
# then one piece per algorithm, each over its own ch_*.h and the shared pieces.

from _ring cimport *

include "_keys.pxi"         # _Hasher, _KeySource, key_bytes, is_null: keys -> uint64
include "_router.pxi"       # _Router: the base of every algorithm, scalar paths written once
include "_pipeline.pxi"     # the one chunk driver and the batch entry points

include "_hashring.pxi"     # _Ring (HashRing and the compat rings), building rings
include "_health.pxi"       # _HealthRing: a _Ring with nodes marked down
include "_fastcalls.pxi"    # _RouterBase: every router's get / replicas / small batches in C
include "_jump.pxi"
include "_rendezvous.pxi"
include "_maglev.pxi"      # Maglev tables: ours and Envoy's
include "_multiprobe.pxi"
include "_memento.pxi"
include "_bounded.pxi"      # bounded loads over any _Router
include "_compat.pxi"       # ketama / uhashring points, slot table, compat helpers
include "_haproxy.pxi"      # HAProxy hash-type consistent: server points
include "_nginx.pxi"        # nginx upstream hash: consistent points, plain hash kernel
include "_twemproxy.pxi"     # twemproxy modula tables (consistent_hash.compat.twemproxy)
include "_family.pxi"       # the modern family: CRC-32C, _NBuckets (numbered buckets)
include "_jumpback.pxi"
include "_jumpback_anchor.pxi"
include "_fliphash.pxi"
include "_power.pxi"
include "_binomial.pxi"
include "_anchor.pxi"
include "_dxhash.pxi"
