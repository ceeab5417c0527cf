"""The modern family in plain Python, written from each reference's published description and
read source (never from consistent_hash): slow and obviously faithful, the second reference the
compiled kernels are checked against beside the vectors recorded from the references themselves
(tests/data/family_reference_vectors.json), and the generator of our own router vectors
(tests/data/make_family_vectors.py).

Every function keeps the reference's integer semantics (Java's 32-bit int and 64-bit long,
C's uint32_t, Rust's u64) with explicit masks.  Where a reference misbehaves, the function
says so and models the reference as it is; the library's answer there is a separate function
(``*_ours``) that the tests hold the library to.

    jumpback(h, n)                  hash4j ConsistentHashing.jumpBackHash(splitMix64_V1())
    JumpBackAnchor                  hash4j ConsistentHashing.jumpBackAnchorHash(splitMix64_V1())
    fliphash(key, seed, range_end)  DataDog/fliphash-rs fliphash_64_with_seed
    power(key, n)                   DXist/power-consistent-hash PowerConsistentHasher (PCG32)
    binomial(h, size)               SUPSI BinomialEngine(size, hf).getBucket with hf = h
    Anchor                          anchorhash/cpp-anchorhash AnchorHashQre
    Dx                              ChaosD/DxHash DxHash(n_total, n_working)
"""

from __future__ import annotations

from model_hash4j import GOLDEN_GAMMA as GOLDEN
from model_hash4j import M64, mix64

M32 = 0xFFFFFFFF


# --------------------------------------------------------------------------------------------
# JumpBackHash (Ertl 2025) with hash4j's SplitMix64 generator
# --------------------------------------------------------------------------------------------

class SplitMix64:
    """hash4j's PseudoRandomGeneratorProvider.splitMix64_V1(): reset(seed) sets the state;
    nextLong adds the golden gamma and mixes; nextInt is (int) nextLong; uniformInt(s) is
    Lemire's method with 32-bit words."""

    def __init__(self, seed: int) -> None:
        self.state = seed & M64

    def next_long(self) -> int:
        self.state = (self.state + GOLDEN) & M64
        return mix64(self.state)

    def uniform_int(self, s: int) -> int:
        x = self.next_long() & M32
        m = x * s
        low = m & M32
        if low < s:
            t = (1 << 32) % s
            while low < t:
                x = self.next_long() & M32
                m = x * s
                low = m & M32
        return m >> 32


def _jumpback_walk(n: int, g: SplitMix64) -> int:
    """hash4j's getBucket(numBuckets >= 2, generator), the generator continuing after it."""
    r0 = g.next_long()
    x = ((r0 ^ (r0 >> 32)) & M32) & (M32 >> (32 - (n - 1).bit_length()))
    while True:
        if x == 0:
            return 0
        lo = 1 << (x.bit_length() - 1)
        # Java's long shift by (bitCount << 5) uses its low 6 bits: 32 for an odd count
        shift = 32 if bin(x).count("1") & 1 else 0
        b = lo + (((r0 >> shift) & M32) & (lo - 1))
        if b < n:
            return b
        hi = 2 * lo - 1
        while True:
            r1 = g.next_long()
            b = r1 & hi
            if b < lo:
                break
            if b < n:
                return b
            b = (r1 >> 32) & hi
            if b < lo:
                break
            if b < n:
                return b
        x ^= lo


def jumpback(h: int, n: int) -> int:
    """ConsistentHashing.jumpBackHash(splitMix64_V1()).getBucket(h, n), n >= 1."""
    assert n >= 1
    if n == 1:
        return 0
    return _jumpback_walk(n, SplitMix64(h))


