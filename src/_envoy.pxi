# Envoy's Maglev (consistent_hash.compat.envoy.EnvoyMaglev); kernels in ch_envoy.h.
#
# The table is built exactly as Envoy builds it: entries sorted by hash key, offset and skip
# from xxHash64 with seeds 0 and 1, turns skipped by weight (iteration * w < target), and a
# hash h routes to table[h mod M].  The caller gives, per entry in sorted order, its offset,
# skip, normalized weight and node index; the table holds node indices.  (Envoy's ring_hash
# needs no kernel of its own: it is a _Ring, first point >= h, wrapping.)

cdef class _EnvoyMaglev(_Router):
    cdef readonly object table          # read-only int32[M]: node index of each slot
    cdef const int32_t *tab
    cdef uint64_t M

    def __cinit__(self, tuple nodes, _Hasher hasher, uint64_t M, offsets, skips, weights,
                  entry_nodes):
        self.init_router(nodes, hasher, "Maglev table")
        if M < 2:
            raise ValueError("table_size must be a prime >= 2")
        self.M = M
        pos = np.array(offsets, dtype=np.uint64)
        skip = np.array(skips, dtype=np.uint64)
        w = np.array(weights, dtype=np.float64)
        owner = np.array(entry_nodes, dtype=np.int32)
        cdef Py_ssize_t n = pos.shape[0]
        if not (skip.shape[0] == w.shape[0] == owner.shape[0] == n):
            raise ValueError("offsets, skips, weights and entry_nodes differ in length")
        if n and (int(pos.max()) >= M or int(skip.min()) < 1 or int(skip.max()) >= M
                  or not (w.min() > 0) or not np.isfinite(w).all()):
            raise ValueError("Maglev entries: offset < M, 1 <= skip < M, weights > 0")
        if n and (owner.min() < 0 or owner.max() >= len(nodes)):
            raise ValueError("entry_nodes must index nodes")
        table = np.empty(M if n else 0, dtype=np.int32)
        target = np.empty(n, dtype=np.float64)
        cdef int32_t[::1] tv = table
        cdef uint64_t[::1] pv = pos
        cdef const uint64_t[::1] sv = skip
        cdef const double[::1] wv = w
        cdef double[::1] gv = target
        cdef double w_max = w.max() if n else 0.0
        if n:
            with nogil:
                ch_envoy_maglev_build(&pv[0], &sv[0], &wv[0], w_max, &gv[0], <uint32_t>n, M,
                                      &tv[0])
            table = owner[table]           # entry index -> node index
        else:
            self.live = 0                  # no host has a weight: Envoy chooses no host
        table.flags.writeable = False
        self.table = table
        cdef const int32_t[::1] fv = table
        self.tab = &fv[0] if n else NULL

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_envoy_maglev_lookup(self.tab, self.M, h, <size_t>m, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return self.tab[h % self.M]
