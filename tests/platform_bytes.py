"""The same bytes on every platform: artifacts written on one machine, checked on another.

``python tests/platform_bytes.py write DIR`` writes, for every router of the registry
(tests/routers.py; each hash function too where the router takes ``hash=``, and a seed), its
``to_bytes`` payload, a pickle, a ring file (HashRing), its fingerprint, and what it answers on
3,000 keys of each key family (str, bytes, small and wide ints): ``get_indices``, ``hash_many``
and, where the algorithm orders distinct nodes, ``replica_indices``.

``python tests/platform_bytes.py check DIR`` (or tests/test_platform_bytes.py with
``CONSISTENT_HASH_PLATFORM_ARTIFACTS=DIR[:DIR...]``) loads each artifact on this machine and
asserts, router by router: the payload, pickle and ring file load; each loaded router and a fresh
build answer every container kind of every family (lists, tuples, NumPy arrays in both byte
orders, object arrays, and pyarrow / pandas / polars where installed) exactly as the writer's
router did; a fresh build has the same ``to_bytes`` and fingerprint; ``threads=2`` (forced onto
the parallel path) gives the serial answer.
"""

from __future__ import annotations

import json
import pickle
import platform
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from routers import ROUTERS, RouterSpec, node_names  # noqa: E402

from consistent_hash import HashRing, _ring, ringfile  # noqa: E402

N_KEYS = 3000
NODES = node_names(12)
FAMILIES = ("str", "bytes", "int", "wide_int")
FORMAT = 1


def variants() -> Iterator[tuple[str, RouterSpec, dict[str, Any]]]:
    """(id, spec, make kwargs): every registry router, and its hash functions and a seed."""
    for spec in ROUTERS:
        yield spec.name, spec, {}
        if spec.takes_hash:
            for h in ("xxh64", "murmur3", "md5"):
                yield f"{spec.name}.{h}", spec, {"hash": h}
            yield f"{spec.name}.seed", spec, {"hash": "xxh3", "seed": 12345}


def make_keys() -> dict[str, list[Any]]:
    """The keys of each family; deterministic, so both sides could make them, but the writer
    stores them and the checker reads them back."""
    rng = random.Random(20261201)
    words = ["user", "ключ", "日本語", "🙂", "é", "a\x00b", "x" * 70, "{tag}", "", " "]
    strs = [f"{rng.choice(words)}:{i}:{rng.getrandbits(40):x}" for i in range(N_KEYS - 3)]
    strs += ["", "\U0010fffd", "\u00ff" * 33]
    raw = [rng.randbytes(rng.randrange(1, 40)) for _ in range(N_KEYS)]
    return {
        "str": strs,
        # S arrays drop trailing NUL bytes: no key ends in one
        "bytes": [b if not b.endswith(b"\x00") else b + b"\x01" for b in raw],
        "int": [rng.randrange(0, 2**31) for _ in range(N_KEYS)],  # fits every integer dtype
        "wide_int": [rng.randrange(0, 2**63) for _ in range(N_KEYS)],  # int64 and uint64
    }


def families(spec: RouterSpec) -> tuple[str, ...]:
    return tuple(f for f in FAMILIES if spec.int_keys != "refused" or "int" not in f)


def _optional(name: str) -> Any:
    try:
        return __import__(name)
    except ImportError:
        return None


def containers(family: str, keys: list[Any]) -> Iterator[tuple[str, Callable[[], Any]]]:
    """(kind, build) for every container kind of the family that this machine has."""
    pa, pd, pl = _optional("pyarrow"), _optional("pandas"), _optional("polars")
    yield "list", lambda: list(keys)
    yield "tuple", lambda: tuple(keys)
    yield "object_array", lambda: np.array(keys + [None], dtype=object)[:-1]
    if family == "str":
        width = max(map(len, keys))
        yield "U_little", lambda: np.array(keys, dtype=f"<U{width}")
        yield "U_big", lambda: np.array(keys, dtype=f">U{width}")
        if pa is not None:
            yield "pa_string", lambda: pa.array(keys, pa.string())
            yield "pa_large_string", lambda: pa.array(keys, pa.large_string())
        if pd is not None:
            yield "pd_object", lambda: pd.Series(keys, dtype=object)
        if pl is not None:
            yield "pl_string", lambda: pl.Series("k", keys, dtype=pl.String)
    elif family == "bytes":
        yield "S", lambda: np.array(keys, dtype="S")
        if pa is not None:
            yield "pa_binary", lambda: pa.array(keys, pa.binary())
        if pl is not None:
            yield "pl_binary", lambda: pl.Series("k", keys, dtype=pl.Binary)
    else:
        kinds = ["<i8", ">i8", "<u8", ">u8"]
        if family == "int":
            kinds += ["<i4", ">i4", "<u4", ">u4"]
        for dt in kinds:
            yield f"int_{dt}", lambda dt=dt: np.array(keys, dtype=dt)
        if pa is not None:
            yield "pa_int64", lambda: pa.array(keys, pa.int64())
        if pd is not None:
            yield "pd_int64", lambda: pd.Series(np.array(keys, dtype=np.int64))


