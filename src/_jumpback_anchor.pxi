# JumpBackAnchor (hash4j's jumpBackAnchorHash(splitMix64_V1()), bit-identical); kernels in
# ch_jumpback_anchor.h over ch_jumpback.h.
#
# State: a (the buckets ever used, hash4j's historicMaxNumBuckets) and the stack of removed
# buckets; ka[2 b], ka[2 b + 1] the (n, d) pair of the memory-optimized AnchorHash for a removed
# bucket b (0, 0 otherwise).  A hash h starts at JumpBackHash over a buckets and, while its
# bucket is removed, redraws among the n buckets its removal left, walking the d links.
#
# _JBAState is JumpBackAnchorBuckets' mutable state (hash4j's own operations: addBucket,
# removeBucket, getBucket, getState / setState), a _Router over the bare bucket numbers so its
# batch lookups go through the chunk driver (the facade holds a lock against mutation during
# them).  _JumpBackAnchor is the immutable snapshot of the JumpBackAnchorHash router: built
# from (a, removal stack), slot_node[b] the index in nodes of working bucket b's name.

cdef class _JBAState(_Router):
    """a buckets ever used, k of them removed (r[0 .. k), top last), ka the removal records."""
    cdef readonly uint32_t a
    cdef readonly uint32_t k
    cdef object _ka
    cdef object _r
    cdef int32_t *ka
    cdef int32_t *r
    cdef uint32_t cap

    def __cinit__(self, _Hasher hasher):
        self.init_router((), _raw_int_hasher(hasher), "JumpBackAnchorBuckets")
        self.a = self.k = 0
        self.cap = 0
        self.live = 0
        self.grow(8)

    cdef int grow(self, uint64_t need) except -1:
        """Room for at least need buckets (doubling), entries past a zero."""
        if need <= self.cap:
            return 0
        cdef uint64_t cap = max(<uint64_t>8, <uint64_t>self.cap * 2, need)
        cap = min(cap, <uint64_t>0x7FFFFFFF)
        ka = np.zeros(2 * cap, dtype=np.int32)
        r = np.zeros(cap, dtype=np.int32)
        if self.cap:
            ka[:2 * self.cap] = self._ka
            r[:self.cap] = self._r
        cdef int32_t[::1] kv = ka
        cdef int32_t[::1] rv = r
        self._ka, self._r, self.cap = ka, r, <uint32_t>cap
        self.ka = &kv[0]
        self.r = &rv[0]
        return 0

    def add(self):
        """hash4j's addBucket(): the last removed bucket back, or a new bucket a."""
        cdef int32_t b
        if self.k == 0:
            if self.a >= 0x7FFFFFFF:
                raise ValueError("JumpBackAnchorBuckets holds at most 2**31 - 1 buckets")
            self.grow(<uint64_t>self.a + 1)
            b = <int32_t>self.a
            self.a += 1
        else:
            self.k -= 1
            b = self.r[self.k]
            self.ka[2 * b] = 0
            self.ka[2 * b + 1] = 0
        self.live = self.a - self.k
        return b

    def remove(self, int64_t b):
        """hash4j's removeBucket(b): False (nothing changes) unless b is a working bucket."""
        if b < 0 or b >= self.a or self.ka[2 * b] != 0:
            return False
        cdef uint32_t j
        if self.a - 1 == self.k:  # the last working bucket: back to the empty state
            for j in range(2 * self.a):
                self.ka[j] = 0
            self.a = self.k = 0
        elif b == self.a - 1 and self.k == 0:
            self.a -= 1
        else:
            self.r[self.k] = <int32_t>b
            ch_jba_push(self.ka, self.a, self.k, <int32_t>b)
            self.k += 1
        self.live = self.a - self.k
        return True

    def is_working(self, int64_t b):
        return 0 <= b < self.a and self.ka[2 * b] == 0

    def copy(self):
        cdef _JBAState c = _JBAState(self.hasher)
        c.set(self.a, self.removed())
        return c

    def removed(self):
        """The removal stack, bottom first."""
        return [self.r[j] for j in range(self.k)]

    def set(self, uint32_t a, removed):
        """hash4j's setState from (a, removal stack); the caller validated them."""
        cdef uint32_t j, k = len(removed)
        self.grow(a)
        for j in range(2 * self.cap):
            self.ka[j] = 0
        for j in range(k):
            self.r[j] = removed[j]
        self.a, self.k = a, k
        ch_jba_build(self.ka, a, self.r, k)
        self.live = a - k

    def bucket1(self, uint64_t h):
        self.check()
        return ch_jba_bucket(h, self.a, self.ka)

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        if self.k == 0:
            ch_jumpback_batch(h, <size_t>m, self.a, out)
        else:
            ch_jba_batch(h, <size_t>m, self.a, self.ka, NULL, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return ch_jba_bucket(h, self.a, self.ka)

    def nbytes(self):
        """Bytes of the lookup state (ka over the a buckets ever used)."""
        return 8 * self.a


cdef class _JumpBackAnchor(_Router):
    """The JumpBackAnchorHash snapshot: a buckets, the removal stack, slot_node[b]."""
    cdef readonly object ka_array
    cdef readonly object slot_node
    cdef const int32_t *ka
    cdef const int32_t *sn
    cdef uint32_t a, k

    def __cinit__(self, tuple nodes, _Hasher hasher, uint32_t a, removed, slot_node):
        self.init_router(nodes, _raw_int_hasher(hasher), "JumpBackAnchorHash")
        r = np.ascontiguousarray(removed, dtype=np.int32)
        sn = np.ascontiguousarray(slot_node, dtype=np.int32)
        if sn.shape[0] != a or r.shape[0] > a or len(nodes) != a - r.shape[0]:
            raise ValueError("inconsistent JumpBackAnchorHash state")
        ka = np.zeros(2 * a + 2, dtype=np.int32)
        cdef int32_t[::1] kv = ka
        cdef const int32_t[::1] rv = r
        self.a, self.k = a, <uint32_t>r.shape[0]
        if self.k:
            ch_jba_build(&kv[0], a, &rv[0], self.k)
        ka.flags.writeable = False
        sn.flags.writeable = False
        self.ka_array, self.slot_node = ka, sn
        self.ka = &kv[0]
        cdef const int32_t[::1] sv = sn
        self.sn = &sv[0] if a else NULL

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        if self.k == 0:  # every bucket works and slot_node is the identity
            ch_jumpback_batch(h, <size_t>m, self.a, out)
        else:
            ch_jba_batch(h, <size_t>m, self.a, self.ka, self.sn, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return self.sn[ch_jba_bucket(h, self.a, self.ka)]
