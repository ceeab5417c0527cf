/* The keys stage: any key container -> uint64 hashes.
 *
 * Key bytes (the contract, see README "Placement recipe"):
 *   str                 -> UTF-8 (lone surrogates are an error, as str.encode raises)
 *   bytes, bytearray    -> as is
 *   int (not bool)      -> ASCII decimal, "-" for negatives
 * NumPy U / S elements drop their trailing NULs, as numpy itself does when it hands them out.
 *
 * The object loop here handles the common kinds without touching the Python API beyond
 * reading objects in place; anything else (a big int, a str too long for the scratch buffer,
 * a lone surrogate, an unsupported type) stops the loop and is handled by the caller.
 */
#ifndef CH_KEYS_H
#define CH_KEYS_H

#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "ch_hash.h"
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#endif
#include "ch_search.h"
#include "ch_compat_hash.h"
#include "ch_hash_haproxy.h"
#include "ch_hash_envoy.h"  /* Envoy ring_hash MURMUR_HASH_2 (ids 80..89) */
#include "ch_hash_nginx.h"
#include "ch_hash_twemproxy.h"

#include "ch_hashes.h"  /* the one table of key hashes: ids, names, kernels */

#define CH_SCRATCH 16384

typedef uint64_t (*ch_hfn)(const uint8_t *, size_t, uint64_t);
CH_INLINE uint64_t ch_h_xxh3(const uint8_t *p, size_t n, uint64_t s) { return ch_xxh3_64(p, n, s); }
static inline uint64_t ch_h_xxh64(const uint8_t *p, size_t n, uint64_t s) { return ch_xxh64(p, n, s); }
static inline uint64_t ch_h_mm3(const uint8_t *p, size_t n, uint64_t s) { return ch_murmur3_64(p, n, (uint32_t)s); }
static inline uint64_t ch_h_md5(const uint8_t *p, size_t n, uint64_t s) { (void)s; return ch_md5_64(p, n); }

/* One hash by id.  Fine for a single key; batch kernels below are instead specialised per
 * hash (a switch inside a hot loop costs ~2 ns a key: it keeps the hash from being inlined
 * and scheduled with its neighbours).  An unknown id is MD5, as it always was. */
#define CH__HASH_CASE(id, e, name, fn, p, n, seed) case e: return fn(p, n, seed);
static inline uint64_t ch_hash(int hid, const uint8_t *p, size_t n, uint64_t seed) {
    switch (hid) {
        CH_HASH_TABLE(CH__HASH_CASE, p, n, seed)
        default: return ch_md5_64(p, n);
    }
}


/* Instantiate a kernel once per hash: KERNEL(H, ...) with H a constant function pointer,
 * which the compiler inlines after the always_inline kernel is expanded; one case per row of
 * the hash table. */
#define CH__DISPATCH_CASE(id, e, name, fn, KERNEL, ...) case e: return KERNEL(fn, __VA_ARGS__);
#define CH__DISPATCH_VOID_CASE(id, e, name, fn, KERNEL, ...) \
    case e: (void)KERNEL(fn, __VA_ARGS__); break;
#define CH_DISPATCH(hid, KERNEL, ...)                                 \
    switch (hid) {                                                    \
        CH_HASH_TABLE(CH__DISPATCH_CASE, KERNEL, __VA_ARGS__)         \
        default: return KERNEL(ch_h_md5, __VA_ARGS__);                \
    }
#define CH_DISPATCH_VOID(hid, KERNEL, ...)                            \
    switch (hid) {                                                    \
        CH_HASH_TABLE(CH__DISPATCH_VOID_CASE, KERNEL, __VA_ARGS__)    \
        default: (void)KERNEL(ch_h_md5, __VA_ARGS__); break;          \
    }

/* Powers of ten below 2^64 (ch__dec_len). */
static const uint64_t ch__pow10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull, 10000000000000000000ull};

/* The number of decimal digits of v >= 10. */
CH_INLINE size_t ch__dec_len(uint64_t v) {
#if defined(__GNUC__) || defined(__clang__)
    const int lg = 63 - __builtin_clzll(v);  /* floor(log2 v) */
#else
    int lg = 0;
    for (uint64_t t = v; t >>= 1;) lg++;
#endif
    const int d = (lg + 1) * 1233 >> 12;  /* floor(log10 2^(lg + 1)) */
    return (size_t)d + 1 - (size_t)(v < ch__pow10[d]);
}

/* XXH3-64 of an integer key's ASCII decimal (the bytes ch_i64_dec / ch_u64_dec write), with
 * the string kept in registers: the digits are made eight at a time as one word and the
 * short-input paths of XXH3 read their words from it, where writing the digits and reading
 * them back as words costs a store-forwarding stall per key.  Keys of 17 characters or more
 * take the bytes.
 *
 * ch__dec8_word(x), x < 10^8: the eight-digit decimal of x (leading zeros kept) as the
 * little-endian word of the string, on any machine (byte i at bits 8i, as ch__rd64 reads
 * it).  Its four digit pairs come from the top, a multiply each: f = x * ceil(2^48 / 10^6) is
 * x / 10^6 in Q16.48, whose integer part is the first pair; the fraction times 100 gives the
 * next, and so on.  Exact for every x < 10^8 (checked over all of them against the lane-split
 * form it replaced): ceil(2^48 / 10^6) exceeds 2^48 / 10^6 by 0.29, so f carries x * 0.29
 * < 2^25 too much, which times 10^6 over the three steps stays below 0.11 of a unit of the
 * last pair, where the exact value is a whole number.  The chain through f is a multiply and
 * a mask a pair (the form before split lanes by multiplies and shifts, ~1.7 ns longer a key
 * and 1.7x the instructions' throughput time on the Intel Xeon of 2026-12-07). */
static const uint16_t ch__dec_pairs[100] = {  /* i's two ASCII digits, the tens' in the low byte */
    0x3030, 0x3130, 0x3230, 0x3330, 0x3430, 0x3530, 0x3630, 0x3730, 0x3830, 0x3930,
    0x3031, 0x3131, 0x3231, 0x3331, 0x3431, 0x3531, 0x3631, 0x3731, 0x3831, 0x3931,
    0x3032, 0x3132, 0x3232, 0x3332, 0x3432, 0x3532, 0x3632, 0x3732, 0x3832, 0x3932,
    0x3033, 0x3133, 0x3233, 0x3333, 0x3433, 0x3533, 0x3633, 0x3733, 0x3833, 0x3933,
    0x3034, 0x3134, 0x3234, 0x3334, 0x3434, 0x3534, 0x3634, 0x3734, 0x3834, 0x3934,
    0x3035, 0x3135, 0x3235, 0x3335, 0x3435, 0x3535, 0x3635, 0x3735, 0x3835, 0x3935,
    0x3036, 0x3136, 0x3236, 0x3336, 0x3436, 0x3536, 0x3636, 0x3736, 0x3836, 0x3936,
    0x3037, 0x3137, 0x3237, 0x3337, 0x3437, 0x3537, 0x3637, 0x3737, 0x3837, 0x3937,
    0x3038, 0x3138, 0x3238, 0x3338, 0x3438, 0x3538, 0x3638, 0x3738, 0x3838, 0x3938,
    0x3039, 0x3139, 0x3239, 0x3339, 0x3439, 0x3539, 0x3639, 0x3739, 0x3839, 0x3939,
};

CH_INLINE uint64_t ch__dec8_word(uint32_t x) {
    const uint64_t frac = ((uint64_t)1 << 48) - 1;
    uint64_t f = (uint64_t)x * 281474977u;  /* ceil(2^48 / 10^6) */
    const uint64_t p0 = ch__dec_pairs[f >> 48];
    f = (f & frac) * 100;
    const uint64_t p1 = ch__dec_pairs[f >> 48];
    f = (f & frac) * 100;
    const uint64_t p2 = ch__dec_pairs[f >> 48];
    f = (f & frac) * 100;
    const uint64_t p3 = ch__dec_pairs[f >> 48];
    return p0 | p1 << 16 | p2 << 32 | p3 << 48;
}

