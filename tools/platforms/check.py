"""Each release file installed where it runs, with no compiler there, and tested.

For each of the five trees (bookworm amd64 3.11, trixie amd64 3.13, sid amd64 3.14, bookworm
arm64 3.11 under qemu, sid s390x 3.14 under qemu) in a fresh venv: install the wheel for that
interpreter and machine (on s390x, the wheel that the tree's own gcc, Cython and setuptools
build from the sdist: no manylinux wheel is made for s390x), then with ``CC`` unset and only
the venv's bin on PATH (where no gcc or cc is found; the amd64 and arm64 trees have no compiler
installed at all):

- ``python -m consistent_hash`` prints the main job;
- SELECTION passes: the tests of every golden-vector file under tests/data, the hash functions,
  the conformance suite (the emulated trees run EMULATED_CONFORMANCE, below) and the
  cross-platform bytes (tests/platform_bytes.py).

The tests are the sdist's own (tests/, docs/, pyproject.toml, README.md), run from a directory
without the package sources, so the installed wheel is what gets imported.
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import tomllib
import trees
import wheels
from trees import TREES, log

# The selection, one pytest run (pyproject's [tool.cibuildwheel] test-command is the same, checked
# by check_selection_covers): the tests of every golden-vector file under tests/data (the modules
# that read them, tests with "vector" in their name: not the live-server tests beside them), the
# modern family's reference vectors and checksums, the hash functions, the conformance suite and
# the cross-platform bytes.
VECTOR_MODULES = ["test_vectors", "test_compat_vectors", "test_algorithms", "test_envoy",
                  "test_haproxy", "test_nginx", "test_twemproxy", "test_family_vectors",
                  "test_family_reference"]
# the conformance suite, split by what it checks (tests/conformance_cases.py is their cases)
CONFORMANCE = [f"tests/test_conformance{part}.py" for part in (
    "", "_nulls", "_outputs", "_errors", "_surface", "_replicas", "_empty", "_hash", "_bounded")]
FILES = [f"tests/{m}.py" for m in VECTOR_MODULES] + [
    "tests/test_hash_functions.py", *CONFORMANCE, "tests/test_platform_bytes.py",
    "tests/test_family_checksums.py"]
# family: the modern family's modules whole (their references' vectors and hash4j's checksums,
# whose test names do not say "vector")
SELECTION = "vector or family or hash_functions or conformance or platform_bytes"
# Under qemu (5-20x slower), a subset of the conformance suite: for every router, the container
# tests (routing, hashing and replicas of each container kind against a plain list) on the kinds
# NumPy and Python build (pyarrow, pandas and polars have no s390x wheels; on arm64 they run in
# the GitHub workflow), pickle, copy, to_bytes, out=, repr, nodes and the other surface tests,
# without the bad-input matrices (error messages: Python logic, platform-independent) and the
# same-machine bytes round trip (the other machines' bytes are checked instead). The damaged-
# bytes test runs for every router but EnvoyRingHash and NginxUpstream: for them, some damaged
# weights still make a valid router of 8-10 million positions (20 and 10 payloads; 348 s
# and 45 s of s390x's 620, 196 s and 32 s of arm64's 433: --durations); the x86-64 trees and
# the README's tests run those two whole.
EMULATED_SELECTION = (
    "vector or family or hash_functions or (conformance and not pa_ and not pd_ and not pl_ "
    "and not unsupported and not bad_ and not nulls and not empty and not keys_not_a_container "
    "and not lone_surrogate and not missing_key and not wrong_type and not internal_hashes and not "
    "rejects and not no_replicas and not unhashable and not (valid_checksum and (EnvoyRingHash "
    "or NginxUpstream)))")
# PATH: the venv only; the 15 slowest tests printed, to choose the emulated subset from
PYTEST = "/usr/bin/nice -n 19 python -m pytest -q -ra -p no:cacheprovider --durations=15"
TEST_REQUIREMENTS = ["pytest", "hypothesis", "xxhash", "mmh3"]
CONTAINER_LIBS = ["pandas", "pyarrow", "polars"]   # on the x86-64 trees


@dataclass(frozen=True)
class Target:
    tree: str
    wheel: str | None        # glob in the dist dir; None: build from the sdist in the tree
    emulated: bool


TARGETS = [Target("bookworm-amd64", "*-cp311-*x86_64.whl", False),
           Target("trixie-amd64", "*-cp313-*x86_64.whl", False),
           Target("sid-amd64", "*-cp314-*x86_64.whl", False),
           Target("bookworm-arm64", "*-cp311-*aarch64.whl", True),
           Target("sid-s390x", None, True)]


def vector_files_covered(tests: Path) -> list[str]:
    """Every *_vectors*.json under tests/data is read by one of VECTOR_MODULES (a new vector file
    must be added to the selection)."""
    sources = "".join((tests / f"{m}.py").read_text("utf-8") for m in VECTOR_MODULES)
    return [p.name for p in sorted((tests / "data").glob("*vectors*.json"))
            if p.name not in sources]


def unpack_tests(sdist: Path, dest: Path) -> None:
    """The sdist's tests, docs, pyproject.toml and README.md (not the package) into dest."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    with tarfile.open(sdist) as t:
        top = t.getnames()[0].split("/")[0]
    wanted = re.compile(rf"{re.escape(top)}/(tests/|docs/|pyproject\.toml$|README\.md$)")
    trees.extract(sdist, dest, lambda name: bool(wanted.match(name)))
    for p in (dest / top).iterdir():
        p.rename(dest / p.name)
    (dest / top).rmdir()


