/*
 * ch_hash.h - hash functions for the consistent-hashing ring.
 *
 * Independent implementations written from the published algorithm
 * descriptions:
 *   - XXH64 and XXH3-64 : the xxHash specification (doc/xxhash_spec.md)
 *   - MurmurHash3_x64_128: the MurmurHash3 algorithm description (SMHasher)
 *   - MD5                : RFC 1321
 *
 * Results are bit-identical to the reference packages:
 *   ch_xxh3_64(p, n, seed)   == xxhash.xxh3_64_intdigest(data, seed)
 *   ch_xxh64(p, n, seed)     == xxhash.xxh64_intdigest(data, seed)
 *   ch_murmur3_64(p, n, s)   == mmh3.hash64(data, s, signed=False)[0]
 *   ch_md5_64(p, n)          == int.from_bytes(md5(data).digest()[:8], "big")
 *   ch_md5(p, n, out)        == md5(data).digest()
 *
 * Portable C99 header: every function is static (inline); there is no
 * mutable global state; input is always read as little-endian, so results do
 * not depend on the host byte order.  `p` may be NULL when `len` is 0.
 *
 * Configuration macros (all optional, mainly for testing):
 *   CH_HASH_PORTABLE_LOADS  read input with byte assembly instead of memcpy
 *   CH_HASH_NO_INT128       do not use unsigned __int128 / compiler intrinsics
 *                           for the 64x64->128 multiply (portable 4x32 path)
 */
#ifndef CH_HASH_H
#define CH_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ch_platform.h"   /* CH_INLINE, CH_LIKELY, CH_OUTLINE, ... */

/* Byte order of the host: 1 = little endian, 2 = big endian, 0 = unknown
 * (unknown falls back to byte-by-byte assembly, which is always correct). */
#if defined(CH_HASH_PORTABLE_LOADS)
#  define CH__BYTE_ORDER 0
#elif defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
      (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
#  define CH__BYTE_ORDER 1
#elif defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
      (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
#  define CH__BYTE_ORDER 2
#elif defined(_WIN32) || defined(_M_IX86) || defined(_M_X64) || \
      defined(_M_AMD64) || defined(_M_ARM64) || defined(_M_ARM) || \
      defined(__x86_64__) || defined(__i386__) || defined(__AARCH64EL__) || \
      defined(__ARMEL__) || defined(__MIPSEL__)
#  define CH__BYTE_ORDER 1
#else
#  define CH__BYTE_ORDER 0
#endif

/* 64x64 -> 128 bit multiplication support. */
#if !defined(CH_HASH_NO_INT128) && defined(__SIZEOF_INT128__)
#  define CH__MUL128_INT128 1
__extension__ typedef unsigned __int128 ch__u128;
#elif !defined(CH_HASH_NO_INT128) && defined(_MSC_VER) && \
      (defined(_M_X64) || defined(_M_AMD64)) && !defined(_M_ARM64EC)
#  define CH__MUL128_UMUL128 1
/* Declared here (same prototype as <intrin.h>) to keep the include list to
 * <stdint.h>, <stddef.h>, <string.h>. */
unsigned __int64 _umul128(unsigned __int64, unsigned __int64, unsigned __int64 *);
#  pragma intrinsic(_umul128)
#elif !defined(CH_HASH_NO_INT128) && defined(_MSC_VER) && defined(_M_ARM64)
#  define CH__MUL128_UMULH 1
unsigned __int64 __umulh(unsigned __int64, unsigned __int64);
#  pragma intrinsic(__umulh)
#endif

/* ------------------------------------------------------------------------ */
/* Primitive operations                                                      */
/* ------------------------------------------------------------------------ */

CH_INLINE uint64_t ch__rotl64(uint64_t x, unsigned r)
{
    return (x << r) | (x >> (64u - r));
}

CH_INLINE uint32_t ch__rotl32(uint32_t x, unsigned r)
{
    return (x << r) | (x >> (32u - r));
}

CH_INLINE uint32_t ch__bswap32(uint32_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_bswap32(x);
#else
    return ((x << 24) & 0xFF000000u) | ((x << 8) & 0x00FF0000u) |
           ((x >> 8) & 0x0000FF00u) | ((x >> 24) & 0x000000FFu);
#endif
}

CH_INLINE uint64_t ch__bswap64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_bswap64(x);
#else
    x = ((x & 0x00000000FFFFFFFFull) << 32) | ((x >> 32) & 0x00000000FFFFFFFFull);
    x = ((x & 0x0000FFFF0000FFFFull) << 16) | ((x >> 16) & 0x0000FFFF0000FFFFull);
    x = ((x & 0x00FF00FF00FF00FFull) << 8) | ((x >> 8) & 0x00FF00FF00FF00FFull);
    return x;
#endif
}

/* Little-endian loads / stores (unaligned-safe). */
CH_INLINE uint64_t ch__rd64(const uint8_t *p)
{
#if CH__BYTE_ORDER == 1
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
#elif CH__BYTE_ORDER == 2
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return ch__bswap64(v);
#else
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) |
           ((uint64_t)p[3] << 24) | ((uint64_t)p[4] << 32) |
           ((uint64_t)p[5] << 40) | ((uint64_t)p[6] << 48) |
           ((uint64_t)p[7] << 56);
#endif
}

