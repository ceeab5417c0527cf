/* FlipHash (Masson & Lee, "FlipHash: A Constant-Time Consistent Range-Hashing Algorithm",
 * 2024), bit for bit as DataDog/fliphash-rs @ 00c0ad03cf3c
 * fliphash_64_with_seed(key, seed, ..=range_end), all arithmetic in u64 (wrapping):
 *
 *   H(key, seed, j, i):  k = key ^ seed
 *                        k = k * (2 j + 1);   k = (k ^ (k >> 27)) * 0x3C79AC492BA7B653
 *                        k = k * (2 i + 1);   k = (k ^ (k >> 33)) * 0x1C69B3F74AC4AE35
 *                        return k ^ (k >> 27)
 *   pow2(h, mask):       m = h & mask;  m == 0: 0
 *                        else m ^ (H(key, seed, ilog2(m), 0) & ((2^64 - 1) >> lz(m) >> 1))
 *                        (flip the bits below m's top bit: uniform within [2^r, 2^(r+1)))
 *   fliphash(range_end): range_end == 0: 0
 *                        mask = (2^64 - 1) >> lz(range_end);  h = H(key, seed, 0, 0)
 *                        r = pow2(h, mask);  r <= range_end: r
 *                        for i = 1 .. 64:  d = H(key, seed, ilog2(range_end), i) & mask
 *                                          d <= mask >> 1: break  (the key stays in the
 *                                                                  lower power of two)
 *                                          d <= range_end: return d
 *                        return pow2(h, mask >> 1)
 *
 * Constant time (at most 64 draws past the first two, each landing with probability > 1/2).
 * Here a bucket count n is range_end = n - 1 (fliphash_bucket(key, n, seed)).
 */
#ifndef CH_FLIPHASH_H
#define CH_FLIPHASH_H

#include <stddef.h>
#include <stdint.h>
#include "ch_family.h"

#define CH_FLIP_MAX_ITERATIONS 64

CH_INLINE uint64_t ch_flip_h(uint64_t key, uint64_t seed, uint32_t j, uint32_t i) {
    uint64_t k = key ^ seed;
    k *= (uint64_t)j * 2 + 1;
    k = (k ^ (k >> 27)) * 0x3C79AC492BA7B653ULL;
    k *= (uint64_t)i * 2 + 1;
    k = (k ^ (k >> 33)) * 0x1C69B3F74AC4AE35ULL;
    return k ^ (k >> 27);
}

CH_INLINE uint64_t ch_flip_pow2(uint64_t key, uint64_t seed, uint64_t h, uint64_t mask) {
    uint64_t m = h & mask;
    if (m == 0) return 0;
    int top = ch_fam_bsr64(m);
    uint64_t below = ((uint64_t)1 << top) - 1;  /* (2^64 - 1) >> lz(m) >> 1 */
    return m ^ (ch_flip_h(key, seed, (uint32_t)top, 0) & below);
}

CH_INLINE uint64_t ch_fliphash(uint64_t key, uint64_t seed, uint64_t range_end) {
    if (range_end == 0) return 0;
    int top = ch_fam_bsr64(range_end);
    uint64_t mask = ((uint64_t)2 << top) - 1;  /* top = 63: wraps to 2^64 - 1 */
    uint64_t h = ch_flip_h(key, seed, 0, 0);
    uint64_t r = ch_flip_pow2(key, seed, h, mask);
    if (r <= range_end) return r;
    uint32_t i;
    for (i = 1; i <= CH_FLIP_MAX_ITERATIONS; i++) {
        uint64_t d = ch_flip_h(key, seed, (uint32_t)top, i) & mask;
        if (d <= mask >> 1) break;
        if (d <= range_end) return d;
    }
    return ch_flip_pow2(key, seed, h, mask >> 1);
}

/* out[i] = fliphash(h[i], seed, n - 1) for 1 <= n <= 2^31 - 1, through ch_fam_blocks: the
 * flipped pick within the power of two for every key without a branch; for the keys whose pick
 * is past n - 1, the first two redraws and the fallback without a branch; the full function
 * for the keys both redraws leave open (below 1/4 of those). */
typedef struct { uint64_t seed, end, mask; uint32_t etop; } ch_flip_ctx;

CH_INLINE uint32_t ch__fl_pick(uint64_t key, uint64_t seed, uint64_t mask) {
    uint64_t x = ch_flip_h(key, seed, 0, 0) & mask;
    int top = ch_fam_bsr64(x | 1);
    return (uint32_t)(x ^ (ch_flip_h(key, seed, (uint32_t)top, 0) & (((uint64_t)1 << top) - 1)));
}

CH_INLINE uint32_t ch__fl_first(uint64_t key, const void *ctx) {
    const ch_flip_ctx *c = (const ch_flip_ctx *)ctx;
    return ch__fl_pick(key, c->seed, c->mask);
}

CH_INLINE uint32_t ch__fl_second(uint64_t key, const void *ctx) {
    const ch_flip_ctx *c = (const ch_flip_ctx *)ctx;
    const uint64_t half = c->mask >> 1;
    uint32_t fb = ch__fl_pick(key, c->seed, half);
    uint64_t d1 = ch_flip_h(key, c->seed, c->etop, 1) & c->mask;
    uint64_t d2 = ch_flip_h(key, c->seed, c->etop, 2) & c->mask;
    uint32_t res = CH_FAM_OPEN;
    res = ch_fam_sel32(d2 <= half, fb, ch_fam_sel32(d2 <= c->end, (uint32_t)d2, res));
    return ch_fam_sel32(d1 <= half, fb, ch_fam_sel32(d1 <= c->end, (uint32_t)d1, res));
}

CH_INLINE int32_t ch__fl_full(uint64_t key, const void *ctx) {
    const ch_flip_ctx *c = (const ch_flip_ctx *)ctx;
    return (int32_t)ch_fliphash(key, c->seed, c->end);
}

static inline void ch_fliphash_batch(const uint64_t *h, size_t m, uint64_t seed, uint32_t n,
                                     int32_t *out) {
    size_t j;
    if (n <= 1) {
        for (j = 0; j < m; j++) out[j] = 0;
        return;
    }
    ch_flip_ctx c;
    c.seed = seed;
    c.end = (uint64_t)n - 1;
    c.etop = (uint32_t)ch_fam_bsr64(c.end);
    c.mask = ((uint64_t)2 << c.etop) - 1;
    ch_fam_blocks(h, m, n, out, &c, ch__fl_first, ch__fl_second, ch__fl_full);
}

#endif
