# Every C declaration of the compiled core, in one place: the module's own declarations file,
# seen automatically by _ring.pyx and so by every piece it includes.  The pieces (.pxi) declare
# no C of their own; each header below is listed once, with what the pieces use from it.

from cpython.object cimport PyObject
from cpython.pythread cimport (
    WAIT_LOCK,
    PyThread_acquire_lock,
    PyThread_allocate_lock,
    PyThread_free_lock,
    PyThread_release_lock,
    PyThread_type_lock,
)
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t

cdef extern from "Python.h":
    PyObject** PySequence_Fast_ITEMS(object o)
    Py_ssize_t PySequence_Fast_GET_SIZE(object o)

# The one table of key hashes (ch_hashes.h): each row's id and name; the Python side builds
# HASH_IDS from it, and no id is written in Cython.
cdef extern from "ch_hashes.h" nogil:
    ctypedef struct ch_hash_row:
        const char *name
        int id
    const ch_hash_row ch_hash_rows[]
    const int ch_hash_count

# The one CRC-32 / CRC-16 (their tables are filled at import: _keys.pxi).
cdef extern from "ch_crc.h" nogil:
    void ch_crc_init()

# The keys stage: one kernel per key layout, instantiated per hash (always_inline).
cdef extern from "ch_keys.h" nogil:
    enum:
        CH_SCRATCH
        CH_PAD
    uint64_t ch_hash(int hid, const uint8_t *p, size_t n, uint64_t seed)
    uint64_t ch_xxh3_64(const uint8_t *p, size_t n, uint64_t seed)
    Py_ssize_t ch_hash_objects(PyObject *const *items, Py_ssize_t start, Py_ssize_t n,
                               int hid, uint64_t seed, uint64_t *out, uint8_t *scratch)
    Py_ssize_t ch_hash_objects_ahead(PyObject *const *items, Py_ssize_t start, Py_ssize_t n,
                                     Py_ssize_t avail, int hid, uint64_t seed, uint64_t *out,
                                     uint8_t *scratch)
    void ch_widen_ints(const uint8_t *v, int itemsize, int is_signed, Py_ssize_t m,
                       int64_t *w)
    void ch_raw_int_objects(PyObject *const *items, Py_ssize_t n, uint64_t *out)
    int ch_hash_key1(PyObject *o, int hid, uint64_t seed, uint64_t *h)
    int ch_small_int(PyObject *o, long long *v)
    Py_ssize_t ch_hash_objects_s(PyObject *const *items, Py_ssize_t start, Py_ssize_t n,
                                 int hid, uint64_t seed, uint64_t *out, uint8_t *scratch,
                                 Py_ssize_t scratch_len)
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
    void ch_take_objects_small(PyObject *const *src, const int32_t *idx, Py_ssize_t m,
                               PyObject **dst)
    void ch_label_positions(uint8_t *label, size_t name_len, uint32_t count, int hid,
                            uint64_t seed, uint64_t *out)
    void ch_label_ring(const uint8_t *const *names, const size_t *lens, const uint32_t *counts,
                       size_t nn, int32_t first_owner, int hid, uint64_t seed, uint8_t *label,
                       uint64_t *pos, int32_t *own)
    size_t ch_u64_dec(uint64_t v, uint8_t *out)

# The worker pool of batch calls split over cores (_pipeline.pxi).
cdef extern from "ch_threads.h" nogil:
    enum:
        CH_MAX_WORKERS
        CH_GIL_BUILD
    ctypedef int64_t ch_counter
    ctypedef void (*ch_job_fn)(void *ctx) noexcept nogil
    ctypedef struct ch_job:
        int want
    int64_t ch_claim(ch_counter *c)
    int ch_pool_start(ch_job *job, ch_job_fn fn, void *ctx, int k)
    void ch_pool_finish(ch_job *job)
    void ch_prefault(void *out, size_t bytes)
    int ch_pool_placement(int on)

# The compatibility hashes' building blocks (ketama points).
cdef extern from "ch_compat_hash.h" nogil:
    void ch_md5(const uint8_t *p, size_t n, uint8_t *out)
    uint64_t ch_md5_64(const uint8_t *p, size_t n)
    uint32_t ch_ketama_point(const uint8_t *d, unsigned x)