CH_INLINE uint32_t ch__rd32(const uint8_t *p)
{
#if CH__BYTE_ORDER == 1
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
#elif CH__BYTE_ORDER == 2
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return ch__bswap32(v);
#else
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
#endif
}

CH_INLINE void ch__wr64(uint8_t *p, uint64_t v)
{
#if CH__BYTE_ORDER == 1
    memcpy(p, &v, sizeof v);
#elif CH__BYTE_ORDER == 2
    v = ch__bswap64(v);
    memcpy(p, &v, sizeof v);
#else
    unsigned i;
    for (i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
#endif
}

CH_INLINE void ch__wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Full 64x64 -> 128 product, folded: low64 XOR high64. */
CH_INLINE uint64_t ch__mul128_fold64(uint64_t a, uint64_t b)
{
#if defined(CH__MUL128_INT128)
    ch__u128 r = (ch__u128)a * (ch__u128)b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
#elif defined(CH__MUL128_UMUL128)
    unsigned __int64 hi;
    unsigned __int64 lo = _umul128(a, b, &hi);
    return (uint64_t)(lo ^ hi);
#elif defined(CH__MUL128_UMULH)
    return (a * b) ^ (uint64_t)__umulh(a, b);
#else
    /* Schoolbook multiplication on 32-bit halves. */
    uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32;
    uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
    uint64_t ll = a_lo * b_lo;
    uint64_t hl = a_hi * b_lo;
    uint64_t lh = a_lo * b_hi;
    uint64_t hh = a_hi * b_hi;
    /* cannot overflow: at most 3 * (2^32 - 1) + (2^32 - 1)^2 < 2^64 */
    uint64_t mid = (ll >> 32) + (hl & 0xFFFFFFFFu) + lh;
    uint64_t hi = hh + (hl >> 32) + (mid >> 32);
    uint64_t lo = (mid << 32) | (ll & 0xFFFFFFFFu);
    return lo ^ hi;
#endif
}

/* ------------------------------------------------------------------------ */
/* Shared xxHash constants                                                   */
/* ------------------------------------------------------------------------ */

#define CH__P32_1 0x9E3779B1u
#define CH__P32_2 0x85EBCA77u
#define CH__P32_3 0xC2B2AE3Du
#define CH__P64_1 0x9E3779B185EBCA87ull
#define CH__P64_2 0xC2B2AE3D27D4EB4Full
#define CH__P64_3 0x165667B19E3779F9ull
#define CH__P64_4 0x85EBCA77C2B2AE63ull
#define CH__P64_5 0x27D4EB2F165667C5ull
#define CH__PMX_1 0x165667919E3779F9ull
#define CH__PMX_2 0x9FB21C651E98DF25ull

CH_INLINE uint64_t ch__xxh64_avalanche(uint64_t h)
{
    h ^= h >> 33;
    h *= CH__P64_2;
    h ^= h >> 29;
    h *= CH__P64_3;
    h ^= h >> 32;
    return h;
}

/* ------------------------------------------------------------------------ */
/* XXH64                                                                     */
/* ------------------------------------------------------------------------ */

CH_INLINE uint64_t ch__xxh64_round(uint64_t acc, uint64_t lane)
{
    acc += lane * CH__P64_2;
    acc = ch__rotl64(acc, 31);
    return acc * CH__P64_1;
}

CH_INLINE uint64_t ch__xxh64_merge(uint64_t acc, uint64_t v)
{
    acc ^= ch__xxh64_round(0, v);
    return acc * CH__P64_1 + CH__P64_4;
}

static inline uint64_t ch_xxh64(const uint8_t *p, size_t len, uint64_t seed)
{
    uint64_t acc;

    if (len >= 32) {
        const uint8_t *const limit = p + len - 32;
        uint64_t v1 = seed + CH__P64_1 + CH__P64_2;
        uint64_t v2 = seed + CH__P64_2;
        uint64_t v3 = seed;
        uint64_t v4 = seed - CH__P64_1;
        do {
            v1 = ch__xxh64_round(v1, ch__rd64(p));
            v2 = ch__xxh64_round(v2, ch__rd64(p + 8));
            v3 = ch__xxh64_round(v3, ch__rd64(p + 16));
            v4 = ch__xxh64_round(v4, ch__rd64(p + 24));
            p += 32;
        } while (p <= limit);
        acc = ch__rotl64(v1, 1) + ch__rotl64(v2, 7) + ch__rotl64(v3, 12) +
              ch__rotl64(v4, 18);
        acc = ch__xxh64_merge(acc, v1);
        acc = ch__xxh64_merge(acc, v2);
        acc = ch__xxh64_merge(acc, v3);
        acc = ch__xxh64_merge(acc, v4);
    } else {
        acc = seed + CH__P64_5;
    }

    acc += (uint64_t)len;
    len &= 31;
    while (len >= 8) {
        acc ^= ch__xxh64_round(0, ch__rd64(p));
        acc = ch__rotl64(acc, 27) * CH__P64_1 + CH__P64_4;
        p += 8;
        len -= 8;
    }
    if (len >= 4) {
        acc ^= (uint64_t)ch__rd32(p) * CH__P64_1;
        acc = ch__rotl64(acc, 23) * CH__P64_2 + CH__P64_3;
        p += 4;
        len -= 4;
    }
    while (len > 0) {
        acc ^= (uint64_t)(*p) * CH__P64_5;
        acc = ch__rotl64(acc, 11) * CH__P64_1;
        p++;
        len--;
    }
    return ch__xxh64_avalanche(acc);
}

/* ------------------------------------------------------------------------ */
/* XXH3-64                                                                   */
/* ------------------------------------------------------------------------ */

#define CH__XXH3_SECRET_SIZE 192
#define CH__XXH3_STRIPE_LEN 64
#define CH__XXH3_STRIPES_PER_BLOCK ((CH__XXH3_SECRET_SIZE - 64) / 8) /* 16 */
#define CH__XXH3_BLOCK_LEN (CH__XXH3_STRIPE_LEN * CH__XXH3_STRIPES_PER_BLOCK)

static const uint8_t ch__xxh3_secret[CH__XXH3_SECRET_SIZE] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c,
    0xf7, 0x21, 0xad, 0x1c, 0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb,
    0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79, 0xe6, 0x4e,
    0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6,
    0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb,
    0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97,
    0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7,
    0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31,
    0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, 0xea, 0xc5, 0xac, 0x83,
    0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26,
    0x29, 0xd4, 0x68, 0x9e, 0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc,
    0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f,
    0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

CH_INLINE uint64_t ch__xxh3_avalanche(uint64_t h)
{
    h ^= h >> 37;
    h *= CH__PMX_1;
    h ^= h >> 32;
    return h;
}

/* Mixer of the 4..8 byte path ("rrmxmx"). */
CH_INLINE uint64_t ch__xxh3_rrmxmx(uint64_t h, uint64_t len)
{
    h ^= ch__rotl64(h, 49) ^ ch__rotl64(h, 24);
    h *= CH__PMX_2;
    h ^= (h >> 35) + len;
    h *= CH__PMX_2;
    h ^= h >> 28;
    return h;
}

/* The short-input paths of XXH3-64 (default secret, seed used directly), from the words they
 * read: lo / hi the first and last 8 bytes of 9..16; first / last the first and last 4 bytes
 * of 4..8; c1, c2, c3 the bytes p[0], p[len / 2], p[len - 1] of 1..3.  ch__xxh3_0to16 loads
 * them from memory; the integer keys of ch_keys.h build them in registers. */
CH_INLINE uint64_t ch__xxh3_9to16w(uint64_t lo, uint64_t hi, size_t len, uint64_t seed)
{
    const uint8_t *const s = ch__xxh3_secret;
    lo ^= (ch__rd64(s + 24) ^ ch__rd64(s + 32)) + seed;
    hi ^= (ch__rd64(s + 40) ^ ch__rd64(s + 48)) - seed;
    return ch__xxh3_avalanche((uint64_t)len + ch__bswap64(lo) + hi + ch__mul128_fold64(lo, hi));
}

CH_INLINE uint64_t ch__xxh3_4to8w(uint64_t first, uint64_t last, size_t len, uint64_t seed)
{
    const uint8_t *const s = ch__xxh3_secret;
    const uint64_t sd = seed ^ ((uint64_t)ch__bswap32((uint32_t)seed) << 32);
    const uint64_t flip = (ch__rd64(s + 8) ^ ch__rd64(s + 16)) - sd;
    return ch__xxh3_rrmxmx((last | (first << 32)) ^ flip, (uint64_t)len);
}

CH_INLINE uint64_t ch__xxh3_1to3w(uint32_t c1, uint32_t c2, uint32_t c3, size_t len,
                                  uint64_t seed)
{
    const uint8_t *const s = ch__xxh3_secret;
    const uint32_t combined = c3 | ((uint32_t)len << 8) | (c1 << 16) | (c2 << 24);
    const uint64_t flip = (uint64_t)(ch__rd32(s) ^ ch__rd32(s + 4)) + seed;
    return ch__xxh64_avalanche((uint64_t)combined ^ flip);
}

/* len in [0, 16]; the seed is used directly (default secret). */
CH_INLINE uint64_t ch__xxh3_0to16(const uint8_t *p, size_t len, uint64_t seed)
{
    if (CH_LIKELY(len > 8)) return ch__xxh3_9to16w(ch__rd64(p), ch__rd64(p + len - 8), len, seed);
    if (CH_LIKELY(len >= 4)) return ch__xxh3_4to8w(ch__rd32(p), ch__rd32(p + len - 4), len, seed);
    if (len > 0) return ch__xxh3_1to3w(p[0], p[len >> 1], p[len - 1], len, seed);
    const uint8_t *const s = ch__xxh3_secret;
    return ch__xxh64_avalanche(seed ^ ch__rd64(s + 56) ^ ch__rd64(s + 64));
}

/* Mix a 16-byte input chunk with 16 bytes of secret and the seed. */
CH_INLINE uint64_t ch__xxh3_mix16(const uint8_t *p, const uint8_t *s,
                                   uint64_t seed)
{
    uint64_t a = ch__rd64(p) ^ (ch__rd64(s) + seed);
    uint64_t b = ch__rd64(p + 8) ^ (ch__rd64(s + 8) - seed);
    return ch__mul128_fold64(a, b);
}

/* len in [17, 128]. */
CH_INLINE uint64_t ch__xxh3_17to128(const uint8_t *p, size_t len,
                                     uint64_t seed)
{
    const uint8_t *const s = ch__xxh3_secret;
    uint64_t acc = (uint64_t)len * CH__P64_1;
    /* Chunk pairs (from the front, from the back); addition order is free. */
    acc += ch__xxh3_mix16(p, s, seed);
    acc += ch__xxh3_mix16(p + len - 16, s + 16, seed);
    if (len > 32) {
        acc += ch__xxh3_mix16(p + 16, s + 32, seed);
        acc += ch__xxh3_mix16(p + len - 32, s + 48, seed);
        if (len > 64) {
            acc += ch__xxh3_mix16(p + 32, s + 64, seed);
            acc += ch__xxh3_mix16(p + len - 48, s + 80, seed);
            if (len > 96) {
                acc += ch__xxh3_mix16(p + 48, s + 96, seed);
                acc += ch__xxh3_mix16(p + len - 64, s + 112, seed);
            }
        }
    }
    return ch__xxh3_avalanche(acc);
}

/* len in [129, 240]. */
CH_OUTLINE uint64_t ch__xxh3_129to240(const uint8_t *p, size_t len,
                                      uint64_t seed)
{
    const uint8_t *const s = ch__xxh3_secret;
    uint64_t acc = (uint64_t)len * CH__P64_1;
    size_t i, nchunks = len >> 4;
    for (i = 0; i < 8; i++)
        acc += ch__xxh3_mix16(p + 16 * i, s + 16 * i, seed);
    acc = ch__xxh3_avalanche(acc);
    for (i = 8; i < nchunks; i++)
        acc += ch__xxh3_mix16(p + 16 * i, s + 16 * (i - 8) + 3, seed);
    acc += ch__xxh3_mix16(p + len - 16, s + 119, seed);
    return ch__xxh3_avalanche(acc);
}

/* One 64-byte stripe into the 8 accumulators. */
CH_INLINE void ch__xxh3_accumulate(uint64_t acc[8], const uint8_t *in,
                                    const uint8_t *s)
{
    unsigned i;
    for (i = 0; i < 8; i++) {
        uint64_t v = ch__rd64(in + 8 * i);
        uint64_t k = v ^ ch__rd64(s + 8 * i);
        acc[i ^ 1] += v;
        acc[i] += (uint64_t)(uint32_t)k * (k >> 32);
    }
}

CH_INLINE void ch__xxh3_scramble(uint64_t acc[8], const uint8_t *s)
{
    unsigned i;
    for (i = 0; i < 8; i++) {
        uint64_t a = acc[i];
        a ^= a >> 47;
        a ^= ch__rd64(s + 8 * i);
        acc[i] = a * CH__P32_1;
    }
}

/* len > 240: stripe/block loop with the (possibly seed-derived) secret. */
CH_OUTLINE uint64_t ch__xxh3_long(const uint8_t *p, size_t len, uint64_t seed)
{
    uint8_t custom[CH__XXH3_SECRET_SIZE];
    const uint8_t *s = ch__xxh3_secret;
    uint64_t acc[8];
    uint64_t result;
    size_t nblocks, nstripes, n, i;
    const uint8_t *block;

    if (seed != 0) {
        for (i = 0; i < CH__XXH3_SECRET_SIZE; i += 16) {
            ch__wr64(custom + i, ch__rd64(ch__xxh3_secret + i) + seed);
            ch__wr64(custom + i + 8, ch__rd64(ch__xxh3_secret + i + 8) - seed);
        }
        s = custom;
    }

    acc[0] = CH__P32_3;
    acc[1] = CH__P64_1;
    acc[2] = CH__P64_2;
    acc[3] = CH__P64_3;
    acc[4] = CH__P64_4;
    acc[5] = CH__P32_2;
    acc[6] = CH__P64_5;
    acc[7] = CH__P32_1;

    nblocks = (len - 1) / CH__XXH3_BLOCK_LEN;
    for (n = 0; n < nblocks; n++) {
        block = p + n * CH__XXH3_BLOCK_LEN;
        for (i = 0; i < CH__XXH3_STRIPES_PER_BLOCK; i++)
            ch__xxh3_accumulate(acc, block + i * CH__XXH3_STRIPE_LEN, s + 8 * i);
        ch__xxh3_scramble(acc, s + CH__XXH3_SECRET_SIZE - 64);
    }

    /* last (partial or full) block, minus its last stripe */
    block = p + nblocks * CH__XXH3_BLOCK_LEN;
    nstripes = ((len - 1) - nblocks * CH__XXH3_BLOCK_LEN) / CH__XXH3_STRIPE_LEN;
    for (i = 0; i < nstripes; i++)
        ch__xxh3_accumulate(acc, block + i * CH__XXH3_STRIPE_LEN, s + 8 * i);
    /* the last 64 bytes of input (may overlap the previous stripe) */
    ch__xxh3_accumulate(acc, p + len - CH__XXH3_STRIPE_LEN,
                        s + CH__XXH3_SECRET_SIZE - 64 - 7);

    /* final merge */
    result = (uint64_t)len * CH__P64_1;
    for (i = 0; i < 4; i++) {
        const uint8_t *k = s + 11 + 16 * i;
        result += ch__mul128_fold64(acc[2 * i] ^ ch__rd64(k),
                                    acc[2 * i + 1] ^ ch__rd64(k + 8));
    }
    return ch__xxh3_avalanche(result);
}

static inline uint64_t ch_xxh3_64(const uint8_t *p, size_t len, uint64_t seed)
{
    if (CH_LIKELY(len <= 16))
        return ch__xxh3_0to16(p, len, seed);
    if (CH_LIKELY(len <= 128))
        return ch__xxh3_17to128(p, len, seed);
    if (len <= 240)
        return ch__xxh3_129to240(p, len, seed);
    return ch__xxh3_long(p, len, seed);
}

/* ------------------------------------------------------------------------ */
/* MurmurHash3_x64_128, first 64-bit half (h1)                               */
/* ------------------------------------------------------------------------ */

#define CH__MM3_C1 0x87C37B91114253D5ull
#define CH__MM3_C2 0x4CF5AD432745937Full

CH_INLINE uint64_t ch__mm3_fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDull;
    k ^= k >> 33;
    k *= 0xC4CEB9FE1A85EC53ull;
    k ^= k >> 33;
    return k;
}

