"""NginxUpstream: send each key where nginx's upstream ``hash`` balancer sends it.

``upstream NAME { hash $key consistent; server ...; }`` is ``NginxUpstream(servers)``;
``hash $key;`` (without ``consistent``) is ``NginxUpstream(servers, consistent=False)``.
``from_config(text, name=None)`` builds one from a whole nginx.conf or a bare ``upstream``
block.  Nodes are the servers exactly as written in the config (``"127.0.0.1:8001"``,
``"localhost:8001"``, ``"unix:/run/app.sock"``): nginx hashes the text, not the address, so
``localhost:8001`` and ``127.0.0.1:8001`` are different points on its ring.

The recipe, read from nginx 1.22's ngx_http_upstream_hash_module (docs/agreeing-with-nginx.md
says it in full):

- ``consistent``: each server gets ``160 * weight`` points; point j is CRC-32 of
  ``host NUL port`` followed by point j - 1 as 4 little-endian bytes (0 before the first);
  ``unix:PATH`` hashes ``PATH NUL``, and a server without ``:port`` hashes ``host NUL``.  The
  points are sorted and equal points merged (the earlier server keeps it).  A key goes to the
  first point >= CRC-32(key), wrapping; a ``down`` server's point passes the key on to the next
  point, up to 20 times.
- plain ``hash``: ``v = CRC-32(key)``; ``acc += (v >> 16) & 0x7fff``; the server is the one
  whose weight interval holds ``acc % total_weight`` (servers in order, down ones included);
  if it is down, ``v = CRC-32(str(r) + key)`` for r = 1, 2, ... and again, up to 20 times.

After 20 failed tries nginx hands the key to round robin, which nobody can predict; we keep
walking (the next point, the next rehash) instead, so those keys (only possible with many
servers down) are the one place we may differ.  An empty key is round-robined by nginx too.

The package: ``_upstream`` (the router), ``_config`` (the nginx.conf reader).
"""

from consistent_hash.compat.nginx._config import (
    Upstream,
    from_config,
    parse_upstreams,
)
from consistent_hash.compat.nginx._upstream import (
    KIND_NGINX as KIND_NGINX,
)
from consistent_hash.compat.nginx._upstream import (
    POINTS_PER_WEIGHT as POINTS_PER_WEIGHT,
)
from consistent_hash.compat.nginx._upstream import (
    NginxUpstream,
)

__all__ = ["NginxUpstream", "Upstream", "from_config", "parse_upstreams"]

# The classes keep the import path they pickle under and the docs name.
NginxUpstream.__module__ = Upstream.__module__ = __name__
