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

enum { CH_XXH3 = 0, CH_XXH64 = 1, CH_MURMUR3 = 2, CH_MD5 = 3 };

#define CH_SCRATCH 16384

static inline uint64_t ch_hash(int hid, const uint8_t *p, size_t n, uint64_t seed) {
    switch (hid) {
        case CH_XXH3: return ch_xxh3_64(p, n, seed);
        case CH_XXH64: return ch_xxh64(p, n, seed);
        case CH_MURMUR3: return ch_murmur3_64(p, n, (uint32_t)seed);
        default: return ch_md5_64(p, n);
    }
}

/* ASCII decimal of a signed / unsigned 64-bit integer; returns the length (<= 20). */
static inline size_t ch_u64_dec(uint64_t v, uint8_t *out) {
    uint8_t tmp[20];
    size_t n = 0;
    do { tmp[n++] = (uint8_t)('0' + v % 10); v /= 10; } while (v);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

static inline size_t ch_i64_dec(int64_t v, uint8_t *out) {
    if (v < 0) {
        out[0] = '-';
        return 1 + ch_u64_dec((uint64_t)0 - (uint64_t)v, out + 1);
    }
    return ch_u64_dec((uint64_t)v, out);
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
    if (kind == 2) {
        const uint16_t *s = (const uint16_t *)data;
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t w = ch_utf8_put(s[i], out + o);
            if (!w) return -1;
            o += w;
        }
        return (Py_ssize_t)o;
    }
    const uint32_t *s = (const uint32_t *)data;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t w = ch_utf8_put(s[i], out + o);
        if (!w) return -1;
        o += w;
    }
    return (Py_ssize_t)o;
}

/* Hash items[start .. n) into out[start .. n) until an item needs the caller; returns the
 * index of that item, or n when all are done.  scratch holds CH_SCRATCH bytes. */
static inline Py_ssize_t ch_hash_objects(PyObject *const *items, Py_ssize_t start, Py_ssize_t n,
                                         int hid, uint64_t seed, uint64_t *out, uint8_t *scratch) {
    const Py_ssize_t PF = 16;
    for (Py_ssize_t i = start; i < n; i++) {
        if (i + PF < n) {
            const char *ahead = (const char *)items[i + PF];
            CH_PREFETCH(ahead);
            CH_PREFETCH(ahead + 64);
        }
        PyObject *o = items[i];
        PyTypeObject *t = Py_TYPE(o);
        if (CH_LIKELY(t == &PyUnicode_Type) || PyUnicode_Check(o)) {
            Py_ssize_t len = PyUnicode_GET_LENGTH(o);
            if (CH_LIKELY(PyUnicode_IS_ASCII(o))) {
                out[i] = ch_hash(hid, (const uint8_t *)PyUnicode_DATA(o), (size_t)len, seed);
                continue;
            }
            if (len > CH_SCRATCH / 4) return i;
            Py_ssize_t m = ch_ucs_to_utf8(PyUnicode_KIND(o), PyUnicode_DATA(o), len, scratch);
            if (m < 0) return i;
            out[i] = ch_hash(hid, scratch, (size_t)m, seed);
        } else if (t == &PyBytes_Type || PyBytes_Check(o)) {
            out[i] = ch_hash(hid, (const uint8_t *)PyBytes_AS_STRING(o), (size_t)PyBytes_GET_SIZE(o), seed);
        } else if (t == &PyLong_Type) {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (overflow) return i;
            size_t m = ch_i64_dec((int64_t)v, scratch);
            out[i] = ch_hash(hid, scratch, m, seed);
        } else if (PyByteArray_Check(o)) {
            out[i] = ch_hash(hid, (const uint8_t *)PyByteArray_AS_STRING(o), (size_t)PyByteArray_GET_SIZE(o), seed);
        } else {
            return i;
        }
    }
    return n;
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

/* Narrow n UCS4 code points to their low bytes; returns the OR of all code points, so a
 * result < 0x80 means the text was ASCII and the bytes are its UTF-8. */
static inline uint32_t ch_narrow_ucs4(const uint32_t *s, size_t n, uint8_t *out) {
    uint32_t acc = 0;
    size_t j = 0;
#if defined(__SSE2__) || defined(_M_X64)
    __m128i vacc = _mm_setzero_si128();
    for (; j + 16 <= n; j += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + j));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + j + 4));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + j + 8));
        __m128i d = _mm_loadu_si128((const __m128i *)(s + j + 12));
        vacc = _mm_or_si128(vacc, _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)));
        /* Saturating packs: exact for ASCII, and anything else is caught by acc. */
        __m128i ab = _mm_packs_epi32(a, b), cd = _mm_packs_epi32(c, d);
        _mm_storeu_si128((__m128i *)(out + j), _mm_packus_epi16(ab, cd));
    }
    uint32_t lanes[4];
    _mm_storeu_si128((__m128i *)lanes, vacc);
    acc = lanes[0] | lanes[1] | lanes[2] | lanes[3];
