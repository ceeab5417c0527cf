# The compiled core of consistent_hash: arithmetic over immutable arrays, nothing else.
#
# Pipeline:  keys --[_Hasher + _KeySource, in chunks]--> uint64 hashes --[_Router.route]--> int32
# Every algorithm is a _Router subclass with one nogil kernel; every key container is handled
# once, here, for all of them.

from cpython.object cimport PyObject
from cpython.list cimport PyList_GET_SIZE
from cpython.ref cimport Py_DECREF, Py_INCREF
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

import operator

import numpy as np

cdef extern from "Python.h":
    PyObject** PySequence_Fast_ITEMS(object o)
    Py_ssize_t PySequence_Fast_GET_SIZE(object o)

cdef extern from "ch_keys.h" nogil:
    enum:
        CH_XXH3
        CH_XXH64
        CH_MURMUR3
        CH_MD5
        CH_SCRATCH
        CH_PAD
    uint64_t ch_hash(int hid, const uint8_t *p, size_t n, uint64_t seed)
    uint64_t ch_xxh3_64(const uint8_t *p, size_t n, uint64_t seed)
    Py_ssize_t ch_hash_objects(PyObject *const *items, Py_ssize_t start, Py_ssize_t n,
                               int hid, uint64_t seed, uint64_t *out, uint8_t *scratch)
    Py_ssize_t ch_hash_ucs4(const uint32_t *data, Py_ssize_t w, Py_ssize_t start,
                            Py_ssize_t stop, int hid, uint64_t seed, uint64_t *out,
                            uint8_t *scratch, size_t scratch_len)
    void ch_hash_fixed_bytes(const uint8_t *data, Py_ssize_t w, Py_ssize_t start,
                             Py_ssize_t stop, int hid, uint64_t seed, uint64_t *out)
    void ch_hash_i64(const int64_t *v, Py_ssize_t m, int hid, uint64_t seed, uint64_t *out)
    void ch_hash_u64(const uint64_t *v, Py_ssize_t m, int hid, uint64_t seed, uint64_t *out)
    void ch_hash_offsets32(const int32_t *off, const uint8_t *data, Py_ssize_t m, int hid,
                           uint64_t seed, uint64_t *out)
    void ch_hash_offsets64(const int64_t *off, const uint8_t *data, Py_ssize_t m, int hid,
                           uint64_t seed, uint64_t *out)
    Py_ssize_t ch_hash_views(const uint8_t *views, const uint64_t *buf_addr,
                             const int64_t *buf_size, int32_t nbufs, Py_ssize_t m,
                             int hid, uint64_t seed, uint64_t *out)
    Py_ssize_t ch_take_objects(PyObject *const *src, Py_ssize_t nsrc, const int32_t *idx,
                               Py_ssize_t m, PyObject **dst, Py_ssize_t *counts)
    void ch_label_positions(uint8_t *label, size_t name_len, uint32_t count, int hid,
                            uint64_t seed, uint64_t *out)
    int ch_prefix_bits(size_t n)
    void ch_build_prefix(const uint64_t *pos, uint32_t n, int k, uint32_t *idx)
    uint32_t ch_find(const uint64_t *pos, uint32_t n, const uint32_t *idx, int shift, uint64_t h)
    void ch_lookup_batch(const uint64_t *pos, uint32_t n, const uint32_t *idx, int k,
                         const int32_t *owners, const uint64_t *hashes, size_t m, int32_t *out)
    ctypedef struct ch_pair:
        uint64_t key
        int32_t val
    int ch_sort_bits(size_t n)
    void ch_sort_pairs(uint64_t *key, int32_t *val, size_t n, ch_pair *tmp, size_t *count)
    void ch_merge(const uint64_t *pa, const int32_t *oa, size_t na, const uint64_t *pb,
                  const int32_t *ob, size_t nb, uint64_t *po, int32_t *oo)
    void ch_build_replicas(const int32_t *owners, uint32_t n, uint32_t r, int32_t *rows)


cdef enum:
    CHUNK = 2048

HASH_IDS = {"xxh3": CH_XXH3, "xxh64": CH_XXH64, "murmur3": CH_MURMUR3, "md5": CH_MD5,
            # compatibility hashes (src/ch_compat_hash.h; ids as in ch_keys.h, checked in
            # _compat.pxi)
            "one_at_a_time": 4, "ketama_md5": 5, "ketama_md5_next": 6, "md5_next": 7,
            "redis_slot": 8, "cassandra": 9, "cassandra_raw": 10}
