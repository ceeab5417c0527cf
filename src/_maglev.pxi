# Maglev tables (Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load Balancer",
# NSDI 2016): ours (kernels in ch_maglev.h) and Envoy's (ch_envoy.h), one router class.
#
# A table of M (prime) entries, each a node index; a hash h routes to one entry: ours at
# floor(h * M / 2**64) (the high bits: any hash spreads), Envoy's at h mod M (as Envoy reads
# it).  Two builders fill a table:
#
# - maglev_table: node i (a = H(utf8(name), seed)) prefers the entries
#   (a mod M + j * (floor(a / M) mod (M - 1) + 1)) mod M, j = 0, 1, ...; round after round,
#   each node in index order adds ratio_i = w_i / w_max to its credit and, when the credit
#   reaches 1.0, pays 1.0 and takes its next preferred empty entry, until the table is full
#   (equal weights: the paper's algorithm).
# - envoy_maglev_table: exactly as Envoy builds it: entries sorted by hash key, offset and skip
#   from xxHash64 with seeds 0 and 1, turns skipped by weight (iteration * w < target).  The
#   caller gives, per entry in sorted order, its offset, skip, normalized weight and node.
#
# No replica order.


cdef class _MaglevTable(_Router):
    """A Maglev lookup table over nodes: table[i] is the node index of entry i; modulo picks
    Envoy's entry (h mod M) instead of ours (floor(h * M / 2**64)).  An empty table (no node
    with a weight) routes nothing."""
    cdef readonly object table          # read-only int32[M]: node index of each entry
    cdef readonly bint modulo
    cdef const int32_t *tab
    cdef uint64_t M

    def __cinit__(self, tuple nodes, _Hasher hasher, table, *, bint modulo=False,
                  str what="Maglev"):
        self.init_router(nodes, hasher, what)
        t = np.ascontiguousarray(table, dtype=np.int32)
        if t.ndim != 1 or (t.shape[0] and (t.min() < 0 or t.max() >= len(nodes))):
            raise ValueError("a Maglev table holds indices into nodes")
        t.flags.writeable = False
        cdef const int32_t[::1] tv = t
        self.table = t
        self.M = <uint64_t>t.shape[0]
        self.tab = &tv[0] if self.M else NULL
        self.modulo = modulo
        if self.M == 0:
            self.live = 0                  # no node has a weight: no node is chosen

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        if self.modulo:
            ch_envoy_maglev_lookup(self.tab, self.M, h, <size_t>m, out)
        else:
            ch_maglev_lookup(self.tab, <uint32_t>self.M, h, <size_t>m, out)

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        if self.modulo:
            return self.tab[h % self.M]
        return self.tab[ch_mulhi(h, <uint32_t>self.M)]


def maglev_table(_Hasher hasher, tuple nodes, uint32_t M, ratios):
    """Our table of M entries for nodes with weight ratios w / max(w) (see above)."""
    cdef Py_ssize_t n = len(nodes), i
    if M < 2:
        raise ValueError("table_size must be a prime >= 2")
    if n == 0:
        return np.empty(0, dtype=np.int32)  # no node: no entry (lookups raise EmptyRingError)
    table = np.empty(M, dtype=np.int32)
    cdef int32_t[::1] tv = table
    a = node_hashes(hasher, nodes)
    pos = np.empty(n, dtype=np.uint64)
    skip = np.empty(n, dtype=np.uint64)
    for i in range(n):
        x = int(a[i])
        pos[i] = x % M
        skip[i] = (x // M) % (M - 1) + 1
    ratio = np.ascontiguousarray(ratios, dtype=np.float64)
    if ratio.shape[0] != n:
        raise ValueError("weights and nodes differ in length")
    credit = np.empty(n, dtype=np.float64)
    cdef uint64_t[::1] pv = pos
    cdef const uint64_t[::1] sv = skip
    cdef const double[::1] rv = ratio
    cdef double[::1] cv = credit
    # A ratio may round to 0.0 (a weight below 2**-1074 of the largest): that node then never
    # takes a turn; the heaviest node's 1.0 keeps every round claiming an entry.
    if not (ratio.max() == 1.0 and ratio.min() >= 0):
        raise ValueError("Maglev ratios must be in [0, 1] with a maximum of 1.0")
    with nogil:
        ch_maglev_build(&pv[0], &sv[0], &rv[0], &cv[0], <uint32_t>n, M, &tv[0])
    return table


def envoy_maglev_table(uint64_t M, offsets, skips, weights, entry_nodes):
    """Envoy's table of M entries (node indices), empty when no entry has a weight."""
    if M < 2:
        raise ValueError("table_size must be a prime >= 2")
    pos = np.array(offsets, dtype=np.uint64)
    skip = np.array(skips, dtype=np.uint64)
    w = np.array(weights, dtype=np.float64)
    owner = np.array(entry_nodes, dtype=np.int32)
    cdef Py_ssize_t n = pos.shape[0]
    if not (skip.shape[0] == w.shape[0] == owner.shape[0] == n):
        raise ValueError("offsets, skips, weights and entry_nodes differ in length")
    if n and (int(pos.max()) >= M or int(skip.min()) < 1 or int(skip.max()) >= M
              or not (w.min() > 0) or not np.isfinite(w).all()):
        raise ValueError("Maglev entries: offset < M, 1 <= skip < M, weights > 0")
    if n and owner.min() < 0:
        raise ValueError("entry_nodes must index nodes")
    if n == 0:
        return np.empty(0, dtype=np.int32)
    table = np.empty(M, dtype=np.int32)
    target = np.empty(n, dtype=np.float64)
    cdef int32_t[::1] tv = table
    cdef uint64_t[::1] pv = pos
    cdef const uint64_t[::1] sv = skip
    cdef const double[::1] wv = w
    cdef double[::1] gv = target
    cdef double w_max = w.max()
    with nogil:
        ch_envoy_maglev_build(&pv[0], &sv[0], &wv[0], w_max, &gv[0], <uint32_t>n, M, &tv[0])
    return owner[table]  # entry index -> node index
