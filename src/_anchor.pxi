# AnchorHash (Mendelson et al. 2021), bit-identical to cpp-anchorhash's AnchorHashQre;
# kernels in ch_anchor.h (CRC-32C from ch_family.h).
#
# a buckets in the anchor, N working; A[b] the working count a removed bucket's removal left
# (0 while working), K[b] whom it handed its keys; W, L the working list and positions; the
# stack R of removed buckets (a - 1 .. w at the start, top last).  A key (k1, k2) starts at
# crc(k1, k2) % a and, while on a removed bucket, redraws crc(k1 - bs, k2 + bs) % A[b] and
# follows K where the draw was removed earlier.  The state is a function of (a, R): add()
# undoes the last remove() exactly.
#
# _AnchorState is AnchorBuckets' mutable state (the reference's ComputeBucket, UpdateRemoval,
# UpdateNewBucket); the facade validates every call and holds a lock.  _Anchor is the
# AnchorHash router's immutable snapshot: A and K copied, key (h, 0), slot_node[b] the index
# in nodes of working bucket b's name.

cdef class _AnchorState:
    """The anchor of a buckets, n working, r removed (R[0 .. r), top last)."""
    cdef readonly uint32_t a
    cdef readonly uint32_t n
    cdef readonly uint32_t r
    cdef readonly object A_array
    cdef readonly object K_array
    cdef object _W, _L, _R
    cdef uint32_t *A
    cdef uint32_t *K
    cdef uint32_t *W
    cdef uint32_t *L
    cdef uint32_t *R

    def __cinit__(self, uint32_t a, uint32_t w):
        if a < 1 or w > a:
            raise ValueError("need 1 <= capacity and 0 <= working <= capacity")
        self.A_array = np.empty(a, dtype=np.uint32)
        self.K_array = np.empty(a, dtype=np.uint32)
        self._W = np.empty(a, dtype=np.uint32)
        self._L = np.empty(a, dtype=np.uint32)
        self._R = np.empty(a, dtype=np.uint32)
        self.bind()
        self.a = a
        ch_anchor_init(self.A, self.K, self.W, self.L, self.R, a, w, &self.r, &self.n)

    cdef void bind(self):
        cdef uint32_t[::1] v
        v = self.A_array
        self.A = &v[0]
        v = self.K_array
        self.K = &v[0]
        v = self._W
        self.W = &v[0]
        v = self._L
        self.L = &v[0]
        v = self._R
        self.R = &v[0]

    def copy(self):
        cdef _AnchorState c = _AnchorState.__new__(_AnchorState, self.a, 0)
        c.A_array, c.K_array = self.A_array.copy(), self.K_array.copy()
        c._W, c._L, c._R = self._W.copy(), self._L.copy(), self._R.copy()
        c.bind()
        c.n, c.r = self.n, self.r
        return c

    def is_working(self, int64_t b):
        """b is a working bucket (with none working, the last removed one has A = 0 too)."""
        return 0 <= b < self.a and self.n > 0 and self.A[b] == 0

    def remove(self, uint32_t b):
        """UpdateRemoval(b) for a working b (the caller checks)."""
        ch_anchor_remove(self.A, self.K, self.W, self.L, self.R, b, &self.r, &self.n)

    def remove_many(self, const uint32_t[::1] bs):
        """remove(b) for each b in order (each working when its turn comes: the caller checks)."""
        cdef Py_ssize_t j
        for j in range(bs.shape[0]):
            ch_anchor_remove(self.A, self.K, self.W, self.L, self.R, bs[j], &self.r, &self.n)

    def add(self):
        """UpdateNewBucket(): the last removed bucket back (the caller checks one is)."""
        return ch_anchor_add(self.A, self.K, self.W, self.L, self.R, &self.r, &self.n)

    def removed(self):
        """The stack of removed buckets, bottom first."""
        return [self.R[j] for j in range(self.r)]

    def bucket1(self, uint64_t key1, uint64_t key2):
        """ComputeBucket(key1, key2); at least one bucket working (the caller checks)."""
        return ch_anchor_bucket(self.A, self.K, self.a, key1, key2)

    def batch(self, const uint64_t[::1] key1, key2, int32_t[::1] out):
        """out[i] = ComputeBucket(key1[i], key2[i]) (key2 None: 0)."""
        cdef Py_ssize_t m = key1.shape[0]
        cdef const uint64_t[::1] k2v
        cdef const uint64_t *k2p = NULL
        if key2 is not None:
            k2v = key2
            if k2v.shape[0] != m:
                raise ValueError("key1 and key2 differ in length")
            if m:
                k2p = &k2v[0]
        if out.shape[0] != m:
            raise ValueError("out differs in length from the keys")
        if m:
            with nogil:
                ch_anchor_batch(self.A, self.K, self.a, &key1[0], k2p, <size_t>m, NULL,
                                &out[0])

    def nbytes(self):
        """Bytes of the mutable state: A, K, W, L and R, a uint32 each per bucket."""
        return 20 * self.a


cdef class _Anchor(_Router):
    """The AnchorHash snapshot: the lookup arrays A and K of an _AnchorState, key (h, 0)."""
    cdef readonly object A_array
    cdef readonly object K_array
    cdef readonly object slot_node
    cdef const uint32_t *A
    cdef const uint32_t *K
    cdef const int32_t *sn
    cdef uint32_t a

    def __cinit__(self, tuple nodes, _Hasher hasher, _AnchorState st, slot_node):
        self.init_router(nodes, _raw_int_hasher(hasher), "AnchorHash")
        sn = np.ascontiguousarray(slot_node, dtype=np.int32)
        if sn.shape[0] != st.a or len(nodes) != st.n:
            raise ValueError("inconsistent AnchorHash state")
        A, K = st.A_array.copy(), st.K_array.copy()
        for x in (A, K, sn):
            x.flags.writeable = False
        self.A_array, self.K_array, self.slot_node, self.a = A, K, sn, st.a
        cdef const uint32_t[::1] av = A
        cdef const uint32_t[::1] kv = K
        cdef const int32_t[::1] sv = sn
        self.A, self.K, self.sn = &av[0], &kv[0], &sv[0]

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_anchor_batch(self.A, self.K, self.a, h, NULL, <size_t>m, self.sn, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return self.sn[ch_anchor_bucket(self.A, self.K, self.a, h, 0)]