SEED_LIMITS = {"xxh3": 1 << 64, "xxh64": 1 << 64, "murmur3": 1 << 32, "md5": 1,
               "one_at_a_time": 1, "ketama_md5": 1, "ketama_md5_next": 1, "md5_next": 1,
               "redis_slot": 1, "cassandra": 1, "cassandra_raw": 1 << 64}


class EmptyRingError(LookupError):
    """A lookup was made on a router with no nodes."""


def hash_bytes(str name, const uint8_t[::1] data, uint64_t seed=0):
    """hash_bytes(name, data, seed=0) -> int: one built-in hash of a bytes-like object."""
    cdef int hid = HASH_IDS[name]
    cdef const uint8_t *p = &data[0] if data.shape[0] else <const uint8_t *>b""
    return ch_hash(hid, p, <size_t>data.shape[0], seed)


# ---------------------------------------------------------------------------------------------
# Key bytes and hashing
# ---------------------------------------------------------------------------------------------

def key_bytes(key, Py_ssize_t pos=-1):
    """The bytes a key is hashed as: str -> UTF-8, bytes-like as is, int -> ASCII decimal."""
    if isinstance(key, str):
        return (<str>key).encode("utf-8")
    if isinstance(key, (bytes, bytearray)):
        return bytes(key)
    if isinstance(key, memoryview):
        return key.tobytes()
    if isinstance(key, (bool, np.bool_)):
        pass
    elif isinstance(key, int):
        return str(int(key)).encode("ascii")
    elif isinstance(key, np.integer):
        return str(operator.index(key)).encode("ascii")
    where = f" at position {pos}" if pos >= 0 else ""
    if is_null(key):
        where += " (a missing key: drop it, or pass nulls=\"none\" to map it to None / -1)"
    raise TypeError(
        f"unsupported key type {type(key).__name__!r}{where}: "
        "keys must be str, bytes, bytearray, memoryview or int")


def is_null(key):
    """A missing value: None, a float NaN, pandas.NA or NaT."""
    if key is None:
        return True
    if isinstance(key, float):
        return key != key
    return type(key).__name__ in ("NAType", "NaTType")


cdef class _Hasher:
    """Which hash turns key bytes into uint64: a built-in (hid >= 0, seed) or a callable."""
    cdef readonly int hid
    cdef readonly uint64_t seed
    cdef readonly object func

    def __cinit__(self, int hid, uint64_t seed, func=None):
        self.hid = hid
        self.seed = seed
        self.func = func

    cdef uint64_t call_func(self, bytes b) except? 0:
        v = self.func(b)
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"hash callable must return int, got {type(v).__name__!r}")
        if v < 0 or v >= (1 << 64):
            raise ValueError(f"hash callable must return an int in [0, 2**64), got {v}")
        return <uint64_t>v

    cdef uint64_t hash_bytes_obj(self, bytes b) except? 0:
        if self.func is not None:
            return self.call_func(b)
        return ch_hash(self.hid, <const uint8_t *><char *>b, <size_t>len(b), self.seed)

    cdef uint64_t hash_key(self, object key) except? 0:
        cdef uint64_t h
        cdef uint8_t scratch[CH_SCRATCH]
        cdef PyObject *item = <PyObject *>key
        if self.func is None:
            # The same C path as the batch loop; it declines what needs Python (big ints...).
            if ch_hash_objects(&item, 0, 1, self.hid, self.seed, &h, scratch) == 1:
                return h
        return self.hash_bytes_obj(key_bytes(key))

    def hash(self, key):
        return self.hash_key(key)

    def __reduce__(self):
        return (_Hasher, (self.hid, self.seed, self.func))