# Sorted positions: prefix index, search (prefetching batch lookup), sort, merge, replicas.
cdef extern from "ch_search.h" nogil:
    ctypedef struct ch_pair:
        uint64_t key
        int32_t val
    int ch_prefix_bits(size_t n)
    void ch_build_prefix(const uint64_t *pos, uint32_t n, int k, uint32_t *idx)
    void ch_prefix_adjust(const uint32_t *old, int k, const uint64_t *chg, size_t m, int sign,
                          uint32_t *idx)
    uint32_t ch_find(const uint64_t *pos, uint32_t n, const uint32_t *idx, int shift, uint64_t h)
    void ch_lookup_batch(const uint64_t *pos, uint32_t n, const uint32_t *idx, int k,
                         const int32_t *owners, const uint64_t *hashes, size_t m, int32_t *out)
    ctypedef struct ch_route:
        const uint64_t *q
        const uint64_t *pos
        const uint32_t *idx
        const int32_t *own
        uint32_t n
        int shift
        int b
        const uint64_t *t
        int tk
        int tb
        int pairs
        uint64_t smask
        int lines
    int ch_direct_pairs_on
    int ch_direct_lines_on
    ctypedef struct ch_line:
        int16_t f[16]
        uint16_t o[16]
    int ch_lines_bits(size_t n, size_t nodes)
    void ch_build_lines(const uint64_t *pos, const int32_t *own, uint32_t n,
                        const uint32_t *idx, int k, int tk, ch_line *L)
    int ch_owner_bits(size_t nodes)
    int ch_direct_bits(size_t n, int b)
    int ch_direct_split_bits(int tk, int b, int pairs)
    int ch_direct_pairs(int tk, int b)
    void ch_route_table_form(ch_route *R, int tk, int lines)
    void ch_build_direct(const uint64_t *pos, const int32_t *own, uint32_t n, int b, int tk,
                         int pairs, uint64_t *t)
    void ch_direct_publish(ch_route *R, const uint64_t *t)
    int ch_direct_claim(int *state)
    const uint64_t *ch_direct_table(const ch_route *R)
    void ch_route_layout(const uint64_t *pos, const int32_t *own, uint32_t n, int b, uint64_t *q)
    int32_t ch_route1(const ch_route *R, uint64_t h)
    uint32_t ch_route_index(const ch_route *R, uint64_t h)
    void ch_route_batch(const ch_route *R, const uint64_t *hashes, size_t m, int32_t *out)
    int ch_sort_bits(size_t n)
    size_t CH_RADIX_MIN
    int ch_sort_pairs(uint64_t *key, int32_t *val, size_t n, ch_pair *tmp, size_t *count)
    int ch_radix_layout(uint64_t *key, int32_t *val, size_t n, uint64_t *tk, int32_t *tv, int k,
                        uint32_t *idx, int b, uint64_t *q)
    void ch_build_replicas(const int32_t *owners, uint32_t n, uint32_t r, int32_t *rows)
    void ch_ring_insert(const uint64_t *pa, const int32_t *oa, size_t na, const uint32_t *idx,
                        int k, const uint64_t *pb, size_t nb, int32_t r, int b, uint64_t *po,
                        int32_t *oo, uint64_t *q)
    void ch_ring_merge(const uint64_t *pa, const int32_t *oa, size_t na, const uint32_t *idx,
                       int k, const int32_t *remap, const uint64_t *pb, const int32_t *ob,
                       size_t nb, int b, uint64_t *po, int32_t *oo, uint64_t *q)
    size_t ch_ring_remove(const uint64_t *pa, const int32_t *oa, size_t n, int32_t r, int b,
                          uint64_t *po, int32_t *oo, uint64_t *q, uint64_t *rem)

# Run-time SIMD choice and the lock counter (ch_platform.h).
cdef extern from "ch_platform.h" nogil:
    int ch_simd_avx512
    int ch_simd_avx512dq
    int ch_simd_avx2
    void ch_simd_cap(int cap)
    void ch_simd_detect()
    long ch_fetch_add(long *p, long d)

