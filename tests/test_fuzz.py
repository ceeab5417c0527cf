"""Fuzzing: hostile and odd inputs give the documented answer or a documented exception,
never a crash, a hang or a wrong result.

The budget is HYPOTHESIS_PROFILE's (a few dozen examples by default, hundreds in CI);
`pytest -m slow tests/test_fuzz.py` runs the long budget (FUZZ_EXAMPLES, default 20,000).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from consistent_hash import HashRing, ringfile

HASHES = ["xxh3", "xxh64", "murmur3", "md5"]
RINGS = {h: HashRing([f"n{i}" for i in range(5)], vnodes=20, hash=h) for h in HASHES}
PAYLOAD = HashRing({"a": 1.0, "bé": 2.5, "c": 0.5}, vnodes=33, seed=7).to_bytes()
LONG = int(os.environ.get("FUZZ_EXAMPLES", "20000"))


def key_ref(ring: HashRing, keys: list[object]) -> list[int]:
    """The reference: each key routed alone through the scalar path."""
    return [ring.nodes.index(ring.get(k)) for k in keys]


text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)  # no lone surrogates


# -- serialized input ------------------------------------------------------------------------

def _check_from_bytes(data: bytes) -> None:
    try:
        ring = HashRing.from_bytes(data)
    except ValueError:
        return
    # Anything accepted must be a faithful, re-serializable ring.
    assert HashRing.from_bytes(ring.to_bytes()) == ring


@given(st.binary(max_size=300))
def test_from_bytes_random(data: bytes) -> None:
    _check_from_bytes(data)


@given(st.lists(st.tuples(st.integers(0, len(PAYLOAD) - 1), st.integers(0, 255)),
                min_size=1, max_size=8), st.integers(0, len(PAYLOAD)))
def test_from_bytes_mutated(edits: list[tuple[int, int]], cut: int) -> None:
    b = bytearray(PAYLOAD)
    for i, v in edits:
        b[i] = v
    _check_from_bytes(bytes(b))
    _check_from_bytes(bytes(b[:cut]))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12)


@given(st.dictionaries(st.sampled_from(["format", "version", "kind", "hash", "seed", "vnodes",
                                        "nodes", "down", "fingerprint", "x"]), json_values),
       st.booleans(), st.sampled_from(ringfile.VERSIONS))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_ring_file_random_documents(doc: dict[str, object], valid_header: bool,
                                    version: int) -> None:
    if valid_header:
        doc.update(format=ringfile.FORMAT, version=version, kind="HashRing")
    try:
        text_doc = json.dumps(doc)
    except ValueError:
        return
    try:
        ring = ringfile.loads(text_doc)
    except ValueError:
        return
    assert ringfile.loads(ringfile.dumps(ring)) == ring


# -- batch inputs ----------------------------------------------------------------------------

@given(st.sampled_from(HASHES), st.lists(text, max_size=60), st.sampled_from(["<", ">"]),
       st.integers(1, 3), st.booleans())
def test_unicode_arrays_any_layout(h: str, keys: list[str], order: str, step: int,
                                   readonly: bool) -> None:
    ring = RINGS[h]
    arr = np.array(keys + ["x"], dtype=f"{order}U{max([len(k) for k in keys] + [1]) + 2}")
    arr = arr[::step]
    if readonly:
        arr.flags.writeable = False
    expected = key_ref(ring, [str(v) for v in arr])  # numpy's own element semantics
    assert ring.get_indices(arr).tolist() == expected
    assert ring.get_indices(arr.astype(object)).tolist() == expected


@given(st.sampled_from(HASHES), st.lists(st.binary(max_size=40), max_size=60),
       st.integers(1, 3))
def test_bytes_arrays_any_layout(h: str, keys: list[bytes], step: int) -> None:
    ring = RINGS[h]
    arr = np.array(keys + [b"x"], dtype=f"S{max([len(k) for k in keys] + [1]) + 1}")[::step]
    assert ring.get_indices(arr).tolist() == key_ref(ring, [bytes(v) for v in arr])


@given(st.sampled_from(HASHES),
       hnp.arrays(st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint32, np.uint64, np.dtype(">i8"), np.dtype(">u4")]),
                  hnp.array_shapes(min_dims=1, max_dims=1, max_side=50)),
       st.integers(1, 3))
def test_integer_arrays_any_kind(h: str, arr: np.ndarray, step: int) -> None:
    ring = RINGS[h]
    view = arr[::step]
    assert ring.get_indices(view).tolist() == key_ref(ring, [int(v) for v in view])


@given(st.lists(st.one_of(text, st.binary(max_size=30), st.integers(-2**80, 2**80)),
                max_size=60))
def test_mixed_lists(keys: list[object]) -> None:
    ring = RINGS["xxh3"]
    assert ring.get_indices(keys).tolist() == key_ref(ring, keys)
    assert ring.get_indices(tuple(keys)).tolist() == key_ref(ring, keys)


@given(st.lists(st.one_of(text, st.none()), max_size=40), st.integers(0, 5),
       st.integers(0, 5), st.sampled_from(["string", "large_string", "string_view"]))
def test_arrow_slices_offsets_nulls(keys: list[str | None], lo: int, hi: int, typ: str) -> None:
    pa = pytest.importorskip("pyarrow")
    ring = RINGS["xxh3"]
    arr = pa.array(keys, type=getattr(pa, typ)())
    sl = arr.slice(min(lo, len(keys)), max(0, len(keys) - lo - hi))
    vals = sl.to_pylist()
    if None in vals:
        with pytest.raises(ValueError):
            ring.get_indices(sl)
        expected = [-1 if v is None else ring.nodes.index(ring.get(v)) for v in vals]
        assert ring.get_indices(sl, nulls="none").tolist() == expected
    else:
        assert ring.get_indices(sl).tolist() == key_ref(ring, vals)


def test_extreme_keys() -> None:
    ring = RINGS["xxh3"]
    big = "x" * (1 << 20)
    huge_unicode = "é" * 100_000  # longer than the in-place scratch buffer: the slow path
    keys: list[object] = ["", big, huge_unicode, b"", b"\x00" * 1000, 2**200, -(2**200)]
    assert ring.get_indices(keys).tolist() == key_ref(ring, keys)
    arr = np.array(["", big, huge_unicode])
    assert ring.get_indices(arr).tolist() == key_ref(ring, ["", big, huge_unicode])
    for empty in ([], (), np.array([], dtype="U1"), np.array([], dtype=np.int64),
                  np.array([], dtype=object)):
        assert ring.get_indices(empty).tolist() == []


def test_unsupported_array_kinds_raise_cleanly() -> None:
    ring = RINGS["xxh3"]
    for arr in (np.zeros(3), np.zeros(3, dtype=bool), np.zeros(3, dtype=complex),
                np.zeros(3, dtype="datetime64[s]"), np.zeros((2, 2), dtype=np.int64),
                np.zeros(3, dtype=[("a", "i4")])):
        with pytest.raises((TypeError, ValueError)):
            ring.get_indices(arr)


# -- the long budget -------------------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=LONG, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.binary(max_size=400))
def test_from_bytes_long_budget(data: bytes) -> None:
    _check_from_bytes(PAYLOAD[: len(data) % len(PAYLOAD)] + data)


@pytest.mark.slow
@settings(max_examples=LONG, deadline=None)
@given(st.lists(st.one_of(text, st.binary(max_size=30), st.integers(-2**80, 2**80)),
                max_size=30))
def test_mixed_lists_long_budget(keys: list[object]) -> None:
    ring = RINGS["xxh3"]
    assert ring.get_indices(keys).tolist() == key_ref(ring, keys)


def test_unaligned_arrays() -> None:
    """Arrays whose data start at an odd address (views into a byte buffer) are read right
    (the kernels load int64 / uint32 words: such input is realigned first)."""
    ring = RINGS["xxh3"]
    raw = np.zeros(8 * 64 + 1, dtype=np.uint8)
    ints = raw[1:].view(np.int64)
    ints[:] = np.arange(-30, 34)
    assert not ints.flags.aligned
    assert ring.get_indices(ints).tolist() == key_ref(ring, [int(v) for v in ints])
    ubuf = np.zeros(4 * 6 * 20 + 1, dtype=np.uint8)
    u = ubuf[1:].view("U6")
    u[:] = [f"k{i}é" for i in range(20)]
    assert not u.flags.aligned
    assert ring.get_indices(u).tolist() == key_ref(ring, [str(v) for v in u])