cdef class _KeySource:
    """A batch of keys in one of the layouts the keys stage reads without Python objects."""
    cdef int kind
    cdef readonly Py_ssize_t n
    cdef object keep            # the container (and any converted array) kept alive
    cdef object arr             # for chunked conversions
    cdef const uint8_t *data
    cdef const uint8_t *data2
    cdef Py_ssize_t width
    cdef const uint8_t *data3
    cdef list nulls             # positions of missing values, when the caller allows them

    cdef bint buffer_backed(self, _Hasher h):
        """Keys read from buffers alone, so a whole batch can run without the GIL."""
        return h.func is None and self.kind in (K_UCS4, K_FIXED_BYTES, K_INT64, K_UINT64,
                                                K_OFFSETS32, K_OFFSETS64, K_VIEWS)

    cdef Py_ssize_t fill_nogil(self, int hid, uint64_t seed, Py_ssize_t s, Py_ssize_t e,
                               uint64_t *out, uint8_t *scratch) noexcept nogil:
        """fill() for buffer-backed layouts without the GIL; returns -1 when done, or the
        position of a key that needs Python (fill() then handles the chunk)."""
        cdef Py_ssize_t j
        if self.kind == K_UCS4:
            j = ch_hash_ucs4(<const uint32_t *>self.data, self.width, s, e, hid, seed, out,
                             scratch, CH_SCRATCH)
            return -1 if j == e else j
        if self.kind == K_FIXED_BYTES:
            ch_hash_fixed_bytes(self.data, self.width, s, e, hid, seed, out)
        elif self.kind == K_INT64:
            ch_hash_i64(<const int64_t *>self.data + s, e - s, hid, seed, out)
        elif self.kind == K_UINT64:
            ch_hash_u64(<const uint64_t *>self.data + s, e - s, hid, seed, out)
        elif self.kind == K_OFFSETS32:
            ch_hash_offsets32(<const int32_t *>self.data2 + s, self.data, e - s, hid, seed, out)
        elif self.kind == K_OFFSETS64:
            ch_hash_offsets64(<const int64_t *>self.data2 + s, self.data, e - s, hid, seed, out)
        else:
            j = ch_hash_views(self.data2 + 16 * s, <const uint64_t *>self.data,
                              <const int64_t *>self.data3, <int32_t>self.width, e - s, hid,
                              seed, out)
            return -1 if j == e - s else s + j
        return -1

    cdef int fill(self, _Hasher h, Py_ssize_t s, Py_ssize_t e, uint64_t *out) except -1:
        cdef PyObject **items
        cdef Py_ssize_t i = s, j
        cdef uint8_t *scratch
        if h.func is not None:
            return self.fill_python(h, s, e, out)
        if self.kind == K_OBJECTS:
            scratch = <uint8_t *>malloc(CH_SCRATCH)
            if scratch == NULL:
                raise MemoryError()
            try:
                while i < e:
                    items = self.object_items()
                    j = ch_hash_objects(items + s, i - s, e - s, h.hid, h.seed, out, scratch)
                    i = s + j
                    if i < e:
                        out[i - s] = self.slow_hash(h, <object>items[i], i)
                        i += 1
            finally:
                free(scratch)
        elif self.kind == K_UCS4:
            scratch = <uint8_t *>malloc(CH_SCRATCH)
            if scratch == NULL:
                raise MemoryError()
            try:
                while i < e:
                    with nogil:
                        j = ch_hash_ucs4(<const uint32_t *>self.data, self.width, i, e,
                                         h.hid, h.seed, out + (i - s), scratch, CH_SCRATCH)
                    if j < e:
                        out[j - s] = h.hash_bytes_obj(key_bytes(str(self.keep[j]), j))
                        j += 1
                    i = j
            finally:
                free(scratch)
        elif self.kind == K_FIXED_BYTES:
            with nogil:
                ch_hash_fixed_bytes(self.data, self.width, s, e, h.hid, h.seed, out)
        elif self.kind == K_INT64:
            with nogil:
                ch_hash_i64(<const int64_t *>self.data + s, e - s, h.hid, h.seed, out)
        elif self.kind == K_UINT64:
            with nogil:
                ch_hash_u64(<const uint64_t *>self.data + s, e - s, h.hid, h.seed, out)
        elif self.kind == K_INT_CONVERT:
            self.fill_converted(h, s, e, out)
        elif self.kind == K_OFFSETS32:
            with nogil:
                ch_hash_offsets32(<const int32_t *>self.data2 + s, self.data, e - s,
                                  h.hid, h.seed, out)
        elif self.kind == K_OFFSETS64:
            with nogil:
                ch_hash_offsets64(<const int64_t *>self.data2 + s, self.data, e - s,
                                  h.hid, h.seed, out)
        elif self.kind == K_VIEWS:
            with nogil:
                j = ch_hash_views(self.data2 + 16 * s, <const uint64_t *>self.data,
                                  <const int64_t *>self.data3, <int32_t>self.width, e - s,
                                  h.hid, h.seed, out)
            if j < e - s:
                raise ValueError(f"damaged Arrow view at position {s + j}: it points outside "
                                 "its data buffers")
        else:
            raise AssertionError("unknown key layout")  # pragma: no cover
        return 0

    cdef PyObject **object_items(self) except NULL:
        if self.data != NULL:
            return <PyObject **>self.data
        if PySequence_Fast_GET_SIZE(self.keep) != self.n:
            raise RuntimeError("keys changed size during the lookup")
        return PySequence_Fast_ITEMS(self.keep)

    cdef int fill_converted(self, _Hasher h, Py_ssize_t s, Py_ssize_t e, uint64_t *out) except -1:
        cdef const int64_t[::1] v = np.require(self.arr[s:e], np.int64, ["C", "A"])
        if e > s:
            with nogil:
                ch_hash_i64(&v[0], e - s, h.hid, h.seed, out)
        return 0

    cdef int fill_python(self, _Hasher h, Py_ssize_t s, Py_ssize_t e, uint64_t *out) except -1:
        cdef Py_ssize_t i
        for i in range(s, e):
            out[i - s] = self.slow_hash(h, self.item(i), i)
        return 0

    cdef uint64_t slow_hash(self, _Hasher h, object key, Py_ssize_t i) except? 0:
        """Hash one key through Python; a missing value is recorded when nulls are allowed."""
        if self.nulls is not None and is_null(key):
            self.nulls.append(i)
            return 0
        return h.hash_bytes_obj(key_bytes(key, i))

    cdef object item(self, Py_ssize_t i):
        if self.kind == K_OBJECTS:
            return <object>self.object_items()[i]
        if self.kind == K_UCS4:
            return str(self.keep[i])
        if self.kind == K_FIXED_BYTES:
            return bytes(self.keep[i])
        if self.kind in (K_INT64, K_UINT64, K_INT_CONVERT):
            return int(self.keep[i])
        if self.kind == K_VIEWS:
            return self.keep[0][i].as_py()
        if self.kind == K_OFFSETS32:
            a = (<const int32_t *>self.data2)[i]
            b = (<const int32_t *>self.data2)[i + 1]
        else:
            a = (<const int64_t *>self.data2)[i]
            b = (<const int64_t *>self.data2)[i + 1]
        return (<char *>self.data)[a:b]


