"""The README's install, `pip install -e .`, leaves a package that mypy sees with its stubs.

setuptools' editable install either writes a static path (.pth) or installs an import-hook
finder, which static tools such as mypy cannot follow (every type then becomes a missing import
or ``Any``). pyproject.toml's ``package-dir = {"" = "."}`` selects the static path. This test
copies the project into a temporary directory, installs it editable into a fresh venv (the
system's numpy, pip, setuptools, Cython and mypy through ``--system-site-packages``) and runs
mypy there on the typed example, which must pass, and on the example with two deliberate type
errors, which mypy must report.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = Path(__file__).resolve().parent / "typing_example.py"
BAD_LINES = '''
wrong: int = HashRing(["a"]).get("k")  # get returns str
HashRing(["a"]).get(1.5)  # a float is not a key
'''


def _run(cmd: list[str], cwd: Path, timeout: float = 600,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**{k: v for k, v in os.environ.items()
              if k not in ("PYTHONPATH", "MYPYPATH", "PYTHONHOME", "VIRTUAL_ENV")}, **(env or {})}
    return subprocess.run(cmd, cwd=str(cwd), env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.skipif(not all((ROOT / name).exists() for name in
                            ("pyproject.toml", "setup.py", "src", "consistent_hash")),
                    reason="needs the source tree (pyproject.toml, setup.py, src/, "
                           "consistent_hash/) beside tests/")
def test_mypy_sees_an_editable_install(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install '.[test]')")
    pytest.importorskip("Cython", reason="building the extension needs Cython")
    project = tmp_path / "project"
    project.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.html")
    for name in ("consistent_hash", "src"):
        shutil.copytree(ROOT / name, project / name, ignore=skip)
    for name in ("setup.py", "pyproject.toml", "README.md", "MANIFEST.in"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, project / name)
    venv = tmp_path / "venv"
    r = _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
              str(venv)], tmp_path)
    assert r.returncode == 0, r.stderr
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # The system's pip, setuptools and Cython (visible through --system-site-packages) build
    # the project: the command the README gives, without dependencies and build isolation.
    # At -O0 (setup.py's CONSISTENT_HASH_DEBUG_CYTHON=1): what mypy must follow is the layout the
    # editable install writes, not the optimized code; the -O3 build is a minute and a half more.
    r = _run([str(python), "-m", "pip", "install", "-q", "-e", str(project), "--no-deps",
              "--no-build-isolation"], tmp_path, env={"CONSISTENT_HASH_DEBUG_CYTHON": "1"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

    work = tmp_path / "work"  # neither the project nor this repository: only the install
    work.mkdir()
    r = _run([str(python), "-c", "import consistent_hash; print(consistent_hash.__file__)"],
             work)
    assert r.returncode == 0 and Path(r.stdout.strip()).resolve() == (
        project / "consistent_hash" / "__init__.py").resolve(), r.stdout + r.stderr

    good = work / "typing_example.py"
    shutil.copy2(EXAMPLE, good)
    bad = work / "bad_example.py"
    text = EXAMPLE.read_text("utf-8")
    bad.write_text(text + BAD_LINES, "utf-8")
    first_bad = text.count("\n") + 2
    mypy = [str(python), "-m", "mypy", "--strict", "--no-incremental", "--cache-dir",
            str(tmp_path / "cache")]
    r = _run([*mypy, good.name], work)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([*mypy, bad.name], work)
    assert r.returncode == 1, r.stdout + r.stderr
    errors = [ln for ln in r.stdout.splitlines() if ": error:" in ln]
    assert len(errors) == 2, r.stdout
    assert errors[0].startswith(f"{bad.name}:{first_bad}: error: Incompatible types in "
                                "assignment") and '"str"' in errors[0], errors[0]
    assert errors[1].startswith(f"{bad.name}:{first_bad + 1}: error:") and \
        "[arg-type]" in errors[1] and '"float"' in errors[1], errors[1]

    # what made that work: a static path to the project, not a finder
    pths = sorted({p.resolve() for p in [*venv.glob("lib*/python*/site-packages/__editable__*"),
                                         *venv.glob("Lib/site-packages/__editable__*")]})
    assert len(pths) == 1, pths
    lines = [ln for ln in pths[0].read_text().splitlines() if ln.strip()]
    assert [Path(ln).resolve() for ln in lines] == [project.resolve()], lines
