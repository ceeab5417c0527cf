# twemproxy's distribution: modula (consistent_hash.compat.twemproxy).  Its ketama
# distribution is a _Ring over the points compat_points builds; its key hashes are
# ch_hash_twemproxy.h, dispatched by id like every other hash.
#
# The table lists the live servers in twemproxy's server order, each as many times as its
# weight; a key whose 32-bit hash is h (carried in the high half of the core's uint64, as
# every 32-bit compatibility hash) goes to table[h % len(table)].  No replica order.

cdef class _Modula(_Router):
    """A twemproxy modula pool: table[i] = server index, hash % len(table) picks the entry."""
    cdef readonly object table          # read-only int32[T]
    cdef const int32_t *tab
    cdef uint32_t size

    def __cinit__(self, table, tuple nodes, _Hasher hasher):
        self.init_router(nodes, hasher, "modula pool")
        t = np.array(table, dtype=np.int32).reshape(-1)
        if t.shape[0] >= (1 << 32):
            raise ValueError("a modula table has at most 2**32 - 1 entries")
        if t.shape[0] and (t.min() < 0 or t.max() >= len(nodes)):
            raise ValueError("modula table entries must index the nodes")
        t.flags.writeable = False
        self.table = t
        self.size = <uint32_t>t.shape[0]
        cdef const int32_t[::1] tv
        if self.size:
            tv = t
            self.tab = &tv[0]
            self.live = len(np.unique(t))
        else:
            self.tab = NULL
            self.live = 0

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        cdef Py_ssize_t i
        cdef uint32_t n = self.size
        if n == 0:
            for i in range(m):
                out[i] = -1
            return
        for i in range(m):
            out[i] = self.tab[<uint32_t>(h[i] >> 32) % n]