cdef enum:
    K_OBJECTS = 1
    K_UCS4 = 2
    K_FIXED_BYTES = 3
    K_INT64 = 4
    K_UINT64 = 5
    K_INT_CONVERT = 6
    K_OFFSETS32 = 7
    K_OFFSETS64 = 8
    K_VIEWS = 9


cdef _KeySource _source_from_array(object a):
    cdef _KeySource src = _KeySource.__new__(_KeySource)
    cdef char kind = ord(a.dtype.kind)
    src.n = a.shape[0]
    if kind == b'O':
        # An object ndarray is a PyObject* vector: the object loop reads it in place.
        a = np.ascontiguousarray(a)
        src.kind = K_OBJECTS
        src.keep = a
        src.data = <const uint8_t *><uintptr_t>a.__array_interface__["data"][0]
        return src
    if kind == b'U':
        # Native order, C order and aligned: the kernel reads uint32 code points.
        a = np.require(a, a.dtype.newbyteorder("="), ["C", "A"])
        src.kind = K_UCS4
        src.width = a.dtype.itemsize // 4
    elif kind == b'S':
        a = np.ascontiguousarray(a)
        src.kind = K_FIXED_BYTES
        src.width = a.dtype.itemsize
    elif kind == b'i' and a.dtype.itemsize == 8:
        a = np.require(a, np.int64, ["C", "A"])
        src.kind = K_INT64
    elif kind == b'u' and a.dtype.itemsize == 8:
        a = np.require(a, np.uint64, ["C", "A"])
        src.kind = K_UINT64
    elif kind in (b'i', b'u'):
        src.kind = K_INT_CONVERT
        src.arr = a
    elif kind == b'T':
        return _source_from_array(a.astype(object))
    else:
        raise TypeError(
            f"unsupported key array dtype {a.dtype}: use str (U, T), bytes (S), object "
            "or integer arrays; for keys already hashed to uint64 use lookup()")
    src.keep = a
    if src.kind != K_INT_CONVERT and a.size:
        src.data = <const uint8_t *><uintptr_t>a.__array_interface__["data"][0]
    return src


