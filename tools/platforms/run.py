"""The platforms stage of .ci/run (tools/platforms.sh): trees, release files, and each file
tested where it runs, then the cross-platform bytes.

1. the Debian trees (trees.py): reused while their package versions are unchanged, else built;
2. the sdist and the six manylinux2014 wheels (wheels.py; tools/wheels.sh is the same step),
   and one build with pyproject's lowest build requirements;
3. in each of the five trees, the release file for it in a fresh venv (check.py);
4. the artifacts each tree wrote (tests/platform_bytes.py) checked elsewhere: the x86-64
   (bookworm) set on arm64 and s390x, and every other tree's set on each x86-64 tree.

Any failure fails the stage; the other platforms still run, so one run reports them all. The
seconds of each step are printed at the end and written to OUT/platforms-times.json.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import check
import trees
import wheels
from trees import TREES, log

NATIVE = [t for t in check.TARGETS if not t.emulated]
EMULATED = [t for t in check.TARGETS if t.emulated]
T = TypeVar("T")
REFERENCE = "bookworm-amd64"  # the x86-64 set that the emulated trees check


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: run.py OUT", file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    dist = out / "dist"
    times: dict[str, float | str] = {}
    failed: list[str] = []
    start = time.monotonic()

    def step(name: str, fn: Callable[[], object]) -> object:
        t0 = time.monotonic()
        try:
            result = fn()
        except BaseException as e:  # noqa: BLE001 - reported, then the stage fails
            if isinstance(e, KeyboardInterrupt):
                raise
            traceback.print_exc()
            failed.append(name)
            result = None
        times[name] = round(time.monotonic() - t0, 1)
        log(f"{name}: {'FAILED' if name in failed else 'ok'} ({times[name]} s)")
        return result

    check.check_selection_covers(wheels.REPO)
    # a run that was killed (SIGKILL, a lost session) can leave its mounts in the trees: every
    # mount below is made afresh by the step that needs it
    for tree in TREES.values():
        if tree.path.exists():
            trees.unmount_all(tree.path)
    trees.binfmt()
    # the foreign trees' second stages (qemu, CPU) beside the others (mostly downloads)
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)

    def ensure(names: list[str]) -> None:
        with trees.output_to(logs / f"trees-{names[0]}.log"):
            for name in names:
                how = step(f"tree {name}", lambda name=name: trees.ensure(TREES[name]))
                times[f"tree {name} was"] = str(how)

    foreign = [n for n, t in TREES.items() if t.foreign and not t.headers_only]
    rest = [n for n in TREES if n not in foreign]
    parallel(ensure, [rest, *[[n] for n in foreign]])
    for path in sorted(logs.glob("trees-*.log")):
        print(path.read_text(errors="replace"), end="", flush=True)
    # The wheels are built one version after another; each tree's tests start as soon as its
    # file exists (s390x: the sdist; arm64: the 3.11 wheels) and run beside the builds.
    ready = {what: threading.Event() for what in ["sdist", *wheels.BUILDS]}
    needs = {t.tree: "sdist" if t.wheel is None else next(
        v for v in wheels.BUILDS if f"cp{v.replace('.', '')}" in t.wheel) for t in check.TARGETS}
    artifacts = out / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    written: list[str] = []

    def build() -> None:
        with trees.output_to(logs / "wheels.log"):
            try:
                if step("wheels + sdist", lambda: wheels.release(dist, lambda w: ready[w].set())):
                    failed.append("wheels + sdist")
            finally:
                for event in ready.values():  # waiters find out from the files
                    event.set()
            if step("lowest build requirements", lambda: wheels.lowest(dist)) != 0:
                failed.append("lowest build requirements")

    with tempfile.TemporaryDirectory(dir=trees.CACHE) as tmp:
        work = Path(tmp)

        def test(group: list[check.Target]) -> None:
            with trees.output_to(logs / f"{group[0].tree}.log"):
                for target in group:
                    ready[needs[target.tree]].wait()
                    r = step(f"test {target.tree}",
                             lambda t=target: check.run_target(t, dist, work, artifacts))
                    if isinstance(r, dict):
                        written.append(target.tree)
                        for k, v in r.items():
                            times[f"test {target.tree}: {k}"] = round(v, 1)

        def cross(group: list[check.Target]) -> None:
            with trees.output_to(logs / f"{group[0].tree}.log"):
                for target in group:
                    if target.tree not in written:
                        continue
                    if target.emulated:
                        sources = [REFERENCE] if REFERENCE in written else []
                    else:
                        sources = [s for s in written if s != target.tree]
                    if sources:
                        step(f"bytes from {', '.join(sources)} checked on {target.tree}",
                             lambda t=target, s=sources: check.cross_check(t, work, artifacts, s))

        # the x86-64 trees one after the other, after the builds (which use them); each
        # emulated tree in a thread of its own (qemu: one core per process)
        groups = [NATIVE] + [[t] for t in EMULATED]
        try:
            builder = threading.Thread(target=build, daemon=True)
            builder.start()
            emulated = [threading.Thread(target=test, args=([t],), daemon=True) for t in EMULATED]
            for th in emulated:
                th.start()
            builder.join()
            test(NATIVE)
            for th in emulated:
                th.join()
            parallel(cross, groups)
            missing = [t.tree for t in check.TARGETS if t.tree not in written]
            if missing:
                failed.append(f"no artifacts from {missing}")
        finally:
            for target in check.TARGETS:
                check.cleanup(target)
            for name in ["wheels", *(g[0].tree for g in groups)]:
                print(f"\n== platforms: {name}", flush=True)
                print((logs / f"{name}.log").read_text(errors="replace"), flush=True)
    return report(out, times, failed, start)


def parallel(fn: Callable[[list[T]], None], groups: list[list[T]]) -> None:
    """fn(group) for each group, each in a thread of its own; returns when all are done."""
    threads = [threading.Thread(target=fn, args=(g,), daemon=True) for g in groups]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def report(out: Path, times: dict[str, float | str], failed: list[str], start: float) -> int:
    times["total"] = round(time.monotonic() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / "platforms-times.json").write_text(json.dumps(times, indent=1))
    print("\n== platforms stage: seconds per step")
    for k, v in times.items():
        print(f"  {k:<60} {v}")
    # the trees' pytest closing lines, added up ("N passed, N failed" is CI's closing line)
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    for path in sorted((out / "logs").glob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if re.match(r"^=*\s*\d+ (passed|failed|skipped|errors?)\b.* in [\d.]+s", line):
                for n, what in re.findall(r"(\d+) (passed|failed|skipped|errors?)", line):
                    counts["errors" if what.startswith("error") else what] += int(n)
    tally = (f"platforms: {counts['passed']} passed, {counts['failed'] + counts['errors']} failed"
             + (f", {counts['skipped']} skipped" if counts["skipped"] else ""))
    (out / "tally.txt").write_text(tally + "\n")
    if failed:
        print(f"== platforms stage FAILED: {failed}")
        print(tally)
        return 1
    print("== platforms stage passed")
    print(tally)
    return 0


if __name__ == "__main__":
    trees.exit_on_sigterm()
    sys.exit(main(sys.argv[1:]))
