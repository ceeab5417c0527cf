/*
 * ch_hash_haproxy.h - HAProxy's key hashes and server points (hash-type consistent), as
 * HAProxy 2.6 computes them (read from its src/hash.c, include/haproxy/intops.h and
 * src/lb_chash.c; written here in our own words; docs/agreeing-with-haproxy.md).
 *
 *   ch_ha_sdbm(p, n)    h = byte + (h << 6) + (h << 16) - h from h = 0, 32 bits, bytes unsigned
 *   ch_ha_djb2(p, n)    h = h * 33 + byte from h = 5381
 *   ch_ha_wt6(p, n)     HAProxy's own "wt6": two 32-bit words, a per-byte rotation whose two
 *                       amounts come from the words themselves; the result is their XOR
 *   ch_ha_crc32(p, n)   the reflected CRC-32 of zlib / Ethernet (poly 0xEDB88320, init and
 *                       final XOR 0xFFFFFFFF)
 *   ch_ha_avalanche(x)  the "avalanche" modifier: one of Bob Jenkins' 32-bit integer hashes
 *                       (six add / xor / shift rounds) times 3221225473 mod 2**32, a bijection
 *                       of the 32-bit integers.  HAProxy also places every server point with it.
 *   ch_ha_points(puid, count, out)
 *                       a server's tree keys: avalanche(puid * 4096 + j) for j < count, the
 *                       product taken mod 2**32 (4096 = SRV_EWGHT_RANGE, 256 * 16).
 *
 * Keys reach the ring as uint64 positions with the 32-bit hash in the high half (h << 32),
 * the convention of ch_compat_hash.h; HAProxy's nearest-point rule is turned into an ordinary
 * "first position >= hash" ring by consistent_hash/compat/haproxy.py (one position per
 * server point, at the last hash that point still wins).
 */
#ifndef CH_HASH_HAPROXY_H
#define CH_HASH_HAPROXY_H

#include <stddef.h>
#include <stdint.h>
#include "ch_crc.h"

/* sdbm and djb2 are polynomials in their multiplier m (65599 = 2^6 + 2^16 - 1, and 33) mod
 * 2^32: four bytes on, h becomes h * m^4 + b0 * m^3 + b1 * m^2 + b2 * m + b3.  Taken four
 * bytes a step, the chain through h is one multiply and add per four bytes instead of per
 * byte; the products of the bytes are off it.  The same value, every length. */
#define CH__HA_POLY(h, p, n, M)                                                          \
    do {                                                                                \
        const uint32_t m1 = (M), m2 = m1 * m1, m3 = m2 * m1, m4 = m3 * m1;              \
        size_t i = 0;                                                                   \
        for (; i + 4 <= (n); i += 4)                                                    \
            (h) = (h) * m4 + (uint32_t)(p)[i] * m3 + (uint32_t)(p)[i + 1] * m2 +        \
                  (uint32_t)(p)[i + 2] * m1 + (uint32_t)(p)[i + 3];                     \
        for (; i < (n); i++) (h) = (h) * m1 + (uint32_t)(p)[i];                         \
    } while (0)

static inline uint32_t ch_ha_sdbm(const uint8_t *p, size_t n)
{
    uint32_t h = 0;  /* h = byte + (h << 6) + (h << 16) - h, that is h * 65599 + byte */
    CH__HA_POLY(h, p, n, 65599u);
    return h;
}

static inline uint32_t ch_ha_djb2(const uint8_t *p, size_t n)
{
    uint32_t h = 5381;  /* h = h * 33 + byte */
    CH__HA_POLY(h, p, n, 33u);
    return h;
}

static inline uint32_t ch__ha_rotl(uint32_t x, unsigned r)
{
    /* r is 0..31.  HAProxy writes (x << r) | (x >> (32 - r)), whose shift by 32 at r = 0
     * gives x on the machines it runs on (x86 and ARM mask the count; compilers emit a
     * rotate): a rotation by 0, written here without the undefined shift. */
    return r ? (x << r) | (x >> (32u - r)) : x;
}

static inline uint32_t ch_ha_wt6(const uint8_t *p, size_t n)
{
    uint32_t h0 = 0xa53c965au, h1 = 0x5ca6953au;
    unsigned s0 = 6, s1 = 18;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = p[i];
        h0 = ~(h0 ^ t);
        h1 = ~(h1 + t);
        t = ch__ha_rotl(h1, s0);
        h1 = ch__ha_rotl(h0, s1);
        h0 = t;
        t = ((h0 >> 16) ^ h1) & 0xffffu;
        s0 = t & 0x1fu;
        s1 = t >> 11;  /* 0..31 */
    }
    return h0 ^ h1;
}

/* HAProxy's hash_crc32 is the core's one CRC-32 (ch_crc.h). */
static inline uint32_t ch_ha_crc32(const uint8_t *p, size_t n) { return ch_crc32(p, n); }

static inline uint32_t ch_ha_avalanche(uint32_t a)
{
    a = (a + 0x7ed55d16u) + (a << 12);
    a = (a ^ 0xc761c23cu) ^ (a >> 19);
    a = (a + 0x165667b1u) + (a << 5);
    a = (a + 0xd3a2646cu) ^ (a << 9);
    a = (a + 0xfd7046c5u) + (a << 3);
    a = (a ^ 0xb55a4f09u) ^ (a >> 16);
    return a * 3221225473u;
}

/* The tree keys of a server with id puid and count points (count <= 4096 for weights up to
 * 256), in HAProxy's order j = 0 .. count - 1. */
static inline void ch_ha_points(uint32_t puid, uint32_t count, uint32_t *out)
{
    for (uint32_t j = 0; j < count; j++)
        out[j] = ch_ha_avalanche(puid * 4096u + j);
}

/* Hasher forms (p, n, seed) -> uint64 ring position (the 32-bit hash in the high half). */
#define CH__HA_FORMS(NAME, FN)                                                    \
    static inline uint64_t ch_h_ha_##NAME(const uint8_t *p, size_t n, uint64_t s) \
    {                                                                             \
        (void)s;                                                                  \
        return (uint64_t)FN(p, n) << 32;                                          \
    }                                                                             \
    static inline uint64_t ch_h_ha_##NAME##_av(const uint8_t *p, size_t n, uint64_t s) \
    {                                                                             \
        (void)s;                                                                  \
        return (uint64_t)ch_ha_avalanche(FN(p, n)) << 32;                         \
    }
CH__HA_FORMS(sdbm, ch_ha_sdbm)
CH__HA_FORMS(djb2, ch_ha_djb2)
CH__HA_FORMS(wt6, ch_ha_wt6)
CH__HA_FORMS(crc32, ch_ha_crc32)
#undef CH__HA_FORMS

#endif /* CH_HASH_HAPROXY_H */
