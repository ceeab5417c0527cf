/* Small integer helpers shared by the algorithm kernels (jump, rendezvous, Maglev, multi-probe,
 * MementoHash, bounded loads).  Every one is exact integer arithmetic, so every platform gives
 * the same bits.
 *
 *   ch_mix64(z)     the SplitMix64 finalizer (Steele, Lea & Flood 2014): a bijection of uint64
 *   ch_mulhi(a, b)  floor(a * b / 2^64), the high half of the 128-bit product; with b = n it maps
 *                   a uniform uint64 onto [0, n) without a division (Lemire's "fast range")
 *   CH_GOLDEN       2^64 / phi, the SplitMix64 increment
 */
#ifndef CH_MIX_H
#define CH_MIX_H

#include <stdint.h>
#if defined(_MSC_VER) && defined(_M_X64)
#include <intrin.h>
#endif

#define CH_GOLDEN 0x9E3779B97F4A7C15ULL

static inline uint64_t ch_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t ch_mulhi(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#elif defined(_MSC_VER) && defined(_M_X64)
    return __umulh(a, b);
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

#endif
