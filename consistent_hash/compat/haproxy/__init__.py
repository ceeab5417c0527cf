"""HAProxyBackend: send each key where HAProxy 2.6's ``hash-type consistent`` sends it.

A backend such as::

    backend cache
        balance hdr(X-Key)
        hash-type consistent djb2 avalanche
        server a 10.0.0.1:80 weight 2
        server b 10.0.0.2:80 id 7
        server c 10.0.0.3:80 disabled

is ``from_config(text)``, or ``HAProxyBackend(["a", "b", "c"], {"a": 2}, ids={"b": 7},
disabled=["c"], function="djb2", avalanche=True)``.  Nodes are the servers' names as written.
``get(key)`` takes the bytes HAProxy hashes: for ``balance hdr(name)`` the header's value as
``header_value`` extracts it, for ``balance url_param`` the parameter's value
(``url_param_value``), for ``balance uri`` the path before ``?`` (``uri_key``), for ``balance
hash <expr>`` the sample's bytes.

HAProxy's recipe, in short (docs/agreeing-with-haproxy.md has it in full):

- the key hash is sdbm, djb2, wt6 or crc32 over the key bytes (32 bits), then, with the
  ``avalanche`` modifier, Bob Jenkins' 32-bit integer mix of it.  ``hash-type consistent``
  with no function means sdbm *with* avalanche; naming a function drops the avalanche unless
  it is named too;
- a server of weight w (0..256) with id p gets 16 * w points
  ``avalanche(p * 4096 + j)``, j < 16 * w; a server without ``id`` takes the first free number
  from a counter that starts at 1 and steps past every server line, so deleting a line
  renumbers every later server without an explicit id (and moves their keys);
- a key goes to the point *nearest* to its hash, either side, on the 32-bit circle; at equal
  distance the point below wins.  That is the ordinary ring here: each point owns the
  hashes up to the midpoint between it and the next point;
- ``disabled`` servers and weight 0 have no points; ``backup`` servers are used only when no
  active server is left: then all keys go to the first backup server, or, with ``option
  allbackups``, are hashed over the backup servers' points.

Not modelled: ``hash-balance-factor`` (bounded loads, which depends on the requests in flight;
with none in flight it changes nothing), runtime changes made on the CLI (``set server``,
``add server``, health checks: call ``disable`` / ``enable`` / ``set_weight`` to mirror them),
slow start, and the ``path-only`` / ``check_post`` options of ``uri`` / ``url_param``.
``balance source`` hashes the client address as integers, not as a string: use
``source_hash`` / ``get_source`` for it.

The package: ``_backend`` (the router), ``_request`` (request-key extraction), ``_config``
(the haproxy.cfg reader).
"""

from consistent_hash.compat.haproxy._backend import (
    BE_WEIGHT_SCALE as BE_WEIGHT_SCALE,
)
from consistent_hash.compat.haproxy._backend import (
    FUNCTIONS,
    HAProxyBackend,
    assign_ids,
)
from consistent_hash.compat.haproxy._backend import (
    KIND_HAPROXY as KIND_HAPROXY,
)
from consistent_hash.compat.haproxy._backend import (
    MAX_ID as MAX_ID,
)
from consistent_hash.compat.haproxy._backend import (
    MAX_WEIGHT as MAX_WEIGHT,
)
from consistent_hash.compat.haproxy._backend import (
    SRV_EWGHT_RANGE as SRV_EWGHT_RANGE,
)
from consistent_hash.compat.haproxy._config import from_config
from consistent_hash.compat.haproxy._request import (
    header_value,
    uri_key,
    url_param_value,
)

__all__ = ["FUNCTIONS", "HAProxyBackend", "assign_ids", "from_config", "header_value",
           "uri_key", "url_param_value"]

# The router keeps the import path it pickles under and the docs name.
HAProxyBackend.__module__ = __name__
