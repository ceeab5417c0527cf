# The keys stage: any batch of keys -> uint64 hashes, for every hash function.
#
# A key is str (hashed as its UTF-8), bytes / bytearray / memoryview (as is) or int (as its
# ASCII decimal, e.g. -12 -> b"-12"); bool is refused everywhere.  A _Hasher names the hash:
# a built-in C hash (hid, seed) or a Python callable bytes -> int in [0, 2**64).  With
# raw_ints an integer key (int, NumPy integer, integer array; not bool) is not hashed: its
# 64-bit two's-complement value is the hash (JumpHash and MementoHash keys, which are
# commonly already numbers).
#
# A _KeySource is one batch in one of the layouts the C kernels of ch_keys.h read without
# Python objects: a PyObject* vector (list, tuple, object array), UCS-4 code points (NumPy U),
# fixed-width bytes (NumPy S), int64 / uint64 (or a narrower integer array converted chunk by
# chunk), Arrow offsets + data, Arrow views.  The core accepts only list, tuple, 1-D ndarray
# or a source built by arrow_source / arrow_view_source: consistent_hash/_containers.py turns
# every other container into one of those.

# The C types and helpers every piece uses (the C declarations of the headers: _ring.pxd).
cimport cython
from cpython.bool cimport PyBool_Check
from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_Check
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_Check, PyUnicode_Compare
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

import operator

import numpy as np

ch_crc_init()  # before any hash runs: the CRC tables of ch_crc.h
ch_simd_detect()  # which SIMD forms batch kernels may use (ch_platform.h)

_SIMD_LEVELS = ("portable", "avx2", "avx512")


def _simd(object level=None):
    """The widest SIMD form batch kernels use: "avx512", "avx2" or "portable" (a test hook:
    level caps it, so each form can be compared with the others on one machine; the CPU's
    own limit still holds).  Returns the old setting."""
    old = "avx512" if ch_simd_avx512 else "avx2" if ch_simd_avx2 else "portable"
    if level is not None:
        if level not in _SIMD_LEVELS:
            raise ValueError(f"level must be one of {_SIMD_LEVELS}, not {level!r}")
        ch_simd_cap(_SIMD_LEVELS.index(level))
    return old


def _direct_pairs(object use=None):
    """Whether rings whose routing is set from now on may build direct tables of pairs
    (ch_search.h; a test hook: use=False makes them build single words, as wider owners do).
    Returns the old setting."""
    global ch_direct_pairs_on
    old = bool(ch_direct_pairs_on)
    if use is not None:
        ch_direct_pairs_on = 1 if use else 0
    return old


def _direct_lines(object use=None):
    """Whether rings past the direct table whose routing is set from now on may build line
    tables (ch_search.h; a test and bench hook: use=False leaves them to the search).
    Returns the old setting."""
    global ch_direct_lines_on
    old = bool(ch_direct_lines_on)
    if use is not None:
        ch_direct_lines_on = 1 if use else 0
    return old


# Every hash by name: read from the one table of src/ch_hashes.h (ids are written only there).
HASH_IDS = {ch_hash_rows[i].name.decode("ascii"): ch_hash_rows[i].id
            for i in range(ch_hash_count)}

_U64_MASK = (1 << 64) - 1


def hash_bytes(str name, const uint8_t[::1] data, uint64_t seed=0):
    """hash_bytes(name, data, seed=0) -> int: one built-in hash of a bytes-like object."""
    cdef int hid = HASH_IDS[name]
    cdef const uint8_t *p = &data[0] if data.shape[0] else <const uint8_t *>b""
    return ch_hash(hid, p, <size_t>data.shape[0], seed)


def key_bytes(key, Py_ssize_t pos=-1, bint hint=False):
    """The bytes a key is hashed as: str -> UTF-8, bytes-like as is, int -> ASCII decimal.
    TypeError for anything else, naming pos if >= 0; for a missing key, with hint, the message
    suggests nulls="none" (only calls that take nulls= should ask for it)."""
    return _key_bytes(key, pos, hint)