cdef extern from "ch_mix.h" nogil:
    uint64_t ch_mix64(uint64_t z)
    uint64_t ch_mulhi(uint64_t a, uint64_t b)
    enum:
        CH_GOLDEN

cdef extern from "ch_bounded.h" nogil:
    int64_t ch_ceil_ratio(uint64_t m, uint64_t num, uint64_t den)

cdef extern from "ch_health.h" nogil:
    size_t ch_health_owners(const int32_t *owners, const uint8_t *down, uint32_t n,
                            int32_t *eff)
    size_t ch_health_owners_few(const int32_t *owners, const int32_t *ids, int nd, uint32_t n,
                                int32_t *eff)
    int CH_HEALTH_FEW

cdef extern from "ch_jump.h" nogil:
    int32_t ch_jump(uint64_t key, int32_t n)
    int32_t ch_jump_ref(uint64_t key, int32_t n)
    void ch_jump_batch(const uint64_t *keys, size_t m, int32_t n, int32_t *out)
    void ch_jump_ref_batch(const uint64_t *keys, size_t m, int32_t n, int32_t *out)
    void ch_jump_paper_batch(const uint64_t *keys, size_t m, int32_t n, int32_t *out)

cdef extern from "ch_rendezvous.h" nogil:
    int64_t ch_neglog2(uint64_t v)
    void ch_rdv_route(const uint64_t *s, size_t n, const uint64_t *h, size_t m, int32_t *out)
    void ch_rdv_route_w(const uint64_t *s, const double *invw, size_t n, const uint64_t *h,
                        size_t m, int32_t *out)
    void ch_rdv_top(const uint64_t *s, const double *invw, size_t n, uint64_t h, size_t r,
                    int32_t *row, uint64_t *keys)
    const uint64_t CH_NL2_C[128]
    const uint64_t CH_NL2_T[128]
    const uint64_t CH_NL2_P[7]

cdef extern from "ch_maglev.h" nogil:
    void ch_maglev_build(uint64_t *pos, const uint64_t *skip, const double *ratio,
                        double *credit, uint32_t n, uint32_t M, int32_t *table)
    void ch_maglev_lookup(const int32_t *table, uint32_t M, const uint64_t *h, size_t m,
                          int32_t *out)

cdef extern from "ch_multiprobe.h" nogil:
    void ch_multiprobe(const uint64_t *pos, uint32_t n, const uint32_t *idx, int kbits,
                       const int32_t *owners, uint32_t probes, const uint64_t *h, size_t m,
                       int32_t *out)

cdef extern from "ch_memento.h" nogil:
    int32_t ch_memento_resolve(uint64_t h, int32_t b, const int32_t *R)
    void ch_memento_fix(const uint64_t *h, size_t m, size_t n, const int32_t *R,
                        const int32_t *slot_node, int32_t *out)


# HAProxy hash-type consistent (ch_hash_haproxy.h, included by ch_keys.h): the server points,
# for _haproxy.pxi.
cdef extern from "ch_keys.h" nogil:
    uint32_t ch_ha_avalanche(uint32_t a)
    void ch_ha_points(uint32_t puid, uint32_t count, uint32_t *out)
# Envoy (consistent_hash.compat.envoy): Envoy's Maglev table.
cdef extern from "ch_envoy.h" nogil:
    uint64_t ch_envoy_maglev_build(uint64_t *pos, const uint64_t *skip, const double *w,
                                   double w_max, double *target, uint32_t n, uint64_t M,
                                   int32_t *table)
    void ch_envoy_maglev_lookup(const int32_t *table, uint64_t M, const uint64_t *h, size_t m,
                                int32_t *out)
# nginx's upstream hash balancer (_nginx.pxi): CRC-32, consistent points, plain hash's rehashes.
cdef extern from "ch_hash_nginx.h" nogil:
    enum:
        CH_NGX_TRIES
    uint32_t ch_ngx_crc_run(uint32_t c, const uint8_t *p, size_t n)
    uint32_t ch_ngx_crc32(const uint8_t *p, size_t n)
    void ch_ngx_points(uint32_t base, uint32_t count, uint64_t *out)
    void ch_ngx_hash_route(const uint64_t *h, size_t m, const uint32_t *ends, uint32_t ns,
                           const uint8_t *down, uint32_t live, const int32_t *table,
                           int32_t *out, uint32_t *tries_out)

