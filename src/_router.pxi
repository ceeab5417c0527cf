# The router base: what every algorithm's snapshot is, written once.
#
# A router is an immutable snapshot over node names: given the uint64 hash of a key it answers
# an int32 index into nodes (route, a nogil kernel over a batch of hashes); an algorithm with a
# best-first order of the nodes per key also answers the first r distinct nodes of that order
# (route_replicas, rows of r, row-major).  live is the number of nodes a lookup can reach: 0
# makes every lookup raise EmptyRingError (a health ring counts the nodes that are up).
#
# Each algorithm supplies its kernels; the keys pipeline (_pipeline.pxi) drives them for every
# key container, and the scalar paths below (get, index, hash, replica_row, ...) serve every
# algorithm from the same kernels.  A router may override a scalar path for speed.


class EmptyRingError(LookupError):
    """A lookup was made on a router with no nodes."""


cdef frozenset _NO_NODES = frozenset()


cdef list _names_list(tuple nodes, const int32_t *row, uint32_t r):
    """[nodes[row[0]], ..., nodes[row[r - 1]]]: the list made at its length and filled in place
    (no appends, no regrowth)."""
    cdef uint32_t t
    cdef PyObject *name
    names = PyList_New(r)
    for t in range(r):
        name = PyTuple_GET_ITEM(nodes, row[t])
        Py_INCREF(<object>name)
        PyList_SET_ITEM(names, t, <object>name)
    return names


cdef class _Router:
    """Base of every algorithm's snapshot: nodes, hasher, and the kernels that map uint64
    hashes to int32 node indices."""
    cdef readonly tuple nodes
    cdef readonly _Hasher hasher
    cdef readonly Py_ssize_t live          # nodes a lookup can reach; 0: lookups raise
    cdef readonly bint has_replicas        # route_replicas gives a best-first order
    cdef readonly frozenset down           # nodes a lookup skips (marked down): never reached
    cdef object _nodes_array
    cdef str empty_message                 # the EmptyRingError text

    cdef int init_router(self, tuple nodes, _Hasher hasher, str what) except -1:
        """Set the base fields; what names the router in the EmptyRingError message."""
        self.nodes = nodes
        self.hasher = hasher
        self.live = len(nodes)
        self.down = _NO_NODES
        self.empty_message = f"the {what} has no nodes"
        self._nodes_array = None
        return 0

    # -- kernels (no Python objects, no GIL) ------------------------------------------------

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        """out[j] = the node index of hash h[j], for j < m."""
        cdef Py_ssize_t j
        for j in range(m):
            out[j] = -1

    cdef void route_replicas(self, const uint64_t *h, Py_ssize_t m, uint32_t r,
                             int32_t *out) noexcept nogil:
        """out[j * r : (j + 1) * r] = the first r distinct nodes of hash h[j] in the
        algorithm's order (first: route's answer).  prepare_replicas(r) has been called."""
        cdef Py_ssize_t j
        for j in range(m * r):
            out[j] = -1

    cdef int prepare_replicas(self, uint32_t r) except -1:
        """Called with the GIL before a batch of route_replicas(.., r, ..)."""
        if not self.has_replicas:
            raise TypeError(f"{type(self).__name__} has no replica order")
        return 0

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        cdef int32_t out = -1
        self.route(&h, 1, &out)
        return out

    cdef int note_lookups(self, Py_ssize_t m) except -1:
        """Called with the GIL before m keys are routed: a ring builds its direct table on
        first use (_hashring.pxi); any other router has nothing to do."""
        return 0

    # -- the preference walk of bounded loads (_bounded.pxi) ---------------------------------

    cdef int64_t walk_steps(self):
        """Steps of the router's own position walk (0: it has none; the ring has one)."""
        return 0

    cdef int32_t walk_step(self, uint64_t h, int64_t t, uint32_t *at) noexcept nogil:
        """The node at step t of hash h's walk (at: the walk's state, set at t == 0)."""
        return -1

    # -- scalar paths ---------------------------------------------------------------------

    cdef int check(self) except -1:
        if self.live == 0:
            raise EmptyRingError(self.empty_message or "the router has no nodes")
        return 0

    def check_nonempty(self):
        """Raise EmptyRingError when a lookup can reach no node."""
        self.check()

    def hash(self, key):
        """The uint64 a key is routed by (the hasher's; raw integer keys if it says so)."""
        return self.hasher.hash_key(key)

    def index(self, key):
        """Node index of one key."""
        self.check()
        return self.route1(self.hasher.hash_key(key))

    def get(self, key):
        """Node name of one key."""
        return self.get_key(key)

    cdef object get_key(self, object key):
        """get(key) from C (_RouterBase.get): the node name of one key."""
        self.check()
        self.note_lookups(1)
        return self.nodes[self.route1(self.hasher.hash_one(key))]

    cdef list replica_names(self, object key, uint32_t r):
        """The names of the first r distinct nodes of one key (r at most live)."""
        if self.live == 0:
            self.check()
        self.prepare_replicas(r)
        cdef uint64_t h = self.hasher.hash_one(key)
        cdef int32_t small[64]
        cdef int32_t *row = &small[0]
        if r > 64:
            row = <int32_t *>malloc(r * sizeof(int32_t))
            if row == NULL:
                raise MemoryError()
        try:
            if r:
                self.route_replicas(&h, 1, r, row)
            return _names_list(self.nodes, row, r)
        finally:
            if row != &small[0]:
                free(row)

    def index_of_hash(self, uint64_t h):
        """Node index of one uint64 hash."""
        self.check()
        return self.route1(h)

    def replica_row(self, key, uint32_t r):
        """The first r distinct node indices of one key in the algorithm's order."""
        self.check()
        self.prepare_replicas(r)
        cdef uint64_t h = self.hasher.hash_key(key)
        row = np.empty(r, dtype=np.int32)
        cdef int32_t[::1] rv = row
        if r:
            self.route_replicas(&h, 1, r, &rv[0])
        return row.tolist()

    def nodes_array(self):
        """Node names as an object ndarray, plus a trailing None so index -1 maps to None."""
        if self._nodes_array is None:
            a = np.empty(len(self.nodes) + 1, dtype=object)
            a[:len(self.nodes)] = self.nodes
            a.flags.writeable = False
            self._nodes_array = a
        return self._nodes_array

    def __len__(self):
        return len(self.nodes)
