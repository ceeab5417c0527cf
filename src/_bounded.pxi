# Bounded-load assignment (Mirrokni, Thorup & Zadimoghaddam, "Consistent Hashing with Bounded
# Loads", 2018) over any router: each key takes the first node of its preference walk whose
# load is below its capacity.
#
# Preference walk of a key with hash h, by router (only the _Router base is used: a router
# with a position walk of its own answers walk_steps / walk_step, one with a replica order
# answers route_replicas):
#   HashRing            the owners of the positions clockwise from the key's position (its
#                       replica walk; with nodes marked down, their positions route onward)
#   Rendezvous          the nodes by rank (replicas(key, n))
#   any other router    the nodes of the probes h, mix64(h + t * 0xD1B54A32D192ED03), t = 1, 2..
#                       (8 * nodes + 64 probes), then every node in index order
# Spreading (spread = k > 1): among the first k distinct nodes of the walk, the least loaded
# one below capacity (the earliest on a tie); if all k are full, the walk goes on.
# A node is taken only when its load is below its capacity, and the caller checks that the
# capacities leave room for every key, so the walk always ends (at the latest in the final scan
# over all nodes): never a hang.

cdef enum:
    WALK_RING = 0
    WALK_TOP = 1
    WALK_PROBE = 2

cdef uint64_t BOUNDED_STEP = 0xD1B54A32D192ED03ULL


cdef inline bint _seen(const int32_t *seen, int32_t cnt, int32_t node) noexcept nogil:
    cdef int32_t t
    for t in range(cnt):
        if seen[t] == node:
            return True
    return False


# The capacities a walk reads: fixed ones (cap[i * step]: per node with step 1, one for all with
# step 0), or else ceil(m * num[i * step] / den[i * step]) for m keys (ch_ceil_ratio, exact).
cdef struct _Caps:
    const int64_t *cap
    const uint64_t *num
    const uint64_t *den
    Py_ssize_t step
    uint64_t m


cdef inline int64_t _cap(const _Caps *c, Py_ssize_t i) noexcept nogil:
    if c.cap != NULL:
        return c.cap[i * c.step]
    return ch_ceil_ratio(c.m, c.num[i * c.step], c.den[i * c.step])


cdef inline int _walk_kind(_Router core) except -1:
    if core.walk_steps() > 0:
        return WALK_RING
    if core.has_replicas:
        return WALK_TOP
    return WALK_PROBE


cdef inline int64_t _walk_limit(_Router core, int kind, Py_ssize_t n) except? -1:
    if kind == WALK_RING:
        return core.walk_steps()
    if kind == WALK_TOP:
        return n
    return 8 * n + 64


cdef void _bounded_walk(_Router core, int kind, const uint64_t *hashes, Py_ssize_t m,
                        int32_t spread, int64_t limit, Py_ssize_t n, int64_t *loads,
                        const _Caps *caps, int32_t *seen, int32_t *row,
                        int32_t *out) noexcept nogil:
    """Place hashes[j], j < m, in turn, each on the first node below capacity on its walk
    (with spread > 1 the least loaded of its first spread distinct nodes), else the first
    with room in index order; loads counts each.  Some node has room for every key (the
    caller checked)."""
    cdef uint64_t h, p
    cdef int32_t node, best, cnt
    cdef int64_t t, have
    cdef uint32_t at = 0
    cdef Py_ssize_t i, j
    cdef _Caps cs = caps[0]  # a local copy: the stores to loads cannot change it
    for j in range(m):
        h = hashes[j]
        node = -1
        best = -1
        cnt = 0
        t = 0
        have = 0
        while t < limit:
            if kind == WALK_RING:
                node = core.walk_step(h, t, &at)
            elif kind == WALK_TOP:
                if t == 0 and spread == 1:
                    node = core.route1(h)  # the best node, without ranking the rest
                elif t >= have:   # rank lazily: a few first, all of them if needed
                    have = n if have else min(n, spread + 7)
                    core.route_replicas(&h, 1, <uint32_t>have, row)
                    node = row[t]
                else:
                    node = row[t]
            else:
                p = h if t == 0 else ch_mix64(h + <uint64_t>t * BOUNDED_STEP)
                node = core.route1(p)
            t += 1
            if cnt < spread:
                if _seen(seen, cnt, node):
                    continue
                seen[cnt] = node
                cnt += 1
                if loads[node] < _cap(&cs, node) and (best < 0 or loads[node] < loads[best]):
                    best = node
                if cnt == spread and best >= 0:
                    break
            elif loads[node] < _cap(&cs, node):
                best = node
                break
        if best < 0:  # the walk ran out: the first node with room, in index order
            for i in range(n):
                if loads[i] < _cap(&cs, i):
                    best = <int32_t>i
                    break
        loads[best] += 1
        out[j] = best