class JumpBackAnchor:
    """ConsistentHashing.jumpBackAnchorHash(splitMix64_V1()): a = historicMaxNumBuckets, the
    stack of removed buckets, and per removed bucket b the pair (h - b, n) of the
    memory-optimized AnchorHash (ka[b]; (0, 0) for a bucket not removed)."""

    def __init__(self) -> None:
        self.a = 0
        self.removed: list[int] = []
        self.ka: dict[int, tuple[int, int]] = {}

    def _view(self, b: int, v: int) -> int:
        while True:
            d, n = self.ka.get(b, (0, 0))
            if n < v:
                return b
            b += d

    def add(self) -> int:
        if not self.removed:
            self.a += 1
            return self.a - 1
        b = self.removed.pop()
        del self.ka[b]
        return b

    def remove(self, b: int) -> bool:
        if b < 0 or b >= self.a or b in self.ka:
            return False
        if self.a - 1 == len(self.removed):
            self.a, self.removed, self.ka = 0, [], {}
        elif b == self.a - 1 and not self.removed:
            self.a -= 1
        else:
            self.removed.append(b)
            n = self.a - len(self.removed)
            h = self._view(n, n + 1)
            self.ka[b] = (h - b, n)
        return True

    def bucket(self, h: int) -> int:
        if self.a <= len(self.removed):
            raise LookupError("No buckets available!")
        if self.a <= 1:
            return 0
        g = SplitMix64(h)
        b = _jumpback_walk(self.a, g)
        while b in self.ka:
            ab = self.ka[b][1]
            b = self._view(g.uniform_int(ab), ab)
        return b

    def state(self) -> bytes:
        """getState(): int32 LE historicMaxNumBuckets, then the removed buckets in order."""
        return b"".join(v.to_bytes(4, "little") for v in [self.a, *self.removed])


# --------------------------------------------------------------------------------------------
# FlipHash (Masson & Lee 2024), fliphash-rs's fliphash_64_with_seed
# --------------------------------------------------------------------------------------------

def _flip_hash(key: int, seed: int, bit_len: int, i: int) -> int:
    k = key ^ seed
    k = (k * (bit_len * 2 + 1)) & M64
    k = ((k ^ (k >> 27)) * 0x3C79AC492BA7B653) & M64
    k = (k * (i * 2 + 1)) & M64
    k = ((k ^ (k >> 33)) * 0x1C69B3F74AC4AE35) & M64
    return k ^ (k >> 27)


def _flip_pow2(key: int, seed: int, h: int, mask: int) -> int:
    m = h & mask
    if m == 0:
        return 0
    lz = 64 - m.bit_length()
    flipper = _flip_hash(key, seed, m.bit_length() - 1, 0) & ((M64 >> lz) >> 1)
    return m ^ flipper


def fliphash(key: int, seed: int, range_end: int) -> int:
    """fliphash_64_with_seed(key, seed, ..=range_end)."""
    if range_end == 0:
        return 0
    mask = M64 >> (64 - range_end.bit_length())
    h = _flip_hash(key, seed, 0, 0)
    r = _flip_pow2(key, seed, h, mask)
    if r <= range_end:
        return r
    for i in range(1, 65):
        draw = _flip_hash(key, seed, range_end.bit_length() - 1, i) & mask
        if draw <= mask >> 1:
            break
        if draw <= range_end:
            return draw
    return _flip_pow2(key, seed, h, mask >> 1)


# --------------------------------------------------------------------------------------------
# PowerCH (Leu 2023), power-consistent-hash's PowerConsistentHasher with its PCG32
# --------------------------------------------------------------------------------------------

class Pcg32:
    """rand_pcg's Lcg64Xsh32 as power-consistent-hash has it: new(state, stream) adds the
    increment and steps once; next_u32 outputs without stepping."""

    MUL = 6364136223846793005

    def __init__(self, state: int, stream: int) -> None:
        self.inc = ((stream << 1) | 1) & M64
        self.state = (state + self.inc) & M64
        self.step()

    def step(self) -> None:
        self.state = (self.state * self.MUL + self.inc) & M64

    def next_u32(self) -> int:
        s = self.state
        rot = s >> 59
        xsh = (((s >> 18) ^ s) >> 27) & M32
        return ((xsh >> rot) | (xsh << ((32 - rot) & 31))) & M32


def _power_f(key: int, mask: int) -> tuple[int, Pcg32 | None]:
    bits = key & mask
    if bits == 0:
        return 0, None
    msb = bits.bit_length() - 1
    g = Pcg32(key, msb)
    h = 1 << msb
    return (h + (g.next_u32() & (h - 1))) & M32, g