cdef _KeySource make_source(keys):
    """Normalise a key container (list, tuple, ndarray, pyarrow, pandas) into a _KeySource."""
    cdef _KeySource src
    if isinstance(keys, (list, tuple)):
        src = _KeySource.__new__(_KeySource)
        src.kind = K_OBJECTS
        src.keep = keys
        src.n = len(keys)
        return src
    if isinstance(keys, np.ndarray):
        if keys.ndim != 1:
            raise ValueError(f"keys must be one-dimensional, got an array of shape {keys.shape}")
        return _source_from_array(keys)
    if isinstance(keys, (str, bytes, bytearray, memoryview)) or not hasattr(keys, "__len__"):
        raise TypeError(
            f"keys must be a list, tuple, NumPy array, pyarrow array or pandas Series, "
            f"got {type(keys).__name__!r} (use get() for a single key)")
    from consistent_hash._containers import convert_keys
    converted = convert_keys(keys)
    if isinstance(converted, _KeySource):
        return converted
    return make_source(converted)


def arrow_source(object offsets, object data, Py_ssize_t n, bint large):
    """A _KeySource over Arrow-style offsets (int32 or int64, n + 1 of them) and data."""
    cdef _KeySource src = _KeySource.__new__(_KeySource)
    src.kind = K_OFFSETS64 if large else K_OFFSETS32
    src.n = n
    src.keep = (offsets, data)
    src.data2 = <const uint8_t *><uintptr_t>offsets.__array_interface__["data"][0]
    src.data = (<const uint8_t *><uintptr_t>data.__array_interface__["data"][0] if data.size
                else <const uint8_t *>b"")
    return src


def arrow_view_source(object array, object views, object buf_addr, object buf_size):
    """A _KeySource over an Arrow string_view / binary_view array: views (uint8, 16 per
    element, the array's offset applied), and the addresses and sizes of its data buffers."""
    cdef _KeySource src = _KeySource.__new__(_KeySource)
    src.kind = K_VIEWS
    src.n = len(views) // 16
    src.keep = (array, views, buf_addr, buf_size)
    src.data2 = <const uint8_t *><uintptr_t>views.__array_interface__["data"][0]
    src.data = <const uint8_t *><uintptr_t>buf_addr.__array_interface__["data"][0]
    src.data3 = <const uint8_t *><uintptr_t>buf_size.__array_interface__["data"][0]
    src.width = len(buf_addr)
    return src


# ---------------------------------------------------------------------------------------------
# Routers
# ---------------------------------------------------------------------------------------------

cdef class _Router:
    """Base of every algorithm's kernel: maps uint64 hashes to int32 node indices."""

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        pass

    cdef int check(self) except -1:
        return 0


def route_keys(_Router router, _Hasher hasher, keys, int32_t[::1] out=None, bint nulls=False,
               bint raw_ints=False):
    """Hash keys in chunks and route them; returns the int32 node indices.

    With nulls=True a missing key (None, NaN, pandas.NA) gets index -1 instead of raising.
    With raw_ints=True integer keys are used as they are, not hashed (JumpHash, MementoHash)."""
    router.check()
    cdef _KeySource src = make_source(keys)
    if nulls:
        src.nulls = []
    if out is None:
        out = np.empty(src.n, dtype=np.int32)
    elif out.shape[0] != src.n:
        raise ValueError(f"out has length {out.shape[0]}, expected {src.n}")
    cdef uint64_t buf[CHUNK]
    cdef Py_ssize_t s = 0, e, stop = -1
    cdef uint8_t *scratch
    if not raw_ints and src.buffer_backed(hasher) and src.n > CHUNK:
        # One GIL release for the whole batch: threads then run their batches in parallel
        # (releasing per 2,048-key chunk would hand the GIL back and forth every ~10 us).
        scratch = <uint8_t *>malloc(CH_SCRATCH)
        if scratch == NULL:
            raise MemoryError()
        with nogil:
            while s < src.n:
                e = min(src.n, s + CHUNK)
                stop = src.fill_nogil(hasher.hid, hasher.seed, s, e, buf, scratch)
                if stop >= 0:
                    break  # a key needs Python: the loop below takes over from this chunk
                router.route(buf, e - s, &out[s])
                s = e
        free(scratch)
    while s < src.n:
        e = min(src.n, s + CHUNK)
        if raw_ints:
            _fill_raw(src, hasher, s, e, buf)
        else:
            src.fill(hasher, s, e, buf)
        with nogil:
            router.route(buf, e - s, &out[s])
        s = e
    if src.nulls:
        for s in src.nulls:
            out[s] = -1
    return out.base if out.base is not None else np.asarray(out)