/* The decimal of u < 10^16 as the little-endian words of its string: bytes 0-7 in *w0, bytes
 * 8-15 in *w1, zero past the digits.  Returns its length. */
CH_INLINE size_t ch__dec_words(uint64_t u, uint64_t *w0, uint64_t *w1) {
    const size_t n = u < 10 ? 1 : ch__dec_len(u);
    if (n <= 8) {
        *w0 = ch__dec8_word((uint32_t)u) >> (8 * (8 - n));
        *w1 = 0;
        return n;
    }
    const uint64_t wa = ch__dec8_word((uint32_t)(u / 100000000u)) >> (8 * (16 - n));
    const uint64_t wb = ch__dec8_word((uint32_t)(u % 100000000u));
    const unsigned sh = (unsigned)(8 * (n - 8));  /* wa's bytes, 8 .. 64 bits */
    *w0 = n == 16 ? wa : wa | (wb << sh);
    *w1 = n == 16 ? wb : wb >> (64 - sh);
    return n;
}

/* ASCII decimal of an unsigned / signed 64-bit integer at out; returns its length (<= 20, 21
 * with a sign).  The digits are made as words (ch__dec8_word) and stored whole, so up to 20
 * bytes at out are written (21 for a negative): every caller's buffer has room for them. */
CH_INLINE size_t ch_u64_dec(uint64_t v, uint8_t *out) {
    if (CH_LIKELY(v < 10000000000000000ull)) {
        uint64_t w0, w1;
        const size_t n = ch__dec_words(v, &w0, &w1);
        ch__wr64(out, w0);
        if (n > 8) ch__wr64(out + 8, w1);
        return n;
    }
    /* 17 to 20 digits: the top 1-4, then sixteen as two words of eight */
    const uint64_t top = v / 10000000000000000ull, rest = v % 10000000000000000ull;
    const size_t nt = top < 10 ? 1 : ch__dec_len(top);
    ch__wr64(out, ch__dec8_word((uint32_t)top) >> (8 * (8 - nt)));
    ch__wr64(out + nt, ch__dec8_word((uint32_t)(rest / 100000000u)));
    ch__wr64(out + nt + 8, ch__dec8_word((uint32_t)(rest % 100000000u)));
    return nt + 16;
}

CH_INLINE size_t ch_i64_dec(int64_t v, uint8_t *out) {
    if (v < 0) {
        out[0] = '-';
        return 1 + ch_u64_dec((uint64_t)0 - (uint64_t)v, out + 1);
    }
    return ch_u64_dec((uint64_t)v, out);
}

/* XXH3-64 (default secret, seed) of the len (1 <= len <= 16) bytes whose little-endian words
 * are w0 (bytes 0-7) and w1 (bytes 8-15): ch__xxh3_0to16's paths with their words taken from
 * these instead of memory. */
CH_INLINE uint64_t ch__xxh3_words(uint64_t w0, uint64_t w1, size_t len, uint64_t seed) {
    if (len > 8) {
        /* bytes len - 8 .. len: a shift of 8 * (len - 8) in 8 .. 64, taken in two steps */
        const unsigned sh = (unsigned)(8 * (len - 8));
        const uint64_t last = len == 16 ? w1 : ((w0 >> (sh - 1)) >> 1) | (w1 << (64 - sh));
        return ch__xxh3_9to16w(w0, last, len, seed);
    }
    if (len >= 4) return ch__xxh3_4to8w((uint32_t)w0, (uint32_t)(w0 >> (8 * (len - 4))), len, seed);
    return ch__xxh3_1to3w((uint32_t)(w0 & 0xFF), (uint32_t)((w0 >> (8 * (len >> 1))) & 0xFF),
                          (uint32_t)((w0 >> (8 * (len - 1))) & 0xFF), len, seed);
}

/* XXH3-64 of the decimal of u, with a '-' before it when neg. */
CH_INLINE uint64_t ch__xxh3_dec(uint64_t u, int neg, uint64_t seed) {
    if (CH_UNLIKELY(u >= 10000000000000000ull || (neg && u >= 1000000000000000ull))) {
        uint8_t b[24];
        size_t n = 0;
        if (neg) b[n++] = '-';
        n += ch_u64_dec(u, b + n);
        return ch_xxh3_64(b, n, seed);
    }
    uint64_t w0, w1;
    size_t n = ch__dec_words(u, &w0, &w1);
    if (neg) {
        w1 = (w1 << 8) | (w0 >> 56);
        w0 = (w0 << 8) | (uint64_t)'-';
        n++;
    }
    return ch__xxh3_words(w0, w1, n, seed);
}

CH_INLINE uint64_t ch_xxh3_i64_dec(int64_t v, uint64_t seed) {
    return v < 0 ? ch__xxh3_dec((uint64_t)0 - (uint64_t)v, 1, seed) : ch__xxh3_dec((uint64_t)v, 0, seed);
}

/* The value of an exact int that fits a long long: 0 when it does not.  A compact int (one
 * digit) is read from its header, without PyLong_AsLongLongAndOverflow's call. */
static inline int ch_small_int(PyObject *o, long long *v) {
#if !defined(PYPY_VERSION) && PY_VERSION_HEX >= 0x030C0000
    if (CH_LIKELY(PyUnstable_Long_IsCompact((PyLongObject *)o))) {
        *v = (long long)PyUnstable_Long_CompactValue((PyLongObject *)o);
        return 1;
    }
#elif !defined(PYPY_VERSION)
    const Py_ssize_t size = Py_SIZE(o);
    if (CH_LIKELY(size >= -1 && size <= 1)) {
        *v = (long long)size * (long long)((PyLongObject *)o)->ob_digit[0];
        return 1;
    }
#endif
    int overflow = 0;
    *v = PyLong_AsLongLongAndOverflow(o, &overflow);
    return !overflow;
}