cdef bytes _key_bytes(object key, Py_ssize_t pos, bint hint):
    if isinstance(key, str):
        try:
            return (<str>key).encode("utf-8")
        except UnicodeEncodeError as e:
            if pos < 0:
                raise  # one key: str.encode's own error
            # str.encode's error (its position is inside the key), naming the batch position
            raise UnicodeEncodeError(e.encoding, e.object, e.start, e.end,
                                     f"{e.reason} (the key at position {pos} of the batch)"
                                     ) from None
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
        where += (" (a missing key: drop it, or pass nulls=\"none\" to map it to None / -1)"
                  if hint else " (a missing key: drop or fill it first)")
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


cdef inline bint _is_int_key(object key):
    """An int or NumPy integer, not a bool (str and bytes answer without a Python call)."""
    if PyLong_Check(key):
        return not PyBool_Check(key)
    if PyUnicode_Check(key) or PyBytes_Check(key):
        return False
    return isinstance(key, np.integer)


cdef uint64_t _int_key(object key, Py_ssize_t pos=-1) except? 0:
    """An integer key used directly as a 64-bit value (two's complement for negatives)."""
    v = operator.index(key)
    if -(1 << 63) <= v < (1 << 64):
        return <uint64_t>(v & _U64_MASK)
    where = f" at position {pos}" if pos >= 0 else ""
    raise ValueError(f"integer key {v}{where} does not fit in 64 bits: integer keys are used "
                     "directly as 64-bit values (from -2**63 to 2**64 - 1); pass it as str "
                     "to have it hashed")


