/* PowerCH (Leu, "Fast Consistent Hashing in Constant Time", 2023, arXiv:2307.12448), bit for
 * bit as DXist/power-consistent-hash @ 25bd442210e3
 * PowerConsistentHasher::try_new(n)?.hash_u64(key), with its PCG32 (rand_pcg's Lcg64Xsh32):
 *
 *   pcg(state, stream):  inc = 2 stream + 1;  s = state + inc;  step      (step: s = s * M + inc,
 *                                                                  M = 6364136223846793005)
 *   next:                out(s), without stepping;  out(s) = rotr32(((s >> 18) ^ s) >> 27,
 *                                                                     s >> 59)
 *   f(key, mask):        bits = key & mask;  bits == 0: (0, no generator)
 *                        t = ilog2(bits);  g = pcg(key, t);  (2^t + (next(g) & (2^t - 1)), g)
 *   g(n, s, gen):        x = s;  loop:  X = (x + 1) * (2^32 - 1);  u = next(gen) + 1
 *                                       n * u <= X: return x;  step;  x = X / u
 *   hash(key), m = the power of two >= n (u32):
 *                        (r1, gen) = f(key, m - 1);  r1 < n: r1
 *                        step gen;  r2 = g(n, m/2 - 1, gen);  r2 > m/2 - 1: r2
 *                        f(key, m/2 - 1).0
 *
 * The reference refuses n < 2 (try_new: NotEnoughBuckets); n = 1 gives bucket 0 here.  Its
 * power of two is a u32, so above 2^31 buckets it overflows (m wraps to 0); bucket counts here
 * stop at 2^31 - 1.  Expected O(1): r1 < n with probability n / m > 1/2.
 */
#ifndef CH_POWER_H
#define CH_POWER_H

#include <stddef.h>
#include <stdint.h>
#include "ch_family.h"

#define CH_PCG_MUL 6364136223846793005ULL

CH_INLINE uint32_t ch_pcg_out(uint64_t s) {
    uint32_t rot = (uint32_t)(s >> 59);
    uint32_t x = (uint32_t)(((s >> 18) ^ s) >> 27);
    return (x >> rot) | (x << ((32 - rot) & 31));
}

/* f: returns r, and leaves the generator in *s (state) and *inc (increment) when bits != 0. */
CH_INLINE uint32_t ch_power_f(uint64_t key, uint32_t mask, uint64_t *s, uint64_t *inc) {
    uint32_t bits = (uint32_t)key & mask;
    if (bits == 0) return 0;
    int t = ch_fam_bsr32(bits);
    *inc = ((uint64_t)t << 1) | 1;
    *s = (key + *inc) * CH_PCG_MUL + *inc;
    uint32_t h = 1u << t;
    return h + (ch_pcg_out(*s) & (h - 1));
}

CH_INLINE uint32_t ch_power_g(uint32_t n, uint32_t x, uint64_t s, uint64_t inc) {
    for (;;) {
        uint64_t scaled = ((uint64_t)x + 1) * 0xFFFFFFFFULL;
        uint64_t u = (uint64_t)ch_pcg_out(s) + 1;
        if ((uint64_t)n * u <= scaled) return x;
        s = s * CH_PCG_MUL + inc;
        x = (uint32_t)(scaled / u);
    }
}

/* The bucket of key among n buckets, 1 <= n <= 2^31 - 1; m1 = m - 1, mh = m/2 - 1 where m is
 * the power of two >= n (ch_power_masks). */
CH_INLINE int32_t ch_power_m(uint64_t key, uint32_t n, uint32_t m1, uint32_t mh) {
    uint64_t s = 0, inc = 0;
    uint32_t r1 = ch_power_f(key, m1, &s, &inc);
    if (r1 < n) return (int32_t)r1;
    s = s * CH_PCG_MUL + inc;
    uint32_t r2 = ch_power_g(n, mh, s, inc);
    if (r2 > mh) return (int32_t)r2;
    return (int32_t)ch_power_f(key, mh, &s, &inc);
}

static inline void ch_power_masks(uint32_t n, uint32_t *m1, uint32_t *mh) {
    uint32_t m = n <= 1 ? 1u : 2u << ch_fam_bsr32(n - 1);
    *m1 = m - 1;
    *mh = (m >> 1) - (m > 1);  /* n = 1: m = 1, both masks 0 (every key is bucket 0) */
}

CH_INLINE int32_t ch_power(uint64_t key, uint32_t n) {
    uint32_t m1, mh;
    ch_power_masks(n, &m1, &mh);
    return ch_power_m(key, n, m1, mh);
}

/* The batch, through ch_fam_blocks: f's pick for every key without a branch, then the full
 * function for the keys whose pick is >= n. */
typedef struct { uint32_t n, m1, mh; } ch_power_ctx;

CH_INLINE uint32_t ch__pw_first(uint64_t key, const void *ctx) {
    uint32_t bits = (uint32_t)key & ((const ch_power_ctx *)ctx)->m1;
    int t = ch_fam_bsr32(bits | 1u);
    uint64_t inc = ((uint64_t)t << 1) | 1;
    uint64_t s = (key + inc) * CH_PCG_MUL + inc;
    uint32_t top = 1u << t;
    return ch_fam_sel32(bits != 0, top + (ch_pcg_out(s) & (top - 1)), 0);
}

CH_INLINE int32_t ch__pw_full(uint64_t key, const void *ctx) {
    const ch_power_ctx *c = (const ch_power_ctx *)ctx;
    return ch_power_m(key, c->n, c->m1, c->mh);
}

CH_INLINE uint32_t ch__pw_second(uint64_t key, const void *ctx) {
    return (uint32_t)ch__pw_full(key, ctx);
}

static inline void ch_power_batch(const uint64_t *h, size_t m, uint32_t n, int32_t *out) {
    ch_power_ctx c;
    c.n = n;
    ch_power_masks(n, &c.m1, &c.mh);
    ch_fam_blocks(h, m, n, out, &c, ch__pw_first, ch__pw_second, ch__pw_full);
}

#endif