/* The finalization of MurmurHash3 x64_128, first 64 bits: mix in the length, add the halves,
 * fmix both, add again. */
CH_INLINE uint64_t ch__mm3_final(uint64_t h1, uint64_t h2, size_t len)
{
    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = ch__mm3_fmix64(h1);
    h2 = ch__mm3_fmix64(h2);
    return h1 + h2;
}

static inline uint64_t ch_murmur3_64(const uint8_t *p, size_t len,
                                     uint32_t seed)
{
    uint64_t h1 = seed, h2 = seed;
    uint64_t k1, k2;
    size_t nblocks = len / 16, i, rem;
    const uint8_t *tail;

    for (i = 0; i < nblocks; i++) {
        k1 = ch__rd64(p + 16 * i);
        k2 = ch__rd64(p + 16 * i + 8);

        k1 *= CH__MM3_C1;
        k1 = ch__rotl64(k1, 31);
        k1 *= CH__MM3_C2;
        h1 ^= k1;
        h1 = ch__rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52DCE729u;

        k2 *= CH__MM3_C2;
        k2 = ch__rotl64(k2, 33);
        k2 *= CH__MM3_C1;
        h2 ^= k2;
        h2 = ch__rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495AB5u;
    }

    rem = len & 15;
    if (rem) {
        tail = p + 16 * nblocks;
        k1 = 0;
        k2 = 0;
        for (i = 0; i < rem; i++) {
            if (i < 8)
                k1 |= (uint64_t)tail[i] << (8 * i);
            else
                k2 |= (uint64_t)tail[i] << (8 * (i - 8));
        }
        if (rem > 8) {
            k2 *= CH__MM3_C2;
            k2 = ch__rotl64(k2, 33);
            k2 *= CH__MM3_C1;
            h2 ^= k2;
        }
        k1 *= CH__MM3_C1;
        k1 = ch__rotl64(k1, 31);
        k1 *= CH__MM3_C2;
        h1 ^= k1;
    }

    return ch__mm3_final(h1, h2, len);
}

