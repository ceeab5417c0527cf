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


def bounded_assign(_Router core, const uint64_t[::1] hashes, const int64_t[::1] caps,
                   int64_t[::1] loads, int32_t spread, int32_t[::1] out):
    """Assign each hash in turn to a node below capacity (loads updated in place)."""
    cdef int kind
    if core is None:
        raise TypeError("unsupported router core 'NoneType'")
    if core.walk_steps() > 0:
        kind = WALK_RING
    elif core.has_replicas:
        kind = WALK_TOP
    else:
        kind = WALK_PROBE
    core.check()
    cdef Py_ssize_t n = loads.shape[0], m = hashes.shape[0], j
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
    cdef uint64_t h, p
    cdef int32_t node, best, cnt
    cdef int64_t t, limit, have
    cdef uint32_t at = 0
    if kind == WALK_RING:
        limit = core.walk_steps()
    elif kind == WALK_TOP:
        limit = n
    else:
        limit = 8 * n + 64
    with nogil:
        for j in range(m):
            h = hashes[j]
            best = -1
            cnt = 0
            node = -1
            have = 0
            t = 0
            while t < limit:
                if kind == WALK_RING:
                    node = core.walk_step(h, t, &at)
                elif kind == WALK_TOP:
                    if t == 0 and spread == 1:
                        node = core.route1(h)  # the best node, without ranking the rest
                    elif t >= have:   # rank lazily: a few first, all of them if needed
                        have = n if have else min(n, spread + 7)
                        core.route_replicas(&h, 1, <uint32_t>have, &row[0])
                        node = row[t]
                    else:
                        node = row[t]
                else:
                    p = h if t == 0 else ch_mix64(h + <uint64_t>t * BOUNDED_STEP)
                    node = core.route1(p)
                t += 1
                if cnt < spread:
                    if _seen(&seen[0], cnt, node):
                        continue
                    seen[cnt] = node
                    cnt += 1
                    if loads[node] < caps[node] and (best < 0 or loads[node] < loads[best]):
                        best = node
                    if cnt == spread and best >= 0:
                        break
                elif loads[node] < caps[node]:
                    best = node
                    break
            if best < 0:  # the walk ran out: the first node with room, in index order
                for i in range(n):
                    if loads[i] < caps[i]:
                        best = <int32_t>i
                        break
            loads[best] += 1
            out[j] = best
    return out.base if out.base is not None else np.asarray(out)
