# The calls a service makes per request, in C: get, replicas, and batches so small that a batch
# call's set-up would cost more than its keys (get_many, get_indices, lookup).
#
# Every router of consistent_hash/_router.py derives from _RouterBase, which holds the router's
# snapshot (_core, a _Router, replaced with one assignment on every change) and implements those
# five calls for what they are passed most: a plain key (str, bytes, int), a list or tuple of up
# to _SMALL_BATCH of them, a C-contiguous native uint64 NumPy array of up to _SMALL_BATCH hashes
# (lookup).  A call reads self._core once, so it sees one snapshot.  Anything else (another
# container, nulls="none", categorical=True, out=, a key that needs Python, an empty router, a
# router whose hashes are narrower than the core's, an unusual argument) goes to the router's
# Python implementation of the same call (_get_many_slow, _get_indices_slow, _replicas_slow,
# _lookup_slow), which handles the rest and raises the errors: a fast path returns exactly what
# that implementation returns, or leaves it the call.
#
# Two attributes of the router are read once per router object, at its first call:
# _key_check (the router checks keys itself, as TokenRing refuses int keys: every key but an
# exact str or bytes goes through its _check_key, and every batch through its _check_keys) and
# _replicas_in_core, else _replicas (the core's replica order is the router's: replicas() is
# then served in C; otherwise it is always _replicas_slow).  Either may be a property of how
# the object was built (NginxUpstream(consistent=...), KetamaRing(replica_order=...)).

cdef enum:
    _F_KNOWN = 1
    _F_KEY_CHECK = 2
    _F_REPLICAS = 4
    _F_SHIFT = 8       # the router's hashes are narrower than the core's (_hash_shift)
    # Batches of up to this many keys take the small-batch path (hashes in a stack buffer, one
    # kernel call); larger ones go through the pipeline, whose set-up is then a small share.
    _SMALL_BATCH = 1024
    _SMALL_SCRATCH = 512    # UTF-8 room for the small-batch path (a longer non-ASCII str:
                            # the pipeline)

_OBJ = np.dtype(object)


# The small batches' result arrays, made in C through NumPy's C-API table where it is one
# ch_nparray.h knows (np.empty otherwise): np.empty's call is most of a one-key call's cost.
from cpython.pycapsule cimport PyCapsule_CheckExact, PyCapsule_GetPointer
from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS,
                             PyBUF_FORMAT)

cdef extern from "ch_nparray.h":
    int ch_np_init(void *table)
    object ch_np_empty1(Py_ssize_t n, int typenum)
    object ch_np_result1(Py_ssize_t n, int typenum)
    int ch_np_recycling(int use)

cdef int _NP_I32 = _I32.num
_NDARRAY = np.ndarray
cdef int _NP_OBJ = _OBJ.num


cdef bint _np_table() except -1:
    """Whether ch_nparray.h can make arrays: NumPy's C-API capsule found and its ABI known."""
    import importlib
    try:
        try:
            m = importlib.import_module("numpy._core._multiarray_umath")
        except ModuleNotFoundError:  # NumPy 1.x
            m = importlib.import_module("numpy.core._multiarray_umath")
        cap = m._ARRAY_API
    except (ImportError, AttributeError):
        return False
    if not PyCapsule_CheckExact(cap):
        return False
    return ch_np_init(PyCapsule_GetPointer(cap, NULL)) == 1


cdef bint _np_in_c = _np_table()


def _np_arrays_in_c(object use=None):
    """Whether the small-batch calls make their arrays through NumPy's C-API table (a test
    hook: use=False makes them with np.empty, use=True goes back to the table where NumPy's
    ABI allows it); returns the old setting."""
    global _np_in_c
    old = bool(_np_in_c)
    if use is not None:
        _np_in_c = bool(use) and _np_table()
    return old


def _np_recycling(object use=None):
    """Whether the small-batch calls give out again a result array its caller has let go
    (ch_nparray.h; a test hook: use=False turns it off, use=True back on where it can be);
    returns the old setting."""
    return ch_np_recycling(-1 if use is None else (1 if use else 0)) == 1


cdef inline bint _plain_key(object key):
    return type(key) is str or type(key) is bytes


cdef inline bint _threads_ok(object threads):
    """threads= that the serial path serves as it is (None or an int >= 1; a batch this small
    never splits)."""
    return threads is None or (type(threads) is int and threads >= 1)


