# Maglev hashing (Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load
# Balancer", NSDI 2016); kernels in ch_maglev.h.
#
# A table of M (prime) entries.  Node i (a = H(utf8(name), seed)) prefers the entries
# (a mod M + j * (floor(a / M) mod (M - 1) + 1)) mod M, j = 0, 1, ...; round after round, each
# node in index order adds ratio_i = w_i / w_max to its credit and, when the credit reaches
# 1.0, pays 1.0 and takes its next preferred empty entry, until the table is full (equal
# weights: the paper's algorithm).  A hash h routes to table[floor(h * M / 2**64)].
# No replica order.

cdef class _Maglev(_Router):
    cdef readonly object table          # read-only int32[M]: node index of each entry
    cdef const int32_t *tab
    cdef uint32_t M

    def __cinit__(self, tuple nodes, _Hasher hasher, uint32_t M, ratios):
        self.init_router(nodes, hasher, "Maglev")
        cdef Py_ssize_t n = len(nodes), i
        if M < 2:
            raise ValueError("table_size must be a prime >= 2")
        self.M = M
        table = np.empty(M, dtype=np.int32)
        cdef int32_t[::1] tv = table
        a = node_hashes(hasher, nodes)
        pos = np.empty(n, dtype=np.uint64)
        skip = np.empty(n, dtype=np.uint64)
        for i in range(n):
            x = int(a[i])
            pos[i] = x % M
            skip[i] = (x // M) % (M - 1) + 1
        ratio = np.ascontiguousarray(ratios, dtype=np.float64)
        if ratio.shape[0] != n:
            raise ValueError("weights and nodes differ in length")
        credit = np.empty(n, dtype=np.float64)
        cdef uint64_t[::1] pv = pos
        cdef const uint64_t[::1] sv = skip
        cdef const double[::1] rv = ratio
        cdef double[::1] cv = credit
        if n:
            # A ratio may round to 0.0 (a weight below 2**-1074 of the largest): that node then
            # never takes a turn; the heaviest node's 1.0 keeps every round claiming an entry.
            if not (ratio.max() == 1.0 and ratio.min() >= 0):
                raise ValueError("Maglev ratios must be in [0, 1] with a maximum of 1.0")
            with nogil:
                ch_maglev_build(&pv[0], &sv[0], &rv[0], &cv[0], <uint32_t>n, M, &tv[0])
        table.flags.writeable = False
        self.table = table
        self.tab = &tv[0]

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_maglev_lookup(self.tab, self.M, h, <size_t>m, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return self.tab[ch_mulhi(h, self.M)]
