/*
 * ch_hash_twemproxy.h - twemproxy's (nutcracker 0.5.0) twelve key hashes, as it computes them
 * on x86-64 Linux, plus its hash_tag rule.  Written from reading src/hashkit/ and
 * src/nc_server.c (twitter/twemproxy, tag v0.5.0 = ca45646); docs/agreeing-with-twemproxy.md
 * says what each one computes, the tests check every one against a live nutcracker.
 *
 * Every function returns twemproxy's uint32_t.  Where twemproxy reads a key byte through a
 * plain `char` (signed on x86-64) the byte is sign-extended, exactly as it happens there:
 * one_at_a_time, the four FNVs and hsieh's 3-byte tail (their uc argument: 1 for a build
 * where char is unsigned).  The others read unsigned bytes (crc16 and crc32 mask theirs).
 *
 *   fnv1_64, fnv1a_64  despite the names, 32-bit results: fnv1_64 runs 64-bit FNV-1 and
 *                      keeps the low 32 bits; fnv1a_64 runs FNV-1a in 32 bits with the low
 *                      halves of the 64-bit offset basis and prime (0x84222325, 0x1b3).
 *   crc16              CRC-16/XMODEM steps, but the register is never masked to 16 bits, so
 *                      the upper half keeps the shifted-out bits (the low 16 bits are the CRC).
 *   crc32              libmemcached's: ((~crc32) >> 16) & 0x7fff, 15 bits.  crc32a: the CRC-32.
 *   hsieh              Paul Hsieh's SuperFastHash (0 for the empty key).
 *   murmur             MurmurHash2 with seed 0xdeadbeef * len (the state starts seed ^ len).
 *   jenkins            Bob Jenkins' lookup3 hashlittle with initval 13.
 *   md5                MD5 bytes 0..3 little-endian;  one_at_a_time: Jenkins' over signed chars.
 *
 * The hasher forms ch_h_tw_*(p, n, seed) give ring positions h << 32 (as the other 32-bit
 * compatibility hashes); seed bit 17 reads bytes as an unsigned `char` (a build for arm64
 * Linux, POWER or s390x, where char is unsigned).  Before hashing, twemproxy's two key
 * rules:
 *   - hash_tag (seed bit 16 set, the tag's open char in bits 0..7, its close char in bits
 *     8..15): if the key has the open char, and the close char after its first one, and the
 *     text between is not empty, only that text is hashed; otherwise the whole key;
 *   - an empty key (what is left to hash) hashes to 0 whatever the function.
 */
#ifndef CH_HASH_TWEMPROXY_H
#define CH_HASH_TWEMPROXY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "ch_compat_hash.h"
#include "ch_crc.h"

#define CH_TW_TAG ((uint64_t)1 << 16)
#define CH_TW_UCHAR ((uint64_t)1 << 17)

/* A key byte read through a C `char`: sign-extended where char is signed (x86-64), as is
 * where it is unsigned (uc: arm64 Linux, POWER, s390x builds). */
static inline uint32_t ch_tw__ch(uint8_t b, int uc) { return uc ? b : (uint32_t)(int32_t)(int8_t)b; }
static inline uint32_t ch_tw__le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint32_t ch_tw__le16(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }

/* hash_crc16, hash_crc32 and hash_crc32a are the core's CRC-16 and CRC-32 (ch_crc.h):
 * crc16 returns the unmasked 32-bit register, crc32 15 bits of the CRC-32. */
static inline uint32_t ch_tw_crc16(const uint8_t *p, size_t n) { return ch_crc16_run(0, p, n); }
static inline uint32_t ch_tw_crc32(const uint8_t *p, size_t n) { return (ch_crc32(p, n) >> 16) & 0x7fff; }
static inline uint32_t ch_tw_crc32a(const uint8_t *p, size_t n) { return ch_crc32(p, n); }

static inline uint32_t ch_tw_oaat(const uint8_t *p, size_t n, int uc)
{
    return ch_one_at_a_time_uc(p, n, uc);  /* libmemcached's, with nutcracker's char sign */
}

static inline uint32_t ch_tw_fnv1_64(const uint8_t *p, size_t n, int uc)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h *= 0x100000001b3ull;
        h ^= uc ? (uint64_t)p[i] : (uint64_t)(int64_t)(int8_t)p[i];
    }
    return (uint32_t)h;
}
static inline uint32_t ch_tw_fnv1a_64(const uint8_t *p, size_t n, int uc)
{
    uint32_t h = 0x84222325u;  /* (uint32_t) of the 64-bit offset basis */
    for (size_t i = 0; i < n; i++) {
        h ^= ch_tw__ch(p[i], uc);
        h *= 0x1b3u;           /* (uint32_t) of the 64-bit prime */
    }
    return h;
}
static inline uint32_t ch_tw_fnv1_32(const uint8_t *p, size_t n, int uc)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h *= 16777619u;
        h ^= ch_tw__ch(p[i], uc);
    }
    return h;
}
static inline uint32_t ch_tw_fnv1a_32(const uint8_t *p, size_t n, int uc)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= ch_tw__ch(p[i], uc);
        h *= 16777619u;
    }
    return h;
}

