"""Leak check of the fuzz targets: every input of a corpus through its target's check, ROUNDS
times; the process's resident memory after the first round and after the last must agree (a
leak of even one small allocation per input grows it by ROUNDS x inputs allocations).

Leak checking is off in the sanitized runs (the interpreter is not built with ASan, so LSan
would report its own allocations); this is the leak check instead. The package is imported
without atheris's instrumentation, which leaks by itself (see fuzz/_harness.py).

    python fuzz/leak_check.py [ROUNDS] TARGET=CORPUS_DIR[,CORPUS_DIR...] ...
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# atheris's instrumentation leaks what it traces (see _harness.py): measure the library alone.
os.environ["CONSISTENT_HASH_FUZZ_NO_INSTRUMENT"] = "1"


def rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def main() -> None:
    args = sys.argv[1:]
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 20
    for spec in args:
        target, _, dirs = spec.partition("=")
        mod = importlib.import_module(f"fuzz_{target}")
        inputs = []
        for d in dirs.split(","):
            for name in sorted(os.listdir(d)):
                if name != "README":
                    with open(os.path.join(d, name), "rb") as f:
                        inputs.append(f.read())
        marks = []
        for _ in range(rounds):
            for data in inputs:
                mod.test_one(data)
            gc.collect()
            marks.append(rss_kb())
        growth = marks[-1] - marks[0]
        print(f"{target}: {len(inputs)} inputs x {rounds} rounds, RSS after round 1 "
              f"{marks[0] / 1024:.1f} MB, after round {rounds} {marks[-1] / 1024:.1f} MB "
              f"(growth {growth / 1024:+.1f} MB, {1024 * growth / (len(inputs) * (rounds - 1)):.1f}"
              f" bytes per input)")


if __name__ == "__main__":
    main()