/* UTF-8 of one code point; returns 0 for a surrogate or a value past U+10FFFF. */
static inline size_t ch_utf8_put(uint32_t c, uint8_t *o) {
    if (c < 0x80) { o[0] = (uint8_t)c; return 1; }
    if (c < 0x800) { o[0] = (uint8_t)(0xC0 | (c >> 6)); o[1] = (uint8_t)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        if (c >= 0xD800 && c <= 0xDFFF) return 0;
        o[0] = (uint8_t)(0xE0 | (c >> 12));
        o[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    if (c > 0x10FFFF) return 0;
    o[0] = (uint8_t)(0xF0 | (c >> 18));
    o[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

/* Encode n code units of width kind (1, 2 or 4 bytes) to UTF-8; -1 on an invalid code point.
 * out must hold 4 * n bytes. */
static inline Py_ssize_t ch_ucs_to_utf8(int kind, const void *data, Py_ssize_t n, uint8_t *out) {
    size_t o = 0;
    if (kind == 1) {
        const uint8_t *s = (const uint8_t *)data;
        for (Py_ssize_t i = 0; i < n; i++) o += ch_utf8_put(s[i], out + o);
        return (Py_ssize_t)o;
    }
    /* UCS-2 and UCS-4: the same loop over units of type T (a lone surrogate fails) */
#define CH__UCS_WIDE(T)                                                                  \
    do {                                                                                 \
        const T *s = (const T *)data;                                                    \
        for (Py_ssize_t i = 0; i < n; i++) {                                             \
            size_t w = ch_utf8_put(s[i], out + o);                                       \
            if (!w) return -1;                                                           \
            o += w;                                                                      \
        }                                                                                \
        return (Py_ssize_t)o;                                                            \
    } while (0)
    if (kind == 2) CH__UCS_WIDE(uint16_t);
    CH__UCS_WIDE(uint32_t);
#undef CH__UCS_WIDE
}

/* Hash items[start .. n) into out[start .. n) until an item needs the caller; returns the
 * index of that item, or n when all are done.  scratch holds CH_SCRATCH bytes.  The objects
 * are prefetched a few keys ahead, up to items[avail) (avail >= n: a chunk of a longer list
 * prefetches the start of the next one, whose keys would otherwise begin cold). */
CH_INLINE Py_ssize_t ch__objects(ch_hfn H, PyObject *const *items, Py_ssize_t start,
                                 Py_ssize_t n, Py_ssize_t avail, uint64_t seed, uint64_t *out,
                                 uint8_t *scratch, Py_ssize_t scratch_len) {
    const Py_ssize_t PF = 16;
    for (Py_ssize_t i = start; i < n; i++) {
        if (i + PF < avail) {
            const char *ahead = (const char *)items[i + PF];
            CH_PREFETCH(ahead);
            CH_PREFETCH(ahead + 64);
        }
        PyObject *o = items[i];
        PyTypeObject *t = Py_TYPE(o);
        if (CH_LIKELY(t == &PyUnicode_Type) || PyUnicode_Check(o)) {
            Py_ssize_t len = PyUnicode_GET_LENGTH(o);
            /* Only a compact str's bytes are read in place (also by worker threads: see
             * _pipeline.pxi); a non-compact one (a str subclass's instance, a legacy string)
             * goes to the caller.  A compact ASCII str's bytes follow its header. */
            if (CH_LIKELY(PyUnicode_IS_COMPACT_ASCII(o))) {
                out[i] = H((const uint8_t *)((PyASCIIObject *)o + 1), (size_t)len, seed);
                continue;
            }
            if (CH_UNLIKELY(!PyUnicode_IS_COMPACT(o))) return i;
            if (len > scratch_len / 4) return i;
            Py_ssize_t m = ch_ucs_to_utf8(PyUnicode_KIND(o), PyUnicode_DATA(o), len, scratch);
            if (m < 0) return i;
            out[i] = H(scratch, (size_t)m, seed);
        } else if (t == &PyBytes_Type || PyBytes_Check(o)) {
            out[i] = H((const uint8_t *)PyBytes_AS_STRING(o), (size_t)PyBytes_GET_SIZE(o), seed);
        } else if (t == &PyLong_Type) {
            long long v;
            if (!ch_small_int(o, &v)) return i;
            if (H == ch_h_xxh3) {
                out[i] = ch_xxh3_i64_dec((int64_t)v, seed);
                continue;
            }
            size_t m = ch_i64_dec((int64_t)v, scratch);
            out[i] = H(scratch, m, seed);
        } else if (PyByteArray_Check(o)) {
            out[i] = H((const uint8_t *)PyByteArray_AS_STRING(o),
                       (size_t)PyByteArray_GET_SIZE(o), seed);
        } else {
            return i;
        }
    }
    return n;
}

/* XXH3 over keys of mixed lengths: its code differs by length (4-8, 9-16, 17-32, ...), and
 * keys whose lengths vary branch unpredictably between them (measured: ~4 ns a key, 40% of the
 * hash's time on keys of 8-24 bytes).  So the batch kernels read a group of keys first (each
 * key's bytes and length noted: ptr[j], len[j]), and ch__xxh3_classes then hashes the group
 * class by class, each class a loop with no branch on the length (a group whose keys all
 * fall in one class skips the lists: fixed-length keys pay nothing for the split). */
static inline uint64_t ch__xxh3_9to16(const uint8_t *p, size_t len, uint64_t seed) {
    const uint8_t *const s = ch__xxh3_secret;
    const uint64_t lo = ch__rd64(p) ^ ((ch__rd64(s + 24) ^ ch__rd64(s + 32)) + seed);
    const uint64_t hi = ch__rd64(p + len - 8) ^ ((ch__rd64(s + 40) ^ ch__rd64(s + 48)) - seed);
    return ch__xxh3_avalanche((uint64_t)len + ch__bswap64(lo) + hi + ch__mul128_fold64(lo, hi));
}

static inline uint64_t ch__xxh3_17to32(const uint8_t *p, size_t len, uint64_t seed) {
    const uint8_t *const s = ch__xxh3_secret;
    return ch__xxh3_avalanche((uint64_t)len * CH__P64_1 + ch__xxh3_mix16(p, s, seed) +
                              ch__xxh3_mix16(p + len - 16, s + 16, seed));
}

enum { CH__XG = 256 };  /* keys a group */

/* A group of rows of one width: each row's length, and the rows of each class in three lists
 * (9-16 bytes, 17-32, the rest), a byte an entry.  ch__xxh3_note files a row as its length is
 * found, with no branch: it writes the row's number to the end of every list and moves on the
 * end of its own. */
typedef struct {
    uint32_t len[CH__XG + 8];  /* room for ch__xxh3_split's last 8 (read, not used) */
    uint8_t a[CH__XG + 8], b[CH__XG + 8], c[CH__XG + 8];  /* and for its last appends */
    size_t na, nb, nc;
} ch__xxh3_group;

CH_INLINE void ch__xxh3_note(ch__xxh3_group *q, size_t j, size_t L) {
    const int a = L - 9 <= 7, b = L - 17 <= 15;
    q->len[j] = (uint32_t)L;
    q->a[q->na] = q->b[q->nb] = q->c[q->nc] = (uint8_t)j;  /* j < CH__XG: fits a byte */
    q->na += (size_t)a;
    q->nb += (size_t)b;
    q->nc += (size_t)!(a | b);
}

#ifdef CH_HAVE_AVX2
#define CH__SPLIT_AVX2 1
/* The same filing for a group whose lengths len[0 .. g) are written (lengths CH__NOKEY are
 * filed nowhere), 8 at a time: a compare picks each class's lanes, ch_pack8 packs their
 * numbers, and 8 bytes are stored at the end of the list (the list grows by the count).  About
 * 3 instructions a key against ch__xxh3_note's 14. */
#define CH__NOKEY 0xFFFFFFFFu
CH_AVX2 void ch__xxh3_split(ch__xxh3_group *q, size_t g) {
    size_t na = 0, nb = 0, nc = 0;
    const __m256i c9 = _mm256_set1_epi32(9), c7 = _mm256_set1_epi32(7);
    const __m256i c17 = _mm256_set1_epi32(17), c15 = _mm256_set1_epi32(15);
    const __m256i none = _mm256_set1_epi32(-1);
    for (size_t k = 0; k < g; k += 8) {
        const __m256i L = _mm256_loadu_si256((const __m256i *)(q->len + k));
        const __m256i x = _mm256_sub_epi32(L, c9), y = _mm256_sub_epi32(L, c17);
        const unsigned valid = g - k >= 8 ? 0xFFu : (1u << (g - k)) - 1u;
        const unsigned ma = valid & (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
                                _mm256_cmpeq_epi32(_mm256_min_epu32(x, c7), x)));
        const unsigned mb = valid & (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
                                _mm256_cmpeq_epi32(_mm256_min_epu32(y, c15), y)));
        const unsigned ms = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
                                _mm256_cmpeq_epi32(L, none)));
        const unsigned mc = valid & ~(ma | mb | ms);
        const uint64_t at = 0x0101010101010101ull * (uint64_t)k;  /* k + 7 < 256: no carry */
        const uint64_t va = ch_pack8[ma] + at, vb = ch_pack8[mb] + at, vc = ch_pack8[mc] + at;
        memcpy(q->a + na, &va, 8);
        memcpy(q->b + nb, &vb, 8);
        memcpy(q->c + nc, &vc, 8);
        na += (size_t)__builtin_popcount(ma);
        nb += (size_t)__builtin_popcount(mb);
        nc += (size_t)__builtin_popcount(mc);
    }
    q->na = na;
    q->nb = nb;
    q->nc = nc;
}
#endif

