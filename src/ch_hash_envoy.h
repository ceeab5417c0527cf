/*
 * ch_hash_envoy.h - the ring point hash of Envoy's ring_hash load balancer with
 * hash_function: MURMUR_HASH_2.
 *
 * Envoy's MurmurHash::murmurHash2 (source/common/common/hash.cc) is the 64-bit MurmurHash2
 * variant that libstdc++ uses for std::hash<std::string> (_Hash_bytes on 64-bit targets),
 * always called with Envoy's MurmurHash::STD_HASH_SEED, 0xc70f6907.  In our words:
 *
 *   m = 0xc6a4a7935bd1e995;  h = seed ^ (len * m)
 *   for each whole 8-byte word w (read little-endian): h ^= mix(w * m) * m;  h *= m
 *   if 1..7 bytes remain: h ^= (those bytes as a little-endian integer);  h *= m
 *   h = mix(h) * m;  h = mix(h)           where mix(v) = v ^ (v >> 47)
 *
 * Words are read little-endian on every platform: Envoy's unaligned load is native order,
 * and the platforms Envoy supports for this hash (it says: 64-bit only) are little-endian,
 * so that is what a real Envoy computes.  The seed argument of the dispatch entry is
 * ignored: the hash id names the fixed seed.
 */
#ifndef CH_HASH_ENVOY_H
#define CH_HASH_ENVOY_H

#include <stddef.h>
#include <stdint.h>

#define CH_ENVOY_MM2_SEED 0xc70f6907ULL

static inline uint64_t ch__envoy_mm2_mix(uint64_t v) { return v ^ (v >> 47); }

static inline uint64_t ch_envoy_murmur2_64(const uint8_t *p, size_t n, uint64_t seed)
{
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    uint64_t h = seed ^ ((uint64_t)n * m);
    size_t whole = n & ~(size_t)7, i;
    for (i = 0; i < whole; i += 8) {
        uint64_t w = 0;
        int b;
        for (b = 7; b >= 0; b--) w = (w << 8) | p[i + (size_t)b];
        h ^= ch__envoy_mm2_mix(w * m) * m;
        h *= m;
    }
    if (n & 7) {
        uint64_t t = 0;
        size_t b = n;
        while (b > whole) t = (t << 8) | p[--b];
        h ^= t;
        h *= m;
    }
    h = ch__envoy_mm2_mix(h) * m;
    return ch__envoy_mm2_mix(h);
}

/* The dispatch entry (hash id CH_ENVOY_MURMUR2 in ch_keys.h). */
static inline uint64_t ch_h_envoy_mm2(const uint8_t *p, size_t n, uint64_t s)
{
    (void)s;
    return ch_envoy_murmur2_64(p, n, CH_ENVOY_MM2_SEED);
}

#endif