def answers(router: Any, spec: RouterSpec, keys: dict[str, list[Any]],
            threads: int = 1) -> dict[str, np.ndarray]:
    """What the router answers on the keys given as lists."""
    out = {}
    for fam in families(spec):
        out[f"indices_{fam}"] = router.get_indices(keys[fam], threads=threads)
        out[f"hash_{fam}"] = router.hash_many(keys[fam], threads=threads)
        if spec.replicas:
            out[f"replicas_{fam}"] = router.replica_indices(keys[fam], 3)
    return out


def platform_info() -> dict[str, str]:
    return {"machine": platform.machine(), "byteorder": sys.byteorder,
            "python": platform.python_version(), "numpy": np.__version__}


def write(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    keys = make_keys()
    doc: dict[str, Any] = {"format": FORMAT, "platform": platform_info(),
                           "keys": {**keys, "bytes": [k.hex() for k in keys["bytes"]]},
                           "routers": {}}
    for name, spec, kw in variants():
        router = spec.make(NODES, **kw)
        (out / f"{name}.bin").write_bytes(router.to_bytes())
        (out / f"{name}.pickle").write_bytes(pickle.dumps(router, protocol=4))
        if isinstance(router, HashRing):
            ringfile.save(router, out / f"{name}.ring")
        np.savez(out / f"{name}.npz", **answers(router, spec, keys))
        doc["routers"][name] = {"fingerprint": router.fingerprint(), "nodes": list(router.nodes)}
    (out / "manifest.json").write_text(json.dumps(doc, ensure_ascii=False), "utf-8")


def load_keys(doc: dict[str, Any]) -> dict[str, list[Any]]:
    keys = dict(doc["keys"])
    keys["bytes"] = [bytes.fromhex(k) for k in keys["bytes"]]
    return keys


def check_router(src: Path, name: str, spec: RouterSpec, kw: dict[str, Any],
                 doc: dict[str, Any], keys: dict[str, list[Any]]) -> int:
    """Check one router's artifacts from ``src`` on this machine; returns the answers compared.
    Raises AssertionError naming the router, the artifact and the container that differ."""
    want = doc["routers"][name]
    with np.load(src / f"{name}.npz") as z:
        expected = {k: z[k] for k in z.files}
    fresh = spec.make(NODES, **kw)
    payload = (src / f"{name}.bin").read_bytes()
    assert fresh.to_bytes() == payload, f"{name}: to_bytes differs from the writer's"
    assert fresh.fingerprint() == want["fingerprint"], f"{name}: fingerprint differs"
    loaded = {"fresh": fresh, "from_bytes": spec.cls.from_bytes(payload),
              "pickle": pickle.loads((src / f"{name}.pickle").read_bytes())}
    if (src / f"{name}.ring").exists():
        loaded["ring_file"] = ringfile.load(src / f"{name}.ring")
    compared = 0
    for how, router in loaded.items():
        assert list(router.nodes) == want["nodes"], f"{name} ({how}): nodes differ"
        assert router.fingerprint() == want["fingerprint"], f"{name} ({how}): fingerprint"
        for fam in families(spec):
            for kind, build in containers(fam, keys[fam]):
                got = router.get_indices(build(), threads=1)
                assert np.array_equal(got, expected[f"indices_{fam}"]), \
                    f"{name} ({how}): get_indices differ on {fam} keys as {kind}"
                compared += 1
            assert np.array_equal(router.hash_many(keys[fam], threads=1),
                                  expected[f"hash_{fam}"]), f"{name} ({how}): hash_many on {fam}"
            if spec.replicas:
                assert np.array_equal(router.replica_indices(keys[fam], 3),
                                      expected[f"replicas_{fam}"]), \
                    f"{name} ({how}): replica_indices on {fam}"
            compared += 1
    # threads=2 on the parallel path (every batch of more than one chunk is split) is serial
    old = _ring._set_parallel_min(1)
    try:
        runs = _ring._parallel_runs()
        par = answers(fresh, spec, keys, threads=2)
        assert _ring._parallel_runs() > runs, f"{name}: threads=2 never took the parallel path"
    finally:
        _ring._set_parallel_min(old)
    for k, v in par.items():
        if not k.startswith("replicas_"):  # replica_indices has no threads= (serial above)
            assert np.array_equal(v, expected[k]), f"{name}: threads=2 differs on {k}"
    return compared


def check(src: Path) -> tuple[dict[str, str], int]:
    doc = json.loads((src / "manifest.json").read_text("utf-8"))
    assert doc["format"] == FORMAT, f"{src}: artifact format {doc['format']}, expected {FORMAT}"
    keys = load_keys(doc)
    mine = {name for name, _, _ in variants()}
    theirs = set(doc["routers"])
    # a router that only one side knows is a version skew, not a platform difference: name it
    assert mine == theirs, (f"routers differ from the writer's: only here {sorted(mine - theirs)}"
                            f", only there {sorted(theirs - mine)}")
    total = 0
    for name, spec, kw in variants():
        total += check_router(src, name, spec, kw, doc, keys)
    return doc["platform"], total


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("write", "check"):
        print("usage: platform_bytes.py write|check DIR", file=sys.stderr)
        return 2
    if argv[0] == "write":
        write(Path(argv[1]))
        print(f"wrote {len(list(variants()))} routers' artifacts to {argv[1]} on {platform_info()}")
    else:
        theirs, n = check(Path(argv[1]))
        print(f"{argv[1]}: {n} answers of {len(list(variants()))} routers written on {theirs} "
              f"agree on {platform_info()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