/* Hash the g rows of the group at base (width w) class by class; a group whose rows all fell
 * in one class (keys of one length, say) in a straight loop, without the lists. */
CH_INLINE void ch__xxh3_rows(const ch__xxh3_group *q, const uint8_t *base, size_t w, size_t g,
                             uint64_t seed, uint64_t *o) {
    if (q->na == g) {
        for (size_t j = 0; j < g; j++) o[j] = ch__xxh3_9to16(base + j * w, q->len[j], seed);
        return;
    }
    if (q->nb == g) {
        for (size_t j = 0; j < g; j++) o[j] = ch__xxh3_17to32(base + j * w, q->len[j], seed);
        return;
    }
    for (size_t t = 0; t < q->na; t++) {
        const size_t j = q->a[t];
        o[j] = ch__xxh3_9to16(base + j * w, q->len[j], seed);
    }
    for (size_t t = 0; t < q->nb; t++) {
        const size_t j = q->b[t];
        o[j] = ch__xxh3_17to32(base + j * w, q->len[j], seed);
    }
    for (size_t t = 0; t < q->nc; t++) {
        const size_t j = q->c[t];
        o[j] = ch_xxh3_64(base + j * w, q->len[j], seed);
    }
}

/* A list of keys, split the same way with a loop of its own (groups of 128, three classes):
 * without AVX2 the split is made while the objects are read (on a list that measured 1.12x
 * faster than gathering a group first), with it the group's lengths are gathered and filed
 * 8 at a time (ch__xxh3_split).  Anything but a compact ASCII str or bytes goes through
 * ch__objects one at a time, in order; the first key it declines ends the call as there
 * (everything before it hashed). */
CH_INLINE Py_ssize_t ch__objects_xxh3(PyObject *const *items, Py_ssize_t start, Py_ssize_t n,
                                      Py_ssize_t avail, uint64_t seed, uint64_t *out,
                                      uint8_t *scratch, Py_ssize_t scratch_len, const int simd) {
    enum { G = 128, PF = 40 };
    const uint8_t *ptr[G];
    ch__xxh3_group q;
#ifndef CH__SPLIT_AVX2
    (void)simd;
#endif
    for (Py_ssize_t s0 = start; s0 < n; s0 += G) {
        const Py_ssize_t e = n - s0 < G ? n : s0 + G;
        const int pf = e + PF <= avail;  /* the same for the whole group: the loop is unswitched */
        q.na = q.nb = q.nc = 0;
        Py_ssize_t i = s0;
        for (; i < e; i++) {
            if (pf) {
                const char *ahead = (const char *)items[i + PF];
                CH_PREFETCH(ahead);
                CH_PREFETCH(ahead + 64);
            }
            PyObject *o = items[i];
            PyTypeObject *t = Py_TYPE(o);
            const uint8_t *p;
            size_t L;
            const size_t j = (size_t)(i - s0);
            if (CH_LIKELY(t == &PyUnicode_Type && PyUnicode_IS_COMPACT_ASCII(o))) {
                p = (const uint8_t *)((PyASCIIObject *)o + 1);
                L = (size_t)PyUnicode_GET_LENGTH(o);
            } else if (t == &PyBytes_Type) {
                p = (const uint8_t *)PyBytes_AS_STRING(o);
                L = (size_t)PyBytes_GET_SIZE(o);
            } else {
                if (ch__objects(ch_h_xxh3, items, i, i + 1, i + 1, seed, out, scratch,
                                scratch_len) == i)
                    break;  /* declined: hash what was gathered, then hand it over */
                ptr[j] = NULL;
#ifdef CH__SPLIT_AVX2
                q.len[j] = CH__NOKEY;  /* in no class */
#endif
                continue;
            }
            if (CH_UNLIKELY(L >= 0xFFFFFFFFu)) {  /* 4 GiB or more: a length the lists cannot hold */
                out[i] = ch_xxh3_64(p, L, seed);
                ptr[j] = NULL;
#ifdef CH__SPLIT_AVX2
                q.len[j] = CH__NOKEY;
#endif
                continue;
            }
            ptr[j] = p;
#ifdef CH__SPLIT_AVX2
            if (simd) {
                q.len[j] = (uint32_t)L;
                continue;
            }
#endif
            ch__xxh3_note(&q, j, L);
        }
        const size_t g = (size_t)(i - s0);
#ifdef CH__SPLIT_AVX2
        if (simd) ch__xxh3_split(&q, g);
#endif
        uint64_t *o = out + s0;
        for (size_t t = 0; t < q.na; t++) {
            const size_t j = q.a[t];
            o[j] = ch__xxh3_9to16(ptr[j], q.len[j], seed);
        }
        for (size_t t = 0; t < q.nb; t++) {
            const size_t j = q.b[t];
            o[j] = ch__xxh3_17to32(ptr[j], q.len[j], seed);
        }
        for (size_t t = 0; t < q.nc; t++) {
            const size_t j = q.c[t];
            o[j] = ch_xxh3_64(ptr[j], q.len[j], seed);
        }
        if (i < e) return i;
    }
    return n;
}

/* items[start .. n) of a list whose items run on to items[avail) (prefetched, not hashed). */
static inline Py_ssize_t ch_hash_objects_ahead(PyObject *const *items, Py_ssize_t start,
                                               Py_ssize_t n, Py_ssize_t avail, int hid,
                                               uint64_t seed, uint64_t *out, uint8_t *scratch) {
    if (hid == CH_XXH3) {
#ifdef CH__SPLIT_AVX2
        if (ch_simd_avx2)
            return ch__objects_xxh3(items, start, n, avail, seed, out, scratch, CH_SCRATCH, 1);
#endif
        return ch__objects_xxh3(items, start, n, avail, seed, out, scratch, CH_SCRATCH, 0);
    }
    CH_DISPATCH(hid, ch__objects, items, start, n, avail, seed, out, scratch, CH_SCRATCH)
}

static inline Py_ssize_t ch_hash_objects(PyObject *const *items, Py_ssize_t start, Py_ssize_t n,
                                         int hid, uint64_t seed, uint64_t *out,
                                         uint8_t *scratch) {
    return ch_hash_objects_ahead(items, start, n, n, hid, seed, out, scratch);
}

/* The same with a scratch buffer of scratch_len bytes (>= 24): a str needing more goes to the
 * caller. */
static inline Py_ssize_t ch_hash_objects_s(PyObject *const *items, Py_ssize_t start,
                                           Py_ssize_t n, int hid, uint64_t seed, uint64_t *out,
                                           uint8_t *scratch, Py_ssize_t scratch_len) {
    CH_DISPATCH(hid, ch__objects, items, start, n, n, seed, out, scratch, scratch_len)
}

/* One key of the commonest kinds, without the batch loop: an exact str that is compact
 * ASCII (its bytes follow its header), exact bytes, an exact int that fits a long long (as
 * its ASCII decimal).  Returns 0 for anything else (the caller takes the general path). */
static inline int ch_hash_key1(PyObject *o, int hid, uint64_t seed, uint64_t *h) {
    PyTypeObject *t = Py_TYPE(o);
    const uint8_t *p;
    size_t len;
    uint8_t b[24];
    if (CH_LIKELY(t == &PyUnicode_Type)) {
        if (CH_UNLIKELY(!PyUnicode_IS_COMPACT_ASCII(o))) return 0;
        p = (const uint8_t *)((PyASCIIObject *)o + 1);
        len = (size_t)PyUnicode_GET_LENGTH(o);
    } else if (t == &PyBytes_Type) {
        p = (const uint8_t *)PyBytes_AS_STRING(o);
        len = (size_t)PyBytes_GET_SIZE(o);
    } else if (t == &PyLong_Type) {
        long long v;
        if (!ch_small_int(o, &v)) return 0;
        if (hid == CH_XXH3) {
            *h = ch_xxh3_i64_dec((int64_t)v, seed);
            return 1;
        }
        p = b;
        len = ch_i64_dec((int64_t)v, b);
    } else {
        return 0;
    }
    /* the default hash of a short key, inlined */
    *h = hid == CH_XXH3 && len <= 16 ? ch__xxh3_0to16(p, len, seed) : ch_hash(hid, p, len, seed);
    return 1;
}

