# HashRing: consistent hashing on a ring of virtual nodes (Karger et al. 1997); kernels in
# ch_search.h.
#
# The ring is V positions p[0] <= ... <= p[V-1] in [0, 2**64), sorted by (position, owner),
# each owned by a node.  A hash h routes to the owner of the first position >= h, wrapping to
# position 0 past the last one.  The replicas of h are the first r distinct owners met walking
# clockwise from that position.  The default layout (label_positions) gives node i count[i]
# positions H(utf8(name) + b"#" + ascii(decimal j), seed) for j < count[i].
#
# A 2**k-entry prefix index over the top k bits of the positions narrows each search to a few
# positions.  Lookups read the route layout (ch_search.h): one uint64 word per position holding
# its high bits and its (routing) owner, so a search reads the prefix index and one cache line;
# a batch is searched with prefetching (ch_route_batch).  Replica tables (the first r distinct
# owners from each position) are built once per r and cached.


_U64 = np.dtype(np.uint64)
_I32 = np.dtype(np.int32)
_U32 = np.dtype(np.uint32)
_U16 = np.dtype(np.uint16)
_np_empty = np.empty
_BARE = object()        # _Ring(_BARE): a snapshot the builders below fill in (_adopt)


cdef inline void *_buf(object arr, bint writable) except? NULL:
    """The data of a contiguous NumPy array (kept alive by the caller): for an array the
    core has just made (a plain ndarray), its data pointer read from the array object (the
    field that follows the object header in every NumPy ABI, checked at import against the
    buffer protocol); otherwise through the buffer protocol."""
    cdef Py_buffer b
    if _struct_data_ok and type(arr) is _ndarray:
        return (<void **>(<char *><PyObject *>arr + sizeof(PyObject)))[0]
    PyObject_GetBuffer(arr, &b, PyBUF_WRITABLE if writable else PyBUF_SIMPLE)
    cdef void *p = b.buf
    PyBuffer_Release(&b)
    return p


cdef bint _struct_data_ok = False
_ndarray = np.ndarray


cdef bint _check_struct_data():
    """Whether an ndarray's data pointer is the word after its object header (it is in every
    NumPy release; checked, so a NumPy where it is not takes the buffer protocol instead)."""
    cdef Py_buffer b
    cdef void *p
    for dtype in (np.uint8, np.int32, np.uint64, object):
        a = np.empty(3, dtype=dtype)
        PyObject_GetBuffer(a, &b, PyBUF_WRITABLE)
        p = b.buf
        PyBuffer_Release(&b)
        if p != (<void **>(<char *><PyObject *>a + sizeof(PyObject)))[0]:
            return False
    return True


_struct_data_ok = _check_struct_data()


cdef _freeze(arr):
    """Make arr read-only, and the array it is a view of first (a view's writeable flag can
    then not be set back)."""
    base = arr.base
    if isinstance(base, np.ndarray):
        base.flags.writeable = False
    arr.flags.writeable = False