def bounded_assign(_Router core, const uint64_t[::1] hashes, const int64_t[::1] caps,
                   int64_t[::1] loads, int32_t spread, int32_t[::1] out):
    """Assign each hash in turn to a node below capacity (loads updated in place)."""
    cdef int kind
    if core is None:
        raise TypeError("unsupported router core 'NoneType'")
    kind = _walk_kind(core)
    core.check()
    cdef Py_ssize_t n = loads.shape[0], m = hashes.shape[0]
    if caps.shape[0] != n or out.shape[0] != m:
        raise ValueError("caps, loads and out differ in length")
    if spread < 1:
        raise ValueError("spread must be >= 1")
    if spread > n:
        spread = <int32_t>n
    cdef int64_t room = 0
    cdef Py_ssize_t i
    for i in range(n):
        if caps[i] > loads[i]:
            room += caps[i] - loads[i]
    if room < m:
        raise ValueError(f"capacity left ({room}) is below the number of keys ({m})")
    seen_a = np.empty(max(spread, 1), dtype=np.int32)
    row_a = np.empty(max(n, 1), dtype=np.int32)
    cdef int32_t[::1] seen = seen_a
    cdef int32_t[::1] row = row_a
    cdef int64_t limit = _walk_limit(core, kind, n)
    cdef _Caps cs
    cs.cap = &caps[0] if n else NULL
    cs.num = NULL
    cs.den = NULL
    cs.step = 1
    cs.m = 0
    if m == 0:
        return out.base if out.base is not None else np.asarray(out)
    with nogil:
        _bounded_walk(core, kind, &hashes[0], m, spread, limit, n, &loads[0], &cs, &seen[0],
                      &row[0], &out[0])
    return out.base if out.base is not None else np.asarray(out)


cdef object _U64_LIMIT = 1 << 64
cdef object _MISSING = object()

cdef extern from "ch_pyslot.h":
    Py_ssize_t ch_slot_offset(PyObject *d)
    PyObject *ch_slot_peek(PyObject *obj, Py_ssize_t off)


