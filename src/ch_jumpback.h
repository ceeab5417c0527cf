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
CH_INLINE int32_t ch_jumpback_walk(uint64_t *s, uint32_t n) {
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
CH_INLINE int32_t ch_jumpback(uint64_t h, uint32_t n) {
    if (n <= 1) return 0;
    return ch_jumpback_walk(&h, n);
}

/* The batch, through ch_fam_blocks: first, the first range's candidate (the answer with
 * probability > 1/2, typically ~97%); second, for the keys it is not (their x holds the top
 * range lo, the only one that can pass n), the first two draws of the jump back (four words)
 * without a branch: a word below lo sends the key to the next range down (whose candidate is
 * always below n), a word in [lo, n) is the answer; the walk for the keys all four words leave
 * open (below 1/16 of those).  Same result as ch_jumpback for every key. */
typedef struct { uint32_t n, mask, lo; } ch_jumpback_ctx;

CH_INLINE uint32_t ch__jb_candidate(uint64_t r0, uint32_t x) {
    uint32_t l = 1u << ch_fam_bsr32(x | 1u);
    uint32_t b = l + ((uint32_t)(r0 >> (ch_fam_parity32(x) << 5)) & (l - 1));
    return ch_fam_sel32(x != 0, b, 0);
}

CH_INLINE uint32_t ch__jb_first(uint64_t key, const void *ctx) {
    const ch_jumpback_ctx *c = (const ch_jumpback_ctx *)ctx;
    uint64_t r0 = ch_mix64(key + CH_GOLDEN);
    return ch__jb_candidate(r0, (uint32_t)(r0 ^ (r0 >> 32)) & c->mask);
}

CH_INLINE uint32_t ch__jb_second(uint64_t key, const void *ctx) {
    const ch_jumpback_ctx *c = (const ch_jumpback_ctx *)ctx;
    const uint32_t lo = c->lo, hi = c->mask, n = c->n;
    uint64_t s0 = key + CH_GOLDEN, r0 = ch_mix64(s0);
    uint32_t fb = ch__jb_candidate(r0, ((uint32_t)(r0 ^ (r0 >> 32)) & hi) ^ lo);
    uint64_t r1 = ch_mix64(s0 + CH_GOLDEN), r2 = ch_mix64(s0 + 2 * CH_GOLDEN);
    uint32_t w[4] = {(uint32_t)r1 & hi, (uint32_t)(r1 >> 32) & hi, (uint32_t)r2 & hi,
                     (uint32_t)(r2 >> 32) & hi};
    uint32_t res = CH_FAM_OPEN;
    int i;
    for (i = 4; i-- > 0;) res = ch_fam_sel32(w[i] < lo, fb, ch_fam_sel32(w[i] < n, w[i], res));
    return res;
}

CH_INLINE int32_t ch__jb_full(uint64_t key, const void *ctx) {
    return ch_jumpback_walk(&key, ((const ch_jumpback_ctx *)ctx)->n);
}

static inline void ch_jumpback_batch(const uint64_t *h, size_t m, uint32_t n, int32_t *out) {
    size_t j;
    if (n <= 1) {
        for (j = 0; j < m; j++) out[j] = 0;
        return;
    }
    ch_jumpback_ctx c;
    c.n = n;
    c.mask = 0xFFFFFFFFu >> (31 - ch_fam_bsr32(n - 1));
    c.lo = (c.mask >> 1) + 1;
    ch_fam_blocks(h, m, n, out, &c, ch__jb_first, ch__jb_second, ch__jb_full);
}

#endif
