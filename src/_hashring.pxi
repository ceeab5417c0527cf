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


cdef class _Ring(_Router):
    """An immutable ring snapshot: sorted positions, owners, prefix index, node labels."""
    cdef readonly object positions      # read-only uint64[V] (a view of the padded array)
    cdef readonly object owners         # read-only int32[V]
    cdef object _padded
    cdef object _prefix
    cdef object _route                  # the route layout q (uint64[V + CH_PAD])
    cdef ch_route R                     # what the search kernels read
    cdef object _replica_tables         # r -> read-only int32[V, r]
    cdef const int32_t **reps           # reps[r]: the data of _replica_tables[r], or NULL
    cdef Py_ssize_t nreps
    cdef const uint64_t *pos
    cdef const int32_t *own             # routing owners (a health ring's skip down nodes)
    cdef const uint32_t *idx
    cdef uint32_t n
    cdef int k

    def __cinit__(self, positions, owners, tuple nodes, _Hasher hasher, *, bint fresh=False,
                  prefix=None, route=None):
        # fresh: the arrays are new and this ring's alone (ring_insert, ring_remove): positions
        # already padded (uint64, at least len(owners) + CH_PAD, UINT64_MAX from len(owners)),
        # owners int32; they are adopted, made read-only, not copied.  prefix (fresh only): the
        # prefix index those functions derived from the old ring's (None: build it here);
        # route (fresh only): the route layout of these arrays (label_ring; None: built here).
        cdef Py_ssize_t V
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
        self.init_router(nodes, hasher, "ring")
        self.has_replicas = True
        if V == 0:
            self.live = 0
        if fresh:
            padded = positions
            own = owners
        else:
            padded = np.full(V + CH_PAD, np.iinfo(np.uint64).max, dtype=np.uint64)
            padded[:V] = positions
            own = owners.copy()
        # Read-only views of read-only arrays: a view's writeable flag cannot be set back.
        own.flags.writeable = False
        padded.flags.writeable = False
        self._padded = padded
        self.positions = padded[:V]
        self.owners = own.view()
        self.n = <uint32_t>V
        self.k = ch_prefix_bits(<size_t>V)
        cdef bint built = prefix is not None
        if built and (not fresh or prefix.dtype != np.uint32 or not prefix.flags.c_contiguous
                      or prefix.shape[0] != (1 << self.k) + 1):
            raise ValueError("prefix: a fresh ring's uint32 index of 2**k + 1 entries")
        if not built:
            prefix = np.empty((1 << self.k) + 1, dtype=np.uint32)
        cdef uint32_t[::1] pv = prefix
        cdef const uint64_t[::1] ppv = padded
        cdef const int32_t[::1] ov = own
        self.pos = &ppv[0]
        self.own = &ov[0] if V else NULL
        if not built:
            with nogil:
                ch_build_prefix(self.pos, self.n, self.k, &pv[0])
        prefix.flags.writeable = False
        self._prefix = prefix
        self.idx = &pv[0]
        self.R.pos = self.pos
        self.R.idx = self.idx
        self.R.n = self.n
        self.R.shift = 64 - self.k
        if route is not None and (not fresh or route.dtype != np.uint64
                                  or not route.flags.c_contiguous or route.shape[0] != V + CH_PAD):
            raise ValueError("route: a fresh ring's uint64 route layout of len + CH_PAD words")
        self.set_routing(own, route)
        self._replica_tables = {}
        self.nreps = len(nodes) + 1
        self.reps = <const int32_t **>malloc(self.nreps * sizeof(int32_t *))
        if self.reps == NULL:
            raise MemoryError()
        cdef Py_ssize_t i
        for i in range(self.nreps):
            self.reps[i] = NULL

    def __dealloc__(self):
        free(self.reps)

    cdef int set_routing(self, routing, q=None) except -1:
        """Route by routing (int32[V], this ring's own array, kept alive by the caller's
        field): the owners lookups answer (a health ring's skip down nodes), and the route
        layout q built from them (built here when None)."""
        cdef const int32_t[::1] rv = routing
        cdef int b = ch_owner_bits(<size_t>len(self.nodes))
        cdef bint build = q is None
        if build:
            q = np.empty(<Py_ssize_t>self.n + CH_PAD, dtype=np.uint64)
        cdef uint64_t[::1] qv = q
        self.own = &rv[0] if self.n else NULL
        if build:
            with nogil:
                ch_route_layout(self.pos, self.own, self.n, b, &qv[0])
        q.flags.writeable = False
        self._route = q
        self.R.q = &qv[0]
        self.R.own = self.own
        self.R.b = b
        return 0

    @property
    def prefix_index(self):
        """The read-only prefix index: entry b is the number of positions whose top k bits
        are below b (k = log2(len - 1)), where the search for a hash starts."""
        return self._prefix

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
        cdef uint64_t h = self.hasher.hash_key(key)
        return self.route1(h)

    def get(self, key):
        """Node name of one key."""
        if self.live == 0:
            self.check()
        cdef uint64_t h = self.hasher.hash_key(key)
        return self.nodes[self.route1(h)]

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