cdef class _Hasher:
    """Which hash turns key bytes into uint64: a built-in (hid >= 0, seed) or a callable;
    with raw_ints, integer keys are their own 64-bit value instead."""
    cdef readonly int hid
    cdef readonly uint64_t seed
    cdef readonly object func
    cdef readonly bint raw_ints

    def __cinit__(self, int hid, uint64_t seed, func=None, bint raw_ints=False):
        self.hid = hid
        self.seed = seed
        self.func = func
        self.raw_ints = raw_ints

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

    cdef inline uint64_t hash_one(self, object key) except? 0:
        """hash_key, with the commonest keys (an ASCII str, bytes, a small int) hashed
        straight from the object: the built-in hash's case here, small enough to be inlined
        into every per-request call; the rest out of line (hash_one_rest)."""
        cdef uint64_t h
        if not self.raw_ints and self.func is None and ch_hash_key1(<PyObject *>key, self.hid,
                                                                     self.seed, &h):
            return h
        return self.hash_one_rest(key)

    cdef uint64_t hash_one_rest(self, object key) except? 0:
        """hash_one past its first test: raw integer keys, and whatever ch_hash_key1 declines
        (then hash_key, the general path)."""
        cdef uint64_t h
        cdef long long v
        if self.raw_ints:
            if type(key) is int:
                if ch_small_int(<PyObject *>key, &v):  # an int below 2**63: its own value
                    return <uint64_t>v
            elif self.func is None and ch_hash_key1(<PyObject *>key, self.hid, self.seed, &h):
                return h
        return self.hash_key(key)

    cdef uint64_t hash_key(self, object key) except? 0:
        cdef uint64_t h
        cdef uint8_t scratch[CH_SCRATCH]
        cdef PyObject *item = <PyObject *>key
        if self.raw_ints and _is_int_key(key):
            return _int_key(key)
        if self.func is None:
            # The same C path as the batch loop; it declines what needs Python (big ints...).
            if ch_hash_objects(&item, 0, 1, self.hid, self.seed, &h, scratch) == 1:
                return h
        return self.hash_bytes_obj(_key_bytes(key, -1, False))

    def hash(self, key):
        """uint64 of one key (its raw value for an integer key with raw_ints)."""
        return self.hash_key(key)

    def __reduce__(self):
        return (_Hasher, (self.hid, self.seed, self.func, self.raw_ints))


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
    cdef bint signed_ints       # K_INT_CONVERT: signed (width: the itemsize, 1, 2 or 4)
    cdef list nulls             # positions of missing values, when the caller allows them
    cdef bint hint              # a missing key's error suggests nulls="none"

    cdef bint buffer_backed(self, _Hasher h):
        """Keys read from buffers alone, so a whole batch can run without the GIL."""
        if self.kind == K_INT_CONVERT:
            return self.data != NULL and (h.raw_ints or h.func is None)
        if h.raw_ints and (self.kind == K_INT64 or self.kind == K_UINT64):
            return True
        return h.func is None and self.kind in (K_UCS4, K_FIXED_BYTES, K_INT64, K_UINT64,
                                                K_OFFSETS32, K_OFFSETS64, K_VIEWS)

    cdef Py_ssize_t fill_nogil(self, _Hasher h, Py_ssize_t s, Py_ssize_t e,
                               uint64_t *out, uint8_t *scratch,
                               PyObject **items) noexcept nogil:
        """fill() for buffer-backed layouts without the GIL; returns -1 when done, or the
        position p of a key that needs Python (fill() then handles it; out[0 : p - s] hold the
        final hashes of the keys before it).

        K_OBJECTS (a built-in hash) only from the parallel driver: items is the object vector,
        read while the calling thread holds the GIL (see _pipeline.pxi); the kernel declines
        whatever needs Python (big ints, non-compact str, other types); with raw_ints the
        exact ints then take their own value, as fill() gives them."""
        cdef Py_ssize_t j
        cdef int hid = h.hid
        cdef uint64_t seed = h.seed
        if h.raw_ints and (self.kind == K_INT64 or self.kind == K_UINT64):
            memcpy(out, self.data + 8 * s, (e - s) * 8)
            return -1
        if self.kind == K_INT_CONVERT:
            # Widened into scratch (CH_SCRATCH holds a chunk of int64), then as K_INT64.
            ch_widen_ints(self.data + s * self.width, <int>self.width, self.signed_ints, e - s,
                          <int64_t *>scratch)
            if h.raw_ints:
                memcpy(out, scratch, (e - s) * 8)
            else:
                ch_hash_i64(<const int64_t *>scratch, e - s, hid, seed, out)
            return -1
        if self.kind == K_OBJECTS:
            j = ch_hash_objects_ahead(items + s, 0, e - s, self.n - s, hid, seed, out, scratch)
            if h.raw_ints:
                ch_raw_int_objects(items + s, j, out)
            return -1 if j == e - s else s + j
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
        """Hashes of keys s..e into out[0 : e - s], with the GIL (any layout, any hasher)."""
        cdef PyObject **items
        cdef Py_ssize_t i
        if h.raw_ints:
            if self.kind == K_INT64 or self.kind == K_UINT64:
                memcpy(out, self.data + 8 * s, (e - s) * 8)
                return 0
            if self.kind == K_INT_CONVERT:
                return self.fill_converted(h, s, e, out)
        self.fill_hashed(h, s, e, out)
        if h.raw_ints and self.kind == K_OBJECTS:
            # Hashed above like any key; integer items then take their own value.
            items = self.object_items()
            for i in range(s, e):
                o = <object>items[i]
                if _is_int_key(o):
                    out[i - s] = _int_key(o, i)
        return 0

    cdef int fill_hashed(self, _Hasher h, Py_ssize_t s, Py_ssize_t e, uint64_t *out) except -1:
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
                        out[j - s] = h.hash_bytes_obj(_key_bytes(_ucs4_item(self.keep, j), j,
                                                                 False))
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
        """A narrower integer array, widened to int64 one chunk at a time."""
        cdef const int64_t[::1] v = np.require(self.arr[s:e], np.int64, ["C", "A"])
        if e > s:
            if h.raw_ints:
                memcpy(out, &v[0], (e - s) * 8)
            else:
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
        return h.hash_bytes_obj(_key_bytes(key, i, self.hint))

    cdef object item(self, Py_ssize_t i):
        if self.kind == K_OBJECTS:
            return <object>self.object_items()[i]
        if self.kind == K_UCS4:
            return _ucs4_item(self.keep, i)
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


