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

/* CRC16/XMODEM table: entry i is the CRC register after shifting byte i through it. */
static const uint16_t ch__crc16_table[256] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50A5, 0x60C6, 0x70E7,
    0x8108, 0x9129, 0xA14A, 0xB16B, 0xC18C, 0xD1AD, 0xE1CE, 0xF1EF,
    0x1231, 0x0210, 0x3273, 0x2252, 0x52B5, 0x4294, 0x72F7, 0x62D6,
    0x9339, 0x8318, 0xB37B, 0xA35A, 0xD3BD, 0xC39C, 0xF3FF, 0xE3DE,
    0x2462, 0x3443, 0x0420, 0x1401, 0x64E6, 0x74C7, 0x44A4, 0x5485,
    0xA56A, 0xB54B, 0x8528, 0x9509, 0xE5EE, 0xF5CF, 0xC5AC, 0xD58D,
    0x3653, 0x2672, 0x1611, 0x0630, 0x76D7, 0x66F6, 0x5695, 0x46B4,
    0xB75B, 0xA77A, 0x9719, 0x8738, 0xF7DF, 0xE7FE, 0xD79D, 0xC7BC,
    0x48C4, 0x58E5, 0x6886, 0x78A7, 0x0840, 0x1861, 0x2802, 0x3823,
    0xC9CC, 0xD9ED, 0xE98E, 0xF9AF, 0x8948, 0x9969, 0xA90A, 0xB92B,
    0x5AF5, 0x4AD4, 0x7AB7, 0x6A96, 0x1A71, 0x0A50, 0x3A33, 0x2A12,
    0xDBFD, 0xCBDC, 0xFBBF, 0xEB9E, 0x9B79, 0x8B58, 0xBB3B, 0xAB1A,
    0x6CA6, 0x7C87, 0x4CE4, 0x5CC5, 0x2C22, 0x3C03, 0x0C60, 0x1C41,
    0xEDAE, 0xFD8F, 0xCDEC, 0xDDCD, 0xAD2A, 0xBD0B, 0x8D68, 0x9D49,
    0x7E97, 0x6EB6, 0x5ED5, 0x4EF4, 0x3E13, 0x2E32, 0x1E51, 0x0E70,
    0xFF9F, 0xEFBE, 0xDFDD, 0xCFFC, 0xBF1B, 0xAF3A, 0x9F59, 0x8F78,
    0x9188, 0x81A9, 0xB1CA, 0xA1EB, 0xD10C, 0xC12D, 0xF14E, 0xE16F,
    0x1080, 0x00A1, 0x30C2, 0x20E3, 0x5004, 0x4025, 0x7046, 0x6067,
    0x83B9, 0x9398, 0xA3FB, 0xB3DA, 0xC33D, 0xD31C, 0xE37F, 0xF35E,
    0x02B1, 0x1290, 0x22F3, 0x32D2, 0x4235, 0x5214, 0x6277, 0x7256,
    0xB5EA, 0xA5CB, 0x95A8, 0x8589, 0xF56E, 0xE54F, 0xD52C, 0xC50D,
    0x34E2, 0x24C3, 0x14A0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405,
    0xA7DB, 0xB7FA, 0x8799, 0x97B8, 0xE75F, 0xF77E, 0xC71D, 0xD73C,
    0x26D3, 0x36F2, 0x0691, 0x16B0, 0x6657, 0x7676, 0x4615, 0x5634,
    0xD94C, 0xC96D, 0xF90E, 0xE92F, 0x99C8, 0x89E9, 0xB98A, 0xA9AB,
    0x5844, 0x4865, 0x7806, 0x6827, 0x18C0, 0x08E1, 0x3882, 0x28A3,
    0xCB7D, 0xDB5C, 0xEB3F, 0xFB1E, 0x8BF9, 0x9BD8, 0xABBB, 0xBB9A,
    0x4A75, 0x5A54, 0x6A37, 0x7A16, 0x0AF1, 0x1AD0, 0x2AB3, 0x3A92,
    0xFD2E, 0xED0F, 0xDD6C, 0xCD4D, 0xBDAA, 0xAD8B, 0x9DE8, 0x8DC9,
    0x7C26, 0x6C07, 0x5C64, 0x4C45, 0x3CA2, 0x2C83, 0x1CE0, 0x0CC1,
    0xEF1F, 0xFF3E, 0xCF5D, 0xDF7C, 0xAF9B, 0xBFBA, 0x8FD9, 0x9FF8,
    0x6E17, 0x7E36, 0x4E55, 0x5E74, 0x2E93, 0x3EB2, 0x0ED1, 0x1EF0,
};

static inline uint16_t ch_crc16_xmodem(const uint8_t *p, size_t n)
{
    uint16_t crc = 0;
    size_t i;
    for (i = 0; i < n; i++)
        crc = (uint16_t)((crc << 8) ^ ch__crc16_table[((crc >> 8) ^ p[i]) & 0xFF]);
    return crc;
}

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