/* raw_ints over items[0 .. n) that ch_hash_objects hashed whole: each exact int takes its own
 * 64-bit two's-complement value (ch_hash_objects declined every int beyond a long long, and
 * every int subclass, bool included).  Reads only the ints' digits: workers may run it. */
static inline void ch_raw_int_objects(PyObject *const *items, Py_ssize_t n, uint64_t *out) {
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v;
        if (Py_TYPE(items[i]) == &PyLong_Type && ch_small_int(items[i], &v)) out[i] = (uint64_t)v;
    }
}

/* Narrow integers v[0 .. m) (itemsize 1, 2 or 4, signed or not, native order, aligned)
 * widened to int64 into w. */
static inline void ch_widen_ints(const uint8_t *v, int itemsize, int is_signed, Py_ssize_t m,
                                 int64_t *w) {
    Py_ssize_t i;
    if (itemsize == 1) {
        if (is_signed) for (i = 0; i < m; i++) w[i] = ((const int8_t *)v)[i];
        else for (i = 0; i < m; i++) w[i] = ((const uint8_t *)v)[i];
    } else if (itemsize == 2) {
        if (is_signed) for (i = 0; i < m; i++) w[i] = ((const int16_t *)v)[i];
        else for (i = 0; i < m; i++) w[i] = ((const uint16_t *)v)[i];
    } else {
        if (is_signed) for (i = 0; i < m; i++) w[i] = ((const int32_t *)v)[i];
        else for (i = 0; i < m; i++) w[i] = ((const uint32_t *)v)[i];
    }
}

/* Length of s[0 .. w) without its trailing NUL bytes, a word at a time. */
static inline size_t ch_trim_nuls(const uint8_t *s, size_t w) {
    size_t len = w;
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (len >= 8) {
        uint64_t x;
        memcpy(&x, s + len - 8, 8);
        if (x) return len - (size_t)(__builtin_clzll(x) >> 3);
        len -= 8;
    }
#endif
    while (len > 0 && s[len - 1] == 0) len--;
    return len;
}

/* Index of the highest set bit of x != 0. */
#if defined(__GNUC__) || defined(__clang__)
#define CH_BSR32(x) (31 - __builtin_clz((unsigned)(x)))
#elif defined(_MSC_VER)
#include <intrin.h>
static __forceinline int ch__bsr32(unsigned x) { unsigned long r; _BitScanReverse(&r, x); return (int)r; }
#define CH_BSR32(x) ch__bsr32((unsigned)(x))
#else
static inline int ch__bsr32(unsigned x) { int r = 0; while (x >>= 1) r++; return r; }
#define CH_BSR32(x) ch__bsr32((unsigned)(x))
#endif

/* One NumPy U element s[0 .. w) as its UTF-8 in out: its trailing NUL code points dropped (as
 * NumPy does), then encoded exactly as str.encode("utf-8").  Returns the length, or -1 for a
 * surrogate / a value past U+10FFFF, or when the UTF-8 may not fit in out_len bytes. */
static inline Py_ssize_t ch_ucs4_elem_utf8(const uint32_t *s, size_t w, uint8_t *out,
                                          size_t out_len, int try_ascii) {
    size_t len = w;
    /* The trailing NULs two code points at a time, then the last one. */
    while (len >= 2) {
        uint64_t x;
        memcpy(&x, s + len - 2, 8);
        if (x) break;
        len -= 2;
    }
    if (len > 0 && s[len - 1] == 0) len--;
    if (len * 4 > out_len) return -1;
    /* ASCII (the OR of all code points < 0x80): the low bytes are the UTF-8.  (try_ascii 0:
     * the caller already knows the element is not.) */
    if (try_ascii) {
        uint32_t acc = 0;
        for (size_t j = 0; j < len; j++) {
            acc |= s[j];
            out[j] = (uint8_t)s[j];
        }
        if (acc < 0x80) return (Py_ssize_t)len;
    }
    return ch_ucs_to_utf8(4, s, (Py_ssize_t)len, out);
}

#if defined(__SSE2__) || defined(_M_X64)
#define CH_UCS4_SSE2 1
/* 16 code points (ASCII, or anything when only their OR is used) packed to 16 bytes. */
#define CH__PACK16(a, b, c, d) \
    _mm_packus_epi16(_mm_packs_epi32((a), (b)), _mm_packs_epi32((c), (d)))

/* XXH3-64 (ch_xxh3_64) of an ASCII key of len in [17, 128]: its bytes [0, 16 * ceil(len / 16))
 * are in front, written by one 16-byte store per 16 bytes, and its code points are s.  The
 * hash reads 16-byte chunks from the front and from the back; a chunk from the back at
 * front + len - 16 * k spans two of those stores, and a load across two stores cannot be
 * forwarded from them (it waits for both to reach the cache: ~3 ns a key).  So each chunk
 * from the back is packed again from its code points into back, one store per chunk. */
CH_INLINE uint64_t ch__xxh3_ucs4_17to128(const uint8_t *front, const uint32_t *s, size_t len,
                                         uint64_t seed, uint8_t *back) {
    const uint8_t *const sec = ch__xxh3_secret;
    uint64_t acc = (uint64_t)len * CH__P64_1;
    const size_t pairs = (len - 1) / 32 + 1;
    for (size_t k = 0; k < pairs; k++) {
        const __m128i *q = (const __m128i *)(s + len - 16 - 16 * k);
        _mm_storeu_si128((__m128i *)(back + 16 * k),
                         CH__PACK16(_mm_loadu_si128(q), _mm_loadu_si128(q + 1),
                                    _mm_loadu_si128(q + 2), _mm_loadu_si128(q + 3)));
        acc += ch__xxh3_mix16(front + 16 * k, sec + 32 * k, seed);
        acc += ch__xxh3_mix16(back + 16 * k, sec + 32 * k + 16, seed);
    }
    return ch__xxh3_avalanche(acc);
}

/* 16 code points of s (masked by m when m is not NULL) packed to 16 bytes at dst, their OR
 * into *acc; returns the mask of the non-NUL bytes. */
CH_INLINE unsigned ch__ucs4_pack16(const uint32_t *s, const __m128i *m, uint8_t *dst,
                                   __m128i *acc) {
    const __m128i *p = (const __m128i *)s;
    __m128i a = _mm_loadu_si128(p), b = _mm_loadu_si128(p + 1);
    __m128i c = _mm_loadu_si128(p + 2), d = _mm_loadu_si128(p + 3);
    if (m) {
        a = _mm_and_si128(a, m[0]);
        b = _mm_and_si128(b, m[1]);
        c = _mm_and_si128(c, m[2]);
        d = _mm_and_si128(d, m[3]);
    }
    *acc = _mm_or_si128(*acc, _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)));
    __m128i v = CH__PACK16(a, b, c, d);
    _mm_storeu_si128((__m128i *)dst, v);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())) ^ 0xFFFFu;
}

/* The fast path over elements [i, stop) of G groups of 16 code points each (GK: G as a
 * constant 1 or 2, so the groups unroll and the length is one bit scan; 0: any G); m: the
 * masks of the last group.  Returns the index of the first element it did not hash. */
