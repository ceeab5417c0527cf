# nginx's upstream `hash` balancer (kernels: ch_hash_nginx.h), for consistent_hash.compat.nginx.
#
# nginx_points: the consistent ring's points of each server, in the order nginx generates them
#   (server by server, each server's chain in order), as positions value << 32; the router
#   sorts them stably and keeps the first of equal points, as nginx's sort and de-duplication
#   do.  The ring itself is a plain _Ring (a _HealthRing with servers down).
# _NginxHash: plain `hash` (no `consistent`): weighted modulo with nginx's rehash loop, over
#   key hashes CRC-32(key) << 32 | length (hash id CH_NGINX_CRC32_LEN).

def nginx_crc32(const uint8_t[::1] data):
    """nginx_crc32(data) -> int: CRC-32 (zlib's) of a bytes-like object, as nginx computes it."""
    cdef const uint8_t *p = &data[0] if data.shape[0] else <const uint8_t *>b""
    return ch_ngx_crc32(p, <size_t>data.shape[0])


def nginx_points(list bases, const uint32_t[::1] counts):
    """Points of servers whose hashed text (host, NUL, port) is bases[i], counts[i] each.

    Returns (positions uint64, owners int32), unsorted, in generation order."""
    cdef Py_ssize_t ns = len(bases), i
    cdef uint64_t total = 0
    if counts.shape[0] != ns:
        raise ValueError("bases and counts differ in length")
    for i in range(ns):
        total += counts[i]
    if total >= (1 << 31) - CH_PAD:
        raise ValueError(f"the ring would have {total} points; at most 2**31 - 9 are supported")
    pos = np.empty(total, dtype=np.uint64)
    own = np.empty(total, dtype=np.int32)
    if total == 0:
        return pos, own
    cdef uint64_t[::1] pv = pos
    cdef int32_t[::1] ov = own
    cdef size_t off = 0
    cdef uint32_t base, j
    cdef const uint8_t[::1] b
    for i in range(ns):
        b = bases[i]
        base = ch_ngx_crc_run(0xFFFFFFFF, &b[0] if b.shape[0] else <const uint8_t *>b"",
                              <size_t>b.shape[0])
        with nogil:
            ch_ngx_points(base, counts[i], &pv[off])
            for j in range(counts[i]):
                ov[off + j] = <int32_t>i
        off += counts[i]
    return pos, own


cdef class _NginxHash(_Router):
    """Plain nginx `hash`: servers in order with their weights; some may be down."""
    cdef object _ends_arr
    cdef object _down_arr
    cdef object _table_arr
    cdef const int32_t *table           # server of every w < total weight (small totals)
    cdef const uint32_t *ends
    cdef const uint8_t *down
    cdef uint32_t ns
    cdef uint32_t nlive

    def __cinit__(self, tuple nodes, _Hasher hasher, ends, down):
        ends = np.ascontiguousarray(ends, dtype=np.uint32).copy()
        down = np.ascontiguousarray(down, dtype=np.uint8).copy()
        if ends.shape[0] != len(nodes) or down.shape[0] != len(nodes):
            raise ValueError("ends and down must have one entry per node")
        if len(nodes) and (np.any(np.diff(ends.astype(np.int64)) <= 0) or ends[0] == 0):
            raise ValueError("ends must be strictly increasing cumulative weights")
        self.init_router(nodes, hasher, "upstream")
        ends.flags.writeable = False
        down.flags.writeable = False
        self._ends_arr = ends
        self._down_arr = down
        cdef const uint32_t[::1] ev
        cdef const uint8_t[::1] dv
        cdef const int32_t[::1] tv
        self.table = NULL
        if len(nodes) and ends[len(nodes) - 1] <= (1 << 16):
            table = np.repeat(np.arange(len(nodes), dtype=np.int32),
                              np.diff(ends.astype(np.int64), prepend=0))
            table.flags.writeable = False
            self._table_arr = table
            tv = table
            self.table = &tv[0]
        self.ns = <uint32_t>len(nodes)
        if self.ns:
            ev = ends
            dv = down
            self.ends = &ev[0]
            self.down = &dv[0]
        self.nlive = <uint32_t>(self.ns - int(down.sum()))
        self.live = self.nlive
        if self.ns and not self.nlive:
            self.empty_message = "every server of the upstream is down"

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_ngx_hash_route(h, <size_t>m, self.ends, self.ns, self.down, self.nlive, self.table,
                          out, NULL)

    def tries(self, const uint64_t[::1] hashes):
        """For core hashes: (server index, tries nginx makes) per hash; more than 21 tries
        means nginx itself would give up and round-robin that key."""
        cdef Py_ssize_t m = hashes.shape[0]
        out = np.empty(m, dtype=np.int32)
        tr = np.empty(m, dtype=np.uint32)
        cdef int32_t[::1] ov = out
        cdef uint32_t[::1] tv = tr
        if m:
            with nogil:
                ch_ngx_hash_route(&hashes[0], <size_t>m, self.ends, self.ns, self.down,
                                  self.nlive, NULL, &ov[0], &tv[0])
        return out, tr
