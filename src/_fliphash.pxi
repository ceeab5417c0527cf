# FlipHash (Masson & Lee 2024), bit-identical to fliphash-rs's fliphash_64_with_seed; kernels
# in ch_fliphash.h.
#
# n buckets, bucket i being nodes[i]: a 64-bit key hash h maps to fliphash(h, seed, ..=n - 1),
# which draws the key's bucket within the power of two above n - 1 by flipping its low bits
# and redraws (at most 64 times) the draws that fall between n and that power of two.  The
# router's FlipHash seed is 0.  Adding bucket n moves only keys to it; only the last bucket can
# be removed.  Integer keys are their own 64-bit value (raw_ints).  No replica order.

cdef class _FlipHash(_NBuckets):
    cdef readonly uint64_t flip_seed

    def __cinit__(self, tuple nodes, _Hasher hasher, Py_ssize_t n, uint64_t flip_seed=0):
        self.init_buckets(nodes, hasher, n, "FlipHash")
        self.flip_seed = flip_seed

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_fliphash_batch(h, <size_t>m, self.flip_seed, self.n, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return <int32_t>ch_fliphash(h, self.flip_seed, <uint64_t>self.n - 1)


def _fliphash_1(uint64_t key_hash, uint64_t range_end, uint64_t seed):
    """fliphash_64_with_seed(key_hash, seed, ..=range_end) (any u64 range_end)."""
    return ch_fliphash(key_hash, seed, range_end)