def pytest_args(emulated: bool) -> str:
    return " ".join(FILES) + f' -k "{EMULATED_SELECTION if emulated else SELECTION}"'


def build_requirements_check(pyproject: Path) -> str:
    """A Python one-liner (no quotes of its own) that fails unless the interpreter's installed
    distributions meet every ``name>=version`` bound of pyproject's [build-system] requires."""
    with open(pyproject, "rb") as f:
        requires = tomllib.load(f)["build-system"]["requires"]
    bounds = []
    for req in requires:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9.]+)\s*", req)
        if not m:
            raise SystemExit(f"pyproject.toml: build requirement {req!r} is not name>=version")
        bounds.append((m.group(1), tuple(int(x) for x in m.group(2).split("."))))
    return ("import importlib.metadata as m, re; "
            f"b = {bounds!r}; "
            "v = {n: tuple(int(x) for x in re.findall(r\"\\d+\", m.version(n))[:len(t)]) "
            "for n, t in b}; "
            "bad = [(n, v[n], t) for n, t in b if v[n] < t]; "
            "print(\"build requirements:\", v); "
            "assert not bad, bad").replace("'", '"')


# The compiler that builds the sdist in the s390x tree. zig (its clang, s390x-linux-gnu, from the
# pinned ziglang: a static x86-64 binary, run at the host's speed inside the tree) by default;
# everything else of the build is the tree's own and runs under qemu: pip, setuptools, Debian's
# cython3, the interpreter's headers and sysconfig, NumPy. CONSISTENT_HASH_S390X_CC=gcc builds
# with the tree's own gcc under qemu instead, as a user on s390x would (-O3 of a 5.6 MB module:
# 28 minutes of CPU here, against about one with zig).
S390X_CC = os.environ.get("CONSISTENT_HASH_S390X_CC", "zig")


def build_sdist_in_tree(tree: trees.Tree, sdist: Path, run: Path, work: Path) -> str:
    """The sdist built into a wheel in the tree (mounted, with /mnt/zig unless S390X_CC is gcc)
    by pip with no build isolation, after checking that the tree's setuptools and Cython meet
    pyproject's [build-system] bounds (PyPI's Cython is pure Python on s390x, half an hour under
    qemu); at the -O3 users get, without debug info (CFLAGS comes after sysconfig's -g). Returns
    the wheel's glob in the tree."""
    bounds = build_requirements_check(run / "pyproject.toml")
    env = {"CFLAGS": "-g0"}
    if S390X_CC != "gcc":
        # Debian's Python.h reaches pyconfig.h through <TRIPLET/pythonX.Y/pyconfig.h>: that
        # directory alone, not /usr/include, whose glibc headers are not the ones zig links to
        inc = work / f"include-{tree.name}"
        shutil.rmtree(inc, ignore_errors=True)
        pyconfig = f"{tree.triplet}/python{tree.python}/pyconfig.h"
        (inc / pyconfig).parent.mkdir(parents=True)
        shutil.copy(tree.path / "usr/include" / pyconfig, inc / pyconfig)
        env = wheels.zig_env("/mnt/zig/zig", tree.triplet, cache="/tmp/zig-cache")
        env["CFLAGS"] = f"-g0 -I/mnt/ch/{inc.name}"
    exports = " ".join(f"{k}='{v}'" for k, v in env.items())
    trees.run_in(tree, f"""
        rm -rf /tmp/chbuild-sdist /tmp/chwheel
        python3 -m venv --system-site-packages /tmp/chbuild-sdist
        /tmp/chbuild-sdist/bin/python -c '{bounds}'
        {exports} nice -n 19 /tmp/chbuild-sdist/bin/pip wheel -q --no-deps \
            --no-build-isolation -w /tmp/chwheel /mnt/dist/{sdist.name} 2>&1 \
            | grep -v '^WARNING: Location' || true
        ls /tmp/chwheel/*.whl""", timeout=2700)
    log(f"{tree.name}: the sdist built with {S390X_CC}")
    return "/tmp/chwheel/*.whl"