cdef class _LiveLoad:
    """BoundedLoad's live load over one router snapshot: the load of each node (int64, by node
    index) and the capacity rule, so that acquire and release are one call each.

    Capacities are exact: fixed ones (caps, per node or one for all), or else ceil(m * num / den)
    for m = the load held + 1, with num / den per node or one for all (Python ints: the ratio
    c * w / sum(w); in 64-bit arithmetic when both fit, in Python ints otherwise).  held counts
    all the load held, on these nodes or elsewhere (nodes no longer in the router)."""
    cdef readonly _Router core
    cdef readonly object state          # what else the capacities were computed from
    cdef readonly object loads          # int64[n]
    cdef public int64_t held
    cdef dict index                     # node name -> index
    cdef int64_t *ld
    cdef int32_t *seen
    cdef int32_t *row
    cdef object _caps, _num, _den, _pynum, _pyden, _pycap, _seen_a, _row_a
    cdef _Caps caps
    cdef bint fixed                     # fixed capacities (room then counts what is left)
    cdef bint py_caps                   # ratios beyond 64 bits: computed in Python ints
    cdef bint py_hash                   # keys hashed by the router (it checks or shifts them)
    cdef int64_t room
    cdef int kind
    cdef int64_t limit
    cdef Py_ssize_t n
    cdef uint64_t last_m
    cdef int64_t last_cap               # one ratio for all: the capacity for last_m
    cdef object wtype                   # the router type whose _weights slot is at woff
    cdef Py_ssize_t woff                # (-1: not a slot of it; read with getattr)

    def __cinit__(self, _Router core, object state, loads, int64_t held, bint py_hash,
                  caps=None, ratios=None):
        cdef Py_ssize_t n = len(core.nodes), i, k
        self.core = core
        self.state = state
        self.n = n
        a = np.array(loads, dtype=np.int64).reshape(-1)
        if a.shape[0] != n:
            raise ValueError("loads and nodes differ in length")
        if n == 0:
            a = np.zeros(1, dtype=np.int64)
        self.loads = a
        cdef int64_t[::1] lv = a
        self.ld = &lv[0]
        self.held = held
        self.py_hash = py_hash
        self.index = {name: i for i, name in enumerate(core.nodes)}
        self.kind = _walk_kind(core)
        self.limit = _walk_limit(core, self.kind, n)
        self._seen_a = np.empty(max(n, 1), dtype=np.int32)
        self._row_a = np.empty(max(n, 1), dtype=np.int32)
        cdef int32_t[::1] sv = self._seen_a
        cdef int32_t[::1] rv = self._row_a
        self.seen = &sv[0]
        self.row = &rv[0]
        cdef int64_t[::1] cv
        cdef uint64_t[::1] nv, dv
        self.caps.cap = NULL
        self.caps.num = NULL
        self.caps.den = NULL
        self.caps.m = 0
        self.last_m = 0
        self.last_cap = 0
        self.wtype = None
        self.woff = -1
        if caps is not None:
            c = np.array(caps, dtype=np.int64).reshape(-1)
            k = c.shape[0]
            if k != 1 and k != n:
                raise ValueError("caps: one for all or one per node")
            self._caps = c
            cv = c
            self.caps.cap = &cv[0]
            self.caps.step = 1 if k == n and n != 1 else 0
            self.fixed = True
            self.room = 0
            for i in range(n):
                if _cap(&self.caps, i) > self.ld[i]:
                    self.room += _cap(&self.caps, i) - self.ld[i]
        else:
            k = len(ratios)
            if k != 1 and k != n:
                raise ValueError("ratios: one for all or one per node")
            self.caps.step = 1 if k == n and n != 1 else 0
            self.fixed = False
            if all(0 <= p < _U64_LIMIT and 0 < q < _U64_LIMIT for p, q in ratios):
                self._num = np.array([p for p, _ in ratios], dtype=np.uint64)
                self._den = np.array([q for _, q in ratios], dtype=np.uint64)
                nv = self._num
                dv = self._den
                self.caps.num = &nv[0]
                self.caps.den = &dv[0]
            else:
                self.py_caps = True
                self._pynum = [int(p) for p, _ in ratios]
                self._pyden = [int(q) for _, q in ratios]
                self._pycap = np.zeros(max(n, 1), dtype=np.int64)
                self.caps.step = 1

    cdef int _set_caps(self, uint64_t m) except -1:
        """Point caps at the capacities for m keys."""
        cdef int64_t[::1] pv
        cdef Py_ssize_t i
        if self.fixed:
            return 0
        if self.py_caps:
            pv = self._pycap
            for i in range(self.n):
                j = i if len(self._pynum) > 1 else 0
                pv[i] = min(-(-(m * self._pynum[j]) // self._pyden[j]), 0x7FFFFFFFFFFFFFFF)
            self.caps.cap = &pv[0]
            return 0
        self.caps.m = m
        if self.caps.step == 0:  # one for all: computed once per m
            if m != self.last_m:
                self.last_cap = ch_ceil_ratio(m, self.caps.num[0], self.caps.den[0])
                self.last_m = m
            self.caps.cap = &self.last_cap
        return 0

    cdef object take(self, object router, object key, int32_t spread):
        """Place one key (counted) and return its node's name; None if this snapshot is no
        longer the router's (nothing done), False if every node is at its fixed capacity."""
        # the snapshot from its C slot (BoundedLoad takes only routers of this library); None,
        # deferred adds waiting, is another snapshot too
        if (<_RouterBase?>router)._snap is not self.core or not self.same_state(router):
            return None
        self.core.check()
        if self.fixed and self.room <= 0:
            return False
        cdef uint64_t h = router.hash(key) if self.py_hash else self.core.hasher.hash_one(key)
        cdef Py_ssize_t n = self.n
        if spread > n:
            spread = <int32_t>n
        if spread < 1:
            raise ValueError("spread must be >= 1")
        self._set_caps(<uint64_t>self.held + 1)
        cdef int32_t best = -1
        if spread == 1 and self.kind == WALK_RING and type(self.core) is _Ring:
            # the walk's first step (a plain ring's walk is its positions from the key's), and
            # the commonest outcome, that its node has room, without the walk's calls
            best = (<_Ring>self.core).own[(<_Ring>self.core).find(h)]
            if self.ld[best] < _cap(&self.caps, best):
                self.ld[best] += 1
            else:
                best = -1
        if best < 0:
            _bounded_walk(self.core, self.kind, &h, 1, spread, self.limit, n, self.ld,
                          &self.caps, self.seen, self.row, &best)  # counts it in ld
        self.held += 1
        if self.fixed:
            self.room -= 1
        return self.core.nodes[best]

    cdef inline bint same_state(self, object router) except -1:
        """Whether the router's _weights is still the state the capacities were computed
        from: getattr(router, "_weights", None) is state, read from the router's slot when
        _weights is one (a getattr cost a third of an acquire + release pair)."""
        cdef PyObject *w
        if type(router) is self.wtype and self.woff > 0:
            w = ch_slot_peek(<PyObject *>router, self.woff)
            if w != NULL:
                return w == <PyObject *>self.state
        elif type(router) is not self.wtype:
            self.find_slot(router)
        return getattr(router, "_weights", None) is self.state

    cdef int find_slot(self, object router) except -1:
        """Where type(router) keeps _weights: the first class of its MRO that defines the name
        decides attribute lookup; if that is a slot's member descriptor, its offset."""
        cls = type(router)
        self.wtype = cls
        self.woff = -1
        for c in cls.__mro__:
            d = c.__dict__.get("_weights", _MISSING)
            if d is not _MISSING:
                self.woff = ch_slot_offset(<PyObject *>d)
                break
        return 0

    cdef int give(self, object node) except -1:
        """Give back one unit of load of the named node: 1, or 0 if it is not one of this
        snapshot's nodes (nothing done).  KeyError if it holds no load."""
        i_obj = self.index.get(node)
        if i_obj is None:
            return 0
        cdef Py_ssize_t i = i_obj
        if self.ld[i] <= 0:
            raise KeyError(node)
        self.ld[i] -= 1
        self.held -= 1
        if self.fixed and self.ld[i] < _cap(&self.caps, i):
            self.room += 1
        return 1

    def acquire(self, router, key, int32_t spread):
        """Place one key: its node's name, None if the router has another snapshot now, False
        if every node is at its fixed capacity (nothing done then)."""
        return self.take(router, key, spread)

    def release(self, node):
        """Give back one unit of the named node: True, or False if it is not one of this
        snapshot's nodes.  KeyError if it holds no load."""
        return self.give(node) == 1

    def items(self):
        """{name: load} of the nodes holding load."""
        return {name: int(self.ld[i]) for i, name in enumerate(self.core.nodes)
                if self.ld[i] > 0}


cdef class _CLock:
    """A non-reentrant lock used as a context manager (what threading.Lock is), which
    _BoundedBase also takes from C without a Python call.

    A counting lock ("benaphore"): count is the holder plus the threads waiting, changed by
    one add each way (atomic in a free-threaded build; with a GIL, every take and give runs
    holding it), so an uncontended take and give never enter the kernel (a
    PyThread lock takes a semaphore and, on CPython 3.11, reads the clock for a deadline on
    every acquire: most of an acquire + release pair's time).  A thread that finds it held
    waits on sem, a PyThread lock kept taken while nobody waits (with the GIL released); the
    give that sees waiters hands the lock to one of them by releasing sem.  At most one such
    hand-off is pending at a time: until its waiter runs, nobody else holds the lock to give
    it."""
    cdef PyThread_type_lock sem
    cdef long count

    def __cinit__(self):
        self.sem = PyThread_allocate_lock()
        if self.sem == NULL:
            raise MemoryError()
        PyThread_acquire_lock(self.sem, WAIT_LOCK)  # taken: the first waiter blocks on it
        self.count = 0

    def __dealloc__(self):
        if self.sem != NULL:
            PyThread_free_lock(self.sem)

    cdef inline int take(self) except -1:
        if ch_fetch_add(&self.count, 1) != 0:
            with nogil:
                PyThread_acquire_lock(self.sem, WAIT_LOCK)
        return 0

    cdef inline void give(self) noexcept:
        if ch_fetch_add(&self.count, -1) != 1:
            PyThread_release_lock(self.sem)

    def __enter__(self):
        self.take()
        return self

    def __exit__(self, *exc):
        self.give()
        return False


@cython.binding(False)  # plain method descriptors, as _RouterBase's
cdef class _BoundedBase:
    """The live-load calls of BoundedLoad (consistent_hash/algorithms/bounded.py), one C call
    each under the assigner's lock.  Anything but the plain case (a new router snapshot, every
    node full, an unusual spread or node argument) goes to the subclass's _acquire_slow /
    _release_slow, which take the same lock."""
    cdef public object _router
    cdef public _LiveLoad _live
    cdef readonly _CLock _lock

    def __cinit__(self, *args, **kwargs):
        self._lock = _CLock()

    def acquire(self, key, *, spread=1):
        """Place one key given the load held now, count it, and return its node.

        The capacity is computed for the held load plus this key, so the node returned is
        below it.  Raises CapacityError when a fixed ``capacity`` is reached everywhere.
        """
        cdef long long sp = 0
        # an exact int read from its header (ch_small_int), compared in C
        if (type(spread) is not int or not ch_small_int(<PyObject *>spread, &sp)
                or not 0 < sp <= (1 << 30) or self._live is None):
            return self._acquire_slow(key, spread)
        cdef _CLock lock = self._lock
        lock.take()
        try:
            node = self._live.take(self._router, key, <int32_t>sp)
        finally:
            lock.give()
        if node is None or node is False:
            return self._acquire_slow(key, spread)
        return node

    def release(self, node):
        """Give back one unit of load held by ``node``.

        Raises KeyError if the node holds no load.
        """
        if type(node) is not str or self._live is None:
            self._release_slow(node)
            return
        cdef _CLock lock = self._lock
        cdef int done
        lock.take()
        try:
            done = self._live.give(node)
        finally:
            lock.give()
        if not done:
            self._release_slow(node)
