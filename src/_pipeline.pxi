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
#
# Threads (the threads= of every batch call): chunks are independent, so a batch of at least
# _par_min keys is split over the calling thread and threads - 1 workers of the pool in
# ch_threads.h.  Every participant claims the next CHUNK from an atomic counter until none is
# left (a descheduled worker delays only its own chunk; one that wakes late finds nothing and
# is not waited for).  A key that needs Python (a big int, a non-compact str, another type, a
# missing key, a damaged Arrow view, a U element that is not valid Unicode) is only recorded by
# whoever claimed its chunk (past 32 in one chunk, the rest of that chunk is left whole); the
# calling thread redoes the recorded keys in order with the GIL once every worker is done,
# through the same fill() as the serial path, so the result and the first error raised are
# those of the serial path for every thread count.
#
# What workers may read, and why it is safe:
# - buffer-backed sources (NumPy U / S / integer arrays, Arrow buffers, pre-hashed uint64):
#   plain memory, kept alive by the source the caller holds; the caller releases the GIL for
#   the whole parallel run, as the serial path does.
# - a list, tuple or object array (K_OBJECTS, a built-in hash): the calling thread
#   keeps the GIL for the whole parallel run, waiting for its workers passively while holding
#   it, and runs no Python code meanwhile (no Python call, no allocation that could collect,
#   no GIL release).  So no Python code anywhere in the process runs while workers read the
#   items: the list cannot change size or drop an item, and the items workers read are
#   immutable (exact-or-subclass str read only when compact, bytes, a bytearray nobody can
#   resize meanwhile, exact int through PyLong_AsLongLongAndOverflow, which only reads its
#   digits).  Workers never touch a reference count or raise; whatever needs more is declined
#   and left to the calling thread as above.
# - a free-threaded CPython (Py_GIL_DISABLED) has no GIL to hold, so other threads could
#   mutate the list or drop its items while workers read them: there, object sources always
#   take the serial path (CH_GIL_BUILD is 0); buffer-backed sources still go parallel.
# Not parallel (serial whatever threads= says): a hash callable (Python code per key) and
# narrow integer arrays that are strided, unaligned or byte-swapped (widened chunk by chunk
# through NumPy; contiguous ones are widened in C).

cdef enum:
    CHUNK = 2048            # keys per chunk: the hashes stay in L1 between the two stages
    MODE_ROUTE = 0
    MODE_REPLICAS = 1
    MODE_HASH = 2

# Batches below this many keys stay on the calling thread: waking a worker and collecting
# its chunk costs some 10-20 us.  Measured with `bench/bench_threads.py --threshold` on the
# 2-core machine, 2 threads against 1: strings (NumPy U / S, Arrow, a list) break even near
# 8,192 keys and gain 1.5-1.6x at 32,768; pre-hashed uint64 (~2 ns a key) break even near
# 32,768 and gain 1.5x at 65,536, so keys already hashed need twice the batch.  With the
# other core busy, 32,768 keys cost at most ~5%.  A private hook (_set_parallel_min) lowers
# it in tests.
cdef Py_ssize_t _par_min = 32768

cdef enum:
    _SLOT_BYTES = 8 * CHUNK + CH_SCRATCH    # one participant's buffers: hashes, scratch


def _set_parallel_min(Py_ssize_t n):
    """Batches of at least n keys (n >= 1; 2n keys already hashed) may be split over threads;
    returns the old value."""
    global _par_min
    if n < 1:
        raise ValueError(f"the parallel threshold must be >= 1, got {n}")
    old = _par_min
    _par_min = n
    return old


def _set_placement(bint on):
    """Whether the pool keeps a woken worker off the calling thread's CPU (ch_threads.h,
    Linux); returns the previous setting."""
    return bool(ch_pool_placement(on))


def _get_parallel_min():
    """The smallest batch that may be split over threads."""
    return _par_min


cdef Py_ssize_t _par_runs = 0     # batches split over threads so far (tests read it)


def _parallel_runs():
    """How many batches have been split over threads in this process (a test hook)."""
    return _par_runs


cdef enum:
    _HAND_MAX = 32          # declined keys a chunk records one by one; past them, its tail


cdef struct _Hand:
    # What one chunk leaves to the calling thread: the keys its claimer declined (offsets in
    # the chunk, ascending), and past _HAND_MAX of them the whole rest of the chunk.
    uint16_t n                  # offsets recorded in pos
    uint16_t tail               # 0: none; t + 1: keys from offset t on are left whole
    uint16_t pos[_HAND_MAX]


cdef struct _Par:
    PyObject *src               # the _KeySource (None with hashes)
    PyObject *h                 # its _Hasher
    PyObject *core              # the _Router (None in MODE_HASH)
    PyObject **items            # K_OBJECTS: the object vector
    const uint64_t *hashes      # keys already hashed (route_hashes, replicas_of_hashes)
    void *out
    Py_ssize_t n
    int64_t nchunks
    ch_counter next             # the next chunk to claim
    ch_counter slot             # the next participant's buffers
    uint8_t *bufs               # _SLOT_BYTES per participant
    _Hand *hands                # per chunk: what it leaves to the calling thread
    int mode
    uint32_t r


