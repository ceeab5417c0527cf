# JumpBackHash (Ertl 2025), bit-identical to hash4j's jumpBackHash(splitMix64_V1()); kernels
# in ch_jumpback.h.
#
# n buckets, bucket i being nodes[i].  A 64-bit key hash h maps to ch_jumpback(h, n): the
# SplitMix64 sequence seeded with h picks the range [2^j, 2^(j+1)) that holds the key's last
# jump, then jumps back within it until a bucket below n is drawn.  Adding bucket n moves only
# the keys that land on it; only the last bucket can be removed.  Integer keys are their own
# 64-bit value (raw_ints), as for JumpHash.  No replica order.

cdef class _JumpBack(_NBuckets):
    def __cinit__(self, tuple nodes, _Hasher hasher, Py_ssize_t n):
        self.init_buckets(nodes, hasher, n, "JumpBackHash")

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_jumpback_batch(h, <size_t>m, self.n, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return ch_jumpback(h, self.n)


def _jumpback_1(uint64_t key_hash, uint32_t n):
    """hash4j's getBucket(key_hash, n) for 1 <= n <= 2**31 - 1 (checked by the caller)."""
    return ch_jumpback(key_hash, n)