CH_INLINE Py_ssize_t ch__ucs4_fast(ch_hfn H, const size_t GK, const uint32_t *data,
                                   size_t w, size_t G, Py_ssize_t i, Py_ssize_t start,
                                   Py_ssize_t stop, uint64_t seed, uint64_t *out,
                                   uint8_t *scratch, size_t scratch_len, const __m128i *m) {
    const size_t NG = GK ? GK : G;
    const __m128i hi = _mm_set1_epi32(~0x7F);
    for (; i < stop; i++) {
        const uint32_t *s = data + (size_t)i * w;
        __m128i acc = _mm_setzero_si128();
        size_t L = 0;
        int big = 0;  /* GK == 2: bytes past the first 16 (known before L) */
        if (GK) {
            uint32_t nzs = 0;
            for (size_t g = 0; g < NG; g++)
                nzs |= ch__ucs4_pack16(s + 16 * g, g + 1 == NG ? m : NULL, scratch + 16 * g,
                                       &acc) << (16 * g);
            big = GK == 2 && nzs > 0xFFFFu;
            L = nzs ? (size_t)CH_BSR32(nzs) + 1 : 0;
        } else {
            for (size_t g = 0; g < NG; g++) {
                unsigned nz = ch__ucs4_pack16(s + 16 * g, g + 1 == NG ? m : NULL,
                                              scratch + 16 * g, &acc);
                if (nz) L = 16 * g + (size_t)CH_BSR32(nz) + 1;
            }
        }
        if (CH_LIKELY(_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(acc, hi),
                                                        _mm_setzero_si128())) == 0xFFFF)) {
            /* (H == ch_h_xxh3 is a constant once the kernel is instantiated) */
            if (H == ch_h_xxh3 && GK) {
                /* the branch on big resolves before the one on L would */
                if (GK == 2 && big)
                    out[i - start] = ch__xxh3_ucs4_17to128(scratch, s, L, seed, scratch + 32);
                else
                    out[i - start] = ch__xxh3_0to16(scratch, L, seed);
            } else if (H == ch_h_xxh3 && L <= 16)
                out[i - start] = ch__xxh3_0to16(scratch, L, seed);
            else if (H == ch_h_xxh3 && L <= 128)
                out[i - start] = ch__xxh3_ucs4_17to128(scratch, s, L, seed, scratch + 16 * NG);
            else
                out[i - start] = H(scratch, L, seed);
        } else {
            Py_ssize_t n = ch_ucs4_elem_utf8(s, w, scratch, scratch_len, 0);
            if (n < 0) return i;
            out[i - start] = H(scratch, (size_t)n, seed);
        }
    }
    return stop;
}
#endif

/* NumPy U array (native-order UCS4, itemsize 4 * w): hash elements [start, stop) into
 * out[0 ..); returns the index of an element the caller must handle (not valid Unicode, or
 * too long for the scratch buffer), or stop.
 *
 * The fast path (SSE2) takes an element 16 code points at a time: four loads, packed to 16
 * bytes with saturation (exact while every code point is ASCII, which an OR of all of them
 * checks), one 16-byte store into scratch, and the length from the last non-NUL byte (a NUL
 * byte of ASCII text is a NUL code point), without a branch per key for w <= 32.  The last
 * group of an element is masked to its w code points; its loads may run up to 15 code points
 * past the element, so the last elements of [start, stop), whose reads would leave the
 * range, and any element that is not ASCII take the exact code point at a time path. */
CH_INLINE Py_ssize_t ch__ucs4(ch_hfn H, const uint32_t *data, Py_ssize_t w, Py_ssize_t start,
                              Py_ssize_t stop, uint64_t seed, uint64_t *out, uint8_t *scratch,
                              size_t scratch_len) {
    Py_ssize_t i = start;
    if (w <= 0) {
        for (; i < stop; i++) out[i - start] = H(scratch, 0, seed);
        return stop;
    }
#ifdef CH_UCS4_SSE2
    const size_t G = ((size_t)w + 15) / 16;  /* groups of 16 code points */
    if (16 * G + 64 <= scratch_len) {  /* the bytes, then room for ch__xxh3_ucs4_17to128 */
        const size_t over = 16 * G - (size_t)w;
        const Py_ssize_t nsafe = (Py_ssize_t)((over + (size_t)w - 1) / (size_t)w);
        const Py_ssize_t safe_stop = stop - nsafe;
        const __m128i rem = _mm_set1_epi32((int)((size_t)w - 16 * (G - 1)));
        __m128i m[4];
        m[0] = _mm_cmplt_epi32(_mm_setr_epi32(0, 1, 2, 3), rem);
        m[1] = _mm_cmplt_epi32(_mm_setr_epi32(4, 5, 6, 7), rem);
        m[2] = _mm_cmplt_epi32(_mm_setr_epi32(8, 9, 10, 11), rem);
        m[3] = _mm_cmplt_epi32(_mm_setr_epi32(12, 13, 14, 15), rem);
        Py_ssize_t j;
        if (i < safe_stop) {
            if (G == 1)
                j = ch__ucs4_fast(H, 1, data, (size_t)w, G, i, start, safe_stop, seed, out,
                                  scratch, scratch_len, m);
            else if (G == 2)
                j = ch__ucs4_fast(H, 2, data, (size_t)w, G, i, start, safe_stop, seed, out,
                                  scratch, scratch_len, m);
            else
                j = ch__ucs4_fast(H, 0, data, (size_t)w, G, i, start, safe_stop, seed, out,
                                  scratch, scratch_len, m);
            if (j < safe_stop) return j;
            i = j;
        }
    }
#endif
    for (; i < stop; i++) {
        const uint32_t *s = data + (size_t)i * (size_t)w;
        Py_ssize_t n = ch_ucs4_elem_utf8(s, (size_t)w, scratch, scratch_len, 1);
        if (n < 0) return i;
        out[i - start] = H(scratch, (size_t)n, seed);
    }
    return stop;
}

static inline Py_ssize_t ch_hash_ucs4(const uint32_t *data, Py_ssize_t w, Py_ssize_t start,
                                      Py_ssize_t stop, int hid, uint64_t seed, uint64_t *out,
                                      uint8_t *scratch, size_t scratch_len) {
    CH_DISPATCH(hid, ch__ucs4, data, w, start, stop, seed, out, scratch, scratch_len)
}

/* NumPy S array (itemsize w): hash elements [start, stop) into out[0 ..). */
CH_INLINE int ch__fixed_bytes(ch_hfn H, const uint8_t *data, Py_ssize_t w, Py_ssize_t start,
                              Py_ssize_t stop, uint64_t seed, uint64_t *out) {
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint8_t *s = data + (size_t)i * (size_t)w;
        out[i - start] = H(s, ch_trim_nuls(s, (size_t)w), seed);
    }
    return 0;
}

/* The length of the row s[0 .. w), 8 <= w <= 32, without its trailing NUL bytes, with no
 * branch on its bytes (ch_trim_nuls stops at the first nonzero word from the end: on keys of
 * varying lengths, a mispredicted branch a row).  The row's nonzero bytes as a bitmap (bit k:
 * byte k), from two overlapping loads that cover it; the length is one past its top bit.
 * That bit comes from the bitmap's exponent as a double (exact below 2^53): x86-64's baseline
 * has no LZCNT, and BSR, which it has, is slow on AMD cores (measured: 1.2 ns a row more per
 * BSR).  Elsewhere, the row's words and a count of leading zeros (one instruction there). */
#if defined(CH_UCS4_SSE2) || defined(__GNUC__) || defined(__clang__)
#define CH__ROW_LEN 1
#ifdef CH_UCS4_SSE2
CH_INLINE size_t ch__bits_end(uint32_t m) {
    const double d = (double)m;
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return (size_t)((b >> 52) - 1022) & ((size_t)0 - (size_t)(m != 0));
}

