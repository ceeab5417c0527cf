"""Debian trees for the platform checks: built with debootstrap from Debian's packages, kept in a
cache outside the clone, and reused while their package versions are unchanged.

A tree is identified by (suite, architecture, the packages it includes). Its key is the version
of each of those packages, of the interpreter's own packages (pythonX.Y, libpythonX.Y-stdlib,
libpythonX.Y-dev) and of libc6, read from the suite's Packages index on the mirror that the host's
apt sources name. The index is fetched again only when the suite's InRelease changes. A tree whose
recorded key differs from the mirror's is deleted (bind mounts first) and built anew.

Foreign architectures (arm64, s390x) run under qemu-user through binfmt_misc. A "headers" tree
is debootstrap's first stage only (nothing runs under emulation) with the interpreter's
development packages unpacked into it: the C headers and the sysconfig data that a
cross-compiler needs, from Debian's packages of that version and architecture.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import lzma
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(os.environ.get("CONSISTENT_HASH_PLATFORMS_CACHE",
                            "/var/cache/consistent-hash-platforms"))
RECIPE = 1  # bump when what goes into a tree changes: every cached tree is then rebuilt

BASE = ("python3", "python3-venv", "python3-dev", "ca-certificates")
DEV = ("python{v}-dev", "libpython{v}-dev", "libpython{v}-stdlib", "libpython{v}-minimal")


@dataclass(frozen=True)
class Tree:
    name: str
    suite: str
    arch: str
    python: str             # the X.Y that the suite's python3 must be
    include: tuple[str, ...] = BASE
    headers_only: bool = False

    @property
    def path(self) -> Path:
        return CACHE / "trees" / self.name

    @property
    def stamp(self) -> Path:
        return CACHE / "trees" / f"{self.name}.json"

    @property
    def foreign(self) -> bool:
        return self.arch != host_arch()

    @property
    def triplet(self) -> str:
        return {"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu",
                "s390x": "s390x-linux-gnu"}[self.arch]


TREES: dict[str, Tree] = {t.name: t for t in [
    Tree("bookworm-amd64", "bookworm", "amd64", "3.11"),
    Tree("trixie-amd64", "trixie", "amd64", "3.13"),
    Tree("sid-amd64", "sid", "amd64", "3.14"),
    Tree("bookworm-arm64", "bookworm", "arm64", "3.11"),
    # NumPy from Debian: PyPI has no s390x wheel. The sdist is built there with the tree's own
    # Cython and setuptools (PyPI's Cython is pure Python on s390x, and Cythonizing with it
    # under qemu was most of the stage's time) and zig's clang, or its gcc (check.S390X_CC)
    Tree("sid-s390x", "sid", "s390x", "3.14",
         BASE + ("python3-numpy", "gcc", "cython3", "python3-setuptools")),
    Tree("trixie-arm64-headers", "trixie", "arm64", "3.13",
         tuple(p.format(v="3.13") for p in DEV), headers_only=True),
    Tree("sid-arm64-headers", "sid", "arm64", "3.14",
         tuple(p.format(v="3.14") for p in DEV), headers_only=True),
]}


def extract(archive: Path, dest: Path, members: Callable[[str], bool] | None = None) -> None:
    """Unpack a tar archive (only the member names ``members`` accepts, when given)."""
    with tarfile.open(archive) as t:
        chosen = [m for m in t.getmembers() if members is None or members(m.name)]
        if hasattr(tarfile, "data_filter"):  # 3.11.4+: refuse links and paths out of dest
            t.extractall(dest, members=chosen, filter="data")
        else:  # pragma: no cover - Debian's 3.11.2
            t.extractall(dest, members=chosen)


_out = threading.local()  # where this thread's commands and messages go (output_to)
_live: set[subprocess.Popen[str]] = set()  # the tree commands running now (all threads)


@contextlib.contextmanager
def output_to(path: Path) -> Iterator[None]:
    """Send this thread's log lines and tree commands' output to ``path`` (steps that run in
    parallel threads keep their output apart)."""
    with open(path, "a", buffering=1) as f:
        _out.file = f
        try:
            yield
        finally:
            _out.file = None


def exit_on_sigterm() -> None:
    """SIGTERM (CI's timeout, a kill) raises SystemExit, so that the ``finally`` blocks unmount
    the trees' bind mounts before the process ends."""
    def stop(signum: int, frame: object) -> None:
        for proc in list(_live):  # the other threads' commands end too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def log(msg: str) -> None:
    print(f"[platforms {time.strftime('%H:%M:%S')}] {msg}", flush=True,
          file=getattr(_out, "file", None) or sys.stdout)


def host_arch() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def mirror() -> str:
    """The Debian mirror that the host's apt sources name (deb822 or one-line format)."""
    texts = []
    for p in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        if p.is_file() and p.suffix in ("", ".list", ".sources"):
            texts.append(p.read_text(errors="replace"))
    for text in texts:
        for stanza in re.split(r"\n\s*\n", text):
            fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
            if "debian" in fields.get("URIs", "") and "security" not in fields.get("URIs", "") \
                    and fields.get("Types", "deb").split()[0] == "deb":
                return fields["URIs"].split()[0].rstrip("/")
        for m in re.finditer(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+\S+\s+main", text, re.M):
            if "security" not in m.group(1):
                return m.group(1).rstrip("/")
    raise SystemExit("no Debian mirror in the host's apt sources")


def _fetch(url: str) -> bytes:
    for attempt in range(3):
        try:
            with urllib.request.urlopen(url, timeout=120) as r:
                return bytes(r.read())
        except OSError:
            if attempt == 2:
                raise
            time.sleep(5)
    raise AssertionError


def _index(suite: str, arch: str) -> dict[str, dict[str, str]]:
    """name -> {"Version", "Depends"} from the suite's main Packages index, cached by InRelease."""
    base = f"{mirror()}/dists/{suite}"
    release = _fetch(f"{base}/InRelease")
    digest = hashlib.sha256(release).hexdigest()[:16]
    cached = CACHE / "index" / f"{suite}-{arch}-{digest}.json"
    if cached.exists():
        return dict(json.loads(cached.read_text()))
    raw = lzma.decompress(_fetch(f"{base}/main/binary-{arch}/Packages.xz")).decode()
    out: dict[str, dict[str, str]] = {}
    for para in raw.split("\n\n"):
        fields = dict(re.findall(r"^(Package|Version|Depends):\s*(.*)$", para, re.M))
        if "Package" in fields:
            out[fields["Package"]] = {"Version": fields.get("Version", ""),
                                      "Depends": fields.get("Depends", "")}
    cached.parent.mkdir(parents=True, exist_ok=True)
    for old in cached.parent.glob(f"{suite}-{arch}-*.json"):
        old.unlink()
    cached.write_text(json.dumps(out))
    return out


def key(tree: Tree) -> dict[str, object]:
    """What the tree is made of: the recipe, and the versions of the packages that matter."""
    index = _index(tree.suite, tree.arch)
    m = re.search(r"python(3\.\d+)\b", index["python3"]["Depends"])
    if not m or m.group(1) != tree.python:
        raise SystemExit(f"{tree.name}: the suite's python3 is {m and m.group(1)}, "
                         f"expected {tree.python}")
    v = tree.python
    names = sorted(set(tree.include) | {f"python{v}", f"libpython{v}-stdlib", f"libpython{v}-dev",
                                        "libc6"})
    missing = [n for n in names if n not in index]
    if missing:
        raise SystemExit(f"{tree.name}: not in {tree.suite}/{tree.arch}: {missing}")
    return {"recipe": RECIPE, "suite": tree.suite, "arch": tree.arch,
            "headers_only": tree.headers_only,
            "versions": {n: index[n]["Version"] for n in names}}


# --------------------------------------------------------------------------------------------
# mounts
# --------------------------------------------------------------------------------------------

def _mounts_under(path: Path) -> list[str]:
    root = str(path.resolve())
    out = []
    with open("/proc/self/mounts") as f:
        for line in f:
            target = line.split()[1].replace("\\040", " ")
            if target == root or target.startswith(root + "/"):
                out.append(target)
    return out


def unmount_all(path: Path) -> None:
    """Unmount everything mounted at or under ``path``, deepest first."""
    for target in sorted(_mounts_under(path), key=len, reverse=True):
        if subprocess.run(["umount", target]).returncode != 0:
            subprocess.run(["umount", "-l", target], check=True)


def binfmt() -> None:
    """qemu-user through binfmt_misc: the mount is empty at boot; the entries come up with PF."""
    if not Path("/proc/sys/fs/binfmt_misc/status").exists():
        subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", "/proc/sys/fs/binfmt_misc"],
                       check=True)
    subprocess.run(["update-binfmts", "--enable"], check=False, capture_output=True)
    for name in ("qemu-aarch64", "qemu-s390x"):
        entry = Path("/proc/sys/fs/binfmt_misc") / name
        if not entry.exists() or "enabled" not in entry.read_text():
            raise SystemExit(f"binfmt_misc has no enabled {name} entry "
                             "(apt-get install qemu-user-static binfmt-support)")


@contextlib.contextmanager
def mounted(tree: Tree, binds: dict[str, str] | None = None) -> Iterator[None]:
    """/proc, /sys, /dev, /dev/pts, the host's local package indexes (read-only) and ``binds``
    (host dir -> dir inside the tree) mounted in the tree for the duration; unmounted after."""
    root = tree.path
    plan: list[tuple[list[str], Path]] = [
        (["-t", "proc", "proc"], root / "proc"),
        (["-t", "sysfs", "sysfs"], root / "sys"),
        (["--bind", "/dev"], root / "dev"),
        (["--bind", "/dev/pts"], root / "dev/pts"),
    ]
    ro = []
    for local in ("/opt/wheels", "/opt/pypi", "/opt/pypi-more"):  # the host's pip configuration
        if Path(local).is_dir():
            plan.append((["--bind", local], root / local.lstrip("/")))
            ro.append(root / local.lstrip("/"))
    for host, inside in (binds or {}).items():
        plan.append((["--bind", host], root / inside.lstrip("/")))
    try:
        for args, target in plan:
            target.mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", *args, str(target)], check=True)
            if target in ro:
                subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], check=True)
        yield
    finally:
        unmount_all(root)


