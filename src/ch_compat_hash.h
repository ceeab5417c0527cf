/*
 * ch_compat_hash.h - the key hashes of the systems consistent_hash is compatible with.
 *
 * Written from the algorithm descriptions (see /docs/compat.md and the tests, which check each
 * one against the real system or its reference package):
 *
 *   ch_one_at_a_time(p, n)   Jenkins one-at-a-time, 32 bits, over *signed* chars: each byte
 *                            >= 0x80 is sign-extended before it is added (libmemcached's
 *                            default key hash, as pylibmc's {"ketama": True} uses it).
 *   ch_ketama_md5(p, n)      MD5 digest bytes 0..3 as a little-endian uint32 (libketama,
 *                            libmemcached's MD5 key hash, twemproxy, uhashring "ketama",
 *                            hashring).
 *   ch_ketama_point(d, x)    the x-th little-endian uint32 of an MD5 digest (x = 0..3).
 *   ch_redis_slot(p, n)      CRC16/XMODEM (poly 0x1021, init 0, no reflection) & 0x3FFF, of
 *                            the key's hash tag when it has a non-empty one.
 *   ch_cassandra_h1(p, n, s) first 64 bits of MurmurHash3_x64_128 as Cassandra computes it:
 *                            tail bytes read as sign-extended Java bytes.
 *   ch_cassandra_token(p, n) the Murmur3Partitioner token: h1 with seed 0, except that the
 *                            empty key is INT64_MIN and a hash of INT64_MIN becomes INT64_MAX.
 *
 * Ring positions are uint64.  A 32-bit hash (one-at-a-time, ketama MD5) is placed in the high
 * half, h << 32: the order is the same, and the ring's prefix index, which buckets positions
 * by their top bits, spreads them instead of finding them all in its first bucket.  Signed
 * tokens map to positions by flipping the sign bit
 * (u = token ^ 2**63), which preserves order.  Rings that take the first point strictly
 * greater than the key hash (Python's bisect.bisect_right: uhashring, hashring) are searched
 * with the key hash + 1, since "first p > h" is "first p >= h + 1" (and h + 1 wrapping to 0 past
 * the top is the same wrap to the first point).
 */
#ifndef CH_COMPAT_HASH_H
#define CH_COMPAT_HASH_H

#include <stddef.h>
#include <stdint.h>
#include "ch_hash.h"
#include "ch_crc.h"

/* uc: 0 reads each byte as a signed char (x86 builds of libmemcached and twemproxy), 1 as
 * unsigned (twemproxy built where char is unsigned, e.g. arm64). */
static inline uint32_t ch_one_at_a_time_uc(const uint8_t *p, size_t n, int uc)
{
    uint32_t v = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        v += uc ? (uint32_t)p[i] : (uint32_t)(int32_t)(int8_t)p[i];
        v += v << 10;
        v ^= v >> 6;
    }
    v += v << 3;
    v ^= v >> 11;
    v += v << 15;
    return v;
}

static inline uint32_t ch_one_at_a_time(const uint8_t *p, size_t n)
{
    return ch_one_at_a_time_uc(p, n, 0);
}

static inline uint32_t ch_ketama_point(const uint8_t d[16], unsigned x)
{
    return (uint32_t)d[4 * x] | ((uint32_t)d[4 * x + 1] << 8) | ((uint32_t)d[4 * x + 2] << 16) |
           ((uint32_t)d[4 * x + 3] << 24);
}

static inline uint32_t ch_ketama_md5(const uint8_t *p, size_t n)
{
    uint8_t d[16];
    ch_md5(p, n, d);
    return ch_ketama_point(d, 0);
}

/* CRC16/XMODEM is the core's one CRC-16 (ch_crc.h). */

/* Redis Cluster: the first '{', then the first '}' after it; a non-empty text between them is
 * all that is hashed, otherwise the whole key is. */
static inline uint32_t ch_redis_slot(const uint8_t *p, size_t n)
{
    const uint8_t *open = n ? (const uint8_t *)memchr(p, '{', n) : NULL;
    if (open) {
        size_t start = (size_t)(open - p) + 1;
        const uint8_t *close = (const uint8_t *)memchr(p + start, '}', n - start);
        if (close && (size_t)(close - p) > start)
            return ch_crc16_xmodem(p + start, (size_t)(close - p) - start) & 0x3FFFu;
    }
    return ch_crc16_xmodem(p, n) & 0x3FFFu;
}