def hash_keys(_Hasher hasher, keys, uint64_t[::1] out=None):
    """Hash every key into a uint64 array."""
    cdef _KeySource src = make_source(keys)
    if out is None:
        out = np.empty(src.n, dtype=np.uint64)
    elif out.shape[0] != src.n:
        raise ValueError(f"out has length {out.shape[0]}, expected {src.n}")
    cdef Py_ssize_t s = 0, e, stop = -1
    cdef uint8_t *scratch
    if src.buffer_backed(hasher) and src.n > CHUNK:
        scratch = <uint8_t *>malloc(CH_SCRATCH)
        if scratch == NULL:
            raise MemoryError()
        with nogil:
            while s < src.n:
                e = min(src.n, s + CHUNK)
                stop = src.fill_nogil(hasher.hid, hasher.seed, s, e, &out[s], scratch)
                if stop >= 0:
                    break
                s = e
        free(scratch)
    while s < src.n:
        e = min(src.n, s + CHUNK)
        src.fill(hasher, s, e, &out[s])
        s = e
    return out.base if out.base is not None else np.asarray(out)


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


def route_hashes(_Router router, const uint64_t[::1] hashes, int32_t[::1] out=None):
    """Route uint64 hashes; returns int32 node indices."""
    router.check()
    cdef Py_ssize_t m = hashes.shape[0]
    if out is None:
        out = np.empty(m, dtype=np.int32)
    elif out.shape[0] != m:
        raise ValueError(f"out has length {out.shape[0]}, expected {m}")
    if m:
        with nogil:
            router.route(&hashes[0], m, &out[0])
    return out.base if out.base is not None else np.asarray(out)


