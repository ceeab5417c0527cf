"""consistent_hash._containers, the one place that knows key containers, and the import of
the package (it loads no optional package).  That every container gives the nodes of a plain
list of the same keys, for every router, is tests/test_conformance.py."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from consistent_hash import EmptyRingError, HashRing, _containers, _ring
from consistent_hash.algorithms import JumpHash, Rendezvous

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

RING = HashRing([f"node-{i}" for i in range(7)], vnodes=64)
KEYS = [f"key-{i}" * (i % 4) + ("é" if i % 5 == 0 else "") for i in range(3000)]
EXPECTED = RING.get_indices(KEYS)


def test_import_does_not_import_pyarrow_or_pandas() -> None:
    code = ("import sys, consistent_hash; r = consistent_hash.HashRing(['a']); "
            "r.get_many(['x']); import numpy as np; r.get_many(np.array(['x'])); "
            "bad = [m for m in ('pyarrow', 'pandas', 'polars', 'dask', 'matplotlib') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# --------------------------------------------------------------------------------------------
# consistent_hash._containers: the one place that knows containers
# --------------------------------------------------------------------------------------------

CORE = RING._core


def test_check_out_errors_name_out() -> None:
    with pytest.raises(TypeError, match="out must be a NumPy int32 array, got 'list'"):
        _containers.check_out([0, 0], 2)
    with pytest.raises(TypeError, match="out must be a NumPy int32 array, got .*int64"):
        _containers.check_out(np.zeros(2, dtype=np.int64), 2)
    with pytest.raises(ValueError, match="out has length 3"):
        _containers.check_out(np.zeros(3, dtype=np.int32), 2)
    with pytest.raises(ValueError, match="out has shape"):
        _containers.check_out(np.zeros((2, 1), dtype=np.int32), 2)
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        _containers.check_out(np.zeros(4, dtype=np.int32)[::2], 2)
    ro = np.zeros(2, dtype=np.int32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        _containers.check_out(ro, 2)
    for bad in ([0, 0], np.zeros(2, np.int64), np.zeros(4, np.int32)[::2], ro):
        with pytest.raises((TypeError, ValueError), match="out"):
            RING.get_indices(["a", "b"], out=bad)
    out = np.full(2, 7, dtype=np.int32)
    assert RING.get_indices(["a", "b"], out=out) is out
    assert out.tolist() == RING.get_indices(["a", "b"]).tolist()


def test_containers_api() -> None:
    keys = KEYS[:100]
    assert _containers.route(CORE, keys).tolist() == EXPECTED[:100].tolist()
    rep = _containers.replicas(CORE, keys, 3)
    assert rep.shape == (100, 3) and rep[:, 0].tolist() == EXPECTED[:100].tolist()
    h = _containers.hash_many(CORE.hasher, keys)
    assert h.dtype == np.uint64 and h.tolist() == [RING.hash(k) for k in keys]
    assert _containers.route_hashes(CORE, h).tolist() == EXPECTED[:100].tolist()
    assert _containers.replicas_of_hashes(CORE, h, 3).tolist() == rep.tolist()
    assert _containers.as_hashes([1, 2]).dtype == np.uint64
    # missing keys: -1, or a row of -1, under nulls
    got = _containers.route(CORE, [KEYS[1], None], nulls=True)
    assert got.tolist() == [EXPECTED[1], -1]
    rows = _containers.replicas(CORE, [KEYS[1], None], 2, nulls=True)
    assert rows[1].tolist() == [-1, -1] and rows[0, 0] == EXPECTED[1]


def test_missing_key_hint_only_when_asked() -> None:
    with pytest.raises(TypeError, match='nulls="none"'):
        _containers.route(CORE, ["a", None])
    with pytest.raises(TypeError) as ei:
        _containers.route(CORE, ["a", None], hint=False)
    assert "nulls" not in str(ei.value) and "position 1" in str(ei.value)
    with pytest.raises(TypeError) as ei:
        _containers.hash_many(CORE.hasher, ["a", None])
    assert "nulls" not in str(ei.value)


def test_core_reads_only_plain_containers() -> None:
    out = np.empty(1, dtype=np.int32)
    for bad in (pa.array(["a"]), pd.Series(["a"]), {"a"}, "a", iter(["a"])):
        with pytest.raises(TypeError, match="list, tuple, 1-D NumPy array"):
            _ring.route_keys(CORE, bad, out)
    _ring.route_keys(CORE, [KEYS[1]], out)
    assert out[0] == EXPECTED[1]
    src = _ring.keys_source(np.array([KEYS[1]]))
    _ring.route_keys(CORE, src, out)
    assert out[0] == EXPECTED[1]


def test_empty_batch_on_empty_router() -> None:
    for core in (HashRing()._core, Rendezvous([])._core, JumpHash([])._core):
        assert _containers.route(core, []).shape == (0,)
        assert _containers.hash_many(core.hasher, []).shape == (0,)
        assert _containers.route_hashes(core, np.empty(0, np.uint64)).shape == (0,)
        with pytest.raises(EmptyRingError):
            _containers.route(core, ["a"])
        with pytest.raises(EmptyRingError):
            _containers.route_hashes(core, [1])
    empty = HashRing()._core
    assert _containers.replicas(empty, [], 2).shape == (0, 2)
    with pytest.raises(EmptyRingError):
        _containers.replicas(empty, ["a"], 2)


def test_router_base_scalar_paths() -> None:
    rdv = Rendezvous([f"n{i}" for i in range(5)])
    core = rdv._core
    for c in (CORE, core):
        assert isinstance(c, _ring._Router) and c.has_replicas
        assert c.replica_row(KEYS[1], 3) == _containers.replicas(c, ["key-1"], 3)[0].tolist()
        assert c.index("key-1") == c.index_of_hash(c.hash("key-1"))
        assert c.get("key-1") == c.nodes[c.index("key-1")]
        assert c.nodes_array()[-1] is None and c.live == len(c.nodes)
    jump = JumpHash(["a", "b", "c"])._core
    assert not jump.has_replicas and jump.hasher.raw_ints and jump.hash(7) == 7
    assert jump.hash(-1) == 2**64 - 1
    with pytest.raises(TypeError, match="replica"):
        _containers.replicas(jump, ["a"], 1)