/* ------------------------------------------------------------------------ */
/* MD5 (RFC 1321)                                                            */
/* ------------------------------------------------------------------------ */

/* T[i] = floor(2^32 * |sin(i + 1)|) */
static const uint32_t ch__md5_T[64] = {
    0xd76aa478u, 0xe8c7b756u, 0x242070dbu, 0xc1bdceeeu,
    0xf57c0fafu, 0x4787c62au, 0xa8304613u, 0xfd469501u,
    0x698098d8u, 0x8b44f7afu, 0xffff5bb1u, 0x895cd7beu,
    0x6b901122u, 0xfd987193u, 0xa679438eu, 0x49b40821u,
    0xf61e2562u, 0xc040b340u, 0x265e5a51u, 0xe9b6c7aau,
    0xd62f105du, 0x02441453u, 0xd8a1e681u, 0xe7d3fbc8u,
    0x21e1cde6u, 0xc33707d6u, 0xf4d50d87u, 0x455a14edu,
    0xa9e3e905u, 0xfcefa3f8u, 0x676f02d9u, 0x8d2a4c8au,
    0xfffa3942u, 0x8771f681u, 0x6d9d6122u, 0xfde5380cu,
    0xa4beea44u, 0x4bdecfa9u, 0xf6bb4b60u, 0xbebfbc70u,
    0x289b7ec6u, 0xeaa127fau, 0xd4ef3085u, 0x04881d05u,
    0xd9d4d039u, 0xe6db99e5u, 0x1fa27cf8u, 0xc4ac5665u,
    0xf4292244u, 0x432aff97u, 0xab9423a7u, 0xfc93a039u,
    0x655b59c3u, 0x8f0ccc92u, 0xffeff47du, 0x85845dd1u,
    0x6fa87e4fu, 0xfe2ce6e0u, 0xa3014314u, 0x4e0811a1u,
    0xf7537e82u, 0xbd3af235u, 0x2ad7d2bbu, 0xeb86d391u,
};

