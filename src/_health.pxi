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
    only the routing owners (used by every lookup, replica table and walk) change.

    A few down (at most CH_HEALTH_FEW, some node up): sparse.  The layout's route layout is
    searched as it is and an answer that is a down node walks on from its position to the
    first up owner (a byte per node says which are down): no pass over the positions at all,
    so a membership change with a node down costs what it costs with every node up.  The
    routing owners array (replica tables, walks, the analysis) is made on first use.  More
    down: the routing owners and their route layout built in one O(V) pass."""
    cdef object _eff
    cdef object _mask
    cdef object _ids
    cdef const uint8_t *dmask
    cdef bint sparse

    cdef int apply(self, down) except -1:
        """Route around the nodes named in down (names not in nodes are ignored)."""
        cdef Py_ssize_t k = len(self.nodes)
        mask = np.zeros(max(k, 1), dtype=np.uint8)
        ids, down = _node_ids(self.nodes, down)
        mask[ids] = 1
        cdef int nd = <int>len(ids)
        cdef const uint8_t[::1] mv = mask
        self.down = down
        if self.n:
            self.live = k - nd
        if down:
            self.empty_message = "every node of the ring is marked down"
        if nd == 0 or not self.n:
            return 0
        if nd <= CH_HEALTH_FEW and nd < k:
            self.sparse = True
            self._mask = mask
            self._ids = ids
            self.dmask = &mv[0]
            return 0
        eff = np.empty(<Py_ssize_t>self.n, dtype=np.int32)
        cdef int32_t[::1] ev = eff
        with nogil:
            ch_health_owners(self.own, &mv[0], self.n, &ev[0])
        eff.flags.writeable = False
        self._eff = eff
        self.set_routing(eff)
        return 0

    cdef int _materialize(self) except -1:
        """The routing owners array of a sparse snapshot, made once, on first use."""
        if not self.sparse or self._eff is not None:
            return 0
        eff = np.empty(<Py_ssize_t>self.n, dtype=np.int32)
        cdef int32_t[::1] ev = eff
        cdef const int32_t[::1] iv = self._ids
        cdef int nd = <int>len(self._ids)
        with nogil:
            ch_health_owners_few(self.true_own, &iv[0], nd, self.n, &ev[0])
        eff.flags.writeable = False
        self._eff = eff
        self.own = &ev[0]  # replica tables and walks read it; the search keeps the layout's
        return 0

    cdef inline int32_t _walk_up(self, uint64_t h) noexcept nogil:
        """The first up owner at or clockwise after h's position (-1: none has a position)."""
        cdef uint32_t i = ch_route_index(&self.R, h), steps = 0
        while self.dmask[self.true_own[i]]:
            i += 1
            steps += 1
            if i == self.n:
                i = 0
            if steps == self.n:
                return -1
        return self.true_own[i]

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        cdef Py_ssize_t j
        if not self.sparse:
            _Ring.route(self, h, m, out)
            return
        ch_route_batch(&self.R, h, <size_t>m, out)
        for j in range(m):
            if self.dmask[out[j]]:
                out[j] = self._walk_up(h[j])

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        if not self.sparse:
            return _Ring.route1(self, h)
        cdef int32_t i = ch_route1(&self.R, h)
        return self._walk_up(h) if self.dmask[i] else i

    cdef int64_t walk_steps(self):
        self._materialize()
        return self.n

    cdef _build_replicas(self, t, uint32_t r):
        self._materialize()
        _Ring._build_replicas(self, t, r)

    @property
    def routing_owners(self):
        """int32[V]: the node each position routes to (the first up owner clockwise)."""
        self._materialize()
        return self.owners if self._eff is None else self._eff[:self.n]


cdef tuple _node_ids(tuple nodes, down):
    """(int32 ascending indices in nodes of the names of down that are in nodes, those names
    as a frozenset)."""
    cdef list ids = []
    cdef list names = []
    cdef Py_ssize_t k = len(nodes), i
    if len(down) <= 16:  # a search of the tuple per name beats a dict of every node
        for name in down:
            # a ring's names are sorted (a bisection finds them); else a scan
            i = _bisect_names(nodes, name) if type(name) is str else k
            if not (i < k and nodes[i] == name):
                try:
                    i = nodes.index(name)
                except ValueError:
                    continue
            ids.append(i)
            names.append(name)
    else:
        index = {n: i for i, n in enumerate(nodes)}
        for name in down:
            i = index.get(name)
            if i is not None:
                ids.append(i)
                names.append(name)
    ids.sort()
    return np.array(ids, dtype=np.int32), frozenset(names)


def health_ring(_Ring core, down):
    """A snapshot of core's layout with the named nodes down (names not in core are ignored).
    The positions, owners and prefix index are core's own arrays (read-only, shared)."""
    # core's route layout too: the sparse snapshot searches it as it is
    cdef _HealthRing hr = _HealthRing(core._padded, core.owners, core.nodes, core.hasher,
                                      fresh=True, prefix=core._prefix, route=core._route)
    hr.apply(down)
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
    hr.apply(down)
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
