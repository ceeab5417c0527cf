# Rendezvous (highest random weight) hashing, Thaler & Ravishankar 1996; kernels in
# ch_rendezvous.h.
#
# Node i has s_i = H(utf8(name_i), seed); its draw for a key of hash h is
# x_i = mix64(h ^ s_i).  Unweighted, the key goes to the node with the largest x_i; weighted,
# to the smallest L_i / w_i with L_i = -log2((x_i | 1) / 2**64), computed in Q8.56 integers and
# one IEEE multiply by 1 / w_i, so every platform agrees.  Ties go to the smaller index.  The
# replicas of a key are the nodes in that same order, best first (has_replicas).


cdef class _Rendezvous(_Router):
    cdef readonly object node_hash      # uint64[n]: H(utf8(name), seed)
    cdef readonly object inv_weights    # float64[n] 1.0 / w, or None when all weights are equal
    cdef const uint64_t *s
    cdef const double *invw
    cdef size_t n

    def __cinit__(self, tuple nodes, _Hasher hasher, inv_weights=None):
        self.init_router(nodes, hasher, "Rendezvous")
        self.has_replicas = True
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

    cdef int prepare_replicas(self, uint32_t r) except -1:
        if r > self.n:
            raise ValueError(f"r = {r} exceeds the {self.n} nodes")
        return 0

    cdef void route_replicas(self, const uint64_t *h, Py_ssize_t m, uint32_t r,
                             int32_t *out) noexcept nogil:
        # ch_rdv_top ranks with r order keys of scratch: on the stack for small r.
        cdef uint64_t small[64]
        cdef uint64_t *keys = small
        cdef Py_ssize_t j
        if r > 64:
            keys = <uint64_t *>malloc(r * sizeof(uint64_t))
            if keys == NULL:  # no exception from here: the rows say "no node"
                for j in range(m * r):
                    out[j] = -1
                return
        for j in range(m):
            ch_rdv_top(self.s, self.invw, self.n, h[j], r, out + j * r, keys)
        if keys != small:
            free(keys)


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