/* Basic MD5 functions (RFC 1321 section 3.4), in reduced-operation form:
 * F = (x & y) | (~x & z),  G = (x & z) | (y & ~z),  H = x ^ y ^ z,
 * I = y ^ (x | ~z). */
#define CH__MD5_F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define CH__MD5_G(x, y, z) ((y) ^ ((z) & ((x) ^ (y))))
#define CH__MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define CH__MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))

/* a = b + ((a + FN(b,c,d) + X[k] + T[i]) <<< s) */
#define CH__MD5_OP(FN, a, b, c, d, k, s, i)                                  \
    (a) = (b) + ch__rotl32((a) + FN((b), (c), (d)) + X[(k)] + ch__md5_T[(i)], (s))

/* four consecutive operations with the roles [abcd], [dabc], [cdab], [bcda] */
#define CH__MD5_OP4(FN, k0, k1, k2, k3, s0, s1, s2, s3, i)                   \
    CH__MD5_OP(FN, a, b, c, d, k0, s0, (i));                                 \
    CH__MD5_OP(FN, d, a, b, c, k1, s1, (i) + 1);                             \
    CH__MD5_OP(FN, c, d, a, b, k2, s2, (i) + 2);                             \
    CH__MD5_OP(FN, b, c, d, a, k3, s3, (i) + 3)