static inline uint32_t ch_tw_hsieh(const uint8_t *p, size_t n, int uc)
{
    uint32_t h = 0, t;
    size_t words = n >> 2;
    if (n == 0)
        return 0;
    for (; words; words--, p += 4) {
        h += ch_tw__le16(p);
        t = (ch_tw__le16(p + 2) << 11) ^ h;
        h = (h << 16) ^ t;
        h += h >> 11;
    }
    switch (n & 3) {
    case 3:
        h += ch_tw__le16(p);
        h ^= h << 16;
        h ^= ch_tw__ch(p[2], uc) << 18;  /* read through a char there */
        h += h >> 11;
        break;
    case 2:
        h += ch_tw__le16(p);
        h ^= h << 11;
        h += h >> 17;
        break;
    case 1:
        h += p[0];
        h ^= h << 10;
        h += h >> 1;
        break;
    default:
        break;
    }
    h ^= h << 3;
    h += h >> 5;
    h ^= h << 4;
    h += h >> 17;
    h ^= h << 25;
    h += h >> 6;
    return h;
}

static inline uint32_t ch_tw_murmur(const uint8_t *p, size_t n)
{
    const uint32_t m = 0x5bd1e995u;
    uint32_t h = (0xdeadbeefu * (uint32_t)n) ^ (uint32_t)n;
    for (; n >= 4; n -= 4, p += 4) {
        uint32_t k = ch_tw__le32(p);
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    if (n) {
        if (n == 3) h ^= (uint32_t)p[2] << 16;
        if (n >= 2) h ^= (uint32_t)p[1] << 8;
        h ^= p[0];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

#define CH_TW__ROT(x, k) (((x) << (k)) | ((x) >> (32 - (k))))
static inline uint32_t ch_tw_jenkins(const uint8_t *p, size_t n)
{
    uint32_t a, b, c;
    uint8_t last[12];
    a = b = c = 0xdeadbeefu + (uint32_t)n + 13u;
    if (n == 0)
        return c;
    for (; n > 12; n -= 12, p += 12) {
        a += ch_tw__le32(p);
        b += ch_tw__le32(p + 4);
        c += ch_tw__le32(p + 8);
        a -= c; a ^= CH_TW__ROT(c, 4);  c += b;
        b -= a; b ^= CH_TW__ROT(a, 6);  a += c;
        c -= b; c ^= CH_TW__ROT(b, 8);  b += a;
        a -= c; a ^= CH_TW__ROT(c, 16); c += b;
        b -= a; b ^= CH_TW__ROT(a, 19); a += c;
        c -= b; c ^= CH_TW__ROT(b, 4);  b += a;
    }
    /* the last 1..12 bytes, zero-padded to three words */
    memset(last, 0, sizeof last);
    memcpy(last, p, n);
    a += ch_tw__le32(last);
    b += ch_tw__le32(last + 4);
    c += ch_tw__le32(last + 8);
    c ^= b; c -= CH_TW__ROT(b, 14);
    a ^= c; a -= CH_TW__ROT(c, 11);
    b ^= a; b -= CH_TW__ROT(a, 25);
    c ^= b; c -= CH_TW__ROT(b, 16);
    a ^= c; a -= CH_TW__ROT(c, 4);
    b ^= a; b -= CH_TW__ROT(a, 14);
    c ^= b; c -= CH_TW__ROT(b, 24);
    return c;
}

/* twemproxy's hash_tag: narrow [*p, *p + *n) to the text between the tag's characters. */
static inline void ch_tw_tag(const uint8_t **p, size_t *n, uint64_t seed)
{
    const uint8_t *s = *p, *open, *close;
    if (!(seed & CH_TW_TAG) || *n == 0)
        return;
    open = (const uint8_t *)memchr(s, (int)(seed & 0xff), *n);
    if (open == NULL)
        return;
    close = (const uint8_t *)memchr(open + 1, (int)((seed >> 8) & 0xff),
                                    (size_t)(s + *n - (open + 1)));
    if (close != NULL && close - open > 1) {
        *p = open + 1;
        *n = (size_t)(close - open - 1);
    }
}

#define CH_TW__HASHER(NAME, CALL)                                                  \
    static inline uint64_t ch_h_tw_##NAME(const uint8_t *p, size_t n, uint64_t s) \
    {                                                                              \
        ch_tw_tag(&p, &n, s);                                                      \
        return n ? (uint64_t)(CALL) << 32 : 0;                                     \
    }
#define CH_TW__UC(s) ((int)(((s) >> 17) & 1))
CH_TW__HASHER(oaat, ch_tw_oaat(p, n, CH_TW__UC(s)))
CH_TW__HASHER(md5, ch_ketama_md5(p, n))
CH_TW__HASHER(crc16, ch_tw_crc16(p, n))
CH_TW__HASHER(crc32, ch_tw_crc32(p, n))
CH_TW__HASHER(crc32a, ch_tw_crc32a(p, n))
CH_TW__HASHER(fnv1_64, ch_tw_fnv1_64(p, n, CH_TW__UC(s)))
CH_TW__HASHER(fnv1a_64, ch_tw_fnv1a_64(p, n, CH_TW__UC(s)))
CH_TW__HASHER(fnv1_32, ch_tw_fnv1_32(p, n, CH_TW__UC(s)))
CH_TW__HASHER(fnv1a_32, ch_tw_fnv1a_32(p, n, CH_TW__UC(s)))
CH_TW__HASHER(hsieh, ch_tw_hsieh(p, n, CH_TW__UC(s)))
CH_TW__HASHER(murmur, ch_tw_murmur(p, n))
CH_TW__HASHER(jenkins, ch_tw_jenkins(p, n))

#endif /* CH_HASH_TWEMPROXY_H */
