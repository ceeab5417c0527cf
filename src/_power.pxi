# PowerCH (Leu 2023), bit-identical to power-consistent-hash's PowerConsistentHasher with its
# PCG32; kernels in ch_power.h.
#
# n buckets, bucket i being nodes[i]: a 64-bit key hash h picks its bucket within the power of
# two m >= n from h's low bits and a PCG32 stream; a pick >= n walks down to [m/2, n) or falls
# back to the lower power of two.  n = 1 gives 0 (the reference refuses n < 2).  Adding bucket
# n moves only keys to it; only the last bucket can be removed.  Integer keys are their own
# 64-bit value (raw_ints).  No replica order.

cdef class _Power(_NBuckets):
    cdef uint32_t m1, mh

    def __cinit__(self, tuple nodes, _Hasher hasher, Py_ssize_t n):
        self.init_buckets(nodes, hasher, n, "PowerHash")
        ch_power_masks(self.n, &self.m1, &self.mh)

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_power_batch(h, <size_t>m, self.n, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return ch_power_m(h, self.n, self.m1, self.mh)


def _power_1(uint64_t key_hash, uint32_t n):
    """PowerConsistentHasher::try_new(n)?.hash_u64(key_hash), n = 1 giving 0."""
    return ch_power(key_hash, n)