# The modern family (issue 22): CRC-32C (ch_crc.h), then one header per algorithm over the
# shared bit operations of ch_family.h.
cdef extern from "ch_crc.h" nogil:
    int ch_crc32c_hw
    void ch_crc32c_detect()
    uint32_t ch_crc32c_u64(uint64_t key, uint64_t seed)
    uint32_t ch_crc32c_u64_sw(uint64_t key, uint64_t seed)

cdef extern from "ch_jumpback.h" nogil:
    int32_t ch_jumpback(uint64_t h, uint32_t n)
    void ch_jumpback_batch(const uint64_t *h, size_t m, uint32_t n, int32_t *out)

cdef extern from "ch_jumpback_anchor.h" nogil:
    int32_t ch_jba_bucket(uint64_t h, uint32_t a, const int32_t *ka)
    void ch_jba_batch(const uint64_t *h, size_t m, uint32_t a, const int32_t *ka,
                      const int32_t *slot_node, int32_t *out)
    void ch_jba_push(int32_t *ka, uint32_t a, uint32_t j, int32_t b)
    void ch_jba_build(int32_t *ka, uint32_t a, const int32_t *r, uint32_t k)

cdef extern from "ch_fliphash.h" nogil:
    uint64_t ch_fliphash(uint64_t key, uint64_t seed, uint64_t range_end)
    void ch_fliphash_batch(const uint64_t *h, size_t m, uint64_t seed, uint32_t n, int32_t *out)

cdef extern from "ch_power.h" nogil:
    void ch_power_masks(uint32_t n, uint32_t *m1, uint32_t *mh)
    int32_t ch_power_m(uint64_t key, uint32_t n, uint32_t m1, uint32_t mh)
    int32_t ch_power(uint64_t key, uint32_t n)
    void ch_power_batch(const uint64_t *h, size_t m, uint32_t n, int32_t *out)

cdef extern from "ch_binomial.h" nogil:
    void ch_bin_filters(uint32_t n, uint32_t *e, uint32_t *m)
    int32_t ch_binomial_f(uint64_t h, uint32_t n, uint32_t e, uint32_t mf)
    int32_t ch_binomial(uint64_t h, uint32_t n)
    void ch_binomial_batch(const uint64_t *h, size_t m, uint32_t n, int32_t *out)

cdef extern from "ch_anchor.h" nogil:
    uint32_t ch_anchor_bucket(const uint32_t *A, const uint32_t *K, uint32_t a, uint64_t k1,
                              uint64_t k2)
    void ch_anchor_batch(const uint32_t *A, const uint32_t *K, uint32_t a, const uint64_t *k1,
                         const uint64_t *k2, size_t m, const int32_t *slot_node, int32_t *out)
    void ch_anchor_init(uint32_t *A, uint32_t *K, uint32_t *W, uint32_t *L, uint32_t *R,
                        uint32_t a, uint32_t w, uint32_t *r, uint32_t *n)
    void ch_anchor_remove(uint32_t *A, uint32_t *K, uint32_t *W, uint32_t *L, uint32_t *R,
                          uint32_t b, uint32_t *r, uint32_t *n)
    uint32_t ch_anchor_add(uint32_t *A, uint32_t *K, uint32_t *W, uint32_t *L, uint32_t *R,
                           uint32_t *r, uint32_t *n)

cdef extern from "ch_dxhash.h" nogil:
    enum:
        CH_DX_ADD_KEY
    uint32_t ch_dx_bit(const uint64_t *bits, uint32_t b)
    uint32_t ch_dx_probe(const uint64_t *bits, uint32_t size, uint32_t key, uint32_t want,
                         uint32_t *probes)
    void ch_dx_batch(const uint64_t *bits, uint32_t size, const uint64_t *k, size_t m,
                     const int32_t *slot_node, int32_t *out)
    int ch_dx_reference_finds(const uint64_t *bits, uint32_t size, uint32_t key, uint32_t want,
                              uint32_t *b)
