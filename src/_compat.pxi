# Compatibility rings: the point builders and tables that reproduce other libraries exactly,
# for consistent_hash.ketama, .compat, .redis and .cassandra; the key hashes themselves are
# rows of the one hash table (src/ch_hashes.h), dispatched by id like the built-in ones.
#
# ring_points: the ring builder every ring goes through (sort by (position, generation), then
#   the tie rule on equal positions).
# compat_points: the points of labels prefix_i + ascii(decimal j), j < labels_i, in the order
#   the original libraries generate them: one MD5 big-endian 64-bit point per label
#   (uhashring), per_digest little-endian 32-bit words of the label's MD5 as positions
#   value << 32 (libketama, libmemcached, twemproxy), or one hash of the label (hid).
# last_writer: a run of equal positions takes its last writer's owner (a Python dict built
#   point by point).
# walk_distinct: the distinct owners met clockwise from a position (uhashring's range walk).
# _SlotTable: the Redis Cluster slot map, hash = CRC16 slot in [0, 16384), table[slot] = node
#   index (-1 unassigned).  first_foreign: which keys need str() the way uhashring hashes.
# Built on the shared pieces only (ring_points calls sort_pairs of _hashring.pxi at run time).

cdef enum:
    P_MD5_BE64 = 0      # one point per label: MD5 bytes 0..7 big-endian (uhashring default)
    P_DIGEST = 1        # per_digest points per label: MD5 bytes 4x..4x+3 little-endian (ketama),
                    # as positions value << 32
    P_HASH = 2          # one point per label: the hash with id hid (e.g. one-at-a-time)

POINTS_MD5_BE64 = P_MD5_BE64
POINTS_DIGEST = P_DIGEST
POINTS_HASH = P_HASH


def compat_points(list prefixes, const uint32_t[::1] labels, int mode, int per_digest=4,
                  int hid=0):
    """Points of labels prefixes[i] + ascii(decimal j), j < labels[i], in generation order.

    32-bit points (ketama words, one-at-a-time) come as ring positions, value << 32.

    Returns (positions uint64, owners int32) with owner i for node i, unsorted: node by node,
    label by label, digest word by digest word, which is the order the original libraries
    insert them (so a stable sort by position keeps their tie order)."""
    cdef Py_ssize_t nn = len(prefixes), i
    cdef uint64_t total = 0
    cdef int per = per_digest if mode == P_DIGEST else 1
    if labels.shape[0] != nn:
        raise ValueError("prefixes and labels differ in length")
    if mode == P_DIGEST and not 1 <= per_digest <= 4:
        raise ValueError(f"points per MD5 digest must be between 1 and 4, got {per_digest}")
    for i in range(nn):
        total += <uint64_t>labels[i] * <uint64_t>per
    if total >= (1 << 31) - CH_PAD:
        raise ValueError(f"the ring would have {total} points; at most 2**31 - 9 are supported")
    pos = np.empty(total, dtype=np.uint64)
    own = np.empty(total, dtype=np.int32)
    if total == 0:
        return pos, own
    cdef uint64_t[::1] pv = pos
    cdef int32_t[::1] ov = own
    cdef size_t off = 0, maxlen = 0, plen, m
    cdef bytes prefix
    cdef uint8_t *label
    cdef uint8_t digest[16]
    cdef uint32_t j
    cdef int x
    for prefix in prefixes:
        maxlen = max(maxlen, <size_t>len(prefix))
    label = <uint8_t *>malloc(maxlen + 24)
    if label == NULL:
        raise MemoryError()
    try:
        for i in range(nn):
            prefix = prefixes[i]
            plen = len(prefix)
            memcpy(label, <char *>prefix, plen)
            with nogil:
                for j in range(labels[i]):
                    m = plen + ch_u64_dec(j, label + plen)
                    if mode == P_DIGEST:
                        ch_md5(label, m, digest)
                        for x in range(per):
                            pv[off] = (<uint64_t>ch_ketama_point(digest, <unsigned>x)) << 32
                            ov[off] = <int32_t>i
                            off += 1
                    else:
                        if mode == P_MD5_BE64:
                            pv[off] = ch_md5_64(label, m)
                        else:
                            pv[off] = ch_hash(hid, label, m, 0)
                        ov[off] = <int32_t>i
                        off += 1
    finally:
        free(label)
    return pos, own


TIES_KEEP = 0    # every point kept; equal points in the order they were generated
TIES_FIRST = 1   # of equal points only the first generated one is kept (nginx)
TIES_LAST = 2    # a run of equal points takes its last writer's owner (a dict {point: node})


