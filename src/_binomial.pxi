# BinomialHash (Coluzzi et al. 2024), bit-identical to the SUPSI suite's BinomialEngine(n, hf)
# .getBucket; kernels in ch_binomial.h.
#
# n buckets, bucket i being nodes[i]: a 64-bit key hash h is placed in the binary tree that
# encloses n (a level by its low bits, a position within the level by a rehash), redrawn up to
# four times when past n, else sent to the minor tree.  The tree filters are always those of
# BinomialEngine(n) (the reference's own addBucket drifts from them when grown from 1).  Adding
# bucket n moves only keys to it; only the last bucket can be removed.  Integer keys are their
# own 64-bit value (raw_ints).  No replica order.

cdef class _Binomial(_NBuckets):
    cdef uint32_t e, mf

    def __cinit__(self, tuple nodes, _Hasher hasher, Py_ssize_t n):
        self.init_buckets(nodes, hasher, n, "BinomialHash")
        ch_bin_filters(self.n, &self.e, &self.mf)

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_binomial_batch(h, <size_t>m, self.n, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return ch_binomial_f(h, self.n, self.e, self.mf)


def _binomial_1(uint64_t key_hash, uint32_t n):
    """BinomialEngine(n, hf).getBucket(key) with hf.hash(key) = key_hash as a Java long."""
    return ch_binomial(key_hash, n)