cdef class _Ring(_Router):
    """An immutable ring snapshot: sorted positions, owners, prefix index, node labels."""
    cdef object _padded                 # uint64[V + CH_PAD]: the positions, then UINT64_MAX
    cdef object _own_arr                # int32[V]: the owners
    cdef object _prefix                 # uint32[2**k + 1]: the prefix index
    cdef object _route                  # uint64[V + CH_PAD]: the route layout q
    cdef object _direct                 # uint64[2**tk]: the direct table (None: not built)
    cdef int64_t _looked                # keys looked up since set_routing (see note_lookups)
    cdef int _claim                     # 1 once a thread has taken the table's build
    cdef object _views                  # (positions, owners), made on first use
    cdef ch_route R                     # what the search kernels read
    cdef object _replica_tables         # r -> read-only int32[V, r]
    cdef const int32_t **reps           # reps[r]: the data of _replica_tables[r], or NULL
    cdef Py_ssize_t nreps
    cdef const uint64_t *pos
    cdef const int32_t *own             # routing owners (a health ring's skip down nodes)
    cdef const int32_t *true_own        # the owners
    cdef const uint32_t *idx
    cdef uint32_t n
    cdef int k

    def __cinit__(self, positions, owners=None, tuple nodes=None, _Hasher hasher=None, *,
                  bint fresh=False, prefix=None, route=None):
        # fresh: the arrays are new and this ring's alone (label_ring, health rings): positions
        # already padded (uint64, at least len(owners) + CH_PAD, UINT64_MAX from len(owners)),
        # owners int32; they are adopted, not copied.  prefix (fresh only): the prefix index
        # those functions derived from the old ring's (None: build it here); route (fresh
        # only): the route layout of these arrays (label_ring; None: built here).
        cdef Py_ssize_t V
        if positions is _BARE:
            return
        if nodes is None or hasher is None:
            raise TypeError("_Ring(positions, owners, nodes, hasher)")
        if fresh:
            if (positions.dtype != np.uint64 or owners.dtype != np.int32
                    or not positions.flags.c_contiguous or not owners.flags.c_contiguous
                    or positions.shape[0] < owners.shape[0] + CH_PAD):
                raise ValueError("fresh arrays: padded uint64 positions and int32 owners")
            V = owners.shape[0]
        else:
            positions = np.ascontiguousarray(positions, dtype=np.uint64)
            owners = np.ascontiguousarray(owners, dtype=np.int32)
            V = positions.shape[0]
            if owners.shape[0] != V:
                raise ValueError("positions and owners differ in length")
        if V >= (1 << 31) - CH_PAD:
            raise ValueError("ring too large")
        cdef int k = ch_prefix_bits(<size_t>V)
        if prefix is not None and (not fresh or prefix.dtype != np.uint32
                                   or not prefix.flags.c_contiguous
                                   or prefix.shape[0] != (1 << k) + 1):
            raise ValueError("prefix: a fresh ring's uint32 index of 2**k + 1 entries")
        if route is not None and (not fresh or route.dtype != np.uint64
                                  or not route.flags.c_contiguous or route.shape[0] != V + CH_PAD):
            raise ValueError("route: a fresh ring's uint64 route layout of len + CH_PAD words")
        if fresh:
            padded = positions
            own = owners
        else:
            padded = _np_empty(V + CH_PAD, _U64)
            padded[:V] = positions
            padded[V:] = ~(<uint64_t>0)
            own = owners.copy()
        self._adopt(padded, own, prefix, route, nodes, hasher)

    cdef int _adopt(self, padded, own, prefix, route, tuple nodes, _Hasher hasher) except -1:
        """Take over this snapshot's arrays (padded positions and owners, and the prefix index
        and route layout when given, else built here from them): they are this ring's alone
        from now on, and never written again."""
        cdef Py_ssize_t V = own.shape[0], i
        self.init_router(nodes, hasher, "ring")
        self.has_replicas = True
        if V == 0:
            self.live = 0
        self._padded = padded
        self._own_arr = own
        self.pos = <const uint64_t *>_buf(padded, False)
        self.true_own = <const int32_t *>_buf(own, False) if V else NULL
        self.n = <uint32_t>V
        self.k = ch_prefix_bits(<size_t>V)
        cdef uint32_t *ip
        if prefix is None:
            prefix = _np_empty((1 << self.k) + 1, _U32)
            ip = <uint32_t *>_buf(prefix, True)
            with nogil:
                ch_build_prefix(self.pos, self.n, self.k, ip)
        self._prefix = prefix
        self.idx = <const uint32_t *>_buf(prefix, False)
        self.R.pos = self.pos
        self.R.idx = self.idx
        self.R.n = self.n
        self.R.shift = 64 - self.k
        self.set_routing(own, route)
        self._replica_tables = {}
        self.nreps = len(nodes) + 1
        self.reps = <const int32_t **>malloc(self.nreps * sizeof(int32_t *))
        if self.reps == NULL:
            raise MemoryError()
        for i in range(self.nreps):
            self.reps[i] = NULL
        return 0

    def __dealloc__(self):
        free(self.reps)

    cdef int set_routing(self, routing, q=None) except -1:
        """Route by routing (int32[V], this ring's own array, kept alive by the caller's
        field): the owners lookups answer (a health ring's skip down nodes), and the route
        layout q built from them (built here when None)."""
        cdef int b = ch_owner_bits(<size_t>len(self.nodes))
        cdef int tk = ch_direct_bits(self.n, b)
        cdef int lines = 0
        if not tk:
            tk = ch_lines_bits(self.n, <size_t>len(self.nodes))
            lines = tk > 0
        cdef uint64_t *qp
        self.own = <const int32_t *>_buf(routing, False) if self.n else NULL
        if q is None:
            q = _np_empty(<Py_ssize_t>self.n + CH_PAD, _U64)
            qp = <uint64_t *>_buf(q, True)
            with nogil:
                ch_route_layout(self.pos, self.own, self.n, b, qp)
        self._route = q
        self.R.q = <const uint64_t *>_buf(q, False)
        self.R.own = self.own
        self.R.b = b
        # a small ring's direct table, a larger one's line table (ch_search.h): built on first
        # use (note_lookups)
        self._direct = None
        self._looked = 0
        self._claim = 0
        self.R.t = NULL
        ch_route_table_form(&self.R, tk, lines)
        return 0

    cdef int note_lookups(self, Py_ssize_t m) except -1:
        """Count m keys about to be looked up (with the GIL); past 2**(tk + 1) keys since the
        routing was set (a line table: 2**(tk + 3), about as many as positions), build the
        table.  Built at once, every membership change (each a new snapshot) would pay for
        it: 130-300 us at 16,000 positions, where add + remove costs about 40; built on first
        use, a snapshot that answers few keys never does, and one that answers many pays
        about as many ns as it saves in its first ones."""
        if self._claim == 0 and self.R.tk:
            self._looked += m  # (a count two threads may race on: it only has to get there)
            if self._looked >= (<int64_t>2 << (self.R.tk + 2 * self.R.lines)):
                self.build_direct()
        return 0

    cdef int build_direct(self) except -1:
        """Build and publish the direct table, once: the thread that claims it builds (others
        go on searching), and batches reading R meanwhile see no table or this one, whole;
        a published table is never replaced.  Its words are read from R's owners, the route
        layout's."""
        cdef int tk = self.R.tk
        cdef uint64_t *tp
        cdef Py_ssize_t skip
        if not tk or self._claim or not ch_direct_claim(&self._claim):
            return 0
        if self.R.lines:  # 2**tk lines of 32 uint16, on a 64-byte boundary
            raw = _np_empty((<Py_ssize_t>32 << tk) + 32, _U16)
            skip = <Py_ssize_t>((64 - <uintptr_t>_buf(raw, True) % 64) % 64) // 2
            t = raw[skip:skip + (32 << tk)].reshape(1 << tk, 32)
            tp = <uint64_t *>_buf(t, True)
            with nogil:
                ch_build_lines(self.pos, self.R.own, self.n, self.idx, self.k, tk,
                               <ch_line *>tp)
        else:
            t = _np_empty(<Py_ssize_t>1 << tk, _U64)
            tp = <uint64_t *>_buf(t, True)
            with nogil:
                ch_build_direct(self.pos, self.R.own, self.n, self.R.b, tk, self.R.pairs, tp)
        self._direct = t
        ch_direct_publish(&self.R, tp)
        return 0

    cdef tuple views(self):
        """(positions, owners) as read-only arrays: views of the snapshot's own arrays, made
        read-only first (so no view of them can be made writeable), made on first use."""
        if self._views is None:
            _freeze(self._padded)
            _freeze(self._own_arr)
            self._views = (self._padded[:self.n], self._own_arr.view())
        return self._views

    @property
    def positions(self):
        """Read-only uint64 array of vnode positions, ascending."""
        return self.views()[0]

    @property
    def owners(self):
        """Read-only int32 array: the index into ``nodes`` owning each position."""
        return self.views()[1]

    @property
    def routing_owners(self):
        """int32[V]: the node each position routes to: ``owners``, unless nodes are marked
        down (a health ring's positions route on to the first up owner clockwise).  This and
        ``positions`` are the exact routing layout every analysis reads."""
        return self.owners

    @property
    def prefix_index(self):
        """The read-only prefix index: entry b is the number of positions whose top k bits
        are below b (k = log2(len - 1)), where the search for a hash starts."""
        _freeze(self._prefix)
        return self._prefix

    @property
    def direct_table(self):
        """The read-only table a ring's lookups read first (ch_search.h), derived from
        positions and routing_owners, never serialized, built on first use (after 2**(tk + 1)
        keys, 2**(tk + 3) for lines, or here): up to 32,768 positions the direct table
        (uint64[2**tk], one word per bucket of the top tk bits of a hash); past them, on a
        ring of at most 65,535 nodes, the line table (uint16[2**tk, 32], a line per bucket:
        16 position bits xor 0x8000, then 16 owners); else None."""
        self.build_direct()
        if not self.R.tk:
            return None
        import time
        while ch_direct_table(&self.R) == NULL:  # another thread's build, not published yet
            time.sleep(0)
        _freeze(self._direct)
        return self._direct

    @property
    def direct_table_lines(self):
        """Whether the table is a line table (see direct_table)."""
        return bool(self.R.lines)

    @property
    def direct_table_pairs(self):
        """Whether the direct table's words hold buckets of two positions (ch_search.h)."""
        return bool(self.R.pairs)

    @property
    def direct_table_built(self):
        """Whether the direct table is built (it is on first use: see direct_table)."""
        return ch_direct_table(&self.R) != NULL

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        if self.R.own == self.own:
            ch_route_batch(&self.R, h, <size_t>m, out)
        else:  # routing owners set without set_routing: the plain search stays exact
            ch_lookup_batch(self.pos, self.n, self.idx, self.k, self.own, h, <size_t>m, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        if self.R.own == self.own:
            return ch_route1(&self.R, h)
        return self.own[ch_find(self.pos, self.n, self.idx, 64 - self.k, h)]

    cdef inline uint32_t find(self, uint64_t h) noexcept nogil:
        """The index of the first position >= h, wrapping to 0."""
        return ch_route_index(&self.R, h)

    cdef int prepare_replicas(self, uint32_t r) except -1:
        # The table pointer is set once per r, with the GIL, before any kernel reads it: a
        # concurrent batch with another r reads its own entry.
        if r >= self.nreps:
            raise ValueError(f"r = {r} exceeds the ring's {len(self.nodes)} nodes")
        if self.reps[r] == NULL:
            t = self.replica_table(r)
            if self.n and r:
                self.reps[r] = _table_data(t)
        return 0

    cdef void route_replicas(self, const uint64_t *h, Py_ssize_t m, uint32_t r,
                             int32_t *out) noexcept nogil:
        cdef const int32_t *t = self.reps[r]
        cdef Py_ssize_t j
        cdef uint32_t i
        for j in range(m):
            i = self.find(h[j])
            memcpy(out + j * r, t + <size_t>i * r, r * sizeof(int32_t))

    cdef int64_t walk_steps(self):
        return self.n

    cdef int32_t walk_step(self, uint64_t h, int64_t t, uint32_t *at) noexcept nogil:
        if t == 0:
            at[0] = self.find(h)
        return self.own[(at[0] + t) % self.n]

    def __len__(self):
        return self.n

    def position_index(self, uint64_t h):
        """Index of the first position >= h, wrapping to 0."""
        self.check()
        return self.find(h)

    # The scalar paths, without the base's virtual call (a ring lookup is a few ns).
    def index(self, key):
        """Node index of one key."""
        if self.live == 0:
            self.check()
        return self.route1(self.hasher.hash_one(key))

    def get(self, key):
        """Node name of one key."""
        return self.get_key(key)

    def replica_table(self, uint32_t r):
        """int32[V, r]: the first r distinct owners clockwise from each position (cached)."""
        t = self._replica_tables.get(r)
        if t is None:
            t = np.empty((self.n, r), dtype=np.int32)
            if self.n and r:
                self._build_replicas(t, r)
            t.flags.writeable = False
            t = self._replica_tables.setdefault(r, t)
        return t

    cdef _build_replicas(self, t, uint32_t r):
        cdef int32_t[:, ::1] tv = t
        with nogil:
            ch_build_replicas(self.own, self.n, r, &tv[0, 0])


cdef const int32_t *_table_data(t) except NULL:
    cdef const int32_t[:, ::1] tv = t
    return &tv[0, 0]


# ---------------------------------------------------------------------------------------------
# Building rings
# ---------------------------------------------------------------------------------------------

cdef int _label_pairs(_Hasher hasher, object names, const uint32_t *counts, Py_ssize_t nn,
                      int32_t first_owner, uint64_t *pos, int32_t *own) except -1:
    """Hash every vnode label of names (bytes, or str as its UTF-8) into pos / own, node after
    node: node i's count[i] labels name + b"#" + decimal j, owned by first_owner + i."""
    cdef Py_ssize_t i, off = 0, L
    cdef uint32_t j
    cdef size_t maxlen = 0
    cdef const char *p
    if hasher.func is not None:
        for i in range(nn):
            name = names[i]
            if isinstance(name, str):
                name = (<str>name).encode("utf-8")
            for j in range(counts[i]):
                pos[off] = hasher.call_func(name + b"#" + str(j).encode("ascii"))
                own[off] = <int32_t>i + first_owner
                off += 1
        return 0
    cdef const uint8_t **ptrs = <const uint8_t **>malloc(max(nn, 1) * sizeof(uint8_t *))
    cdef size_t *lens = <size_t *>malloc(max(nn, 1) * sizeof(size_t))
    cdef uint8_t *label = NULL
    try:
        if ptrs == NULL or lens == NULL:
            raise MemoryError()
        for i in range(nn):
            name = names[i]  # kept alive by names, which the caller holds
            if PyBytes_Check(name):
                p = PyBytes_AS_STRING(name)
                L = PyBytes_GET_SIZE(name)
            else:
                p = PyUnicode_AsUTF8AndSize(name, &L)
            ptrs[i] = <const uint8_t *>p
            lens[i] = <size_t>L
            maxlen = max(maxlen, <size_t>L)
        label = <uint8_t *>malloc(maxlen + 24)
        if label == NULL:
            raise MemoryError()
        with nogil:
            ch_label_ring(ptrs, lens, counts, <size_t>nn, first_owner, hasher.hid, hasher.seed,
                          label, pos, own)
    finally:
        free(ptrs)
        free(lens)
        free(label)
    return 0


cdef tuple _sorted_layout(_Hasher hasher, object names, const uint32_t[::1] counts,
                          int32_t first_owner, bint ring):
    """(padded positions, owners, prefix, route) of every vnode label of names, sorted by
    (position, owner): the positions array has CH_PAD UINT64_MAX after its len(owners)
    entries, as a fresh _Ring takes it.  The labels are hashed straight into those arrays;
    a large layout is then radix-sorted through scratch, and with ring (names are the ring's
    nodes) the same pass writes the prefix index and the route layout (else they are None)."""
    cdef Py_ssize_t nn = len(names), i
    if counts.shape[0] != nn:
        raise ValueError("names and counts differ in length")
    cdef uint64_t total = 0
    for i in range(nn):
        total += counts[i]
    if total >= (1 << 31) - CH_PAD:
        raise ValueError(f"the ring would have {total} vnodes; at most 2**31 - 9 are supported")
    padded = np.empty(total + CH_PAD, dtype=np.uint64)
    own = np.empty(total, dtype=np.int32)
    cdef uint64_t[::1] pv = padded
    cdef int32_t[::1] ov = own
    cdef size_t n = <size_t>total
    if total:
        _label_pairs(hasher, names, &counts[0], nn, first_owner, &pv[0], &ov[0])
    for i in range(CH_PAD):
        pv[total + i] = ~(<uint64_t>0)
    if total < CH_RADIX_MIN:
        if total:
            _sort_pairs(&pv[0], &ov[0], n)
        return padded, own, None, None
    cdef int k = ch_prefix_bits(n), b = ch_owner_bits(<size_t>nn), rc
    prefix = route = None
    cdef uint32_t *ip = NULL
    cdef uint64_t *qp = NULL
    cdef uint32_t[::1] iv
    cdef uint64_t[::1] qv
    if ring:
        prefix = np.empty((1 << k) + 1, dtype=np.uint32)
        route = np.empty(total + CH_PAD, dtype=np.uint64)
        iv = prefix
        qv = route
        ip = &iv[0]
        qp = &qv[0]
    # Scratch: the keys go through the route layout's memory (each bucket's are read before
    # its route words are written over them), the owners through an array NumPy allocates
    # (huge pages where the OS gives them: the scatter writes 4,096 streams at once, which
    # 4 KB pages would turn into TLB misses).
    scratch_keys = route if ring else np.empty(total + CH_PAD, dtype=np.uint64)
    scratch_owners = np.empty(total, dtype=np.int32)
    cdef uint64_t[::1] tkv = scratch_keys
    cdef int32_t[::1] tvv = scratch_owners
    with nogil:
        rc = ch_radix_layout(&pv[0], &ov[0], n, &tkv[0], &tvv[0], k, ip, b, qp)
    if rc < 0:
        raise MemoryError()
    return padded, own, prefix, route


def label_positions(_Hasher hasher, list names, const uint32_t[::1] counts, int32_t first_owner=0):
    """Positions of every vnode label utf8(name) + b"#" + decimal j, j < count, sorted by
    (position, owner); owner i + first_owner is names[i] (bytes, or str hashed as its UTF-8).
    Returns (positions, owners)."""
    padded, own, _, _ = _sorted_layout(hasher, names, counts, first_owner, False)
    return padded[:own.shape[0]], own


def label_ring(_Hasher hasher, tuple nodes, const uint32_t[::1] counts):
    """The ring snapshot of nodes (sorted names, str) with counts[i] vnode labels for node i:
    label_positions' layout, hashed and sorted in C straight into the snapshot's arrays."""
    padded, own, prefix, route = _sorted_layout(hasher, nodes, counts, 0, True)
    return _Ring(padded, own, nodes, hasher, fresh=True, prefix=prefix, route=route)


cdef int _sort_pairs(uint64_t *keys, int32_t *vals, size_t n) except -1:
    """Sort n (key, val) pairs in place by (key, val) (ch_sort_pairs)."""
    if n < 2:
        return 0
    cdef size_t nb = (<size_t>1) << ch_sort_bits(n) if n < CH_RADIX_MIN else 0
    cdef ch_pair *tmp = <ch_pair *>malloc(n * sizeof(ch_pair))
    cdef size_t *count = <size_t *>malloc((nb + 1) * sizeof(size_t))
    cdef int rc
    try:
        if tmp == NULL or count == NULL:
            raise MemoryError()
        with nogil:
            rc = ch_sort_pairs(keys, vals, n, tmp, count)
        if rc < 0:
            raise MemoryError()
    finally:
        free(tmp)
        free(count)
    return 0


def sort_pairs(uint64_t[::1] keys, int32_t[::1] vals):
    """In-place sort of (keys, vals) pairs by (key, val)."""
    cdef Py_ssize_t n = keys.shape[0]
    if vals.shape[0] != n:
        raise ValueError("keys and vals differ in length")
    if n >= 2:
        _sort_pairs(&keys[0], &vals[0], <size_t>n)


def ring_with(_Ring core, str name, Py_ssize_t r, const uint64_t[::1] pb):
    """The snapshot of core with node name inserted at index r (core's owners >= r renumbered
    + 1), its positions pb ascending: one pass over core's arrays (ch_ring_insert), which also
    writes the route layout and shifts the prefix index, as ring_add does for vnode labels.
    The merge keeps the (position, owner) order: runs of core's positions are copied whole
    between the new ones."""
    cdef Py_ssize_t nb = pb.shape[0], j
    if not 0 <= r <= len(core.nodes):
        raise IndexError(f"node index {r} out of range")
    for j in range(1, nb):
        if pb[j] < pb[j - 1]:
            raise ValueError("the new positions must be ascending")
    return _ring_with(core, name, r, &pb[0] if nb else NULL, nb)


def ring_merge(_Ring core, tuple nodes, const int32_t[::1] remap, uint64_t[::1] pb,
               int32_t[::1] ob):
    """The snapshot of core with the points (pb, ob) merged in: several added nodes in one pass
    over core's arrays (ch_ring_merge), as RingRouter applies a batch of deferred add() calls.
    nodes is the new node tuple, remap[i] the index in it of core's node i (increasing), and
    ob[j] the index in it of the owner of point pb[j].  The points are sorted here, in place,
    by (position, owner); the result equals a build of the whole ring."""
    cdef Py_ssize_t nb = pb.shape[0], nn = len(nodes), no = len(core.nodes), j
    if ob.shape[0] != nb:
        raise ValueError("pb and ob differ in length")
    if remap.shape[0] != no:
        raise ValueError(f"remap has {remap.shape[0]} entries for {no} nodes")
    for j in range(no):
        if not 0 <= remap[j] < nn or (j and remap[j] <= remap[j - 1]):
            raise ValueError("remap must be increasing indices into nodes")
    for j in range(nb):
        if not 0 <= ob[j] < nn:
            raise ValueError(f"ob[{j}] = {ob[j]} is not an index into nodes")
    if <size_t>core.n + <size_t>nb >= (1 << 31) - CH_PAD:
        raise ValueError("ring too large")
    if nb >= 2:
        _sort_pairs(&pb[0], &ob[0], <size_t>nb)
    cdef Py_ssize_t v = core.n + nb
    padded = _np_empty(v + CH_PAD, _U64)
    own = _np_empty(v, _I32)
    route = _np_empty(v + CH_PAD, _U64)
    cdef uint64_t *qp = <uint64_t *>_buf(route, True)
    cdef uint64_t *po = <uint64_t *>_buf(padded, True)
    cdef int32_t *oo = <int32_t *>_buf(own, True) if v else NULL
    cdef const int32_t *rp = &remap[0] if no else NULL
    cdef const uint64_t *bp = &pb[0] if nb else NULL
    cdef const int32_t *obp = &ob[0] if nb else NULL
    cdef int b = ch_owner_bits(<size_t>nn)
    with nogil:
        ch_ring_merge(core.pos, core.true_own, core.n, core.idx, core.k, rp, bp, obp,
                      <size_t>nb, b, po, oo, qp)
    prefix = _adjusted_prefix(core, v, bp, nb, 1)
    cdef _Ring new = _Ring.__new__(_Ring, _BARE)
    new._adopt(padded, own, prefix, route, nodes, core.hasher)
    return new


def label_pairs(_Hasher hasher, list names, const uint32_t[::1] counts,
                const int32_t[::1] owners):
    """(positions, owners) of every vnode label utf8(name) + b"#" + decimal j, j < counts[i],
    of names[i], owned by owners[i], node after node in generation order (not sorted)."""
    cdef Py_ssize_t nn = len(names), i, off = 0
    cdef uint32_t j
    if counts.shape[0] != nn or owners.shape[0] != nn:
        raise ValueError("names, counts and owners differ in length")
    cdef uint64_t total = 0
    for i in range(nn):
        total += counts[i]
    if total >= (1 << 31) - CH_PAD:
        raise ValueError(f"{total} vnodes; at most 2**31 - 9 are supported")
    pos = np.empty(total, dtype=np.uint64)
    own = np.empty(total, dtype=np.int32)
    cdef uint64_t[::1] pv = pos
    cdef int32_t[::1] ov = own
    if total:
        _label_pairs(hasher, names, &counts[0], nn, 0, &pv[0], &ov[0])
        for i in range(nn):
            for j in range(counts[i]):
                ov[off] = owners[i]
                off += 1
    return pos, own


cdef _Ring _ring_with(_Ring core, str name, Py_ssize_t r, const uint64_t *pb, Py_ssize_t nb):
    padded, own, prefix, route = _inserted(core, pb, nb, <int32_t>r)
    cdef _Ring new = _Ring.__new__(_Ring, _BARE)
    new._adopt(padded, own, prefix, route, _with_node(core.nodes, r, name), core.hasher)
    return new


cdef tuple _inserted(_Ring core, const uint64_t *pb, Py_ssize_t nb, int32_t r):
    """(padded, owners, prefix or None, route) of core with owner r's sorted
    positions pb inserted (ch_ring_insert); route for len(core.nodes) + 1 nodes
    and the prefix index (shifted from core's when its size stays) come from the same pass."""
    cdef Py_ssize_t na = core.n, v = na + nb
    padded = _np_empty(v + CH_PAD, _U64)
    own = _np_empty(v, _I32)
    route = _np_empty(v + CH_PAD, _U64)
    cdef uint64_t *qp = <uint64_t *>_buf(route, True)
    cdef uint64_t *po = <uint64_t *>_buf(padded, True)
    cdef int32_t *oo = <int32_t *>_buf(own, True) if v else NULL
    cdef int b = ch_owner_bits(<size_t>len(core.nodes) + 1)
    with nogil:
        ch_ring_insert(core.pos, core.true_own, <size_t>na, core.idx, core.k, pb, <size_t>nb, r,
                       b, po, oo, qp)
    return padded, own, _adjusted_prefix(core, v, pb, nb, 1), route


cdef tuple _removed(_Ring core, int32_t r):
    """(padded, owners, prefix or None, route) of core without owner r
    (ch_ring_remove); route for len(core.nodes) - 1 nodes."""
    cdef Py_ssize_t n = core.n, o
    padded = _np_empty(n + CH_PAD, _U64)
    own = _np_empty(n, _I32)
    route = _np_empty(n + CH_PAD, _U64)
    cdef uint64_t *qp = <uint64_t *>_buf(route, True)
    cdef uint64_t *po = <uint64_t *>_buf(padded, True)
    cdef int32_t *oo = <int32_t *>_buf(own, True) if n else NULL
    cdef int b = ch_owner_bits(<size_t>max(len(core.nodes) - 1, 0))
    # r's positions as they are removed, in order: the prefix index is shifted by them
    cdef uint64_t *rem = <uint64_t *>malloc(max(n, 1) * sizeof(uint64_t))
    if rem == NULL:
        raise MemoryError()
    try:
        with nogil:
            o = <Py_ssize_t>ch_ring_remove(core.pos, core.true_own, <size_t>n, r, b, po, oo, qp,
                                           rem)
        prefix = _adjusted_prefix(core, o, rem, n - o, -1)
    finally:
        free(rem)
    if o < n:
        own = own[:o]
        route = route[:o + CH_PAD]
    return padded, own, prefix, route


cdef object _adjusted_prefix(_Ring core, Py_ssize_t v, const uint64_t *chg, Py_ssize_t m,
                             int sign):
    """The prefix index of a ring of v positions that is core with the sorted positions chg
    added (sign 1) or removed (-1), or None when its k differs from core's (or it is empty):
    then _Ring builds it from the positions."""
    if v == 0 or core.n == 0 or ch_prefix_bits(<size_t>v) != core.k:
        return None
    prefix = _np_empty((1 << core.k) + 1, _U32)
    cdef uint32_t *pv = <uint32_t *>_buf(prefix, True)
    with nogil:
        ch_prefix_adjust(core.idx, core.k, chg, <size_t>m, sign, pv)
    return prefix


cdef tuple _with_node(tuple names, Py_ssize_t r, object name):
    """names with name inserted at r (name None: names without item r)."""
    cdef Py_ssize_t n = len(names), i, o = 0
    cdef tuple out = PyTuple_New(n + 1 if name is not None else n - 1)
    for i in range(n + 1):
        if i == r and name is not None:
            Py_INCREF(name)
            PyTuple_SET_ITEM(out, o, name)
            o += 1
        if i == n or (i == r and name is None):
            continue
        item = <object>PyTuple_GET_ITEM(names, i)
        Py_INCREF(item)
        PyTuple_SET_ITEM(out, o, item)
        o += 1
    return out


cdef Py_ssize_t _bisect_names(tuple names, str name) except -1:
    """The index of the first name >= name in the sorted names (str order: code points)."""
    cdef Py_ssize_t lo = 0, hi = len(names), mid
    while lo < hi:
        mid = (lo + hi) // 2
        if PyUnicode_Compare(<object>PyTuple_GET_ITEM(names, mid), name) < 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


def ring_add(_Ring core, str name, uint32_t count):
    """(the snapshot of core with node name added with count vnode labels, its index): one
    pass over core's arrays (ch_ring_insert), which also writes the new route layout and the
    shifted prefix index; the labels hashed and sorted as label_positions does."""
    cdef Py_ssize_t r = _bisect_names(core.nodes, name)
    cdef uint64_t *pb = <uint64_t *>malloc(max(count, 1) * sizeof(uint64_t))
    cdef int32_t *ob = <int32_t *>malloc(max(count, 1) * sizeof(int32_t))
    try:
        if pb == NULL or ob == NULL:
            raise MemoryError()
        _label_pairs(core.hasher, (name,), &count, 1, <int32_t>r, pb, ob)
        _sort_pairs(pb, ob, count)
        new = _ring_with(core, name, r, pb, count)
    finally:
        free(pb)
        free(ob)
    return new, r


def ring_drop(_Ring core, Py_ssize_t r):
    """The snapshot of core without node r: one pass (ch_ring_remove), route layout and
    prefix index included."""
    if not 0 <= r < len(core.nodes):
        raise IndexError(f"node index {r} out of range")
    padded, own, prefix, route = _removed(core, <int32_t>r)
    cdef _Ring new = _Ring.__new__(_Ring, _BARE)
    new._adopt(padded, own, prefix, route, _with_node(core.nodes, r, None), core.hasher)
    return new
