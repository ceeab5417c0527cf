"""The one boundary between Python and the compiled core (``consistent_hash._ring``).

Every module of the package takes the core's names from here, never from ``_ring``: this list
is what Python may use of the core, grouped by role. A name the core adds for Python is added
here, in its group; a name not listed is the core's own. ``tests/test_structure.py`` checks
that no other package module imports ``_ring``.
"""

from consistent_hash._ring import (
    # Errors and the hashes: the key hash of a router, the name -> id table the C X-macro
    # derives (src/ch_hashes.h), one-shot hashing.
    HASH_IDS,
    # Rings: the one point builder, the sorted ring, its edits, ties, health and remaps.
    POINTS_DIGEST,
    POINTS_HASH,
    POINTS_MD5_BE64,
    TIES_FIRST,
    TIES_KEEP,
    TIES_LAST,
    EmptyRingError,
    # The algorithms' kernels (consistent_hash.algorithms).
    _Anchor,
    _AnchorState,
    _Binomial,
    _binomial_1,
    _BoundedBase,
    _Dx,
    _DxState,
    _FlipHash,
    _fliphash_1,
    _Hasher,
    _JBAState,
    _Jump,
    _jump_batch,
    _JumpBack,
    _jumpback_1,
    _JumpBackAnchor,
    # The keys pipeline (_containers): key sources, batch routing over any router core.
    _KeySource,
    _LiveLoad,
    _MaglevTable,
    _Memento,
    # The load balancers' own point generators and kernels (compat).
    _Modula,
    _MultiProbe,
    _NginxHash,
    _Power,
    _power_1,
    _Remap,
    _Rendezvous,
    _Ring,
    _Router,
    _RouterBase,
    _set_placement,
    _SlotTable,
    arrow_source,
    arrow_view_source,
    bounded_assign,
    compat_points,
    envoy_maglev_table,
    first_foreign,
    haproxy_avalanche,
    haproxy_points,
    hash_bytes,
    hash_keys,
    health_ring,
    is_null,
    jump_hash,
    label_ring,
    maglev_table,
    nginx_points,
    remapped_ring,
    replicas_of_hashes,
    ring_add,
    ring_drop,
    ring_points,
    ring_with,
    route_hashes,
    route_keys,
    route_replicas_keys,
    take_names,
    walk_distinct,
)

__all__ = [
    "HASH_IDS", "POINTS_DIGEST", "POINTS_HASH", "POINTS_MD5_BE64", "TIES_FIRST", "TIES_KEEP",
    "TIES_LAST", "EmptyRingError", "_Anchor", "_AnchorState", "_Binomial", "_BoundedBase",
    "_Dx", "_DxState", "_FlipHash", "_Hasher", "_JBAState", "_Jump", "_JumpBack",
    "_JumpBackAnchor", "_KeySource", "_LiveLoad", "_MaglevTable", "_Memento", "_Modula",
    "_MultiProbe", "_NginxHash", "_Power", "_Remap", "_Rendezvous", "_Ring", "_Router",
    "_RouterBase", "_SlotTable", "_set_placement", "_binomial_1", "_fliphash_1", "_jump_batch",
    "_jumpback_1",
    "_power_1", "arrow_source", "arrow_view_source", "bounded_assign", "compat_points",
    "envoy_maglev_table", "first_foreign", "haproxy_avalanche", "haproxy_points", "hash_bytes",
    "hash_keys", "health_ring", "is_null", "jump_hash", "label_ring", "maglev_table",
    "nginx_points", "remapped_ring", "replicas_of_hashes", "ring_add", "ring_drop",
    "ring_points", "ring_with", "route_hashes", "route_keys",
    "route_replicas_keys", "take_names", "walk_distinct",
]