cdef int _object_flags(object obj) except -1:
    """The router's flags, read from the object once (its first call): a class attribute, or a
    property of what the object was built as (NginxUpstream's consistent=, KetamaRing's
    replica_order=), fixed for its life."""
    cdef int f = _F_KNOWN
    if getattr(obj, "_key_check", False):
        f |= _F_KEY_CHECK
    # _replicas_in_core: the core's replica order is the router's replicas() (default: the
    # router has replicas at all, _replicas)
    v = getattr(obj, "_replicas_in_core", None)
    if v is None:
        v = getattr(obj, "_replicas", False)
    if v is True:  # a plain True (uhashring's drop-in keeps an int count under that name)
        f |= _F_REPLICAS
    if getattr(obj, "_hash_shift", 0):
        f |= _F_SHIFT
    return f


cdef inline bint _u64_view(const Py_buffer *view):
    """A buffer of native uint64: NumPy's format for it is "L" where unsigned long has 64 bits
    (Linux, macOS), "Q" elsewhere; a byte-swapped one carries a prefix and is not taken."""
    cdef const char *f = view.format
    return (view.ndim == 1 and view.itemsize == 8 and f != NULL and f[1] == 0
            and (f[0] == b"Q" or (f[0] == b"L" and sizeof(unsigned long) == 8)))


cdef inline list _ring_replicas(_Ring core, object key, uint32_t r):
    """_Router.replica_names for a plain ring whose table of r replicas is built (0 < r <=
    live): the names read from the key's row of it, with no virtual call and no copy."""
    cdef uint64_t h = core.hasher.hash_one(key)
    return _names_list(core.nodes, core.reps[r] + <size_t>core.find(h) * r, r)


cdef inline object _ring_get(_Ring core, object key):
    """_Router.get_key for a plain ring, with no virtual call."""
    if core.live == 0:
        core.check()
    cdef uint64_t h = core.hasher.hash_one(key)
    cdef int32_t i
    if core._claim == 0 and core.R.tk:  # note_lookups' own test, without its virtual call
        core.note_lookups(1)
    if core.R.own == core.own:
        i = ch_route1(&core.R, h)
    else:
        i = core.route1(h)
    return <object>PyTuple_GET_ITEM(core.nodes, i)


