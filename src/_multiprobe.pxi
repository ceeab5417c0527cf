# Multi-probe consistent hashing (Appleton & O'Reilly, "Multi-probe consistent hashing",
# 2015); kernel in ch_multiprobe.h, searches in ch_search.h.
#
# One point per node at H(utf8(name), seed), sorted (equal points by node index).  A key of
# hash h probes q_j = mix64(h + j * 0x9E3779B97F4A7C15), j < probes; each probe's candidate is
# the first point at or clockwise after it, at distance (point - q_j) mod 2**64; the nearest
# candidate wins (a tie: the earlier probe).  Adding a node only shortens distances to it, so
# keys move only to it.  No replica order.


cdef class _MultiProbe(_Router):
    cdef readonly object positions      # read-only uint64[n]: the points, ascending
    cdef readonly object owners         # read-only int32[n]: the node index of each point
    cdef readonly uint32_t probes
    cdef object _padded
    cdef object _prefix
    cdef const uint64_t *pos
    cdef const uint32_t *idx
    cdef const int32_t *own
    cdef uint32_t n
    cdef int kbits

    def __cinit__(self, tuple nodes, _Hasher hasher, uint32_t probes):
        self.init_router(nodes, hasher, "MultiProbe")
        if probes < 1:
            raise ValueError("probes must be >= 1")
        self.probes = probes
        cdef Py_ssize_t n = len(nodes)
        if n >= (1 << 31) - CH_PAD:
            raise ValueError("too many nodes")
        h = node_hashes(hasher, nodes)
        own = np.arange(n, dtype=np.int32)
        order = np.lexsort((own, h))            # by point, then node index
        padded = np.full(n + CH_PAD, np.iinfo(np.uint64).max, dtype=np.uint64)
        padded[:n] = h[order]
        own = np.ascontiguousarray(own[order])
        padded.flags.writeable = False
        own.flags.writeable = False
        self._padded = padded
        self.positions = padded[:n]
        self.owners = own
        self.n = <uint32_t>n
        self.kbits = ch_prefix_bits(<size_t>n)
        prefix = np.empty((1 << self.kbits) + 1, dtype=np.uint32)
        cdef uint32_t[::1] pv = prefix
        cdef const uint64_t[::1] ppv = padded
        cdef const int32_t[::1] ov = own
        self.pos = &ppv[0]
        self.own = &ov[0] if n else NULL
        with nogil:
            ch_build_prefix(self.pos, self.n, self.kbits, &pv[0])
        self._prefix = prefix
        self.idx = &pv[0]

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_multiprobe(self.pos, self.n, self.idx, self.kbits, self.own, self.probes, h,
                      <size_t>m, out)