cdef str _ucs4_item(object a, Py_ssize_t i):
    """Item i of a NumPy U array as a str; a code point above U+10FFFF (which no str holds,
    and NumPy reports as a SystemError) is a ValueError naming the position."""
    try:
        return str(a[i])
    except (SystemError, ValueError):
        raise ValueError(f"key at position {i} is not a string: it holds a code point above "
                         "U+10FFFF") from None


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
        # Narrower integers: widened to int64 a chunk at a time, in C when the array is
        # contiguous, aligned and native (data set below), through NumPy otherwise.
        src.kind = K_INT_CONVERT
        src.arr = a
        src.width = a.dtype.itemsize
        src.signed_ints = kind == b'i'
    elif kind == b'T':
        return _source_from_array(a.astype(object))
    else:
        raise TypeError(
            f"unsupported key array dtype {a.dtype}: use str (U, T), bytes (S), object "
            "or integer arrays; for keys already hashed to uint64 use lookup()")
    src.keep = a
    if a.size and (src.kind != K_INT_CONVERT or (a.flags.c_contiguous and a.flags.aligned
                                                and a.dtype.isnative)):
        src.data = <const uint8_t *><uintptr_t>a.__array_interface__["data"][0]
    return src


cdef _KeySource make_source(keys):
    """A list, tuple, 1-D ndarray or an already-built _KeySource, as a _KeySource; TypeError
    for anything else (consistent_hash/_containers.py converts the other containers)."""
    cdef _KeySource src
    if isinstance(keys, _KeySource):
        return keys
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
    raise TypeError(f"the keys stage reads a list, tuple, 1-D NumPy array or a key source, "
                    f"got {type(keys).__name__!r}")


def keys_source(keys):
    """keys (list, tuple, 1-D ndarray or a _KeySource) as a _KeySource."""
    return make_source(keys)


cdef Py_ssize_t _bad_offset(const uint8_t *off, bint large, Py_ssize_t n,
                            int64_t size) noexcept nogil:
    """The first of n + 1 offsets that is negative, smaller than the one before it or past
    the data (size bytes), or -1: non-decreasing offsets from >= 0 to <= size keep every key
    inside the data, whatever the array claims (pyarrow checks this only in validate(full=True))."""
    cdef Py_ssize_t i
    cdef int64_t prev = 0, cur
    for i in range(n + 1):
        cur = (<const int64_t *>off)[i] if large else (<const int32_t *>off)[i]
        if cur < prev:
            return i
        prev = cur
    return n if prev > size else -1


def arrow_source(object offsets, object data, Py_ssize_t n, bint large):
    """A _KeySource over Arrow-style offsets (int32 or int64, n + 1 of them) and data.
    Damaged offsets (out of order, or outside the data) raise ValueError."""
    cdef _KeySource src = _KeySource.__new__(_KeySource)
    cdef Py_ssize_t bad
    if offsets.dtype != (np.int64 if large else np.int32) or not offsets.flags.c_contiguous \
            or not offsets.flags.aligned or len(offsets) < n + 1 or n < 0:
        raise ValueError(f"damaged Arrow array: expected {n + 1} aligned "
                         f"{'int64' if large else 'int32'} offsets, got {len(offsets)}")
    if data.dtype != np.uint8 or data.ndim != 1 or not data.flags.c_contiguous:
        raise ValueError("damaged Arrow array: the data buffer is not contiguous bytes")
    src.kind = K_OFFSETS64 if large else K_OFFSETS32
    src.n = n
    src.keep = (offsets, data)
    src.data2 = <const uint8_t *><uintptr_t>offsets.__array_interface__["data"][0]
    src.data = (<const uint8_t *><uintptr_t>data.__array_interface__["data"][0] if data.size
                else <const uint8_t *>b"")
    cdef int64_t size = data.size
    with nogil:
        bad = _bad_offset(src.data2, large, n, size)
    if bad >= 0:
        raise ValueError(f"damaged Arrow array: offset {bad} is out of order or outside the "
                         f"data buffer ({size} bytes); pyarrow's validate(full=True) rejects it")
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


def node_hashes(_Hasher hasher, tuple nodes):
    """uint64 H(utf8(name), seed) of each node name (always hashed, even with raw_ints)."""
    out = np.empty(len(nodes), dtype=np.uint64)
    cdef Py_ssize_t i
    for i in range(len(nodes)):
        out[i] = hasher.hash_bytes_obj((<str>nodes[i]).encode("utf-8"))
    return out


cdef _Hasher _raw_int_hasher(_Hasher h):
    """h with raw_ints set (the same hasher when it already is)."""
    return h if h.raw_ints else _Hasher(h.hid, h.seed, h.func, True)
