/* JumpBackHash (Ertl, "JumpBackHash: Say Goodbye to the Modulo Operation to Distribute Keys
 * Uniformly to Buckets", Software: Practice and Experience 55(3), 2025), bit for bit as hash4j's
 * ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider.splitMix64_V1())
 *     .getBucket(long hash, int n)        (dynatrace-oss/hash4j @ 41d814f94c52)
 *
 * The generator is SplitMix64 seeded with the hash: state = hash, and each draw is
 * state += 0x9E3779B97F4A7C15; r = mix64(state).  For n = 1 the bucket is 0 (no draw).  For
 * n >= 2, with everything in 32-bit unsigned arithmetic:
 *
 *   r0 = draw;  x = (low 32 bits of r0 ^ (r0 >> 32)) & (2^bitlen(n - 1) - 1)
 *   loop:  if x == 0: return 0
 *          lo = highest power of two <= x                      (the bucket range [lo, 2 lo))
 *          b = lo + ((r0 >> (32 * parity(x))) & (lo - 1))      (hash4j: r0 >>> (bitCount(x) << 5),
 *                                                               a long shift taken mod 64)
 *          if b < n: return b
 *          loop:  r1 = draw                                    (jump back within [lo, 2 lo))
 *                 for w in (low 32 bits of r1, high 32 bits of r1):
 *                     b = w & (2 lo - 1);  if b < lo: break both;  if b < n: return b
 *          x ^= lo                                             (down to the next set bit)
 *
 * Each set bit of x is a range [lo, 2 lo) that holds the key's last jump (jump hash's walk,
 * read backwards from the top); the inner loop draws until a draw lands below lo (the jump
 * happened earlier) or below n.  Expected draws are O(1) whatever n: no floating point, no
 * division.  The draws after the walk continue the same generator, which JumpBackAnchor
 * (ch_jumpback_anchor.h) relies on: ch_jumpback_walk leaves the state where hash4j leaves it.
 */
#ifndef CH_JUMPBACK_H
#define CH_JUMPBACK_H

#include <stddef.h>
#include <stdint.h>
#include "ch_family.h"

/* The walk for n >= 2 from generator state *s (hash4j: getBucket(numBuckets, generator)). */
CH_FAM_INLINE int32_t ch_jumpback_walk(uint64_t *s, uint32_t n) {
    uint64_t state = *s + CH_GOLDEN;
    uint64_t r0 = ch_mix64(state);
    uint32_t x = (uint32_t)(r0 ^ (r0 >> 32)) & (0xFFFFFFFFu >> (31 - ch_fam_bsr32(n - 1)));
    for (;;) {
        if (x == 0) { *s = state; return 0; }
        uint32_t lo = 1u << ch_fam_bsr32(x);
        uint32_t b = lo + ((uint32_t)(r0 >> (ch_fam_parity32(x) << 5)) & (lo - 1));
        if (b < n) { *s = state; return (int32_t)b; }
        uint32_t hi = (lo << 1) - 1;
        for (;;) {
            state += CH_GOLDEN;
            uint64_t r1 = ch_mix64(state);
            b = (uint32_t)r1 & hi;
            if (b < lo) break;
            if (b < n) { *s = state; return (int32_t)b; }
            b = (uint32_t)(r1 >> 32) & hi;
            if (b < lo) break;
            if (b < n) { *s = state; return (int32_t)b; }
        }
        x ^= lo;
    }
}

/* The bucket of hash h among n >= 1 buckets. */
CH_FAM_INLINE int32_t ch_jumpback(uint64_t h, uint32_t n) {
    if (n <= 1) return 0;
    return ch_jumpback_walk(&h, n);
}

/* The batch: the common case (the first range holds a bucket below n, probability > 1/2 and
 * typically ~97%) straight-line, so the CPU overlaps independent keys; the rest through the walk.
 * Same result as ch_jumpback for every key. */
static inline void ch_jumpback_batch(const uint64_t *h, size_t m, uint32_t n, int32_t *out) {
    size_t i;
    if (n <= 1) {
        for (i = 0; i < m; i++) out[i] = 0;
        return;
    }
    const uint32_t mask = 0xFFFFFFFFu >> (31 - ch_fam_bsr32(n - 1));
    for (i = 0; i < m; i++) {
        uint64_t r0 = ch_mix64(h[i] + CH_GOLDEN);
        uint32_t x = (uint32_t)(r0 ^ (r0 >> 32)) & mask;
        uint32_t lo = 1u << ch_fam_bsr32(x | 1u);
        uint32_t b = lo + ((uint32_t)(r0 >> (ch_fam_parity32(x) << 5)) & (lo - 1));
        if (x != 0 && b < n) {
            out[i] = (int32_t)b;
        } else {
            uint64_t s = h[i];
            out[i] = ch_jumpback_walk(&s, n);
        }
    }
}

#endif