/* Process one 64-byte block. */
static inline void ch__md5_block(uint32_t st[4], const uint8_t *blk)
{
    uint32_t X[16];
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3];
    unsigned i;

    for (i = 0; i < 16; i++)
        X[i] = ch__rd32(blk + 4 * i);

    /* round 1: X[i] */
    CH__MD5_OP4(CH__MD5_F, 0, 1, 2, 3, 7, 12, 17, 22, 0);
    CH__MD5_OP4(CH__MD5_F, 4, 5, 6, 7, 7, 12, 17, 22, 4);
    CH__MD5_OP4(CH__MD5_F, 8, 9, 10, 11, 7, 12, 17, 22, 8);
    CH__MD5_OP4(CH__MD5_F, 12, 13, 14, 15, 7, 12, 17, 22, 12);
    /* round 2: X[(1 + 5i) mod 16] */
    CH__MD5_OP4(CH__MD5_G, 1, 6, 11, 0, 5, 9, 14, 20, 16);
    CH__MD5_OP4(CH__MD5_G, 5, 10, 15, 4, 5, 9, 14, 20, 20);
    CH__MD5_OP4(CH__MD5_G, 9, 14, 3, 8, 5, 9, 14, 20, 24);
    CH__MD5_OP4(CH__MD5_G, 13, 2, 7, 12, 5, 9, 14, 20, 28);
    /* round 3: X[(5 + 3i) mod 16] */
    CH__MD5_OP4(CH__MD5_H, 5, 8, 11, 14, 4, 11, 16, 23, 32);
    CH__MD5_OP4(CH__MD5_H, 1, 4, 7, 10, 4, 11, 16, 23, 36);
    CH__MD5_OP4(CH__MD5_H, 13, 0, 3, 6, 4, 11, 16, 23, 40);
    CH__MD5_OP4(CH__MD5_H, 9, 12, 15, 2, 4, 11, 16, 23, 44);
    /* round 4: X[7i mod 16] */
    CH__MD5_OP4(CH__MD5_I, 0, 7, 14, 5, 6, 10, 15, 21, 48);
    CH__MD5_OP4(CH__MD5_I, 12, 3, 10, 1, 6, 10, 15, 21, 52);
    CH__MD5_OP4(CH__MD5_I, 8, 15, 6, 13, 6, 10, 15, 21, 56);
    CH__MD5_OP4(CH__MD5_I, 4, 11, 2, 9, 6, 10, 15, 21, 60);

    st[0] += a;
    st[1] += b;
    st[2] += c;
    st[3] += d;
}

