"""Shared test configuration: Hypothesis profiles and the reference model.

Choose a profile with the environment variable HYPOTHESIS_PROFILE:

    dev      10 examples per test (quick local iteration)
    default  50 examples per test (the default; no deadline: the model is pure Python)
    ci       300 examples per test, no deadline, too_slow health check suppressed
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# tests/ (routers.py, helpers.py, ...) and tests/support/ (the live harnesses live_*.py and the
# models model_*.py) importable by module name
sys.path[:0] = [os.path.dirname(__file__), os.path.join(os.path.dirname(__file__), "support")]

settings.register_profile("dev", max_examples=10, deadline=None)
settings.register_profile("default", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config):
    # Hypothesis' failure reporting may touch mypy_extensions.TypedDict, which warns on this
    # environment; under filterwarnings=error that turns a test failure into an INTERNALERROR.
    config.addinivalue_line(
        "filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"
    )


@pytest.fixture(scope="session")
def model_ring_class():
    """The pure-Python reference ring class (tests/support/model_ring.py)."""
    from model_ring import ModelRing

    return ModelRing


@pytest.fixture(params=["avx512", "avx2", "portable"])
def simd(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each form of a batch kernel that has SIMD ones (the direct table's search, Rendezvous'
    draws, NumPy S rows under XXH3): AVX-512 and AVX2 where the CPU has them, and the
    portable one."""
    from consistent_hash import _ring

    old = _ring._simd()
    levels = ("portable", "avx2", "avx512")
    if levels.index(request.param) > levels.index(old):
        pytest.skip(f"this CPU (or compiler) has no {request.param}: "
                    f"the widest form run here is {old}")
    _ring._simd(request.param)
    try:
        yield request.param
    finally:
        _ring._simd(old)