cdef inline void _route_into(_Router core, int mode, uint32_t r, const uint64_t *hp,
                             Py_ssize_t s, Py_ssize_t m, void *out) noexcept nogil:
    """Keys s .. s + m, hashed in hp, routed into out by mode (HASH: nothing to do)."""
    if mode == MODE_ROUTE:
        core.route(hp, m, <int32_t *>out + s)
    elif mode == MODE_REPLICAS:
        core.route_replicas(hp, m, r, <int32_t *>out + s * r)


cdef void _par_chunks(void *arg) noexcept nogil:
    """One participant (the calling thread or a worker): claim chunks until none is left.

    A key the keys stage declines (it needs Python) is recorded in the chunk's _Hand and
    hashed as 0 meanwhile; the rest of the chunk goes on, so a few such keys (missing values,
    a big int) cost only themselves.  The chunk is routed whole; the calling thread later
    redoes the recorded keys (and a tail past _HAND_MAX of them) over the routed values."""
    cdef _Par *j = <_Par *>arg
    cdef uint8_t *mine = j.bufs + ch_claim(&j.slot) * _SLOT_BYTES
    cdef uint64_t *buf = <uint64_t *>mine
    cdef uint8_t *scratch = mine + 8 * CHUNK
    cdef const uint64_t *hp
    cdef uint64_t *wp
    cdef _Hand *hand
    cdef int64_t c
    cdef Py_ssize_t s, e, cur, stop
    while True:
        c = ch_claim(&j.next)
        if c >= j.nchunks:
            return
        s = <Py_ssize_t>c * CHUNK
        e = min(j.n, s + CHUNK)
        if j.hashes != NULL:
            hp = j.hashes + s
        else:
            wp = <uint64_t *>j.out + s if j.mode == MODE_HASH else buf
            hand = &j.hands[c]
            cur = s
            while cur < e:
                stop = (<_KeySource>j.src).fill_nogil(<_Hasher>j.h, cur, e, wp + (cur - s),
                                                      scratch, j.items)
                if stop < 0:
                    break
                if hand.n == _HAND_MAX:
                    hand.tail = <uint16_t>(stop - s + 1)
                    e = stop  # the rest of the chunk is left whole
                    break
                hand.pos[hand.n] = <uint16_t>(stop - s)
                hand.n += 1
                wp[stop - s] = 0
                cur = stop + 1
            hp = wp
        if e > s:
            _route_into(<_Router>j.core, j.mode, j.r, hp, s, e - s, j.out)


cdef void _par_run(_Par *j, int workers) noexcept nogil:
    cdef ch_job job
    ch_pool_start(&job, _par_chunks, j, workers)
    _par_chunks(j)
    ch_pool_finish(&job)


cdef int drive_par(_KeySource src, _Hasher h, _Router core, int mode, uint32_t r, void *out,
                   const uint64_t *hashes, Py_ssize_t n, int threads) except -1:
    """drive() over threads participants (see the header); src is None with hashes."""
    global _par_runs
    cdef _Par j
    cdef int64_t nchunks = (n + CHUNK - 1) // CHUNK
    cdef int workers = <int>min(<int64_t>threads, nchunks, <int64_t>CH_MAX_WORKERS + 1) - 1
    cdef bint objects = src is not None and src.kind == K_OBJECTS
    cdef Py_ssize_t c, s, e, i, k
    cdef uint64_t *hp
    cdef _Hand *hand
    cdef size_t out_bytes = <size_t>n * (4 * r if mode == MODE_REPLICAS else
                                         (8 if mode == MODE_HASH else 4))
    j.src = <PyObject *>src
    j.h = <PyObject *>h
    j.core = <PyObject *>core
    j.items = src.object_items() if objects else NULL
    j.hashes = hashes
    j.out = out
    j.n = n
    j.nchunks = nchunks
    j.next = 0
    j.slot = 0
    j.mode = mode
    j.r = r
    j.bufs = <uint8_t *>malloc((workers + 1) * _SLOT_BYTES)
    j.hands = <_Hand *>calloc(nchunks, sizeof(_Hand))
    try:
        if j.bufs == NULL or j.hands == NULL:
            raise MemoryError()
        _par_runs += 1
        if objects:
            ch_prefault(out, out_bytes)
            _par_run(&j, workers)  # with the GIL held throughout: see the header
        else:
            with nogil:
                ch_prefault(out, out_bytes)
                _par_run(&j, workers)
        # What the chunks left, in key order (so the first error is the serial path's),
        # through the serial path's fill().
        for c in range(nchunks):
            hand = &j.hands[c]
            if hand.n == 0 and hand.tail == 0:
                continue
            s = c * CHUNK
            for k in range(hand.n):
                i = s + hand.pos[k]
                hp = <uint64_t *>out + i if mode == MODE_HASH else <uint64_t *>j.bufs
                if objects and not h.raw_ints:
                    # What fill() does with a key the object kernel declines, without its
                    # per-call set-up (raw_ints also needs fill's integer pass).
                    hp[0] = src.slow_hash(h, <object>j.items[i], i)
                else:
                    src.fill(h, i, i + 1, hp)
                _route_into(core, mode, r, hp, i, 1, out)
            if hand.tail:
                i = s + hand.tail - 1
                e = min(n, s + CHUNK)
                hp = <uint64_t *>out + i if mode == MODE_HASH else <uint64_t *>j.bufs
                src.fill(h, i, e, hp)
                with nogil:
                    _route_into(core, mode, r, hp, i, e - i, out)
    finally:
        free(j.bufs)
        free(j.hands)
    return 0


