# MementoHash (Coluzzi, Brocco, Antonucci & Leidi 2023, "MementoHash: A Stateful, Minimal
# Memory, Best Performing Consistent Hash Algorithm"): jump hash plus a memory of removals;
# kernels in ch_memento.h (over ch_jump.h).
#
# n slots (jump hash runs over n buckets); a removed slot b has a replacer R[b] = the size of
# the working set its removal left (-1 for a working slot).  A hash h starts at b = jump(h, n);
# while R[b] = r >= 0, it re-draws b = floor(mix64(h + (b + 1) * CH_GOLDEN) * r / 2**64) in
# [0, r), following R[b] while R[b] >= r; with nothing removed this is jump hash exactly, and
# removing any slot moves only that slot's keys.  slot_node[b] is the index in nodes of a
# working slot's name.  Integer keys are their own 64-bit value (raw_ints), as for JumpHash.
# No replica order.

cdef class _Memento(_Router):
    """n buckets; R[b] the replacer of a removed bucket (-1 if working); slot_node[b] the index
    in nodes of a working bucket's name."""
    cdef readonly object replacers
    cdef readonly object slot_node
    cdef const int32_t *R
    cdef const int32_t *sn
    cdef int32_t n
    cdef bint any_removed

    def __cinit__(self, tuple nodes, _Hasher hasher, int32_t n, replacers, slot_node):
        self.init_router(nodes, _raw_int_hasher(hasher), "MementoHash")
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
            ch_memento_fix(h, <size_t>m, <size_t>self.n, self.R, self.sn, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        cdef int32_t b = ch_jump(h, self.n)
        if self.any_removed:
            b = ch_memento_resolve(h, b, self.R)
        return self.sn[b]
