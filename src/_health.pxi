# Health-aware HashRing snapshots: some nodes marked down, no rebuild of the positions.

cdef extern from "ch_health.h" nogil:
    size_t ch_health_owners(const int32_t *owners, const uint8_t *down, uint32_t n,
                            int32_t *eff)


cdef class _HealthRing(_Ring):
    """A ring snapshot whose lookups skip down nodes: each position routes to the first up
    owner clockwise from it.  positions and owners stay the true layout; only the routing
    owners (used by every lookup and replica table) change."""
    cdef readonly frozenset down        # names of the down nodes
    cdef readonly Py_ssize_t live       # nodes that are up
    cdef object _eff

    cdef int apply(self, frozenset down) except -1:
        cdef Py_ssize_t k = len(self.nodes)
        mask = np.zeros(max(k, 1), dtype=np.uint8)
        for i, name in enumerate(self.nodes):
            if name in down:
                mask[i] = 1
        eff = np.empty(max(<Py_ssize_t>self.n, 1), dtype=np.int32)
        cdef const uint8_t[::1] mv = mask
        cdef int32_t[::1] ev = eff
        cdef size_t up = 0
        if self.n:
            with nogil:
                up = ch_health_owners(self.own, &mv[0], self.n, &ev[0])
        eff.flags.writeable = False
        self._eff = eff
        self.own = &ev[0]
        self.down = down
        self.live = k - int(mask[:k].sum())
        return 0

    cdef int check(self) except -1:
        if self.n == 0:
            raise EmptyRingError("the ring has no nodes")
        if self.live == 0:
            raise EmptyRingError("every node of the ring is marked down")
        return 0

    def index(self, key):
        self.check()
        return _Ring.index(self, key)

    def get(self, key):
        self.check()
        return _Ring.get(self, key)

    def index_of_hash(self, uint64_t h):
        self.check()
        return _Ring.index_of_hash(self, h)

    @property
    def routing_owners(self):
        """int32[V]: the node each position routes to (the first up owner clockwise)."""
        return self._eff[:self.n]


def health_ring(_Ring core, down):
    """A snapshot of core's layout with the named nodes down (names not in core are ignored)."""
    cdef _HealthRing hr = _HealthRing(core.positions, core.owners, core.nodes, core.hasher)
    hr.apply(frozenset(n for n in down if n in core.nodes))
    return hr
