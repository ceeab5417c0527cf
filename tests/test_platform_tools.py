"""tools/platforms (the release files and the platforms stage of .ci/run), without the trees:
its test selection reads every golden-vector file and is the GitHub workflow's, the contents
check refuses what a wheel must not hold, and the Debian tree key names the package versions."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools" / "platforms"
pytestmark = [
    pytest.mark.skipif(not TOOLS.is_dir(), reason="tools/platforms is not beside tests/"),
    pytest.mark.skipif(sys.version_info < (3, 11), reason="the tools need Python >= 3.11"),
]
if TOOLS.is_dir():
    sys.path.insert(0, str(TOOLS))


def test_selection_reads_every_vector_file_and_matches_cibuildwheel() -> None:
    import check

    assert check.vector_files_covered(ROOT / "tests") == []
    check.check_selection_covers(ROOT)  # raises SystemExit when they differ
    assert len(list((ROOT / "tests" / "data").glob("*vectors*.json"))) >= 7


def test_a_vector_file_no_module_reads_is_reported(tmp_path: Path) -> None:
    import check

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "new_vectors.json").write_text("{}")
    for m in check.VECTOR_MODULES:
        (tmp_path / f"{m}.py").write_text("# reads nothing\n")
    assert check.vector_files_covered(tmp_path) == ["new_vectors.json"]


def _wheel(path: Path, names: list[str], meta: str = "License-Expression: MIT\n") -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for n in names:
            z.writestr(n, b"GLIBC_2.17" if n.endswith(".so") else b"")
        z.writestr("consistent_hash_ring-0.1.0.dist-info/METADATA", meta)
    return path


GOOD = ["consistent_hash/__init__.py", "consistent_hash/_ring.pyi", "consistent_hash/py.typed",
        "consistent_hash/_ring.cpython-313-x86_64-linux-gnu.so",
        "consistent_hash_ring-0.1.0.dist-info/licenses/LICENSE"]


def test_wheel_contents_check(tmp_path: Path) -> None:
    import wheels

    assert wheels.check_wheel(_wheel(tmp_path / "good.whl", GOOD)) == []
    bad = wheels.check_wheel(_wheel(tmp_path / "bad.whl", [*GOOD[:3], GOOD[3], "src/_ring.c",
                                                           "consistent_hash/_ring.pyx"]))
    assert "unexpected file src/_ring.c" in bad
    assert "unexpected file consistent_hash/_ring.pyx" in bad
    assert "no license file" in bad
    newer = tmp_path / "newer.whl"
    with zipfile.ZipFile(newer, "w") as z:
        for n in GOOD:
            z.writestr(n, b"GLIBC_2.34" if n.endswith(".so") else b"")
        z.writestr("consistent_hash_ring-0.1.0.dist-info/METADATA", "License-Expression: MIT\n")
    assert any("needs GLIBC_2.34" in p for p in wheels.check_wheel(newer))


def test_build_requirements_lower_bound_admits_the_license_expression() -> None:
    import tomllib
    import wheels

    with open(ROOT / "pyproject.toml", "rb") as f:
        doc = tomllib.load(f)
    assert doc["project"]["license"] == "MIT"
    requires = doc["build-system"]["requires"]
    assert "setuptools>=77" in requires  # PEP 639 license expressions: setuptools 77
    # the lowest versions the platforms stage builds with are those bounds
    assert wheels.LOWEST["setuptools"].startswith("77.")
    assert any(r.startswith("Cython>=" + wheels.LOWEST["Cython"].rsplit(".", 1)[0])
               for r in requires)