cdef bint _parallel(_KeySource src, _Hasher h, Py_ssize_t n, int threads):
    """Whether drive() splits this batch over threads (see the header)."""
    if threads <= 1 or n < _par_min or n <= CHUNK:
        return False
    if src.buffer_backed(h):
        return True
    return CH_GIL_BUILD and src.kind == K_OBJECTS and h.func is None


cdef int drive(_KeySource src, _Hasher h, _Router core, int mode, uint32_t r,
               void *out, int threads=1) except -1:
    """Keys of src -> out, CHUNK keys at a time, by mode (see the header).  The one loop from
    keys to hashes to indices: every batch entry point calls it."""
    cdef uint64_t buf[CHUNK]
    cdef uint64_t *hp = buf
    cdef Py_ssize_t n = src.n, s = 0, e, stop = -1
    cdef uint8_t *scratch
    if mode == MODE_ROUTE:
        core.note_lookups(n)
    if _parallel(src, h, n, threads):
        return drive_par(src, h, core, mode, r, out, NULL, n, threads)
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
                stop = src.fill_nogil(h, s, e, hp, scratch, NULL)
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


cdef int drive_hashes(_Router core, int mode, uint32_t r, const uint64_t *hashes,
                      Py_ssize_t m, void *out, int threads) except -1:
    """Keys already hashed -> out by mode (ROUTE or REPLICAS), over threads when it pays."""
    if mode == MODE_ROUTE:
        core.note_lookups(m)
    if threads > 1 and m >= 2 * _par_min and m > CHUNK:
        return drive_par(None, core.hasher, core, mode, r, out, hashes, m, threads)
    with nogil:
        if mode == MODE_ROUTE:
            core.route(hashes, m, <int32_t *>out)
        else:
            core.route_replicas(hashes, m, r, <int32_t *>out)
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
               bint hint=True, int threads=1):
    """out[i] = node index of keys[i] (keys: list, tuple, 1-D ndarray or a _KeySource).

    With nulls a missing key gets -1; without, it raises TypeError, whose message suggests
    nulls="none" only when hint is true (calls that take no nulls= pass False)."""
    cdef _KeySource src = _batch_source(keys, out.shape[0], f"length {out.shape[0]}", nulls,
                                        hint)
    if src.n == 0:
        return
    core.check()
    drive(src, core.hasher, core, MODE_ROUTE, 0, &out[0], threads)
    cdef Py_ssize_t i
    if src.nulls:
        for i in src.nulls:
            out[i] = -1


def route_replicas_keys(_Router core not None, keys, uint32_t r, int32_t[:, ::1] out not None,
                        bint nulls=False, int threads=1):
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
    drive(src, core.hasher, core, MODE_REPLICAS, r, &out[0, 0], threads)
    cdef Py_ssize_t i
    if src.nulls:
        for i in src.nulls:
            out[i, :] = -1


def hash_keys(_Hasher hasher not None, keys, uint64_t[::1] out not None, int threads=1):
    """out[i] = the uint64 hash of keys[i] (the hasher's raw value for integer keys with
    raw_ints).  Missing keys raise TypeError."""
    cdef _KeySource src = _batch_source(keys, out.shape[0], f"length {out.shape[0]}", False,
                                        False)
    if src.n:
        drive(src, hasher, None, MODE_HASH, 0, &out[0], threads)


def route_hashes(_Router core not None, const uint64_t[::1] hashes, int32_t[::1] out not None,
                 int threads=1):
    """out[i] = node index of the uint64 hash hashes[i]."""
    cdef Py_ssize_t m = hashes.shape[0]
    if out.shape[0] != m:
        raise ValueError(f"out has length {out.shape[0]}, expected {m}")
    if m == 0:
        return
    core.check()
    drive_hashes(core, MODE_ROUTE, 0, &hashes[0], m, &out[0], threads)


def replicas_of_hashes(_Router core not None, const uint64_t[::1] hashes, uint32_t r,
                       int32_t[:, ::1] out not None, int threads=1):
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
    drive_hashes(core, MODE_REPLICAS, r, &hashes[0], m, &out[0, 0], threads)


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
