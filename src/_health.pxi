# Health-aware HashRing snapshots (kernel: ch_health.h): some nodes marked down, no rebuild.
#
# A health ring is a _Ring (so this piece is included after _hashring.pxi, the one it builds
# on): the same positions and owners, but every position routes to the first owner at or
# clockwise after it that is up.  A key whose owner is down so moves to the next up node on
# its walk, exactly where it would go if the down node were removed, while every other key
# stays put; replicas are the first r distinct up owners.  live counts the up nodes: when none
# is up, every lookup raises EmptyRingError.


cdef class _HealthRing(_Ring):
    """A ring snapshot whose lookups skip down nodes.  positions and owners stay the true
    layout; only the routing owners (used by every lookup and replica table) change."""
    cdef readonly frozenset down        # names of the down nodes
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
        if self.n:
            with nogil:
                ch_health_owners(self.own, &mv[0], self.n, &ev[0])
        eff.flags.writeable = False
        self._eff = eff
        self.set_routing(eff)
        self.down = down
        if self.n:
            self.live = k - int(mask[:k].sum())
            self.empty_message = "every node of the ring is marked down"
        return 0

    @property
    def routing_owners(self):
        """int32[V]: the node each position routes to (the first up owner clockwise)."""
        return self._eff[:self.n]


def health_ring(_Ring core, down):
    """A snapshot of core's layout with the named nodes down (names not in core are ignored)."""
    cdef _HealthRing hr = _HealthRing(core.positions, core.owners, core.nodes, core.hasher)
    hr.apply(frozenset(n for n in down if n in core.nodes))
    return hr