@cython.binding(False)  # plain method descriptors: CPython's call specializations take them
cdef class _RouterBase:
    """The base of every router: its snapshot, and the per-request calls in C (see
    src/_fastcalls.pxi)."""
    # _snap: the routing snapshot every call reads.  It is None only before the first one is
    # installed, and while a RingRouter holds deferred add() calls (_deferred, not None): the
    # first read then applies them (_materialize, under the router's lock).  Python code reads
    # and assigns _core, which is _snap applied.
    cdef public _Router _snap
    cdef public object _deferred
    cdef int _flags

    @property
    def _core(self):
        if self._snap is None and self._deferred is not None:
            return self._materialize()
        return self._snap

    @_core.setter
    def _core(self, _Router core):
        self._snap = core

    cdef inline int flags(self) except -1:
        if self._flags == 0:
            self._flags = _object_flags(self)
        return self._flags

    cdef inline _Router core(self):
        cdef _Router core = self._snap
        if core is None and self._deferred is not None:
            core = self._materialize()
        if core is None:
            raise AttributeError(f"{type(self).__name__!r} object has no snapshot (_core)")
        return core

    @cython.always_allow_keywords(False)  # METH_O: the key positional, as dict.get's
    def get(self, key):
        """The node of one key.

        Raises EmptyRingError when there are no nodes, TypeError for an unsupported key type.
        """
        cdef _Router core = self.core()
        if not _plain_key(key) and (self._flags or self.flags()) & _F_KEY_CHECK:
            self._check_key(key)
        if type(core) is _Ring:
            return _ring_get(<_Ring>core, key)
        return core.get_key(key)

    def replicas(self, key, n):
        """The first ``min(n, len(nodes))`` distinct nodes for the key, in the algorithm's
        order (the first is ``get(key)``)."""
        cdef _Router core = self._snap
        cdef int f = self._flags or self.flags()
        cdef long long want
        cdef int overflow = 0
        if (core is not None and f & _F_REPLICAS and core.has_replicas and type(n) is int
                and core.live and (_plain_key(key) or not f & _F_KEY_CHECK)):
            if not ch_small_int(<PyObject *>n, &want):  # an exact int: only too big for this
                want = PyLong_AsLongLongAndOverflow(n, &overflow)
            if overflow > 0 or want >= core.live:
                want = core.live
            elif overflow or want < 1:
                return self._replicas_slow(key, n)
            if type(core) is _Ring and (<_Ring>core).reps[want] != NULL:
                return _ring_replicas(<_Ring>core, key, <uint32_t>want)
            return core.replica_names(key, <uint32_t>want)
        return self._replicas_slow(key, n)

    def get_many(self, keys, *, nulls="raise", categorical=False, threads=None):
        """The node of each key, as an object array of names.

        ``keys``: a list or tuple of str / bytes / int, a NumPy array (U, S, O, T or integer
        dtype), a pyarrow Array, ChunkedArray or one-column Table, a pandas Series, Index or
        one-column DataFrame, a polars Series or one-column DataFrame.
        ``nulls="none"`` maps a missing key (None, NaN, pandas.NA, an Arrow null) to None
        instead of raising.  ``categorical=True`` returns a ``pandas.Categorical`` instead
        (int32-sized codes into the node names, missing keys as NaN).
        ``threads``: how many threads a large batch is split over (None: the process default,
        ``consistent_hash.get_threads()``; 1: the calling thread only); the result is the same
        for every thread count.  Every batch call takes it.
        """
        cdef _Router core = self._snap
        cdef int32_t idx[_SMALL_BATCH]
        cdef Py_ssize_t n
        if (core is not None and (type(keys) is list or type(keys) is tuple)
                and categorical is False and type(nulls) is str and nulls == "raise"
                and _threads_ok(threads)):
            n = len(keys)
            if 0 < n <= _SMALL_BATCH and self._small(core, keys, n, idx):
                names = ch_np_empty1(n, _NP_OBJ) if _np_in_c else _np_empty(n, _OBJ)
                ch_take_objects_small(PySequence_Fast_ITEMS(core.nodes), idx, n,
                                      <PyObject **>_buf(names, True))
                return names
        return self._get_many_slow(keys, nulls=nulls, categorical=categorical, threads=threads)

    def get_indices(self, keys, out=None, *, nulls="raise", threads=None):
        """The node of each key as an int32 index into ``nodes`` (-1 for a missing key with
        ``nulls="none"``); ``out`` receives them when given (an int32 array of the keys'
        length); ``threads`` as in ``get_many``."""
        cdef _Router core = self._snap
        cdef Py_ssize_t n
        if (out is None and core is not None and (type(keys) is list or type(keys) is tuple)
                and type(nulls) is str and nulls == "raise" and _threads_ok(threads)):
            n = len(keys)
            if 0 < n <= _SMALL_BATCH:
                res = ch_np_result1(n, _NP_I32) if _np_in_c else _np_empty(n, _I32)
                if self._small(core, keys, n, <int32_t *>_buf(res, True)):
                    return res
        return self._get_indices_slow(keys, out, nulls=nulls, threads=threads)

    def lookup(self, hashes, out=None, *, threads=None):
        """Route keys already hashed (as ``hash_many`` gives them): int32 indices into
        ``nodes``; ``threads`` as in ``get_many``."""
        cdef _Router core = self._snap
        cdef Py_buffer view
        cdef Py_ssize_t n
        cdef object res
        if (out is None and core is not None and type(hashes) is _NDARRAY and core.live
                and _threads_ok(threads) and not (self._flags or self.flags()) & _F_SHIFT):
            # a small C-contiguous native uint64 array: the slow path's checks all hold, and
            # it would route the array as it is, serially
            try:
                PyObject_GetBuffer(hashes, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)
            except (BufferError, ValueError, TypeError):
                return self._lookup_slow(hashes, out, threads=threads)
            try:
                n = view.shape[0] if view.ndim == 1 else 0
                if _u64_view(&view) and 0 < n <= _SMALL_BATCH:
                    res = ch_np_result1(n, _NP_I32) if _np_in_c else _np_empty(n, _I32)
                    core.note_lookups(n)
                    core.route(<const uint64_t *>view.buf, n, <int32_t *>_buf(res, True))
                    return res
            finally:
                PyBuffer_Release(&view)
        return self._lookup_slow(hashes, out, threads=threads)

    cdef bint _small(self, _Router core, object keys, Py_ssize_t n, int32_t *out) except -1:
        """The node indices of the n (0 < n <= _SMALL_BATCH) keys of a list or tuple into out,
        as the pipeline gives them; False (out unspecified) when a key needs Python, the hash
        is a callable or the router is empty: the caller's slow path then takes the batch."""
        cdef uint64_t h[_SMALL_BATCH]
        cdef uint8_t scratch[_SMALL_SCRATCH]
        cdef _Hasher hs = core.hasher
        if core.live == 0 or hs.func is not None:
            return False
        if self.flags() & _F_KEY_CHECK:
            self._check_keys(keys)
        cdef PyObject **items = PySequence_Fast_ITEMS(keys)
        if ch_hash_objects_s(items, 0, n, hs.hid, hs.seed, h, scratch, _SMALL_SCRATCH) < n:
            return False
        if hs.raw_ints:
            ch_raw_int_objects(items, n, h)
        core.note_lookups(n)
        core.route(h, n, out)
        return True