cdef class _Ring(_Router):
    """An immutable ring snapshot: sorted positions, owners, prefix index, node labels."""
    cdef readonly object positions      # read-only uint64[V] (a view of the padded array)
    cdef readonly object owners         # read-only int32[V]
    cdef readonly tuple nodes
    cdef readonly _Hasher hasher
    cdef object _padded
    cdef object _prefix
    cdef object _replica_tables
    cdef object _nodes_array
    cdef const uint64_t *pos
    cdef const int32_t *own
    cdef const uint32_t *idx
    cdef uint32_t n
    cdef int k

    def __cinit__(self, positions, owners, tuple nodes, _Hasher hasher):
        positions = np.ascontiguousarray(positions, dtype=np.uint64)
        owners = np.ascontiguousarray(owners, dtype=np.int32)
        cdef Py_ssize_t V = positions.shape[0]
        if owners.shape[0] != V:
            raise ValueError("positions and owners differ in length")
        if V >= (1 << 31) - CH_PAD:
            raise ValueError("ring too large")
        padded = np.full(V + CH_PAD, np.iinfo(np.uint64).max, dtype=np.uint64)
        padded[:V] = positions
        own = owners.copy()
        # Read-only views of read-only arrays: a view's writeable flag cannot be set back.
        own.flags.writeable = False
        padded.flags.writeable = False
        self._padded = padded
        self.positions = padded[:V]
        self.owners = own.view()
        self.nodes = nodes
        self.hasher = hasher
        self.n = <uint32_t>V
        self.k = ch_prefix_bits(<size_t>V)
        prefix = np.empty((1 << self.k) + 1, dtype=np.uint32)
        cdef uint32_t[::1] pv = prefix
        cdef const uint64_t[::1] ppv = padded
        cdef const int32_t[::1] ov = own
        self.pos = &ppv[0]
        self.own = &ov[0] if V else NULL
        with nogil:
            ch_build_prefix(self.pos, self.n, self.k, &pv[0])
        self._prefix = prefix
        self.idx = &pv[0]
        self._replica_tables = {}
        self._nodes_array = None

    cdef void route(self, const uint64_t *h, Py_ssize_t m, int32_t *out) noexcept nogil:
        ch_lookup_batch(self.pos, self.n, self.idx, self.k, self.own, h, <size_t>m, out)

    cdef int check(self) except -1:
        if self.n == 0:
            raise EmptyRingError("the ring has no nodes")
        return 0

    def __len__(self):
        return self.n

    def check_nonempty(self):
        """Raise EmptyRingError when the ring has no positions."""
        self.check()

    def nodes_array(self):
        """The node names as an object ndarray (for mapping index arrays to names)."""
        if self._nodes_array is None:
            # One extra None at the end: index -1 (a missing key) maps to None.
            a = np.empty(len(self.nodes) + 1, dtype=object)
            a[:len(self.nodes)] = self.nodes
            a.flags.writeable = False
            self._nodes_array = a
        return self._nodes_array

    def position_index(self, uint64_t h):
        """Index of the first position >= h, wrapping to 0."""
        self.check()
        return ch_find(self.pos, self.n, self.idx, 64 - self.k, h)

    def index_of_hash(self, uint64_t h):
        self.check()
        return self.own[ch_find(self.pos, self.n, self.idx, 64 - self.k, h)]

    def index(self, key):
        """Node index of one key (the scalar fast path)."""
        if self.n == 0:
            raise EmptyRingError("the ring has no nodes")
        cdef uint64_t h = self.hasher.hash_key(key)
        return self.own[ch_find(self.pos, self.n, self.idx, 64 - self.k, h)]

    def get(self, key):
        """Node name of one key (the scalar fast path)."""
        if self.n == 0:
            raise EmptyRingError("the ring has no nodes")
        cdef uint64_t h = self.hasher.hash_key(key)
        return self.nodes[self.own[ch_find(self.pos, self.n, self.idx, 64 - self.k, h)]]

    def replica_table(self, uint32_t r):
        """int32[V, r]: the first r distinct owners clockwise from each position (cached)."""
        t = self._replica_tables.get(r)
        if t is None:
            t = np.empty((self.n, r), dtype=np.int32)
            if self.n:
                self._build_replicas(t, r)
            t.flags.writeable = False
            self._replica_tables[r] = t
        return t

    cdef _build_replicas(self, t, uint32_t r):
        cdef int32_t[:, ::1] tv = t
        with nogil:
            ch_build_replicas(self.own, self.n, r, &tv[0, 0])

    def replicas_of_hashes(self, const uint64_t[::1] hashes, uint32_t r):
        """int32[m, r]: replica node indices for each hash."""
        self.check()
        table = self.replica_table(r)
        cdef const int32_t[:, ::1] tv = table
        cdef Py_ssize_t m = hashes.shape[0], j
        out = np.empty((m, r), dtype=np.int32)
        cdef int32_t[:, ::1] ov = out
        cdef uint32_t i
        cdef int shift = 64 - self.k
        with nogil:
            for j in range(m):
                i = ch_find(self.pos, self.n, self.idx, shift, hashes[j])
                memcpy(&ov[j, 0], &tv[i, 0], r * sizeof(int32_t))
        return out

    def replicas_of_keys(self, keys, uint32_t r):
        """int32[m, r]: replica node indices for each key, hashed and searched in chunks."""
        self.check()
        table = self.replica_table(r)
        cdef const int32_t[:, ::1] tv = table
        cdef _KeySource src = make_source(keys)
        out = np.empty((src.n, r), dtype=np.int32)
        cdef int32_t[:, ::1] ov = out
        cdef uint64_t buf[CHUNK]
        cdef Py_ssize_t s, e, j
        cdef uint32_t i
        cdef int shift = 64 - self.k
        for s in range(0, src.n, CHUNK):
            e = min(src.n, s + CHUNK)
            src.fill(self.hasher, s, e, buf)
            with nogil:
                for j in range(s, e):
                    i = ch_find(self.pos, self.n, self.idx, shift, buf[j - s])
                    memcpy(&ov[j, 0], &tv[i, 0], r * sizeof(int32_t))
        return out