#undef CH__MD5_OP4
#undef CH__MD5_OP
#undef CH__MD5_I
#undef CH__MD5_H
#undef CH__MD5_G
#undef CH__MD5_F

static inline void ch_md5(const uint8_t *p, size_t len, uint8_t out[16])
{
    uint32_t st[4];
    uint8_t buf[128];
    size_t rem = len & 63, full = len - rem, off, padlen;
    uint64_t bits = (uint64_t)len << 3; /* length mod 2^64 bits */

    st[0] = 0x67452301u;
    st[1] = 0xefcdab89u;
    st[2] = 0x98badcfeu;
    st[3] = 0x10325476u;

    for (off = 0; off < full; off += 64)
        ch__md5_block(st, p + off);

    /* padding: 0x80, zeros up to 56 mod 64, then 64-bit little-endian bit
     * length; one or two final blocks */
    padlen = (rem < 56) ? 64 : 128;
    memset(buf, 0, sizeof buf);
    if (rem)
        memcpy(buf, p + full, rem);
    buf[rem] = 0x80;
    ch__wr32(buf + padlen - 8, (uint32_t)bits);
    ch__wr32(buf + padlen - 4, (uint32_t)(bits >> 32));
    ch__md5_block(st, buf);
    if (padlen == 128)
        ch__md5_block(st, buf + 64);

    ch__wr32(out, st[0]);
    ch__wr32(out + 4, st[1]);
    ch__wr32(out + 8, st[2]);
    ch__wr32(out + 12, st[3]);
}

static inline uint64_t ch_md5_64(const uint8_t *p, size_t len)
{
    uint8_t d[16];
    uint64_t r = 0;
    unsigned i;
    ch_md5(p, len, d);
    for (i = 0; i < 8; i++)
        r = (r << 8) | d[i];
    return r;
}

#endif /* CH_HASH_H */
