# Routing around nodes marked down (kernel: ch_health.h), for every router.
#
# A router's routing state is one snapshot: the compiled core in its _core.  With nodes marked
# down, that core routes every key exactly as the router would with those nodes removed, while
# the down nodes keep their place in nodes (indices stay stable) and down names them.  Two
# shapes give it:
#
# - _HealthRing (a _Ring, so this piece is included after _hashring.pxi): for a ring whose
#   removal of a node only drops that node's positions, the same positions and prefix index
#   (shared, not copied or rebuilt) with routing owners in which every position routes to the
#   first owner at or clockwise after it that is up: one O(V) pass, no rebuild.  A down node's
#   keys go to their next replica, every other key stays.
# - _Remap: any other router: its core built without the down nodes (by the router's own
#   removal), the inner node indices mapped back into the full node list.  A ring so rebuilt
#   (ketama's continuum, Envoy's ring) is wrapped as a _HealthRing over the rebuilt positions
#   instead, so the exact analysis reads it like every ring.
#
# live counts the up nodes: when none is up, every lookup raises EmptyRingError.


cdef class _HealthRing(_Ring):
    """A ring snapshot whose lookups skip down nodes.  positions and owners stay the layout;
    only the routing owners (used by every lookup, replica table and walk) change."""
    cdef object _eff

    cdef int apply(self, frozenset down) except -1:
        cdef Py_ssize_t k = len(self.nodes), i
        mask = np.zeros(max(k, 1), dtype=np.uint8)
        mask[:k] = _node_mask(self.nodes, down)
        ids = np.flatnonzero(mask[:k]).astype(np.int32)
        eff = np.empty(max(<Py_ssize_t>self.n, 1), dtype=np.int32)
        cdef const uint8_t[::1] mv = mask
        cdef const int32_t[::1] iv = ids if len(ids) else np.zeros(1, dtype=np.int32)
        cdef int nd = <int>len(ids)
        cdef int32_t[::1] ev = eff
        # A few down: the layout's route layout copied, its down positions rewritten in the
        # same pass as their owners (the search reads it); else built anew by set_routing.
        q = None
        cdef uint64_t *qp = NULL
        cdef const uint64_t *qs = NULL
        cdef int b = ch_owner_bits(<size_t>k)
        cdef uint64_t low = ((<uint64_t>1) << b) - 1
        if self.n and nd <= CH_HEALTH_FEW and self._route is not None:
            q = _np_empty(<Py_ssize_t>self.n + CH_PAD, _U64)
            qp = <uint64_t *>_buf(q, True)
            qs = <const uint64_t *>_buf(self._route, False)
        if self.n:
            with nogil:
                if nd <= CH_HEALTH_FEW:  # one copy, and only the down positions rewritten
                    ch_health_owners_few(self.own, &iv[0], nd, self.n, &ev[0], qs, qp, low)
                else:
                    ch_health_owners(self.own, &mv[0], self.n, &ev[0])
        if qp != NULL:  # the padding words repeat position 0's routing owner
            for i in range(CH_PAD):
                qp[self.n + i] = ~low | (<uint64_t>(<uint32_t>ev[0]) & low)
        eff.flags.writeable = False
        self._eff = eff
        self.set_routing(eff, q)
        self.down = down
        if self.n:
            self.live = k - nd
        if down:
            self.empty_message = "every node of the ring is marked down"
        return 0

    @property
    def routing_owners(self):
        """int32[V]: the node each position routes to (the first up owner clockwise)."""
        return self._eff[:self.n]


cdef object _node_mask(tuple nodes, frozenset down):
    """uint8[len(nodes)]: 1 where the node is in down."""
    mask = np.zeros(len(nodes), dtype=np.uint8)
    if down:
        if len(down) <= 16:
            for name in down:
                mask[nodes.index(name)] = 1
        else:
            index = {n: i for i, n in enumerate(nodes)}
            for name in down:
                mask[index[name]] = 1
    return mask


def health_ring(_Ring core, down):
    """A snapshot of core's layout with the named nodes down (names not in core are ignored).
    The positions, owners and prefix index are core's own arrays (read-only, shared)."""
    cdef frozenset d = frozenset(n for n in down if n in core.nodes)
    # core's route layout too, so that only the health pass's own is built (in apply)
    cdef _HealthRing hr = _HealthRing(core._padded, core.owners, core.nodes, core.hasher,
                                      fresh=True, prefix=core._prefix, route=core._route)
    hr.apply(d)
    return hr


def remapped_ring(_Ring inner, tuple nodes, down):
    """A ring built without the down nodes (inner, its owners indexing inner.nodes) as a
    snapshot over the full node list: the same positions, owners renumbered into nodes, the
    down nodes never reached."""
    index = {n: i for i, n in enumerate(nodes)}
    table = np.array([index[n] for n in inner.nodes] or [0], dtype=np.int32)
    own = table[inner.owners] if inner.n else np.empty(0, dtype=np.int32)
    cdef _HealthRing hr = _HealthRing(inner._padded, np.ascontiguousarray(own, dtype=np.int32),
                                      nodes, inner.hasher, fresh=True, prefix=inner._prefix)
    hr.apply(frozenset(down))
    return hr


cdef class _Remap(_Router):
    """Any router's core built without the down nodes, answering indices into the full node
    list: inner's answers mapped through table (inner index -> index in nodes).  dead: every
    node is down (inner is then the full layout, never asked)."""
    cdef readonly _Router inner
    cdef object _table
    cdef const int32_t *tab

    def __cinit__(self, _Router inner, tuple nodes, down, *, bint dead=False):
        self.init_router(nodes, inner.hasher, "router")
        index = {n: i for i, n in enumerate(nodes)}
        t = np.array([index[n] for n in inner.nodes] or [0], dtype=np.int32)
        t.flags.writeable = False
        cdef const int32_t[::1] tv = t
        self._table = t
        self.tab = &tv[0]
        self.inner = inner
        self.has_replicas = inner.has_replicas
        self.down = frozenset(down)
        self.live = 0 if dead or not len(inner.nodes) else inner.live
        self.empty_message = "every node of the router is marked down"

    cdef inline void _map(self, int32_t *out, Py_ssize_t m) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(m):
            if out[j] >= 0:
                out[j] = self.tab[out[j]]

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        self.inner.route(h, m, out)
        self._map(out, m)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        cdef int32_t i = self.inner.route1(h)
        return self.tab[i] if i >= 0 else i

    cdef int prepare_replicas(self, uint32_t r) except -1:
        return self.inner.prepare_replicas(r)

    cdef void route_replicas(self, const uint64_t *h, Py_ssize_t m, uint32_t r,
                             int32_t *out) noexcept nogil:
        self.inner.route_replicas(h, m, r, out)
        self._map(out, m * r)

    cdef int64_t walk_steps(self):
        return self.inner.walk_steps()

    cdef int32_t walk_step(self, uint64_t h, int64_t t, uint32_t *at) noexcept nogil:
        cdef int32_t i = self.inner.walk_step(h, t, at)
        return self.tab[i] if i >= 0 else i

    @property
    def table(self):
        """The inner router's lookup table (Maglev), as indices into nodes."""
        return self._table[self.inner.table]
