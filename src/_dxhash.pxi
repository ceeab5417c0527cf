# DxHash (Dong et al. 2023), bit-identical to ChaosD/DxHash's DxHash(n_total, n_working)
# wherever it answers; kernels in ch_dxhash.h (CRC-32C from ch_family.h).
#
# One bit per slot (1: working).  A uint32 key probes crc(key, key2), crc(bs, key2), ... mod
# size until a working slot (key2 = key * 421757 + 1); past the reference's 4 * size probes,
# where it answers "no node", the first working slot from the last probe on, circularly.
# add() is the reference's updateAddition: when full, the slots grow to the least power of two
# above the working count; the slot comes from probing key 1228 for a free one.
#
# _DxState is DxBuckets' mutable state, a _Router over the bare slot numbers so its batch
# lookups go through the chunk driver (the facade holds a lock against mutation during them).
# _Dx is the DxHash router's immutable snapshot: the bits, key h mod 2**32, slot_node[b] the
# index in nodes of working slot b's name.

cdef object _dx_words(uint32_t size):
    return np.zeros(max(<uint64_t>1, (<uint64_t>size + 63) // 64), dtype=np.uint64)


cdef class _DxState(_Router):
    """size slots, working of them set in bits."""
    cdef readonly uint32_t size
    cdef readonly uint32_t working
    cdef readonly object bits
    cdef uint64_t *bp

    def __cinit__(self, _Hasher hasher, uint32_t size, uint32_t working):
        self.init_router((), _raw_int_hasher(hasher), "DxBuckets")
        if size < 1 or working > size:
            raise ValueError("need 1 <= capacity and 0 <= working <= capacity")
        self.bind(_dx_words(size))
        self.size = size
        cdef uint32_t i
        for i in range(working):
            self.bp[i >> 6] |= (<uint64_t>1) << (i & 63)
        self.working = working
        self.live = working

    cdef void bind(self, words):
        cdef uint64_t[::1] v = words
        self.bits = words
        self.bp = &v[0]

    def copy(self):
        cdef _DxState c = _DxState.__new__(_DxState, self.hasher, self.size, 0)
        c.bind(self.bits.copy())
        c.working = c.live = self.working
        return c

    def is_working(self, int64_t b):
        return 0 <= b < self.size and ch_dx_bit(self.bp, <uint32_t>b) == 1

    def remove(self, uint32_t b):
        """updateRemoval(b) for a working b (the caller checks)."""
        self.bp[b >> 6] &= ~((<uint64_t>1) << (b & 63))
        self.working -= 1
        self.live = self.working

    def grows(self):
        """The size add() would grow to (the current size when a slot is free)."""
        cdef uint64_t s = 1
        if self.working < self.size:
            return self.size
        while s <= self.working:
            s <<= 1
        return s

    def add(self):
        """updateAddition(); the caller checked grows() fits."""
        cdef uint64_t s = self.grows()
        if s != self.size:
            words = _dx_words(<uint32_t>s)
            words[:self.bits.shape[0]] = self.bits
            self.bind(words)
            self.size = <uint32_t>s
        cdef uint32_t b = ch_dx_probe(self.bp, self.size, CH_DX_ADD_KEY, 0, NULL)
        self.bp[b >> 6] |= (<uint64_t>1) << (b & 63)
        self.working += 1
        self.live = self.working
        return b

    def probe1(self, uint32_t key, uint32_t want=1):
        """(slot, probes): getNodeID's answer and numHash (want=0: a free slot, as
        updateAddition looks for one); a slot of the wanted kind exists."""
        cdef uint32_t probes = 0
        cdef uint32_t b = ch_dx_probe(self.bp, self.size, key, want, &probes)
        return b, probes

    def reference_finds(self, uint32_t key, uint32_t want=1):
        """Whether the reference's probe finds a slot within its limit (else it answers "no
        node", or writes slot 0xFFFFFFFF when adding)."""
        cdef uint32_t b = 0
        return bool(ch_dx_reference_finds(self.bp, self.size, key, want, &b))

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_dx_batch(self.bp, self.size, h, <size_t>m, NULL, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return <int32_t>ch_dx_probe(self.bp, self.size, <uint32_t>h, 1, NULL)

    def nbytes(self):
        """Bytes of the state: one bit per slot."""
        return (<uint64_t>self.size + 7) // 8


cdef class _Dx(_Router):
    """The DxHash snapshot: size slots, their bits, key h mod 2**32, slot_node[b]."""
    cdef readonly object bits
    cdef readonly object slot_node
    cdef const uint64_t *bp
    cdef const int32_t *sn
    cdef uint32_t size

    def __cinit__(self, tuple nodes, _Hasher hasher, uint32_t size, bits, slot_node):
        self.init_router(nodes, _raw_int_hasher(hasher), "DxHash")
        words = np.array(bits, dtype=np.uint64)
        sn = np.ascontiguousarray(slot_node, dtype=np.int32)
        if size < 1 or <uint64_t>words.shape[0] != max(<uint64_t>1, (<uint64_t>size + 63) // 64) \
                or sn.shape[0] != size:
            raise ValueError("inconsistent DxHash state")
        words.flags.writeable = False
        sn.flags.writeable = False
        self.bits, self.slot_node, self.size = words, sn, size
        cdef const uint64_t[::1] wv = words
        cdef const int32_t[::1] sv = sn
        self.bp, self.sn = &wv[0], &sv[0]

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_dx_batch(self.bp, self.size, h, <size_t>m, self.sn, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        return self.sn[ch_dx_probe(self.bp, self.size, <uint32_t>h, 1, NULL)]
