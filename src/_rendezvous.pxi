# Rendezvous (highest random weight) kernel; see ch_rendezvous.h for the exact rule.

cdef extern from "ch_rendezvous.h" nogil:
    int64_t ch_neglog2(uint64_t v)
    void ch_rdv_route(const uint64_t *s, size_t n, const uint64_t *h, size_t m, int32_t *out)
    void ch_rdv_route_w(const uint64_t *s, const double *invw, size_t n, const uint64_t *h,
                        size_t m, int32_t *out)
    void ch_rdv_top(const uint64_t *s, const double *invw, size_t n, uint64_t h, size_t r,
                    int32_t *row, uint64_t *keys)
    const uint64_t CH_NL2_C[128]
    const uint64_t CH_NL2_T[128]
    const uint64_t CH_NL2_P[7]


cdef class _TopR(_AlgoCore):
    """An _AlgoCore with a best-first node order per key (replicas)."""

    cdef void top(self, uint64_t h, size_t r, int32_t *row, uint64_t *scratch) noexcept nogil:
        pass

    def replicas_of_hashes(self, const uint64_t[::1] hashes, uint32_t r):
        """int32[m, r]: the best r nodes of each hash, best first."""
        self.check()
        cdef Py_ssize_t m = hashes.shape[0], j
        out = np.empty((m, r), dtype=np.int32)
        if m == 0 or r == 0:
            return out
        cdef int32_t[:, ::1] ov = out
        cdef uint64_t *scratch = <uint64_t *>malloc(r * sizeof(uint64_t))
        if scratch == NULL:
            raise MemoryError()
        try:
            with nogil:
                for j in range(m):
                    self.top(hashes[j], r, &ov[j, 0], scratch)
        finally:
            free(scratch)
        return out

    def replicas_of_keys(self, keys, uint32_t r):
        """int32[m, r] for keys in a container the keys stage reads."""
        self.check()
        cdef _KeySource src = make_source(keys)
        out = np.empty((src.n, r), dtype=np.int32)
        if src.n == 0 or r == 0:
            return out
        cdef int32_t[:, ::1] ov = out
        cdef uint64_t buf[CHUNK]
        cdef Py_ssize_t s, e, j
        cdef uint64_t *scratch = <uint64_t *>malloc(r * sizeof(uint64_t))
        if scratch == NULL:
            raise MemoryError()
        try:
            for s in range(0, src.n, CHUNK):
                e = min(src.n, s + CHUNK)
                if self.raw_ints:
                    _fill_raw(src, self.hasher, s, e, buf)
                else:
                    src.fill(self.hasher, s, e, buf)
                with nogil:
                    for j in range(s, e):
                        self.top(buf[j - s], r, &ov[j, 0], scratch)
        finally:
            free(scratch)
        return out


cdef class _Rendezvous(_TopR):
    cdef readonly object node_hash      # uint64[n]: H(utf8(name), seed)
    cdef readonly object inv_weights    # float64[n] 1.0 / w, or None when all weights are equal
    cdef const uint64_t *s
    cdef const double *invw
    cdef size_t n

    def __cinit__(self, tuple nodes, _Hasher hasher, inv_weights=None):
        self.init_base("Rendezvous", nodes, hasher, False)
        nh = node_hashes(hasher, nodes)
        nh.flags.writeable = False
        self.node_hash = nh
        self.n = len(nodes)
        cdef const uint64_t[::1] sv = nh
        cdef const double[::1] wv
        self.s = &sv[0] if self.n else NULL
        self.invw = NULL
        self.inv_weights = None
        if inv_weights is not None:
            iw = np.array(inv_weights, dtype=np.float64)
            if iw.shape[0] != self.n:
                raise ValueError("weights and nodes differ in length")
            iw.flags.writeable = False
            self.inv_weights = iw
            wv = iw
            self.invw = &wv[0] if self.n else NULL

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        if self.invw == NULL:
            ch_rdv_route(self.s, self.n, h, <size_t>m, out)
        else:
            ch_rdv_route_w(self.s, self.invw, self.n, h, <size_t>m, out)

    cdef void top(self, uint64_t h, size_t r, int32_t *row, uint64_t *scratch) noexcept nogil:
        ch_rdv_top(self.s, self.invw, self.n, h, r, row, scratch)


def _neglog2(const uint64_t[::1] v):
    """ch_neglog2 of each (odd) value: -log2(v / 2**64) in Q8.56 (a test hook)."""
    out = np.empty(v.shape[0], dtype=np.int64)
    cdef int64_t[::1] ov = out
    cdef Py_ssize_t i
    for i in range(v.shape[0]):
        ov[i] = ch_neglog2(v[i] | 1)
    return out


def _neglog2_tables():
    """The constant tables of ch_neglog2 (a test hook): (C, T, P)."""
    return ([CH_NL2_C[i] for i in range(128)], [CH_NL2_T[i] for i in range(128)],
            [CH_NL2_P[i] for i in range(7)])
