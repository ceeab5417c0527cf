"""Routers' bytes, pickles and ring files agree across platforms (tests/platform_bytes.py).

Here: the artifacts written on this machine load back and answer identically, for every router of
the registry. With ``CONSISTENT_HASH_PLATFORM_ARTIFACTS=DIR[:DIR...]`` (tools/platforms/, the
"platforms" stage of .ci/run), the artifacts written on the other machines (x86-64, arm64,
big-endian s390x) are checked here too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import platform_bytes as pb
import pytest

VARIANTS = list(pb.variants())
IDS = [name for name, _, _ in VARIANTS]


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("platform-bytes")
    pb.write(out)
    return out


def _sources() -> list[Path]:
    env = os.environ.get("CONSISTENT_HASH_PLATFORM_ARTIFACTS", "")
    return [Path(p) for p in env.split(os.pathsep) if p]


@pytest.mark.parametrize(("name", "spec", "kw"), VARIANTS, ids=IDS)
def test_round_trip_here(here: Path, name: str, spec: pb.RouterSpec, kw: dict) -> None:
    doc = json.loads((here / "manifest.json").read_text("utf-8"))
    assert pb.check_router(here, name, spec, kw, doc, pb.load_keys(doc)) > 0


if _sources():  # defined only where there are other platforms' artifacts to check

    @pytest.mark.parametrize("src", _sources(), ids=[p.name for p in _sources()])
    def test_artifacts_from_another_platform(src: Path) -> None:
        theirs, compared = pb.check(src)
        assert compared > len(VARIANTS) * 10, (theirs, compared)


def test_every_registry_router_is_written(here: Path) -> None:
    doc = json.loads((here / "manifest.json").read_text("utf-8"))
    for spec in pb.ROUTERS:
        assert spec.name in doc["routers"]
