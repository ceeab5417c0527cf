# JumpHash (Lamping & Veach 2014, "A Fast, Minimal Memory, Consistent Hash Algorithm"),
# bit-identical to Guava's Hashing.consistentHash; kernels in ch_jump.h.
#
# n buckets, bucket i being nodes[i].  A 64-bit key k maps to the bucket ch_jump(k, n): the
# last b < n reached by the jumps b -> floor((b + 1) * 2**31 / ((k' >> 33) + 1)) of the linear
# congruential sequence k' = k * 2862933555777941757 + 1 (mod 2**64).  Adding bucket n moves
# only the keys that land on it; only the last bucket can be removed.  Integer keys are used as
# their 64-bit two's-complement value (the hasher's raw_ints mode); other keys are hashed.
# No replica order (has_replicas is False).

cdef class _Jump(_Router):
    """n buckets, named; bucket i is nodes[i].  Integer keys are their own 64-bit value."""
    cdef int32_t n

    def __cinit__(self, tuple nodes, _Hasher hasher):
        if len(nodes) >= (1 << 31):
            raise ValueError("JumpHash supports at most 2**31 - 1 buckets")
        self.init_router(nodes, _raw_int_hasher(hasher), "JumpHash")
        self.n = <int32_t>len(nodes)

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_jump_batch(h, <size_t>m, self.n, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return ch_jump(h, self.n)


def jump_hash(uint64_t key, int32_t buckets):
    """jump_hash(key, buckets) -> int: Guava's Hashing.consistentHash(key, buckets) for a key
    taken as an unsigned 64-bit value (a negative Java long is key + 2**64)."""
    if buckets < 1:
        raise ValueError(f"buckets must be >= 1, got {buckets}")
    return ch_jump(key, buckets)


def _jump_ref_batch(const uint64_t[::1] keys, int32_t buckets):
    """Guava's formulation, one division a step (a test reference for the fast kernel)."""
    out = np.empty(keys.shape[0], dtype=np.int32)
    cdef int32_t[::1] ov = out
    if keys.shape[0]:
        with nogil:
            ch_jump_ref_batch(&keys[0], <size_t>keys.shape[0], buckets, &ov[0])
    return out


def _jump_batch(const uint64_t[::1] keys, int32_t buckets):
    """The batch kernel over any bucket count (a test hook: no names needed)."""
    if buckets < 1:
        raise ValueError(f"buckets must be >= 1, got {buckets}")
    out = np.empty(keys.shape[0], dtype=np.int32)
    cdef int32_t[::1] ov = out
    if keys.shape[0]:
        with nogil:
            ch_jump_batch(&keys[0], <size_t>keys.shape[0], buckets, &ov[0])
    return out


def _jump_paper_batch(const uint64_t[::1] keys, int32_t buckets):
    """The paper's plain C loop (a benchmark baseline and a test reference; not Guava-exact)."""
    out = np.empty(keys.shape[0], dtype=np.int32)
    cdef int32_t[::1] ov = out
    if keys.shape[0]:
        with nogil:
            ch_jump_paper_batch(&keys[0], <size_t>keys.shape[0], buckets, &ov[0])
    return out