def merge_sorted(const uint64_t[::1] pa, const int32_t[::1] oa,
                 const uint64_t[::1] pb, const int32_t[::1] ob):
    """Merge two (position, owner)-sorted runs into one; returns (positions, owners)."""
    cdef Py_ssize_t na = pa.shape[0], nb = pb.shape[0]
    po = np.empty(na + nb, dtype=np.uint64)
    oo = np.empty(na + nb, dtype=np.int32)
    if na + nb == 0:
        return po, oo
    cdef uint64_t[::1] pov = po
    cdef int32_t[::1] oov = oo
    cdef const uint64_t *ppa = &pa[0] if na else NULL
    cdef const int32_t *poa = &oa[0] if na else NULL
    cdef const uint64_t *ppb = &pb[0] if nb else NULL
    cdef const int32_t *pob = &ob[0] if nb else NULL
    with nogil:
        ch_merge(ppa, poa, na, ppb, pob, nb, &pov[0], &oov[0])
    return po, oo


cdef inline void _copy_renumbered(const uint64_t *pa, const int32_t *oa, Py_ssize_t k,
                                  int32_t r, int32_t d, uint64_t *po, int32_t *oo) noexcept nogil:
    """po[:k] = pa[:k]; oo[:k] = oa[:k] + d where oa >= r (d = +1: an owner inserted at r) or
    > r (d = -1: owner r removed)."""
    cdef Py_ssize_t t
    if k <= 0:
        return
    memcpy(po, pa, <size_t>k * sizeof(uint64_t))
    if d > 0:
        for t in range(k):
            oo[t] = oa[t] + (oa[t] >= r)
    else:
        for t in range(k):
            oo[t] = oa[t] - (oa[t] > r)


