"""The old import path of :mod:`consistent_hash.integrations.migrate` (kept: it re-exports the
same objects)."""

from consistent_hash.integrations.migrate import *  # noqa: F403
from consistent_hash.integrations.migrate import __all__ as __all__
from consistent_hash.integrations.migrate import __doc__ as __doc__
from consistent_hash.integrations.migrate._memcached import _Memcached as _Memcached
