"""What hash4j's checksum tests are made of, in plain Python: Java's SplittableRandom and the
komihash 5.0 hash that folds the results.  Written from their published descriptions (Steele,
Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014, as in OpenJDK 17's
java.util.SplittableRandom and its RandomSupport.boundedNextInt; Aleksey Vaneev's komihash 5.0
specification), never from this library, so tests/test_family_checksums.py can rerun hash4j's
``testCheckSum`` / ``testStability`` procedures and compare with hash4j's published constants.
"""

from __future__ import annotations

M64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15


def mix64(z: int) -> int:
    """SplittableRandom's (and SplitMix64's) 64-bit finalizer, Stafford's variant 13."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _mix32(z: int) -> int:
    z = ((z ^ (z >> 33)) * 0x62A9D9ED799705F5) & M64
    return (((z ^ (z >> 28)) * 0xCB24D0A5C88C35B3) & M64) >> 32


def _signed32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


class SplittableRandom:
    """java.util.SplittableRandom(seed): nextLong, nextInt, nextInt(bound), nextDouble, with
    Java's signed results (ints in [-2**31, 2**31), longs in [-2**63, 2**63))."""

    def __init__(self, seed: int) -> None:
        self.seed = seed & M64

    def _next_seed(self) -> int:
        self.seed = (self.seed + GOLDEN_GAMMA) & M64
        return self.seed

    def next_long_unsigned(self) -> int:
        return mix64(self._next_seed())

    def next_long(self) -> int:
        v = self.next_long_unsigned()
        return v - (1 << 64) if v >> 63 else v

    def next_int(self) -> int:
        return _signed32(_mix32(self._next_seed()))

    def next_int_bounded(self, bound: int) -> int:
        """RandomSupport.boundedNextInt(rng, bound) for bound > 0 (OpenJDK 17)."""
        r = self.next_int()
        m = bound - 1
        if bound & m == 0:
            return r & m
        u = (r & 0xFFFFFFFF) >> 1
        while True:
            r = u % bound
            if _signed32(u + m - r) >= 0:
                return r
            u = (self.next_int() & 0xFFFFFFFF) >> 1

    def next_double(self) -> float:
        return (self.next_long_unsigned() >> 11) * 2.0**-53


def _mul128(a: int, b: int) -> tuple[int, int]:
    p = a * b
    return p & M64, p >> 64


def _le64(b: bytes, i: int) -> int:
    return int.from_bytes(b[i:i + 8], "little")


def komihash5(data: bytes, seed: int = 0) -> int:
    """komihash 5.0 of data (64-bit result): hash4j's ``Hashing.komihash5_0()``, whose streams
    (``putInt`` = 4 little-endian bytes) hash the concatenation of what was put."""
    s1 = 0x243F6A8885A308D3 ^ (seed & 0x5555555555555555)
    s5 = 0x452821E638D01377 ^ (seed & 0xAAAAAAAAAAAAAAAA)
    lo, hi = _mul128(s1, s5)
    s5 = (s5 + hi) & M64
    s1 = s5 ^ lo
    n = len(data)
    off = 0

    def round16(s1: int, s5: int, a: int, b: int) -> tuple[int, int]:
        lo, hi = _mul128(s1 ^ a, s5 ^ b)
        s5 = (s5 + hi) & M64
        return s5 ^ lo, s5

    if n >= 64:
        s2, s3, s4 = (0x13198A2E03707344 ^ s1, 0xA4093822299F31D0 ^ s1,
                      0x082EFA98EC4E6C89 ^ s1)
        s6, s7, s8 = (0xBE5466CF34E90C6C ^ s5, 0xC0AC29B7C97C50DD ^ s5,
                      0x3F84D5B5B5470917 ^ s5)
        while n - off >= 64:
            t = [_le64(data, off + 8 * j) for j in range(8)]
            t1, t2, t3, t4 = t[0] ^ s1, t[1] ^ s2, t[2] ^ s3, t[3] ^ s4
            t5, t6, t7, t8 = t[4] ^ s5, t[5] ^ s6, t[6] ^ s7, t[7] ^ s8
            l1, h1 = _mul128(t1, t5)
            l2, h2 = _mul128(t2, t6)
            l3, h3 = _mul128(t3, t7)
            l4, h4 = _mul128(t4, t8)
            s5 = (s5 + h1) & M64
            s6 = (s6 + h2) & M64
            s7 = (s7 + h3) & M64
            s8 = (s8 + h4) & M64
            s1, s2, s3, s4 = s8 ^ l1, s5 ^ l2, s6 ^ l3, s7 ^ l4
            off += 64
        s5 ^= s6 ^ s7 ^ s8
        s1 ^= s2 ^ s3 ^ s4
    rest = n - off
    if rest >= 32:
        s1, s5 = round16(s1, s5, _le64(data, off), _le64(data, off + 8))
        s1, s5 = round16(s1, s5, _le64(data, off + 16), _le64(data, off + 24))
        off += 32
        rest -= 32
    if rest >= 16:
        s1, s5 = round16(s1, s5, _le64(data, off), _le64(data, off + 8))
        off += 16
        rest -= 16
    # the tail: up to 15 bytes and a marker bit just past them (no marker for empty data)
    tail = int.from_bytes(data[off:], "little") | (1 << (8 * rest)) if n else 0
    r1 = s1 ^ (tail & M64)
    r2 = s5 ^ (tail >> 64)
    lo, hi = _mul128(r1, r2)
    s5 = (s5 + hi) & M64
    s1 = s5 ^ lo
    lo, hi = _mul128(s1, s5)
    s5 = (s5 + hi) & M64
    return (lo ^ s5) & M64
