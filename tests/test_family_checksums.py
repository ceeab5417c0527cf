"""hash4j's own checksum tests, rerun over ours: the procedure of hash4j's
AbstractConsistentBucketHasherTest.testCheckSum (JumpBackHash) and
AbstractConsistentBucketSetHasherTest.testStability (JumpBackAnchor), at dynatrace-oss/hash4j
@ 41d814f94c52, written here in Python (Java's SplittableRandom and komihash 5.0 in
tests/support/model_hash4j.py); the expected values are the constants hash4j publishes in
ConsistentJumpBackBucketHasherSplitMix64Test (CHECKSUM) and
ConsistentJumpBackAnchorBucketSetHasherTest (getCheckSum).
"""

from __future__ import annotations

import numpy as np
from model_hash4j import GOLDEN_GAMMA, M64, SplittableRandom, komihash5, mix64

from consistent_hash.algorithms import JumpBackAnchorBuckets, jumpback_bucket

JUMPBACK_CHECKSUM = 0x23D7A0D288CD67E7
JUMPBACK_ANCHOR_CHECKSUM = 0xEB47923B33BD1ACE


def _states(seed: int, first: int, count: int) -> np.ndarray:
    """SplittableRandom's seeds first + 1 .. first + count (its state after each call)."""
    with np.errstate(over="ignore"):
        return np.uint64(seed) + np.uint64(GOLDEN_GAMMA) * np.arange(
            first + 1, first + count + 1, dtype=np.uint64)


def _mix32(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(33))) * np.uint64(0x62A9D9ED799705F5)
        return ((z ^ (z >> np.uint64(28))) * np.uint64(0xCB24D0A5C88C35B3)) >> np.uint64(32)


def _mix64(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def test_vectorized_random_is_splittable_random() -> None:
    """The NumPy form below is SplittableRandom's nextInt / nextLong sequence."""
    r = SplittableRandom(0x0A55871A9D9103B7)
    want = [(r.next_int() & 0xFFFFFFFF, r.next_int() & 0xFFFFFFFF, r.next_long_unsigned())
            for _ in range(100)]
    s = _states(0x0A55871A9D9103B7, 0, 300)
    got = list(zip(_mix32(s[0::3]).tolist(), _mix32(s[1::3]).tolist(),
                   _mix64(s[2::3]).tolist(), strict=True))
    assert got == want
    assert mix64(5) == int(_mix64(np.array([5], dtype=np.uint64))[0])


def test_jumpback_checksum() -> None:
    """testCheckSum: 1,000,000 times numBuckets = max(1, nextInt() >>> 1 >>> nextInt()),
    hash = nextLong(), and the komihash 5.0 of the getBucket results put as ints."""
    count = 1_000_000
    s = _states(0x0A55871A9D9103B7, 0, 3 * count)
    a, b, h = _mix32(s[0::3]), _mix32(s[1::3]), _mix64(s[2::3])
    n = np.maximum((a >> np.uint64(1)) >> (b & np.uint64(31)), np.uint64(1))
    out = np.empty(count, dtype="<i4")
    order = np.argsort(n, kind="stable")
    ns, starts = np.unique(n[order], return_index=True)
    bounds = [*starts.tolist(), count]
    for j, nn in enumerate(ns.tolist()):
        idx = order[bounds[j]:bounds[j + 1]]
        out[idx] = jumpback_bucket(h[idx], int(nn))
    assert komihash5(out.tobytes()) == JUMPBACK_CHECKSUM


def test_jumpback_anchor_checksum() -> None:
    """testStability: 10,000 times remove a random bucket (nextDouble() < 0.5, when any) or
    add one, then komihash the getBucket of 100 nextLong() hashes."""
    rnd = SplittableRandom(0xEA29DBD906636EB9)
    jb = JumpBackAnchorBuckets()
    live: list[int] = []
    present: set[int] = set()
    chunks = []
    for _ in range(10_000):
        if rnd.next_double() < 0.5:
            if present:
                i = rnd.next_int_bounded(len(live))
                b = live[i]
                live[i] = live[-1]
                live.pop()
                present.remove(b)
                assert jb.remove(b)
        else:
            b = jb.add()
            live.append(b)
            assert b not in present
            present.add(b)
        if present:
            with np.errstate(over="ignore"):
                states = np.uint64(rnd.seed) + np.uint64(GOLDEN_GAMMA) * np.arange(
                    1, 101, dtype=np.uint64)
            rnd.seed = (rnd.seed + 100 * GOLDEN_GAMMA) & M64
            chunks.append(jb.bucket(_mix64(states)))
    # putInt's little-endian bytes: np.concatenate gives the native byte order (big-endian on
    # s390x) whatever its inputs', so the order is set after it
    assert komihash5(np.concatenate(chunks).astype("<i4").tobytes()) == JUMPBACK_ANCHOR_CHECKSUM
