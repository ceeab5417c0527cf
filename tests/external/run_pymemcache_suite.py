"""Run pymemcache's own HashClient tests with our hashers in place of its default one.

pymemcache 4.0.0's wheel installs its tests as ``pymemcache.test`` (identical to the sdist's,
``pip download pymemcache==4.0.0 --no-binary :all:``).  From the repository root (so the
working tree's package is the one imported):

    python tests/external/run_pymemcache_suite.py [ring|ketama|default]

Every
``HashClient(...)`` those tests build without an explicit hasher then uses ``RingHasher`` or
``KetamaHasher(mode="ketama")``; ``default`` runs the suite unchanged, for comparison.  The
suite runs with mocked sockets: no server is needed.
"""

from __future__ import annotations

import functools
import os
import sys


def main() -> int:
    which = sys.argv[1] if len(sys.argv) > 1 else "ketama"
    sys.path.insert(0, os.getcwd())
    import pytest
    from pymemcache.client import hash as pm_hash

    from consistent_hash.integrations import KetamaHasher, RingHasher

    hasher = {"ring": RingHasher, "ketama": functools.partial(KetamaHasher, mode="ketama"),
              "default": pm_hash.RendezvousHash}[which]
    defaults = list(pm_hash.HashClient.__init__.__defaults__ or ())
    defaults[0] = hasher  # HashClient(servers, hasher=RendezvousHash, ...)
    pm_hash.HashClient.__init__.__defaults__ = tuple(defaults)
    import pymemcache.test

    test = os.path.join(os.path.dirname(pymemcache.test.__file__), "test_client_hash.py")
    # pymemcache's own settings, not ours: no ini file, so its `unit` marker is not refused by
    # our --strict-markers when a pyproject.toml of ours is an ancestor (the wheel's test run)
    return int(pytest.main(["-q", "-p", "no:cacheprovider", "-c", os.devnull,
                            "--rootdir", os.path.dirname(test), "-o", "addopts=",
                            "-o", "markers=unit: pymemcache's unit tests", test]))


if __name__ == "__main__":
    sys.exit(main())