CH_INLINE size_t ch__row_len(const uint8_t *s, size_t w) {
    const __m128i z = _mm_setzero_si128();
    uint32_t nz;
    if (w >= 16) {  /* the same for every row: predicted */
        const __m128i x0 = _mm_loadu_si128((const __m128i *)s);
        const __m128i x1 = _mm_loadu_si128((const __m128i *)(s + w - 16));
        nz = (~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x0, z)) & 0xFFFFu) |
             ((~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x1, z)) & 0xFFFFu) << (w - 16));
    } else {
        const __m128i x0 = _mm_loadl_epi64((const __m128i *)s);
        const __m128i x1 = _mm_loadl_epi64((const __m128i *)(s + w - 8));
        nz = (~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x0, z)) & 0xFFu) |
             ((~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x1, z)) & 0xFFu) << (w - 8));
    }
    return ch__bits_end(nz);
}
#else
CH_INLINE size_t ch__row_len(const uint8_t *s, size_t w) {
    size_t len = 0;
    for (size_t k = 0; k < w; k += 8) {  /* its count depends on w alone */
        const size_t at = k + 8 <= w ? k : w - 8;
        const uint64_t x = ch__rd64(s + at);  /* little-endian: byte at + 7 is the top one */
        const size_t end = (at + 8 - (size_t)(__builtin_clzll(x | 1) >> 3)) &
                           ((size_t)0 - (size_t)(x != 0));
        len = end > len ? end : len;
    }
    return len;
}
#endif
#endif

/* XXH3 over rows: each group's lengths first, each row filed by class as its length is found
 * (ch__xxh3_note), then the group class by class (ch__xxh3_rows).  On 1,000,000 rows of keys
 * of 8-24 bytes (bench_hotpath's), Zen 2, get_indices with threads=1: 12.4 -> 11.1 ns a key;
 * fixed lengths of 20 and 32 bytes 0.3-0.7 ns faster, of 11 alike.  Arrow's spans stay one
 * key at a time (ch__off32): their lengths cost nothing to read, and the same split measured
 * 3-4% slower there. */
CH_INLINE void ch__fixed_bytes_xxh3(const uint8_t *data, size_t w, Py_ssize_t start,
                                    Py_ssize_t stop, uint64_t seed, uint64_t *out) {
    ch__xxh3_group q;
    for (Py_ssize_t s0 = start; s0 < stop; s0 += CH__XG) {
        const size_t g = (size_t)(stop - s0 < CH__XG ? stop - s0 : CH__XG);
        const uint8_t *base = data + (size_t)s0 * w;
        q.na = q.nb = q.nc = 0;
#ifdef CH__ROW_LEN
        if (w >= 8 && w <= 32) {
            for (size_t j = 0; j < g; j++) ch__xxh3_note(&q, j, ch__row_len(base + j * w, w));
        } else
#endif
        {
            for (size_t j = 0; j < g; j++) ch__xxh3_note(&q, j, ch_trim_nuls(base + j * w, w));
        }
        ch__xxh3_rows(&q, base, w, g, seed, out + (s0 - start));
    }
}

#if defined(CH_HAVE_AVX2) && defined(CH__ROW_LEN)
#define CH__FIXED_XXH3_AVX2 1
/* The same for rows of 8-32 bytes on AVX2 CPUs, with fewer instructions a row (the kernel was
 * instruction-bound: ~89 a row, 2.8 a cycle on Zen 2).  A row's length is one 32-byte load,
 * a compare, a mask of its nonzero bytes and LZCNT; the rows whose load would pass the end of
 * the array (the last 32 / w) take ch__row_len.  Each row is filed by class as it is
 * measured (ch__xxh3_note), and the group is hashed class by class (ch__xxh3_rows). */
CH_AVX2 void ch__fixed_bytes_xxh3_avx2(const uint8_t *data, size_t w, Py_ssize_t start,
                                       Py_ssize_t stop, uint64_t seed, uint64_t *out) {
    ch__xxh3_group q;
    const uint32_t keep = w >= 32 ? 0xFFFFFFFFu : (1u << w) - 1u;  /* the row's own bytes */
    const __m256i z = _mm256_setzero_si256();
    /* rows i with i * w + 32 <= stop * w: their 32-byte loads stay inside the array */
    const Py_ssize_t over = (Py_ssize_t)((32 + w - 1) / w) - 1;
    const Py_ssize_t safe = stop - over > start ? stop - over : start;
    for (Py_ssize_t s0 = start; s0 < stop; s0 += CH__XG) {
        const size_t g = (size_t)(stop - s0 < CH__XG ? stop - s0 : CH__XG);
        const size_t gs = safe <= s0 ? 0 : (size_t)(safe - s0) < g ? (size_t)(safe - s0) : g;
        const uint8_t *base = data + (size_t)s0 * w;
        size_t j = 0;
        for (; j < gs; j++) {
            const uint32_t zm = (uint32_t)_mm256_movemask_epi8(
                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(base + j * w)), z));
            q.len[j] = 32 - _lzcnt_u32(~zm & keep);
        }
        for (; j < g; j++) q.len[j] = (uint32_t)ch__row_len(base + j * w, w);
        ch__xxh3_split(&q, g);
        ch__xxh3_rows(&q, base, w, g, seed, out + (s0 - start));
    }
}
#endif

static inline void ch_hash_fixed_bytes(const uint8_t *data, Py_ssize_t w, Py_ssize_t start,
                                       Py_ssize_t stop, int hid, uint64_t seed, uint64_t *out) {
    if (hid == CH_XXH3) {
#ifdef CH__FIXED_XXH3_AVX2
        if (ch_simd_avx2 && w >= 8 && w <= 32) {
            ch__fixed_bytes_xxh3_avx2(data, (size_t)w, start, stop, seed, out);
            return;
        }
#endif
        ch__fixed_bytes_xxh3(data, (size_t)w, start, stop, seed, out);
        return;
    }
    CH_DISPATCH_VOID(hid, ch__fixed_bytes, data, w, start, stop, seed, out)
}

/* Integer arrays: each value hashed as its ASCII decimal. */
CH_INLINE int ch__i64(ch_hfn H, const int64_t *v, Py_ssize_t m, uint64_t seed, uint64_t *out) {
    uint8_t b[128];  /* 21 bytes are used; the size keeps gcc from warning about the
                        * inlined long-key paths of the hashes, which never run here */
    if (H == ch_h_xxh3) {
        for (Py_ssize_t i = 0; i < m; i++) out[i] = ch_xxh3_i64_dec(v[i], seed);
        return 0;
    }
    for (Py_ssize_t i = 0; i < m; i++) out[i] = H(b, ch_i64_dec(v[i], b), seed);
    return 0;
}

CH_INLINE int ch__u64(ch_hfn H, const uint64_t *v, Py_ssize_t m, uint64_t seed, uint64_t *out) {
    uint8_t b[128];  /* 21 bytes are used; the size keeps gcc from warning about the
                        * inlined long-key paths of the hashes, which never run here */
    if (H == ch_h_xxh3) {
        for (Py_ssize_t i = 0; i < m; i++) out[i] = ch__xxh3_dec(v[i], 0, seed);
        return 0;
    }
    for (Py_ssize_t i = 0; i < m; i++) out[i] = H(b, ch_u64_dec(v[i], b), seed);
    return 0;
}

static inline void ch_hash_i64(const int64_t *v, Py_ssize_t m, int hid, uint64_t seed,
                               uint64_t *out) {
    CH_DISPATCH_VOID(hid, ch__i64, v, m, seed, out)
}

static inline void ch_hash_u64(const uint64_t *v, Py_ssize_t m, int hid, uint64_t seed,
                               uint64_t *out) {
    CH_DISPATCH_VOID(hid, ch__u64, v, m, seed, out)
}

