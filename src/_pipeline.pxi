# The keys pipeline: the one chunk driver, and the batch entry points built on it.
#
#   keys --[_KeySource.fill with a _Hasher, CHUNK keys at a time]--> uint64 hashes (a stack
#   buffer) --[the router's kernel, chosen by the mode]--> int32 node indices
#
# Modes: ROUTE writes int32[n] through _Router.route; REPLICAS writes int32[n, r] (row-major)
# through _Router.route_replicas; HASH writes the uint64 hashes themselves (no kernel).  A
# missing key (None, NaN, pandas.NA, NaT), when the caller allows them, gets -1 (a row of -1).
# An empty batch gives an empty result even on an empty router; any other batch on a router
# with no reachable node raises EmptyRingError.

cdef enum:
    CHUNK = 2048            # keys per chunk: the hashes stay in L1 between the two stages
    MODE_ROUTE = 0
    MODE_REPLICAS = 1
    MODE_HASH = 2


cdef int drive(_KeySource src, _Hasher h, _Router core, int mode, uint32_t r,
               void *out) except -1:
    """Keys of src -> out, CHUNK keys at a time, by mode (see the header).  The one loop from
    keys to hashes to indices: every batch entry point calls it."""
    cdef uint64_t buf[CHUNK]
    cdef uint64_t *hp = buf
    cdef Py_ssize_t n = src.n, s = 0, e, stop = -1
    cdef uint8_t *scratch
    if n > CHUNK and src.buffer_backed(h):
        # One GIL release for the whole batch: threads then run their batches in parallel
        # (releasing per 2,048-key chunk would hand the GIL back and forth every ~10 us).
        scratch = <uint8_t *>malloc(CH_SCRATCH)
        if scratch == NULL:
            raise MemoryError()
        with nogil:
            while s < n:
                e = min(n, s + CHUNK)
                if mode == MODE_HASH:
                    hp = <uint64_t *>out + s
                stop = src.fill_nogil(h, s, e, hp, scratch)
                if stop >= 0:
                    break  # a key needs Python: the loop below takes over from this chunk
                if mode == MODE_ROUTE:
                    core.route(hp, e - s, <int32_t *>out + s)
                elif mode == MODE_REPLICAS:
                    core.route_replicas(hp, e - s, r, <int32_t *>out + s * r)
                s = e
        free(scratch)
    while s < n:
        e = min(n, s + CHUNK)
        if mode == MODE_HASH:
            hp = <uint64_t *>out + s
        src.fill(h, s, e, hp)
        if mode == MODE_ROUTE:
            with nogil:
                core.route(hp, e - s, <int32_t *>out + s)
        elif mode == MODE_REPLICAS:
            with nogil:
                core.route_replicas(hp, e - s, r, <int32_t *>out + s * r)
        s = e
    return 0


cdef _KeySource _batch_source(keys, Py_ssize_t have, str shape, bint nulls, bint hint):
    """keys as a _KeySource whose length matches out (have rows; shape names them)."""
    cdef _KeySource src = make_source(keys)
    if src.n != have:
        raise ValueError(f"out has {shape}, expected {src.n} for {src.n} keys")
    src.nulls = [] if nulls else None
    src.hint = hint
    return src


def route_keys(_Router core not None, keys, int32_t[::1] out not None, bint nulls=False,
               bint hint=True):
    """out[i] = node index of keys[i] (keys: list, tuple, 1-D ndarray or a _KeySource).

    With nulls a missing key gets -1; without, it raises TypeError, whose message suggests
    nulls="none" only when hint is true (calls that take no nulls= pass False)."""
    cdef _KeySource src = _batch_source(keys, out.shape[0], f"length {out.shape[0]}", nulls,
                                        hint)
    if src.n == 0:
        return
    core.check()
    drive(src, core.hasher, core, MODE_ROUTE, 0, &out[0])
    cdef Py_ssize_t i
    if src.nulls:
        for i in src.nulls:
            out[i] = -1


def route_replicas_keys(_Router core not None, keys, uint32_t r, int32_t[:, ::1] out not None,
                        bint nulls=False):
    """out[i] = the first r distinct node indices of keys[i] in the router's order (a row of
    -1 for a missing key with nulls)."""
    if not core.has_replicas:
        raise TypeError(f"{type(core).__name__} has no replica order")
    if out.shape[1] != r:
        raise ValueError(f"out has {out.shape[1]} columns, expected r = {r}")
    cdef _KeySource src = _batch_source(keys, out.shape[0], f"{out.shape[0]} rows", nulls,
                                        True)
    if src.n == 0:
        return
    core.check()
    if r == 0:
        return
    core.prepare_replicas(r)
    drive(src, core.hasher, core, MODE_REPLICAS, r, &out[0, 0])
    cdef Py_ssize_t i
    if src.nulls:
        for i in src.nulls:
            out[i, :] = -1


def hash_keys(_Hasher hasher not None, keys, uint64_t[::1] out not None):
    """out[i] = the uint64 hash of keys[i] (the hasher's raw value for integer keys with
    raw_ints).  Missing keys raise TypeError."""
    cdef _KeySource src = _batch_source(keys, out.shape[0], f"length {out.shape[0]}", False,
                                        False)
    if src.n:
        drive(src, hasher, None, MODE_HASH, 0, &out[0])


def route_hashes(_Router core not None, const uint64_t[::1] hashes, int32_t[::1] out not None):
    """out[i] = node index of the uint64 hash hashes[i]."""
    cdef Py_ssize_t m = hashes.shape[0]
    if out.shape[0] != m:
        raise ValueError(f"out has length {out.shape[0]}, expected {m}")
    if m == 0:
        return
    core.check()
    with nogil:
        core.route(&hashes[0], m, &out[0])


def replicas_of_hashes(_Router core not None, const uint64_t[::1] hashes, uint32_t r,
                       int32_t[:, ::1] out not None):
    """out[i] = the first r distinct node indices of hash hashes[i] in the router's order."""
    if not core.has_replicas:
        raise TypeError(f"{type(core).__name__} has no replica order")
    cdef Py_ssize_t m = hashes.shape[0]
    if out.shape[0] != m or out.shape[1] != r:
        raise ValueError(f"out has shape ({out.shape[0]}, {out.shape[1]}), expected ({m}, {r})")
    if m == 0:
        return
    core.check()
    if r == 0:
        return
    core.prepare_replicas(r)
    with nogil:
        core.route_replicas(&hashes[0], m, r, &out[0, 0])


def take_names(tuple nodes, const int32_t[::1] idx):
    """Object array of nodes[idx[i]] (None for -1): the names of routed keys, several times
    faster than numpy's generic object take."""
    cdef Py_ssize_t m = idx.shape[0], n = len(nodes), bad
    out = np.empty(m, dtype=object)  # filled with None
    if m == 0:
        return out
    cdef PyObject **data = <PyObject **><uintptr_t>out.__array_interface__["data"][0]
    cdef Py_ssize_t *counts = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    if counts == NULL:
        raise MemoryError()
    try:
        bad = ch_take_objects(PySequence_Fast_ITEMS(nodes), n, &idx[0], m, data, counts)
    finally:
        free(counts)
    if bad >= 0:
        raise IndexError(f"node index {idx[bad]} out of range")
    return out
