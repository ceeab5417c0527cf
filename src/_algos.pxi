# Shared machinery of the algorithm kernels (JumpHash, Rendezvous, Maglev, MultiProbe,
# MementoHash): included at the end of _ring.pyx, so it sees the keys stage's internals.
#
# Every algorithm is an _AlgoCore: an immutable snapshot holding its node names, its hasher
# and its arrays, with one nogil batch kernel (route) and a scalar path built on it.

from cpython.bool cimport PyBool_Check
from cpython.bytes cimport PyBytes_Check
from cpython.long cimport PyLong_Check
from cpython.unicode cimport PyUnicode_Check

cdef extern from "ch_mix.h" nogil:
    uint64_t ch_mix64(uint64_t z)
    uint64_t ch_mulhi(uint64_t a, uint64_t b)
    enum:
        CH_GOLDEN


_U64_MASK = (1 << 64) - 1


cdef uint64_t _int_key(object key, Py_ssize_t pos=-1) except? 0:
    """An integer key used directly as a 64-bit value (two's complement for negatives)."""
    v = operator.index(key)
    if -(1 << 63) <= v < (1 << 64):
        return <uint64_t>(v & _U64_MASK)
    where = f" at position {pos}" if pos >= 0 else ""
    raise ValueError(f"integer key {v}{where} does not fit in 64 bits: integer keys are used "
                     "directly as 64-bit values (from -2**63 to 2**64 - 1); pass it as str "
                     "to have it hashed")


cdef inline bint _is_int_key(object key):
    """An int or NumPy integer, not a bool (str and bytes answer without a Python call)."""
    if PyLong_Check(key):
        return not PyBool_Check(key)
    if PyUnicode_Check(key) or PyBytes_Check(key):
        return False
    return isinstance(key, np.integer)


cdef class _AlgoCore(_Router):
    """Base of the algorithm snapshots: node names, hasher, the int-key rule, scalar lookups."""
    cdef readonly tuple nodes
    cdef readonly _Hasher hasher
    cdef readonly bint raw_ints       # integer keys are used as they are, not hashed
    cdef Py_ssize_t live              # routable nodes; 0 makes every lookup raise
    cdef object _nodes_array
    cdef str algo

    cdef int init_base(self, str algo, tuple nodes, _Hasher hasher, bint raw_ints) except -1:
        self.algo = algo
        self.nodes = nodes
        self.hasher = hasher
        self.raw_ints = raw_ints
        self.live = len(nodes)
        self._nodes_array = None
        return 0

    cdef int check(self) except -1:
        if self.live == 0:
            raise EmptyRingError(f"the {self.algo} has no nodes")
        return 0

    cdef uint64_t key_hash(self, object key) except? 0:
        if self.raw_ints and _is_int_key(key):
            return _int_key(key)
        return self.hasher.hash_key(key)

    def hash(self, key):
        """The uint64 a key is routed by."""
        return self.key_hash(key)

    def hash_many(self, keys):
        """uint64 of each key (a container the keys stage reads directly)."""
        if not self.raw_ints:
            return hash_keys(self.hasher, keys)
        cdef _KeySource src = make_source(keys)
        out = np.empty(src.n, dtype=np.uint64)
        cdef uint64_t[::1] ov = out
        cdef Py_ssize_t s, e
        for s in range(0, src.n, CHUNK):
            e = min(src.n, s + CHUNK)
            _fill_raw(src, self.hasher, s, e, &ov[s])
        return out

    cdef int32_t route1(self, uint64_t h) noexcept nogil:
        cdef int32_t out = -1
        self.route(&h, 1, &out)
        return out

    def index(self, key):
        """Node index of one key."""
        self.check()
        return self.route1(self.key_hash(key))

    def get(self, key):
        """Node name of one key."""
        self.check()
        return self.nodes[self.route1(self.key_hash(key))]

    def index_of_hash(self, uint64_t h):
        self.check()
        return self.route1(h)

    def check_nonempty(self):
        self.check()

    def nodes_array(self):
        """Node names as an object ndarray, plus a trailing None for index -1."""
        if self._nodes_array is None:
            a = np.empty(len(self.nodes) + 1, dtype=object)
            a[:len(self.nodes)] = self.nodes
            a.flags.writeable = False
            self._nodes_array = a
        return self._nodes_array

    def __len__(self):
        return len(self.nodes)


cdef int _fill_raw(_KeySource src, _Hasher h, Py_ssize_t s, Py_ssize_t e,
                   uint64_t *out) except -1:
    """Keys -> uint64 with integer keys taken as they are: integer arrays are copied (signed
    values as two's complement), other layouts are hashed and their int items overwritten."""
    cdef Py_ssize_t i
    cdef PyObject **items
    cdef const int64_t[::1] v
    if src.kind == K_INT64 or src.kind == K_UINT64:
        memcpy(out, src.data + 8 * s, (e - s) * 8)
        return 0
    if src.kind == K_INT_CONVERT:
        v = np.ascontiguousarray(src.arr[s:e], dtype=np.int64)
        if e > s:
            memcpy(out, &v[0], (e - s) * 8)
        return 0
    src.fill(h, s, e, out)
    if src.kind == K_OBJECTS:
        items = src.object_items()
        for i in range(s, e):
            o = <object>items[i]
            if _is_int_key(o):
                out[i - s] = _int_key(o, i)
    return 0


def node_hashes(_Hasher hasher, tuple nodes):
    """uint64 H(utf8(name), seed) of each node name."""
    out = np.empty(len(nodes), dtype=np.uint64)
    cdef Py_ssize_t i
    for i in range(len(nodes)):
        out[i] = hasher.hash_bytes_obj((<str>nodes[i]).encode("utf-8"))
    return out
