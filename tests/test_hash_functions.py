"""Check the C hash functions (src/ch_hash.h) against the reference packages.

The C code is reached through the compiled extension
``consistent_hash._ring.hash_bytes(name, data, seed) -> int`` with
name in {"xxh3", "xxh64", "murmur3", "md5"}.  References:

* xxh3    == xxhash.xxh3_64_intdigest(data, seed)
* xxh64   == xxhash.xxh64_intdigest(data, seed)
* murmur3 == mmh3.hash64(data, seed, signed=False)[0]   (h1 of x64_128)
* md5     == int.from_bytes(hashlib.md5(data).digest()[:8], "big")
"""

import hashlib

import numpy as np
import pytest

xxhash = pytest.importorskip("xxhash")
mmh3 = pytest.importorskip("mmh3")
_ring = pytest.importorskip("consistent_hash._ring")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

MAX_LEN = 1100
XXH_SEEDS = [0, 1, 2**32 - 1, 2**63 + 12345, 2**64 - 1]
MURMUR_SEEDS = [0, 1, 0xDEADBEEF, 2**32 - 1]


def _ref_xxh3(data, seed):
    return xxhash.xxh3_64_intdigest(data, seed)


def _ref_xxh64(data, seed):
    return xxhash.xxh64_intdigest(data, seed)


def _ref_murmur3(data, seed):
    return mmh3.hash64(data, seed, signed=False)[0]


def _ref_md5(data, seed):
    return int.from_bytes(hashlib.md5(data).digest()[:8], "big")


REFERENCES = {
    "xxh3": _ref_xxh3,
    "xxh64": _ref_xxh64,
    "murmur3": _ref_murmur3,
    "md5": _ref_md5,
}

CASES = (
    [("xxh3", s) for s in XXH_SEEDS]
    + [("xxh64", s) for s in XXH_SEEDS]
    + [("murmur3", s) for s in MURMUR_SEEDS]
    + [("md5", 0)]
)


def _inputs():
    """One random input per length 0..MAX_LEN, plus fixed-byte patterns.

    Random bytes come from a fixed numpy seed and cover the full 0..255 range
    (so bytes >= 0x80 are present); the 0xFF / 0x80 patterns stress the
    signed-vs-unsigned handling of every load.
    """
    rng = np.random.default_rng(0xC0FFEE)
    out = []
    for n in range(MAX_LEN + 1):
        out.append(rng.integers(0, 256, size=n, dtype=np.uint8).tobytes())
    for n in list(range(0, 260)) + list(range(260, MAX_LEN + 1, 13)):
        out.append(b"\xff" * n)
        out.append(b"\x80" * n)
    return out


INPUTS = _inputs()


def _check_all(name, seed, inputs):
    ref = REFERENCES[name]
    bad = []
    for data in inputs:
        got = _ring.hash_bytes(name, data, seed)
        exp = ref(data, seed)
        if got != exp:
            bad.append((len(data), data[:8].hex(), got, exp))
    assert not bad, (
        f"{name} seed={seed}: {len(bad)} mismatches, first: "
        f"len={bad[0][0]} prefix={bad[0][1]} got={bad[0][2]:#x} exp={bad[0][3]:#x}"
    )


def test_inputs_cover_high_bytes():
    assert any(b >= 0x80 for b in INPUTS[MAX_LEN])
    assert [len(d) for d in INPUTS[: MAX_LEN + 1]] == list(range(MAX_LEN + 1))


@pytest.mark.parametrize("name,seed", CASES, ids=[f"{n}-seed{s}" for n, s in CASES])
def test_every_length(name, seed):
    _check_all(name, seed, INPUTS)


@pytest.mark.parametrize("name,seed", CASES, ids=[f"{n}-seed{s}" for n, s in CASES])
def test_long_inputs(name, seed):
    # block / stripe boundaries of XXH3 (1024-byte blocks, 64-byte stripes),
    # XXH64 (32), murmur3 (16), md5 (64 and the 56-byte padding limit)
    rng = np.random.default_rng(4242)
    lengths = [1023, 1024, 1025, 2047, 2048, 2049, 4096 + 63, 4096 + 64,
               4096 + 65, 65536, 100_000]
    lengths += [int(n) for n in rng.integers(MAX_LEN, 100_000, size=8)]
    inputs = [rng.integers(0, 256, size=n, dtype=np.uint8).tobytes() for n in lengths]
    _check_all(name, seed, inputs)


def test_result_is_unsigned_64bit():
    for name, seed in CASES:
        for data in (b"", b"a", b"\xff" * 17, bytes(range(256))):
            v = _ring.hash_bytes(name, data, seed)
            assert isinstance(v, int)
            assert 0 <= v < 2**64


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2048), seed=st.integers(0, 2**64 - 1))
def test_hypothesis_xxh3(data, seed):
    assert _ring.hash_bytes("xxh3", data, seed) == _ref_xxh3(data, seed)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2048), seed=st.integers(0, 2**64 - 1))
def test_hypothesis_xxh64(data, seed):
    assert _ring.hash_bytes("xxh64", data, seed) == _ref_xxh64(data, seed)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2048), seed=st.integers(0, 2**32 - 1))
def test_hypothesis_murmur3(data, seed):
    assert _ring.hash_bytes("murmur3", data, seed) == _ref_murmur3(data, seed)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2048))
def test_hypothesis_md5(data):
    assert _ring.hash_bytes("md5", data, 0) == _ref_md5(data, 0)