/* A Java byte at tail[i], sign-extended to 64 bits and shifted into place. */
#define CH__JBYTE(i, sh) ((uint64_t)(int64_t)(int8_t)tail[(i)] << (sh))

static inline uint64_t ch_cassandra_h1(const uint8_t *p, size_t len, uint64_t seed)
{
    const uint64_t c1 = 0x87C37B91114253D5ull, c2 = 0x4CF5AD432745937Full;
    uint64_t h1 = seed, h2 = seed, k1, k2;
    size_t nblocks = len / 16, i, rem = len & 15;
    const uint8_t *tail = p + 16 * nblocks;

    for (i = 0; i < nblocks; i++) {
        k1 = ch__rd64(p + 16 * i);
        k2 = ch__rd64(p + 16 * i + 8);
        k1 *= c1; k1 = ch__rotl64(k1, 31); k1 *= c2; h1 ^= k1;
        h1 = ch__rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52DCE729u;
        k2 *= c2; k2 = ch__rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        h2 = ch__rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495AB5u;
    }
    /* The tail, each byte sign-extended and XORed in (not ORed: the extensions overlap). */
    k1 = 0;
    k2 = 0;
    if (rem > 8) {
        for (i = rem; i > 8; i--)
            k2 ^= CH__JBYTE(i - 1, 8 * (i - 9));
        k2 *= c2; k2 = ch__rotl64(k2, 33); k2 *= c1; h2 ^= k2;
    }
    if (rem) {
        for (i = rem < 8 ? rem : 8; i > 0; i--)
            k1 ^= CH__JBYTE(i - 1, 8 * (i - 1));
        k1 *= c1; k1 = ch__rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    }
    return ch__mm3_final(h1, h2, len);
}

#undef CH__JBYTE

#define CH__I64_MIN_BITS 0x8000000000000000ull

static inline uint64_t ch_cassandra_token(const uint8_t *p, size_t len)
{
    uint64_t t;
    if (len == 0)
        return CH__I64_MIN_BITS; /* the server's MINIMUM token */
    t = ch_cassandra_h1(p, len, 0);
    return t == CH__I64_MIN_BITS ? CH__I64_MIN_BITS - 1 : t; /* MIN -> MAX */
}

/* Hasher forms (p, n, seed) -> uint64 ring position, for the keys stage's dispatch. */
static inline uint64_t ch_h_oaat(const uint8_t *p, size_t n, uint64_t s)
{
    (void)s;
    return (uint64_t)ch_one_at_a_time(p, n) << 32;
}
static inline uint64_t ch_h_kmd5(const uint8_t *p, size_t n, uint64_t s)
{
    (void)s;
    return (uint64_t)ch_ketama_md5(p, n) << 32;
}
static inline uint64_t ch_h_kmd5_next(const uint8_t *p, size_t n, uint64_t s)
{
    (void)s;
    /* h + 1 = 2**32 shifts out to 0: the wrap to the first point, as bisect_right wraps */
    return ((uint64_t)ch_ketama_md5(p, n) + 1) << 32;
}
static inline uint64_t ch_h_md5_next(const uint8_t *p, size_t n, uint64_t s)
{
    (void)s;
    return ch_md5_64(p, n) + 1; /* wraps to 0 at the top: the wrap to the first point */
}
static inline uint64_t ch_h_redis(const uint8_t *p, size_t n, uint64_t s)
{
    (void)s;
    return ch_redis_slot(p, n);
}
static inline uint64_t ch_h_cass(const uint8_t *p, size_t n, uint64_t s)
{
    (void)s;
    return ch_cassandra_token(p, n) ^ CH__I64_MIN_BITS;
}
static inline uint64_t ch_h_cass_raw(const uint8_t *p, size_t n, uint64_t s)
{
    return ch_cassandra_h1(p, n, s) ^ CH__I64_MIN_BITS;
}

#endif /* CH_COMPAT_HASH_H */
