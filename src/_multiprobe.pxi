# Multi-probe consistent hashing kernel; see ch_multiprobe.h for the exact rule.

cdef extern from "ch_multiprobe.h" nogil:
    void ch_multiprobe(const uint64_t *pos, uint32_t n, const uint32_t *idx, int kbits,
                       const int32_t *owners, uint32_t probes, const uint64_t *h, size_t m,
                       int32_t *out)


cdef class _MultiProbe(_AlgoCore):
    cdef readonly _Ring points       # one point per node: positions sorted, owners = node index
    cdef readonly uint32_t probes
    cdef const uint64_t *pos
    cdef const uint32_t *idx
    cdef const int32_t *own
    cdef uint32_t n
    cdef int kbits

    def __cinit__(self, tuple nodes, _Hasher hasher, uint32_t probes):
        self.init_base("MultiProbe", nodes, hasher, False)
        if probes < 1:
            raise ValueError("probes must be >= 1")
        self.probes = probes
        pos = node_hashes(hasher, nodes)
        own = np.arange(len(nodes), dtype=np.int32)
        sort_pairs(pos, own)
        cdef _Ring r = _Ring(pos, own, nodes, hasher)
        self.points = r  # keeps the arrays below alive
        self.pos, self.idx, self.own, self.n, self.kbits = r.pos, r.idx, r.own, r.n, r.k

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_multiprobe(self.pos, self.n, self.idx, self.kbits, self.own, self.probes, h,
                      <size_t>m, out)