/* Arrow variable-width binary / string arrays: element i spans data[off[i] .. off[i+1]). */
CH_INLINE int ch__off32(ch_hfn H, const int32_t *off, const uint8_t *data, Py_ssize_t m,
                        uint64_t seed, uint64_t *out) {
    for (Py_ssize_t i = 0; i < m; i++) out[i] = H(data + off[i], (size_t)(off[i + 1] - off[i]), seed);
    return 0;
}

CH_INLINE int ch__off64(ch_hfn H, const int64_t *off, const uint8_t *data, Py_ssize_t m,
                        uint64_t seed, uint64_t *out) {
    for (Py_ssize_t i = 0; i < m; i++) out[i] = H(data + off[i], (size_t)(off[i + 1] - off[i]), seed);
    return 0;
}

static inline void ch_hash_offsets32(const int32_t *off, const uint8_t *data, Py_ssize_t m,
                                     int hid, uint64_t seed, uint64_t *out) {
    CH_DISPATCH_VOID(hid, ch__off32, off, data, m, seed, out)
}

static inline void ch_hash_offsets64(const int64_t *off, const uint8_t *data, Py_ssize_t m,
                                     int hid, uint64_t seed, uint64_t *out) {
    CH_DISPATCH_VOID(hid, ch__off64, off, data, m, seed, out)
}

/* Arrow string_view / binary_view arrays: 16-byte views; a view of length <= 12 holds its
 * bytes inline, a longer one names a data buffer and an offset into it.  Returns the index
 * of a view that points outside its buffers (damaged input), or m when all are hashed. */
CH_INLINE Py_ssize_t ch__views(ch_hfn H, const uint8_t *views, const uint64_t *buf_addr,
                               const int64_t *buf_size, int32_t nbufs, Py_ssize_t m,
                               uint64_t seed, uint64_t *out) {
    for (Py_ssize_t i = 0; i < m; i++) {
        const uint8_t *v = views + (size_t)i * 16;
        int32_t len;
        memcpy(&len, v, 4);
        if (len < 0) return i;
        if (len <= 12) {
            out[i] = H(v + 4, (size_t)len, seed);
        } else {
            int32_t bi, off;
            memcpy(&bi, v + 8, 4);
            memcpy(&off, v + 12, 4);
            if (bi < 0 || bi >= nbufs || off < 0 || (int64_t)off + len > buf_size[bi]) return i;
            out[i] = H((const uint8_t *)(uintptr_t)buf_addr[bi] + off, (size_t)len, seed);
        }
    }
    return m;
}

static inline Py_ssize_t ch_hash_views(const uint8_t *views, const uint64_t *buf_addr,
                                       const int64_t *buf_size, int32_t nbufs, Py_ssize_t m,
                                       int hid, uint64_t seed, uint64_t *out) {
    CH_DISPATCH(hid, ch__views, views, buf_addr, buf_size, nbufs, m, seed, out)
}

/* dst[i] = src[idx[i]] with new references (idx -1 leaves dst[i], a None, alone); dst comes
 * filled with None, as NumPy creates object arrays.  With the GIL, references are counted
 * per source object and added once (a per-item Py_INCREF on the same few node names is a
 * serial chain of read-modify-writes, ~5 ns a key); the free-threaded build takes the
 * per-item path, whose counts are atomic.  Returns the position of an index out of range
 * (nothing is changed then), or -1 when done.  counts has room for nsrc entries. */
static inline Py_ssize_t ch_take_objects(PyObject *const *src, Py_ssize_t nsrc,
                                         const int32_t *idx, Py_ssize_t m, PyObject **dst,
                                         Py_ssize_t *counts) {
    for (Py_ssize_t i = 0; i < m; i++)
        if (idx[i] < -1 || idx[i] >= nsrc) return i;
#ifdef Py_GIL_DISABLED
    (void)counts;
    for (Py_ssize_t i = 0; i < m; i++) {
        int32_t j = idx[i];
        if (j < 0) continue;
        Py_INCREF(src[j]);
        dst[i] = src[j];
        Py_DECREF(Py_None);
    }
#else
    Py_ssize_t taken = 0;
    memset(counts, 0, (size_t)nsrc * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < m; i++) {
        int32_t j = idx[i];
        if (j < 0) continue;
        dst[i] = src[j];
        counts[j]++;
        taken++;
    }
    for (Py_ssize_t j = 0; j < nsrc; j++)
        if (counts[j]) Py_SET_REFCNT(src[j], Py_REFCNT(src[j]) + counts[j]);
    /* The None references dst held (a no-op for an immortal None, as NumPy's fill was). */
    Py_SET_REFCNT(Py_None, Py_REFCNT(Py_None) - taken);
#endif
    return -1;
}

/* dst[i] = src[idx[i]] with a new reference, for a few items (idx -1 leaves dst[i], a None,
 * alone; an item may also be NULL before, in an array of ch_np_empty1 whose every item this
 * writes): the per-item form of ch_take_objects, with no per-node count to clear. */
static inline void ch_take_objects_small(PyObject *const *src, const int32_t *idx, Py_ssize_t m,
                                         PyObject **dst) {
    for (Py_ssize_t i = 0; i < m; i++) {
        const int32_t j = idx[i];
        if (j < 0) continue;
        Py_INCREF(src[j]);
        Py_XDECREF(dst[i]);  /* None (np.empty), or NULL (ch_np_empty1) */
        dst[i] = src[j];
    }
}

/* Build the positions of one node: labels utf8(name) + "#" + decimal j, j = 0 .. count-1.
 * label must hold name_len + 21 bytes and start with the name. */
CH_INLINE int ch__labels(ch_hfn H, uint8_t *label, size_t name_len, uint32_t count,
                         uint64_t seed, uint64_t *out) {
    label[name_len] = '#';
    for (uint32_t j = 0; j < count; j++) {
        size_t m = ch_u64_dec(j, label + name_len + 1);
        out[j] = H(label, name_len + 1 + m, seed);
    }
    return 0;
}

static inline void ch_label_positions(uint8_t *label, size_t name_len, uint32_t count, int hid,
                                      uint64_t seed, uint64_t *out) {
    CH_DISPATCH_VOID(hid, ch__labels, label, name_len, count, seed, out)
}

/* The positions of many nodes' labels at once: node i's names[i] (lens[i] bytes of UTF-8)
 * + "#" + decimal j for j < counts[i], into pos[off ..), with owner first_owner + i in own,
 * node after node.  The decimal suffix is counted up in place instead of printed per label.
 * label must hold max(lens) + 12 bytes. */
CH_INLINE int ch__label_ring(ch_hfn H, const uint8_t *const *names, const size_t *lens,
                             const uint32_t *counts, size_t nn, int32_t first_owner,
                             uint64_t seed, uint8_t *label, uint64_t *pos, int32_t *own) {
    size_t off = 0;
    for (size_t i = 0; i < nn; i++) {
        const size_t L = lens[i];
        const uint32_t c = counts[i];
        const int32_t o = first_owner + (int32_t)i;
        if (L) memcpy(label, names[i], L);
        label[L] = '#';
        uint8_t *d = label + L + 1;
        size_t nd = 1;
        d[0] = '0';
        for (uint32_t j = 0; j < c; j++) {
            pos[off + j] = H(label, L + 1 + nd, seed);
            own[off + j] = o;
            size_t t = nd;
            while (t > 0 && d[t - 1] == '9') d[--t] = '0';
            if (t > 0) {
                d[t - 1]++;
            } else {  /* 9...9 + 1: one more digit */
                d[0] = '1';
                d[nd++] = '0';
            }
        }
        off += c;
    }
    return 0;
}

static inline void ch_label_ring(const uint8_t *const *names, const size_t *lens,
                                 const uint32_t *counts, size_t nn, int32_t first_owner, int hid,
                                 uint64_t seed, uint8_t *label, uint64_t *pos, int32_t *own) {
    CH_DISPATCH_VOID(hid, ch__label_ring, names, lens, counts, nn, first_owner, seed, label, pos,
                     own)
}

#endif