def ring_insert(_Ring core, const uint64_t[::1] pb, const int32_t[::1] ob, int32_t r):
    """core's layout with the (position, owner)-sorted run (pb, ob) of a new owner r merged
    in, core's owners >= r renumbered + 1 as they are copied: (padded positions, owners),
    fresh for _Ring(..., fresh=True).  The same order as merge_sorted of the renumbered
    layout: runs of core's positions are copied whole between the new ones.  The third item is
    the new prefix index, shifted from core's (None when k changes: _Ring builds it)."""
    cdef Py_ssize_t na = core.n, nb = pb.shape[0], i = 0, j, e, lo, hi, mid, o = 0
    if ob.shape[0] != nb:
        raise ValueError("positions and owners differ in length")
    for j in range(nb):
        if ob[j] != r:
            raise ValueError("the new positions must all be owner r's")
    padded = np.empty(na + nb + CH_PAD, dtype=np.uint64)
    own = np.empty(na + nb, dtype=np.int32)
    cdef uint64_t[::1] pv = padded
    cdef int32_t[::1] ov = own
    cdef const int32_t[::1] oav = core.owners
    cdef const uint64_t *pa = core.pos
    cdef const int32_t *oa = &oav[0] if na else NULL
    cdef uint64_t *po = &pv[0]
    cdef int32_t *oo = &ov[0] if na + nb else NULL
    cdef uint64_t x
    with nogil:
        for j in range(nb):
            x = pb[j]
            lo = i  # the first index >= i whose position is >= x
            hi = na
            while lo < hi:
                mid = lo + (hi - lo) // 2
                if pa[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            e = lo  # ties at x: the old owners below r come first (renumbered, they stay < r)
            while e < na and pa[e] == x and oa[e] < r:
                e += 1
            _copy_renumbered(pa + i, oa + i, e - i, r, 1, po + o, oo + o)
            o += e - i
            i = e
            po[o] = x
            oo[o] = r
            o += 1
        _copy_renumbered(pa + i, oa + i, na - i, r, 1, po + o, oo + o)
        o += na - i
        for i in range(CH_PAD):
            po[o + i] = ~(<uint64_t>0)
    return padded, own, _adjusted_prefix(core, na + nb, &pb[0] if nb else NULL, nb, 1)


cdef object _adjusted_prefix(_Ring core, Py_ssize_t v, const uint64_t *chg, Py_ssize_t m,
                             int sign):
    """The prefix index of a ring of v positions that is core with the sorted positions chg
    added (sign 1) or removed (-1), or None when its k differs from core's (or it is empty):
    then _Ring builds it from the positions."""
    if v == 0 or core.n == 0 or ch_prefix_bits(<size_t>v) != core.k:
        return None
    prefix = np.empty((1 << core.k) + 1, dtype=np.uint32)
    cdef uint32_t[::1] pv = prefix
    with nogil:
        ch_prefix_adjust(core.idx, core.k, chg, <size_t>m, sign, &pv[0])
    return prefix


def ring_remove(_Ring core, int32_t r):
    """core's layout without owner r's positions, the owners above r renumbered - 1 (runs
    between r's positions copied whole): (padded positions, owners, prefix index or None),
    fresh for _Ring(..., fresh=True, prefix=...)."""
    cdef Py_ssize_t n = core.n, i, e, start = 0, o = 0
    padded = np.empty(n + CH_PAD, dtype=np.uint64)
    own = np.empty(n, dtype=np.int32)
    cdef uint64_t[::1] pv = padded
    cdef int32_t[::1] ov = own
    cdef const int32_t[::1] oav = core.owners
    cdef const uint64_t *pa = core.pos
    cdef const int32_t *oa = &oav[0] if n else NULL
    cdef uint64_t *po = &pv[0]
    cdef int32_t *oo = &ov[0] if n else NULL
    cdef Py_ssize_t b, t, nr = 0
    cdef int hit
    # r's positions as they are removed, in order: the prefix index is shifted by them
    cdef uint64_t *rem = <uint64_t *>malloc(max(n, 1) * sizeof(uint64_t))
    if rem == NULL:
        raise MemoryError()
    with nogil:
        b = 0
        while b < n:  # blocks of 64 owners tested at once (a loop the compiler vectorizes)
            e = min(b + 64, n)
            hit = 0
            for t in range(b, e):
                hit |= oa[t] == r
            if hit:
                for i in range(b, e):
                    if oa[i] == r:
                        rem[nr] = pa[i]
                        nr += 1
                        _copy_renumbered(pa + start, oa + start, i - start, r, -1, po + o,
                                         oo + o)
                        o += i - start
                        start = i + 1
            b = e
        _copy_renumbered(pa + start, oa + start, n - start, r, -1, po + o, oo + o)
        o += n - start
        for i in range(o, n + CH_PAD):  # the pad, and the room the removed ones left
            po[i] = ~(<uint64_t>0)
    try:
        prefix = _adjusted_prefix(core, o, rem, nr, -1)
    finally:
        free(rem)
    own.flags.writeable = False  # so no view of it can be made writeable again
    return padded, own[:o], prefix
