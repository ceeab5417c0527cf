# MementoHash kernel: jump hash plus replacements of removed buckets; see ch_memento.h.

cdef extern from "ch_memento.h" nogil:
    int32_t ch_memento_resolve(uint64_t h, int32_t b, const int32_t *R)
    void ch_memento_fix(const uint64_t *h, size_t m, const int32_t *R, const int32_t *slot_node,
                        int32_t *out)


cdef class _Memento(_AlgoCore):
    """n buckets; R[b] the replacer of a removed bucket (-1 if working); slot_node[b] the index
    in nodes of a working bucket's name."""
    cdef readonly object replacers
    cdef readonly object slot_node
    cdef const int32_t *R
    cdef const int32_t *sn
    cdef int32_t n
    cdef bint any_removed

    def __cinit__(self, tuple nodes, _Hasher hasher, int32_t n, replacers, slot_node):
        self.init_base("MementoHash", nodes, hasher, True)
        R = np.ascontiguousarray(replacers, dtype=np.int32)
        S = np.ascontiguousarray(slot_node, dtype=np.int32)
        if R.shape[0] != n or S.shape[0] != n or n < 0:
            raise ValueError("inconsistent MementoHash state")
        R.flags.writeable = False
        S.flags.writeable = False
        self.replacers, self.slot_node, self.n = R, S, n
        cdef const int32_t[::1] rv = R
        cdef const int32_t[::1] sv = S
        self.R = &rv[0] if n else NULL
        self.sn = &sv[0] if n else NULL
        self.any_removed = bool((R >= 0).any()) if n else False

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_jump_batch(h, <size_t>m, self.n, out)
        if self.any_removed:
            ch_memento_fix(h, <size_t>m, self.R, self.sn, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        cdef int32_t b = ch_jump(h, self.n)
        if self.any_removed:
            b = ch_memento_resolve(h, b, self.R)
        return self.sn[b]
