"""The old import path of :mod:`consistent_hash.integrations.spark` (kept: it re-exports the
same objects)."""

from consistent_hash.integrations.spark import *  # noqa: F403
from consistent_hash.integrations.spark import __all__ as __all__
from consistent_hash.integrations.spark import __doc__ as __doc__
