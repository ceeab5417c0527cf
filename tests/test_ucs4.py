"""NumPy U arrays (the UCS4 kernel) hash exactly like the same keys as a list of str."""
import random

import numpy as np
import pytest

import consistent_hash as ch

HASHES = ["xxh3", "xxh64", "murmur3", "md5"]


def _random_key(rng, length):
    pools = [
        lambda: chr(rng.randrange(0x20, 0x7F)),                 # ASCII
        lambda: "\0",                                          # embedded NUL
        lambda: chr(rng.randrange(0x80, 0x800)),                # 2-byte UTF-8
        lambda: chr(rng.choice([rng.randrange(0x800, 0xD800),   # 3-byte UTF-8, no surrogates
                                rng.randrange(0xE000, 0x10000)])),
        lambda: chr(rng.randrange(0x10000, 0x110000)),          # astral
    ]
    weights = [70, 8, 8, 7, 7] if rng.random() < 0.5 else [1, 0, 0, 0, 0]
    return "".join(rng.choices(pools, weights)[0]() for _ in range(length))


def _keys(seed=0, n=3000):
    rng = random.Random(seed)
    keys = [_random_key(rng, length) for length in range(65)]  # every length 0..64
    keys += [_random_key(rng, rng.randrange(0, 65)) for _ in range(n)]
    keys += ["\0" * 5, "a\0\0b", "\0a", "x" * 64, ""]
    return keys


def _as_numpy(arr):
    """The keys as NumPy hands the elements out (trailing NULs dropped)."""
    return [str(x) for x in arr]


@pytest.mark.parametrize("hash", HASHES)
@pytest.mark.parametrize("order", ["<", ">"])
def test_u_matches_list(hash, order):
    r = ch.HashRing([f"n{i}" for i in range(20)], hash=hash, seed=0 if hash == "md5" else 7)
    keys = _keys()
    for width in (None, 1, 3, 4, 15, 16, 17, 31, 32, 33, 64, 80):
        arr = np.array(keys, dtype=f"{order}U{width}" if width else None)
        if width is None:
            arr = arr.astype(arr.dtype.newbyteorder(order))
        want = _as_numpy(arr)
        np.testing.assert_array_equal(r.hash_many(arr), r.hash_many(want))
        np.testing.assert_array_equal(r.get_indices(arr, threads=1), r.get_indices(want, threads=1))
        # Every chunk boundary and array end position, and short arrays
        for n in (0, 1, 2, 5, 17):
            np.testing.assert_array_equal(r.hash_many(arr[:n]), r.hash_many(want[:n]))


@pytest.mark.parametrize("step", [2, 3, -1])
def test_u_strided(step):
    r = ch.HashRing([f"n{i}" for i in range(20)])
    keys = _keys(1, 5000)
    arr = np.array(keys)[::step]
    np.testing.assert_array_equal(r.hash_many(arr), r.hash_many(_as_numpy(arr)))
    base = np.array(keys)
    col = np.stack([base, base[::-1]], axis=1)[:, 0]  # a column: strided
    np.testing.assert_array_equal(r.hash_many(col), r.hash_many(_as_numpy(col)))


def test_u_long_batches_and_threads():
    r = ch.HashRing([f"n{i}" for i in range(20)])
    rng = random.Random(2)
    keys = [f"user:{i}:{'x' * (i % 17)}" for i in range(20000)]
    keys[777] = _random_key(rng, 9) + "\u00e9"
    keys[4096] = "\U0001F600" * 3
    arr = np.array(keys)
    want = _as_numpy(arr)
    for threads in (1, 2):
        np.testing.assert_array_equal(r.get_indices(arr, threads=threads),
                                      r.get_indices(want, threads=threads))


@pytest.mark.parametrize("pos", [0, 5, 2047, 2048, 4999])
def test_u_lone_surrogate_raises_like_str(pos):
    r = ch.HashRing([f"n{i}" for i in range(20)])
    keys = [f"user:{i}" for i in range(5000)]
    keys[pos] = "ab\ud800cd"
    arr = np.array(keys)
    with pytest.raises(UnicodeEncodeError) as want:
        r.get_indices(list(keys), threads=1)
    with pytest.raises(UnicodeEncodeError) as got:
        r.get_indices(arr, threads=1)
    assert str(got.value) == str(want.value)
