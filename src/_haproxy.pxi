# HAProxy hash-type consistent: the server points (ch_hash_haproxy.h).  The lookup itself is
# the shared ring (_Ring of _hashring.pxi): consistent_hash/compat/haproxy.py turns HAProxy's
# nearest-point rule into "first position >= hash" positions.


def haproxy_points(const int64_t[::1] puids, const uint32_t[::1] counts):
    """HAProxy's tree keys of servers puids[i] with counts[i] points each, server by server,
    point by point: avalanche(puid * 4096 + j) mod 2**32.  Returns (keys uint32, owner int32
    = i)."""
    cdef Py_ssize_t n = puids.shape[0], i
    cdef uint64_t total = 0
    if counts.shape[0] != n:
        raise ValueError("puids and counts differ in length")
    for i in range(n):
        total += counts[i]
    keys = np.empty(total, dtype=np.uint32)
    own = np.empty(total, dtype=np.int32)
    if total == 0:
        return keys, own
    cdef uint32_t[::1] kv = keys
    cdef int32_t[::1] ov = own
    cdef size_t off = 0
    cdef uint32_t j
    with nogil:
        for i in range(n):
            ch_ha_points(<uint32_t>(<uint64_t>puids[i] & 0xFFFFFFFFu), counts[i], &kv[off])
            for j in range(counts[i]):
                ov[off + j] = <int32_t>i
            off += counts[i]
    return keys, own


def haproxy_avalanche(uint32_t x):
    """HAProxy's full_hash (the avalanche modifier) of one 32-bit integer."""
    return ch_ha_avalanche(x)