def _power_g(n: int, s: int, g: Pcg32) -> int:
    x = s
    while True:
        scaled = (x + 1) * M32
        rnd = g.next_u32() + 1
        if n * rnd <= scaled:
            return x
        g.step()
        x = scaled // rnd


def power(key: int, n: int) -> int:
    """PowerConsistentHasher::try_new(n)?.hash_u64(key) for 2 <= n <= 2**31 (try_new refuses
    n < 2; above 2**31 its u32 power of two overflows)."""
    assert 2 <= n <= 1 << 31
    m = 1 << (n - 1).bit_length()
    r1, g = _power_f(key, m - 1)
    if r1 < n:
        return r1
    assert g is not None
    g.step()
    r2 = _power_g(n, m // 2 - 1, g)
    if r2 > m // 2 - 1:
        return r2
    return _power_f(key, m // 2 - 1)[0]


# --------------------------------------------------------------------------------------------
# BinomialHash (Coluzzi et al. 2024), the SUPSI suite's BinomialEngine
# --------------------------------------------------------------------------------------------

def _bin_rehash(value: int, seed: int) -> int:
    h = (2862933555777941757 * value + 1) & M64
    return ((h * h * seed) & M64) >> 32


def _bin_relocate(bucket: int, h: int) -> int:
    if bucket < 2:
        return bucket
    base = 1 << (bucket.bit_length() - 1)
    return base + (_bin_rehash(h, base - 1) & M32 & (base - 1))


def binomial_filters(size: int) -> tuple[int, int]:
    """(enclosingTreeFilter, minorTreeFilter) as the BinomialEngine(size) constructor sets
    them (Java int arithmetic: 2**31 - 1 for any size above 2**30)."""
    hob = 1 << (size.bit_length() - 1)
    if size > hob:
        hob <<= 1
    return hob - 1, (hob - 1) >> 1


def binomial_with(h: int, size: int, enclosing: int, minor: int) -> int:
    """BinomialEngine.getBucket with a hash function returning h, for given filters (as
    constructed, or as the engine's own addBucket leaves them)."""
    if size < 2:
        return 0
    bucket = _bin_relocate((h & M32) & enclosing, h)
    if bucket < size:
        return bucket
    x = h
    for _ in range(4):
        x = _bin_rehash(x, enclosing)
        bucket = _bin_relocate((x & M32) & enclosing, x)
        if bucket <= minor:
            break
        if bucket < size:
            return bucket
    return _bin_relocate((h & M32) & minor, h)


def binomial(h: int, size: int) -> int:
    """BinomialEngine(size, hf).getBucket(key) where hf.hash(key) is h."""
    return binomial_with(h, size, *binomial_filters(size))


def binomial_grown(size: int) -> tuple[int, int]:
    """The filters a BinomialEngine(1, hf) holds after size - 1 addBucket() calls: its
    addBucket shifts a 1 into both filters whenever size passes enclosingTreeFilter, so from
    size 1 the minor filter ends up equal to the enclosing one (the reference's defect)."""
    enclosing = minor = 0
    for s in range(2, size + 1):
        if s > enclosing:
            enclosing, minor = (enclosing << 1) | 1, (minor << 1) | 1
    return enclosing, minor


# --------------------------------------------------------------------------------------------
# CRC32C as SSE4.2's crc32q computes it (no inversions): AnchorHash's and DxHash's hash
# --------------------------------------------------------------------------------------------

def _crc_table() -> list[int]:
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    return t


_CRC = _crc_table()


def crc32c_u64(key: int, seed: int) -> int:
    """crc32q: the CRC-32C register seed & 0xFFFFFFFF advanced over key's 8 little-endian
    bytes."""
    c = seed & M32
    key &= M64
    for _ in range(8):
        c = (c >> 8) ^ _CRC[(c ^ key) & 0xFF]
        key >>= 8
    return c


# --------------------------------------------------------------------------------------------
# AnchorHash (Mendelson et al. 2020), cpp-anchorhash's AnchorHashQre
# --------------------------------------------------------------------------------------------

class Anchor:
    """AnchorHashQre(a, w) for a >= 1 and 1 <= w <= a (the reference never terminates for
    w = 0: its unsigned loop ``i >= w`` is always true)."""

    def __init__(self, a: int, w: int) -> None:
        assert 1 <= w <= a
        self.A = [0] * a
        self.W = list(range(a))
        self.L = list(range(a))
        self.K = list(range(a))
        self.M, self.N = a, w
        self.r: list[int] = []
        for i in range(a - 1, w - 1, -1):
            self.A[i] = i
            self.r.append(i)

    def _translate(self, i: int, j: int) -> int:
        if i == j:
            return self.K[i]
        b = j
        while self.A[i] <= self.A[b]:
            b = self.K[b]
        return b

    def bucket(self, key1: int, key2: int) -> int:
        A = self.A
        bs = crc32c_u64(key1, key2)
        b = bs % self.M
        while A[b] != 0:
            bs = crc32c_u64((key1 - bs) & M64, (key2 + bs) & M64)
            h = bs % A[b]
            if A[h] == 0 or A[h] < A[b]:
                b = h
            else:
                b = self._translate(b, h)
        return b

    def remove(self, b: int) -> None:
        self.r.append(b)
        self.N -= 1
        W, L, N = self.W, self.L, self.N
        W[L[b]] = W[N]
        L[W[N]] = L[b]
        self.K[b] = W[N]
        self.A[b] = N

    def add(self) -> int:
        b = self.r.pop()
        W, L, N = self.W, self.L, self.N
        L[W[N]] = N
        W[L[b]] = b
        self.N += 1
        self.A[b] = 0
        self.K[b] = b
        return b


# --------------------------------------------------------------------------------------------
# DxHash (Dong et al. 2023), ChaosD/DxHash's DxHash(n_total, n_working)
# --------------------------------------------------------------------------------------------

def dx_key2(key: int) -> int:
    return (key * 421757 + 1) & M32


class Dx:
    """DxHash(n_total, n_working): a bit per slot.  ``node(key)`` is getNodeID: -1 (its
    "no node") after 4 * size probes (uint32 arithmetic: the limit wraps for size >= 2**30);
    ``add()`` is updateAddition, which doubles a full table and can index slot -1 (its crash)
    when getInactiveNodeID finds no free slot within the same limit."""

    def __init__(self, n_total: int, n_working: int) -> None:
        assert 0 <= n_working <= n_total
        self.nodes = [1] * n_working + [0] * (n_total - n_working)
        self.working = n_working

    @property
    def size(self) -> int:
        return len(self.nodes)

    def _probe(self, key: int, want: int) -> tuple[int, int, int]:
        """(slot or -1, probes, the last slot probed) of the first slot whose bit is want."""
        key2 = dx_key2(key)
        bs = crc32c_u64(key, key2)
        index = bs % self.size
        i = 1
        limit = (4 * self.size) & M32
        while self.nodes[index] != want:
            bs = crc32c_u64(bs, key2)
            index = bs % self.size
            i = (i + 1) & M32
            if i >= limit:
                return -1, i, index
        return index, i, index

    def node(self, key: int) -> tuple[int, int]:
        """getNodeID(key, &numHash): (node or -1, numHash; numHash unset on -1)."""
        b, i, _ = self._probe(key, 1)
        return b, i

    def remove(self, index: int) -> None:
        if self.nodes[index]:
            self.nodes[index] = 0
            self.working -= 1

    def add(self) -> int:
        """updateAddition(); -1 where the reference writes slot 0xFFFFFFFF (out of bounds)."""
        if self.working == self.size:
            new = 1
            while new <= self.working:
                new <<= 1
            self.nodes += [0] * (new - self.size)
        b, _, _ = self._probe(1228, 0)
        if b < 0:
            return -1
        self.nodes[b] = 1
        self.working += 1
        return b


class DxOurs(Dx):
    """What the library's DxBuckets does: the reference's probes up to the reference's limit,
    then (where the reference says "no node" or would write slot -1) the first slot of the
    wanted kind at or after the last slot probed, circularly; an empty set raises."""

    def _probe(self, key: int, want: int) -> tuple[int, int, int]:
        b, i, last = super()._probe(key, want)
        if b >= 0:
            return b, i, last
        if want not in self.nodes:
            raise LookupError("no slot of that kind")
        n = self.size
        j = last
        while self.nodes[j] != want:
            j = (j + 1) % n
        return j, i, last
