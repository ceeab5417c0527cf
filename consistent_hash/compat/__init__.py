"""Drop-in replacements for the pure-Python consistent-hash rings: change one import.

- ``consistent_hash.compat.uhashring.HashRing`` for ``uhashring.HashRing`` (uhashring 2.5)
- ``consistent_hash.compat.hashring.HashRing`` for ``hashring.HashRing`` (hashring 1.5.1)
- ``consistent_hash.compat.haproxy.HAProxyBackend`` / ``from_config``: where HAProxy 2.6's
  ``hash-type consistent`` sends a key (docs/agreeing-with-haproxy.md)
- ``consistent_hash.compat.nginx.NginxUpstream`` / ``from_config`` for nginx's upstream
  ``hash $key [consistent]`` balancer (nginx 1.22)
- ``consistent_hash.compat.twemproxy.from_config`` / ``TwemproxyPool`` for a twemproxy
  (nutcracker 0.5.0) pool: where it sends each key (docs/agreeing-with-twemproxy.md)

Each keeps its original's method names, arguments and results, and sends every key to the
node the original sends it to; see docs/compat.md for what each does differently where the
original is broken.

Beside them: ``consistent_hash.compat.ketama.KetamaRing`` (libketama / libmemcached /
pylibmc / twemproxy ketama), ``consistent_hash.compat.redis`` (Redis Cluster's slots),
``consistent_hash.compat.cassandra`` (Cassandra's token ring), and
``consistent_hash.compat.config`` (a proxy's configuration file -> its router; ``REGISTRY`` is
the one list of the systems it reads).

``consistent_hash.compat.envoy`` predicts Envoy's ``ring_hash`` and ``maglev`` load balancers
(``EnvoyRingHash``, ``EnvoyMaglev``, ``from_config``): see docs/agreeing-with-envoy.md.
"""

__all__ = ["cassandra", "config", "envoy", "haproxy", "hashring", "ketama", "nginx", "redis",
           "twemproxy", "uhashring"]