def ring_points(positions, owners, int ties=TIES_KEEP):
    """The ring builder every ring goes through: points given in the order their recipe
    generates them (positions uint64, owners int32, one each), sorted by (position,
    generation), then the tie rule applied to runs of equal positions (TIES_KEEP, TIES_FIRST,
    TIES_LAST).  Returns (positions, owners) for _Ring, new arrays."""
    pos = np.array(positions, dtype=np.uint64, copy=True, order="C")
    src = np.ascontiguousarray(owners, dtype=np.int32)
    cdef Py_ssize_t n = pos.shape[0]
    if src.ndim != 1 or pos.ndim != 1 or src.shape[0] != n:
        raise ValueError("positions and owners must be 1-d and of one length")
    if n >= (1 << 31) - CH_PAD:
        raise ValueError(f"the ring would have {n} points; at most 2**31 - 9 are supported")
    if ties not in (TIES_KEEP, TIES_FIRST, TIES_LAST):
        raise ValueError(f"unknown tie rule {ties}")
    gen = np.arange(n, dtype=np.int32)
    sort_pairs(pos, gen)
    own = src[gen]
    if n > 1 and ties == TIES_FIRST:
        keep = np.empty(n, dtype=bool)
        keep[0] = True
        np.not_equal(pos[1:], pos[:n - 1], out=keep[1:])
        if not keep.all():
            pos, own = pos[keep], own[keep]
    elif ties == TIES_LAST:
        last_writer(pos, own)
    return pos, np.ascontiguousarray(own, dtype=np.int32)


def last_writer(const uint64_t[::1] pos, int32_t[::1] own):
    """For a (position)-sorted ring built like a Python dict {point: node} (a later insert of
    the same point overwrites an earlier one), give every point of a run of equal positions the
    owner of the run's last entry.  Returns the number of runs longer than one."""
    cdef Py_ssize_t n = pos.shape[0], i, k = 0
    cdef int32_t last
    if n == 0:
        return 0
    with nogil:
        last = own[n - 1]
        i = n - 1
        while i > 0:
            i -= 1
            if pos[i] == pos[i + 1]:
                if own[i] != last:
                    own[i] = last
                k += 1
            else:
                last = own[i]
    return k


def walk_distinct(_Router core, Py_ssize_t start, Py_ssize_t limit):
    """Owner indices met walking clockwise once round a ring from position index start, each
    the first time it is met, at most limit of them (core: a ring, read through its owners)."""
    cdef const int32_t[::1] own = core.owners
    cdef Py_ssize_t n = own.shape[0], nn = len(core.nodes), i, c = 0
    result = []
    if n == 0 or limit <= 0:
        return result
    seen = np.zeros(nn, dtype=np.uint8)
    cdef uint8_t[::1] sv = seen
    out = np.empty(min(limit, nn), dtype=np.int32)
    cdef int32_t[::1] outv = out
    cdef int32_t o
    cdef Py_ssize_t lim = min(limit, nn)
    with nogil:
        for i in range(n):
            o = own[(start + i) % n]
            if not sv[o]:
                sv[o] = 1
                outv[c] = o
                c += 1
                if c == lim:
                    break
    return out[:c].tolist()


cdef class _SlotTable(_Router):
    """A Redis Cluster slot map: hash = slot (0..16383), table[slot] = node index."""
    cdef readonly object table      # read-only int32[16384]
    cdef const int32_t *tab

    def __cinit__(self, table, tuple nodes, _Hasher hasher):
        self.init_router(nodes, hasher, "slot map")
        self.live = 16384  # every slot answers (-1 when unassigned): never EmptyRingError
        t = np.array(table, dtype=np.int32)
        if t.shape != (16384,):
            raise ValueError(f"a slot table has 16384 entries, got shape {t.shape}")
        t.flags.writeable = False
        self.table = t
        cdef const int32_t[::1] tv = t
        self.tab = &tv[0]

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(m):
            out[i] = self.tab[h[i] & 0x3FFF]


def first_foreign(seq, bint ints=True):
    """Index of the first item of a list or tuple whose type is not exactly str (or int, with
    ints), or -1: such items need str() before hashing, the way uhashring hashes them."""
    cdef PyObject **items = PySequence_Fast_ITEMS(seq)
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), i
    cdef type t
    for i in range(n):
        t = type(<object>items[i])
        if t is str or (ints and t is int):
            continue
        return i
    return -1
