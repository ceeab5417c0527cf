"""Envoy's ``ring_hash`` and ``maglev`` load balancers, exactly: where Envoy sends a request.

A service that routes the same keys as an Envoy cluster with ``lb_policy: RING_HASH`` or
``MAGLEV`` (a header hash policy keeping a user's requests on the host that holds its state)
can predict Envoy's choice with these routers.  Both are written from Envoy's source
(``source/extensions/load_balancing_policies/{ring_hash,maglev}/``,
``.../common/thread_aware_lb_impl.cc``) and checked against every placement expectation in
Envoy's own unit tests (docs/agreeing-with-envoy.md says which files, at which commits).

Nodes are the endpoints as Envoy names them when it hashes them: the address
``"10.0.0.1:8080"`` (``"[::1]:8080"`` for IPv6), or the endpoint's ``hostname`` when
``use_hostname_for_hashing`` is set; ``hash_keys`` gives the ``envoy.lb`` ``hash_key``
metadata that, when present, is hashed instead.  Order matters for ``EnvoyRingHash`` (as in
Envoy, where the hosts' order decides how fractional shares of the ring are rounded):
give the endpoints in the order the cluster lists them.

Keys: ``get(key)`` routes a key as a header hash policy routes that header's value, by
``xxHash64(value, seed 0)``; ``lookup(hashes)`` routes the 64-bit hashes Envoy computed
(any hash policy); ``header_hash`` gives the hash of a header with several values.

``from_config(text)`` builds the router from an Envoy cluster (YAML, JSON, or a parsed dict;
a whole bootstrap with ``static_resources.clusters`` too, or an admin ``/config_dump``).

The package: ``_hosts`` (the host set, the key hash, the bounds), ``_routers`` (the two
routers), ``_config`` (the cluster config reader).
"""

from consistent_hash.compat.envoy._config import from_config
from consistent_hash.compat.envoy._hosts import (
    DEFAULT_MAX_RING_SIZE as DEFAULT_MAX_RING_SIZE,
)
from consistent_hash.compat.envoy._hosts import (
    DEFAULT_MIN_RING_SIZE as DEFAULT_MIN_RING_SIZE,
)
from consistent_hash.compat.envoy._hosts import (
    DEFAULT_TABLE_SIZE as DEFAULT_TABLE_SIZE,
)
from consistent_hash.compat.envoy._hosts import (
    HASH_FUNCTIONS,
    header_hash,
)
from consistent_hash.compat.envoy._hosts import (
    KIND_ENVOY_MAGLEV as KIND_ENVOY_MAGLEV,
)
from consistent_hash.compat.envoy._hosts import (
    KIND_ENVOY_RING as KIND_ENVOY_RING,
)
from consistent_hash.compat.envoy._hosts import (
    MAX_TABLE_SIZE as MAX_TABLE_SIZE,
)
from consistent_hash.compat.envoy._hosts import (
    Locality as Locality,
)
from consistent_hash.compat.envoy._routers import (
    EnvoyMaglev,
    EnvoyRingHash,
)
from consistent_hash.compat.envoy._routers import (
    ring_counts as ring_counts,
)

__all__ = ["HASH_FUNCTIONS", "EnvoyMaglev", "EnvoyRingHash", "from_config", "header_hash"]

# The routers keep the import path they pickle under and the docs name.
EnvoyRingHash.__module__ = EnvoyMaglev.__module__ = __name__