def run_target(target: Target, dist: Path, work: Path, artifacts: Path) -> dict[str, float]:
    """Install and test in one tree; writes this platform's artifacts to artifacts/<tree>.
    Returns the seconds each step took."""
    tree = TREES[target.tree]
    trees.ensure(tree)
    (sdist,) = dist.glob("*.tar.gz")
    run = work / f"run-{tree.name}"
    unpack_tests(sdist, run)
    out = artifacts / tree.name
    shutil.rmtree(out, ignore_errors=True)
    venv = "/tmp/chtest-venv"
    times: dict[str, float] = {}
    # the emulated selection has no pyarrow / pandas / polars kinds: not installed there (s390x
    # has no wheels of them; on arm64, unpacking them under qemu alone takes minutes)
    reqs = TEST_REQUIREMENTS + ([] if target.emulated else CONTAINER_LIBS)
    binds = {str(work): "/mnt/ch", str(dist): "/mnt/dist", str(artifacts): "/mnt/art"}
    if target.wheel is None and S390X_CC != "gcc":
        binds[str(wheels.zig_package(wheels.tool_venv()))] = "/mnt/zig"
    with trees.mounted(tree, binds):
        t0 = time.monotonic()
        if target.wheel is None:
            wheel = build_sdist_in_tree(tree, sdist, run, work)
            times["build sdist"] = time.monotonic() - t0
        else:
            (w,) = dist.glob(target.wheel)
            wheel = f"/mnt/dist/{w.name}"
        t0 = time.monotonic()
        site = "--system-site-packages" if tree.arch == "s390x" else ""
        trees.run_in(tree, f"""
            rm -rf {venv} && python3 -m venv {site} {venv}
            nice -n 19 {venv}/bin/pip install -q {wheel} {' '.join(reqs)} 2>&1 \
                | grep -v '^WARNING: Location' || true
            {venv}/bin/python -c 'import consistent_hash, numpy; print(consistent_hash.__file__,
                numpy.__version__, numpy.__file__)'""")
        times["install"] = time.monotonic() - t0
        # no compiler: CC unset, only the venv on PATH
        env = {"PATH": f"{venv}/bin", "HYPOTHESIS_PROFILE": "dev"}
        no_cc = "! command -v gcc && ! command -v cc && ! command -v clang"
        if tree.arch != "s390x":
            no_cc += " && ! test -e /usr/bin/gcc && ! test -e /usr/bin/cc"
        trees.run_in(tree, no_cc, env=env)
        t0 = time.monotonic()
        main = trees.run_in(tree, "cd /tmp && python -m consistent_hash", env=env,
                            capture=True).stdout
        if "moved" not in main.lower() and "move" not in main.lower():
            raise SystemExit(f"{tree.name}: python -m consistent_hash printed:\n{main}")
        times["python -m consistent_hash"] = time.monotonic() - t0
        log(f"{tree.name}: python -m consistent_hash printed\n{main.strip()}")
        t0 = time.monotonic()
        trees.run_in(tree, f"cd /mnt/ch/{run.name} && {PYTEST} {pytest_args(target.emulated)}",
                     env=env)
        times["tests"] = time.monotonic() - t0
        t0 = time.monotonic()
        trees.run_in(tree, f"cd /mnt/ch/{run.name} && python tests/platform_bytes.py write "
                           f"/mnt/art/{tree.name}", env=env)
        times["bytes: write"] = time.monotonic() - t0
    return times


def cross_check(target: Target, work: Path, artifacts: Path, sources: list[str]) -> float:
    """The other platforms' artifacts checked in this tree (the wheel's venv from run_target)."""
    tree = TREES[target.tree]
    env = {"PATH": "/tmp/chtest-venv/bin", "HYPOTHESIS_PROFILE": "dev",
           "CONSISTENT_HASH_PLATFORM_ARTIFACTS": ":".join(f"/mnt/art/{s}" for s in sources)}
    t0 = time.monotonic()
    with trees.mounted(tree, {str(work): "/mnt/ch", str(artifacts): "/mnt/art"}):
        trees.run_in(tree, f"cd /mnt/ch/run-{tree.name} && {PYTEST} tests/test_platform_bytes.py "
                           f"-k artifacts_from_another_platform", env=env)
    return time.monotonic() - t0


def cleanup(target: Target) -> None:
    tree = TREES[target.tree]
    trees.unmount_all(tree.path)
    for d in ("tmp/chtest-venv", "tmp/chbuild-sdist", "tmp/chwheel", "tmp/zig-cache"):
        shutil.rmtree(tree.path / d, ignore_errors=True)


def check_selection_covers(repo: Path) -> None:
    """The selection reads every golden-vector file, and the GitHub wheel workflow's test
    command (pyproject's [tool.cibuildwheel]) is the same selection."""
    missing = vector_files_covered(repo / "tests")
    if missing:
        raise SystemExit(f"golden-vector files no selected test module reads: {missing} "
                         f"(add the module to tools/platforms/check.py VECTOR_MODULES)")
    with open(repo / "pyproject.toml", "rb") as f:
        command = tomllib.load(f)["tool"]["cibuildwheel"]["test-command"]
    if not (all(f in command.split() for f in FILES) and f'-k "{SELECTION}"' in command):
        raise SystemExit("pyproject's [tool.cibuildwheel] test-command is not the selection "
                         f"of tools/platforms/check.py: {command!r}")