def pip_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("PIP_")}


def run_in(tree: Tree, script: str, env: dict[str, str] | None = None, check: bool = True,
           capture: bool = False, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """Run a shell script in the tree (mounted by the caller) with a clean environment; a
    step that outlives ``timeout`` seconds is killed and fails."""
    base = {"HOME": "/root", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "PYTHONDONTWRITEBYTECODE": "1", **pip_env(), **(env or {})}
    cmd = ["chroot", str(tree.path), "/usr/bin/env", "-i",
           *[f"{k}={v}" for k, v in base.items()], "/bin/sh", "-ec", script]
    stream = getattr(_out, "file", None)
    out = subprocess.PIPE if capture else stream
    err = subprocess.PIPE if capture else (subprocess.STDOUT if stream else None)
    # a process group of its own: a timeout or an exit (SIGTERM) ends every process it started,
    # not only chroot (pip and the compilers under qemu would go on, inside a tree being
    # unmounted). Not a session of its own: with the kernel's autogroup scheduling every session
    # is a group of equal weight, whatever the nice values inside, and the trees' nice-19 work
    # took a core's share each from the nice-0 tests of .ci/run (measured: the README's tests
    # 2,697 s beside this stage, 1,865 s alone)
    with subprocess.Popen(cmd, text=True, stdout=out, stderr=err, process_group=0) as proc:
        _live.add(proc)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            _live.discard(proc)
    result = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    if check:
        result.check_returncode()
    return result


# --------------------------------------------------------------------------------------------
# building
# --------------------------------------------------------------------------------------------

def _debootstrap(tree: Tree, include: tuple[str, ...], foreign: bool) -> None:
    args = ["nice", "-n", "19", "debootstrap", "--variant=minbase", f"--arch={tree.arch}",
            "--include=" + ",".join(include)]
    if foreign:
        args.append("--foreign")
    subprocess.run([*args, tree.suite, str(tree.path), mirror()], check=True,
                   stdout=subprocess.DEVNULL)


def _configure(tree: Tree) -> None:
    """The host's DNS, CA certificates and pip configuration, so that pip works in the tree."""
    root = tree.path
    shutil.copy("/etc/resolv.conf", root / "etc/resolv.conf")
    for src in sorted(Path("/usr/local/share/ca-certificates").glob("*")):
        shutil.copy(src, root / "usr/local/share/ca-certificates" / src.name)
    if Path("/etc/pip.conf").exists():
        shutil.copy("/etc/pip.conf", root / "etc/pip.conf")
    for src, dst in ((Path("/etc/xdg/pip"), root / "etc/xdg/pip"),
                     (Path.home() / ".config/pip", root / "root/.config/pip")):
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
    # sid's Release is past its Valid-Until on a frozen mirror (apt in the tree only)
    (root / "etc/apt/apt.conf.d/99consistent-hash").write_text(
        'Acquire::Check-Valid-Until "false";\n')
    with mounted(tree):
        run_in(tree, "update-ca-certificates >/dev/null")


def _build(tree: Tree) -> None:
    if tree.headers_only:
        # first stage only: debootstrap downloads every package and unpacks the base set;
        # the interpreter's development packages are unpacked from its download cache
        _debootstrap(tree, tree.include, foreign=True)
        debs = tree.path / "var/cache/apt/archives"
        for name in tree.include:
            found = sorted(debs.glob(f"{name}_*_{tree.arch}.deb"))
            if not found:
                raise SystemExit(f"{tree.name}: debootstrap downloaded no {name}")
            subprocess.run(["dpkg-deb", "-x", str(found[-1]), str(tree.path)], check=True)
        return
    if tree.foreign:
        binfmt()
        _debootstrap(tree, tree.include, foreign=True)
        subprocess.run(["nice", "-n", "19", "chroot", str(tree.path),
                        "/debootstrap/debootstrap", "--second-stage"],
                       check=True, stdout=subprocess.DEVNULL)
    else:
        _debootstrap(tree, tree.include, foreign=False)
    _configure(tree)


def remove(tree: Tree) -> None:
    if tree.path.exists():
        unmount_all(tree.path)
        if _mounts_under(tree.path):
            raise SystemExit(f"{tree.path}: still mounted, not deleting it")
        shutil.rmtree(tree.path)
    tree.stamp.unlink(missing_ok=True)


def ensure(tree: Tree) -> str:
    """Make the tree current; returns "reused" or "built"."""
    want = key(tree)
    if tree.stamp.exists() and tree.path.is_dir() and json.loads(tree.stamp.read_text()) == want:
        if tree.foreign and not tree.headers_only:
            binfmt()
        return "reused"
    remove(tree)
    tree.path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    log(f"{tree.name}: building ({tree.suite}/{tree.arch}, python {tree.python})")
    try:
        _build(tree)
    except BaseException:
        remove(tree)
        raise
    tree.stamp.write_text(json.dumps(want, indent=1, sort_keys=True))
    log(f"{tree.name}: built in {time.monotonic() - t0:.0f} s")
    return "built"


def main(argv: list[str]) -> int:
    names = argv or list(TREES)
    for name in names:
        t0 = time.monotonic()
        how = ensure(TREES[name])
        log(f"{name}: {how} ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