# ---------------------------------------------------------------------------------------------
# Building rings
# ---------------------------------------------------------------------------------------------

def label_positions(_Hasher hasher, list names, const uint32_t[::1] counts, int32_t first_owner=0):
    """Positions of every vnode label utf8(name) + b"#" + decimal j, j < count, sorted by
    (position, owner); owner i + first_owner is names[i].  Returns (positions, owners)."""
    cdef Py_ssize_t nn = len(names), i
    cdef uint64_t total = 0
    for i in range(nn):
        total += counts[i]
    if total >= (1 << 31) - CH_PAD:
        raise ValueError(f"the ring would have {total} vnodes; at most 2**31 - 9 are supported")
    pos = np.empty(total, dtype=np.uint64)
    own = np.empty(total, dtype=np.int32)
    if total == 0:
        return pos, own
    cdef uint64_t[::1] pv = pos
    cdef int32_t[::1] ov = own
    cdef size_t off = 0, maxlen = 0
    cdef bytes name
    cdef uint8_t *label
    cdef uint32_t j
    cdef size_t namelen
    cdef int hid = hasher.hid
    cdef uint64_t seed = hasher.seed
    for name in names:
        maxlen = max(maxlen, <size_t>len(name))
    if hasher.func is not None:
        for i in range(nn):
            name = names[i]
            for j in range(counts[i]):
                pv[off] = hasher.call_func(name + b"#" + str(j).encode("ascii"))
                ov[off] = <int32_t>i + first_owner
                off += 1
    else:
        label = <uint8_t *>malloc(maxlen + 24)
        if label == NULL:
            raise MemoryError()
        try:
            for i in range(nn):
                name = names[i]
                namelen = len(name)
                memcpy(label, <char *>name, namelen)
                with nogil:
                    ch_label_positions(label, namelen, counts[i], hid, seed, &pv[off])
                    for j in range(counts[i]):
                        ov[off + j] = <int32_t>i + first_owner
                off += counts[i]
        finally:
            free(label)
    sort_pairs(pos, own)
    return pos, own


def sort_pairs(uint64_t[::1] keys, int32_t[::1] vals):
    """In-place sort of (keys, vals) pairs by (key, val)."""
    cdef Py_ssize_t n = keys.shape[0]
    if vals.shape[0] != n:
        raise ValueError("keys and vals differ in length")
    if n < 2:
        return
    cdef size_t nb = (<size_t>1) << ch_sort_bits(<size_t>n)
    cdef ch_pair *tmp = <ch_pair *>malloc(<size_t>n * sizeof(ch_pair))
    cdef size_t *count = <size_t *>malloc((nb + 1) * sizeof(size_t))
    try:
        if tmp == NULL or count == NULL:
            raise MemoryError()
        with nogil:
            ch_sort_pairs(&keys[0], &vals[0], <size_t>n, tmp, count)
    finally:
        free(tmp)
        free(count)


def merge_sorted(const uint64_t[::1] pa, const int32_t[::1] oa,
                 const uint64_t[::1] pb, const int32_t[::1] ob):
    """Merge two (position, owner)-sorted runs into one; returns (positions, owners)."""
    cdef Py_ssize_t na = pa.shape[0], nb = pb.shape[0]
    po = np.empty(na + nb, dtype=np.uint64)
    oo = np.empty(na + nb, dtype=np.int32)
    if na + nb == 0:
        return po, oo
    cdef uint64_t[::1] pov = po
    cdef int32_t[::1] oov = oo
    cdef const uint64_t *ppa = &pa[0] if na else NULL
    cdef const int32_t *poa = &oa[0] if na else NULL
    cdef const uint64_t *ppb = &pb[0] if nb else NULL
    cdef const int32_t *pob = &ob[0] if nb else NULL
    with nogil:
        ch_merge(ppa, poa, na, ppb, pob, nb, &pov[0], &oov[0])
    return po, oo


# ---------------------------------------------------------------------------------------------
# Compatibility modes and algorithm kernels (one include file each)
# ---------------------------------------------------------------------------------------------

include "_compat.pxi"
include "_algos.pxi"
include "_jump.pxi"
include "_rendezvous.pxi"
include "_maglev.pxi"
include "_health.pxi"
include "_multiprobe.pxi"
include "_memento.pxi"
include "_bounded.pxi"