#endif
    for (; j < n; j++) {
        acc |= s[j];
        out[j] = (uint8_t)s[j];
    }
    return acc;
}

/* NumPy U array (native-order UCS4, itemsize 4 * w): hash elements [start, stop); returns the
 * index of an element the caller must handle (not valid Unicode, or too long), or stop. */
static inline Py_ssize_t ch_hash_ucs4(const uint32_t *data, Py_ssize_t w, Py_ssize_t start,
                                      Py_ssize_t stop, int hid, uint64_t seed, uint64_t *out,
                                      uint8_t *scratch, size_t scratch_len) {
    if ((size_t)w > scratch_len) return start;
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint32_t *s = data + (size_t)i * (size_t)w;
        /* Narrow the whole element to bytes (a loop the compiler vectorises); when every code
         * point is ASCII, the bytes are the UTF-8 and a NUL byte is a NUL code point. */
        uint32_t acc = ch_narrow_ucs4(s, (size_t)w, scratch);
        Py_ssize_t m;
        if (CH_LIKELY(acc < 0x80)) {
            m = (Py_ssize_t)ch_trim_nuls(scratch, (size_t)w);
        } else {
            Py_ssize_t len = w;
            while (len > 0 && s[len - 1] == 0) len--;
            if ((size_t)len * 4 > scratch_len) return i;
            m = ch_ucs_to_utf8(4, s, len, scratch);
            if (m < 0) return i;
        }
        out[i - start] = ch_hash(hid, scratch, (size_t)m, seed);
    }
    return stop;
}

/* NumPy S array (itemsize w): hash elements [start, stop). */
static inline void ch_hash_fixed_bytes(const uint8_t *data, Py_ssize_t w, Py_ssize_t start,
                                       Py_ssize_t stop, int hid, uint64_t seed, uint64_t *out) {
    for (Py_ssize_t i = start; i < stop; i++) {
        const uint8_t *s = data + (size_t)i * (size_t)w;
        out[i - start] = ch_hash(hid, s, ch_trim_nuls(s, (size_t)w), seed);
    }
}

static inline void ch_hash_i64(const int64_t *v, Py_ssize_t m, int hid, uint64_t seed,
                               uint64_t *out) {
    uint8_t b[24];
    for (Py_ssize_t i = 0; i < m; i++) out[i] = ch_hash(hid, b, ch_i64_dec(v[i], b), seed);
}

static inline void ch_hash_u64(const uint64_t *v, Py_ssize_t m, int hid, uint64_t seed,
                               uint64_t *out) {
    uint8_t b[24];
    for (Py_ssize_t i = 0; i < m; i++) out[i] = ch_hash(hid, b, ch_u64_dec(v[i], b), seed);
}

/* Arrow variable-width binary / string arrays: element i spans data[off[i] .. off[i+1]). */
static inline void ch_hash_offsets32(const int32_t *off, const uint8_t *data, Py_ssize_t m,
                                     int hid, uint64_t seed, uint64_t *out) {
    for (Py_ssize_t i = 0; i < m; i++)
        out[i] = ch_hash(hid, data + off[i], (size_t)(off[i + 1] - off[i]), seed);
}

static inline void ch_hash_offsets64(const int64_t *off, const uint8_t *data, Py_ssize_t m,
                                     int hid, uint64_t seed, uint64_t *out) {
    for (Py_ssize_t i = 0; i < m; i++)
        out[i] = ch_hash(hid, data + off[i], (size_t)(off[i + 1] - off[i]), seed);
}

/* Build the positions of one node: labels utf8(name) + "#" + decimal j, j = 0 .. count-1.
 * label must hold name_len + 21 bytes and start with the name. */
static inline void ch_label_positions(uint8_t *label, size_t name_len, uint32_t count, int hid,
                                      uint64_t seed, uint64_t *out) {
    label[name_len] = '#';
    for (uint32_t j = 0; j < count; j++) {
        size_t m = ch_u64_dec(j, label + name_len + 1);
        out[j] = ch_hash(hid, label, name_len + 1 + m, seed);
    }
}

#endif
