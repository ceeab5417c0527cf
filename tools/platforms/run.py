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
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import check
import trees
import wheels
from trees import TREES, log

NATIVE = [t for t in check.TARGETS if not t.emulated]
EMULATED = [t for t in check.TARGETS if t.emulated]
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
    trees.binfmt()
    for name in TREES:
        how = step(f"tree {name}", lambda name=name: trees.ensure(TREES[name]))
        times[f"tree {name} was"] = str(how)
    if step("wheels + sdist", lambda: wheels.main([str(dist)])) != 0:
        failed.append("wheels + sdist")
    if step("lowest build requirements", lambda: wheels.lowest(dist)) != 0:
        failed.append("lowest build requirements")
    if "wheels + sdist" in failed:
        return report(out, times, failed, start)

    artifacts = out / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # the x86-64 trees one after the other, and each emulated tree beside them (qemu runs one
    # core per process: on 2 cores the three groups take about as long as the slowest)
    groups = [NATIVE] + [[t] for t in EMULATED]
    with tempfile.TemporaryDirectory(dir=trees.CACHE) as tmp:
        work = Path(tmp)
        written: list[str] = []

        def test(group: list[check.Target]) -> None:
            with trees.output_to(logs / f"{group[0].tree}.log"):
                for target in group:
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

        try:
            for phase in (test, cross):
                threads = [threading.Thread(target=phase, args=(g,)) for g in groups]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
            missing = [t.tree for t in check.TARGETS if t.tree not in written]
            if missing:
                failed.append(f"no artifacts from {missing}")
        finally:
            for target in check.TARGETS:
                check.cleanup(target)
            for g in groups:
                print(f"\n== platforms: {', '.join(t.tree for t in g)}", flush=True)
                print((logs / f"{g[0].tree}.log").read_text(errors="replace"), flush=True)
    return report(out, times, failed, start)


def report(out: Path, times: dict[str, float | str], failed: list[str], start: float) -> int:
    times["total"] = round(time.monotonic() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / "platforms-times.json").write_text(json.dumps(times, indent=1))
    print("\n== platforms stage: seconds per step")
    for k, v in times.items():
        print(f"  {k:<60} {v}")
    if failed:
        print(f"== platforms stage FAILED: {failed}")
        return 1
    print("== platforms stage passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
