/* BinomialHash (Coluzzi, Brocco, Antonucci & Leidi, "BinomialHash: A Constant Time, Minimal
 * Memory Consistent Hash Algorithm", 2024, arXiv:2406.19836), bit for bit as the SUPSI suite's
 * BinomialEngine(size, hf).getBucket(key) with hf.hash(key) = h
 * (SUPSI-DTI-ISIN/java-consistent-hashing-algorithms @ 68803f800983); Java long arithmetic
 * wraps mod 2^64, (int) keeps the low 32 bits:
 *
 *   filters of size n:  E = (power of two >= n) - 1 (2^31 - 1 for n > 2^30),  m = E >> 1
 *   rehash(v, s)        = ((c * v + 1)^2 * s mod 2^64) >> 32,   c = 2862933555777941757
 *   relocate(b, h)      = b < 2: b;  else B = highest power of two <= b:
 *                         B + ((int) rehash(h, B - 1) & (B - 1))      (stay in b's tree level)
 *   bucket(h):  n < 2: 0
 *               b = relocate((int) h & E, h);  b < n: b
 *               x = h;  4 times:  x = rehash(x, E);  b = relocate((int) x & E, x)
 *                                 b <= m: stop;  b < n: return b
 *               relocate((int) h & m, h)                   (the minor tree: always < n)
 *
 * Constant time, no state but n.  The reference's addBucket() updates E and m incrementally,
 * and grown from size 1 it leaves m equal to E (its minor tree then reaches past n and
 * buckets >= n come out): here the filters are always those of the constructor for n.
 */
#ifndef CH_BINOMIAL_H
#define CH_BINOMIAL_H

#include <stddef.h>
#include <stdint.h>
#include "ch_family.h"

#define CH_BIN_C 2862933555777941757ULL

CH_INLINE uint64_t ch_bin_rehash(uint64_t v, uint32_t s) {
    uint64_t h = CH_BIN_C * v + 1;
    return (h * h * (uint64_t)s) >> 32;
}

CH_INLINE uint32_t ch_bin_relocate(uint32_t b, uint64_t h) {
    if (b < 2) return b;
    uint32_t base = 1u << ch_fam_bsr32(b);
    return base + ((uint32_t)ch_bin_rehash(h, base - 1) & (base - 1));
}

static inline void ch_bin_filters(uint32_t n, uint32_t *e, uint32_t *m) {
    uint32_t p = n <= 1 ? n : 2u << ch_fam_bsr32(n - 1);  /* n = 1: 1, so E = 0 */
    *e = p - 1;
    *m = *e >> 1;
}

CH_INLINE int32_t ch_binomial_f(uint64_t h, uint32_t n, uint32_t e, uint32_t mf) {
    if (n < 2) return 0;
    uint32_t b = ch_bin_relocate((uint32_t)h & e, h);
    if (b < n) return (int32_t)b;
    uint64_t x = h;
    int i;
    for (i = 0; i < 4; i++) {
        x = ch_bin_rehash(x, e);
        b = ch_bin_relocate((uint32_t)x & e, x);
        if (b <= mf) break;
        if (b < n) return (int32_t)b;
    }
    return (int32_t)ch_bin_relocate((uint32_t)h & mf, h);
}

CH_INLINE int32_t ch_binomial(uint64_t h, uint32_t n) {
    uint32_t e, mf;
    ch_bin_filters(n, &e, &mf);
    return ch_binomial_f(h, n, e, mf);
}

/* The batch, through ch_fam_blocks: the first relocated pick for every key without a branch;
 * then, for the keys whose pick is >= n, the four redraws and the minor tree's pick computed
 * alike and the answer selected without a branch (never open). */
typedef struct { uint32_t n, e, mf; } ch_bin_ctx;

CH_INLINE uint32_t ch__bin_pick(uint64_t x, uint32_t filter) {
    uint32_t c = (uint32_t)x & filter;
    uint32_t lvl = 1u << ch_fam_bsr32(c | 1u);
    uint32_t r = lvl + ((uint32_t)ch_bin_rehash(x, lvl - 1) & (lvl - 1));
    return ch_fam_sel32(c < 2, c, r);
}

CH_INLINE uint32_t ch__bin_first(uint64_t key, const void *ctx) {
    return ch__bin_pick(key, ((const ch_bin_ctx *)ctx)->e);
}

CH_INLINE uint32_t ch__bin_second(uint64_t key, const void *ctx) {
    const ch_bin_ctx *c = (const ch_bin_ctx *)ctx;
    uint32_t b[4], i;
    uint64_t x = key;
    for (i = 0; i < 4; i++) {
        x = ch_bin_rehash(x, c->e);
        b[i] = ch__bin_pick(x, c->e);
    }
    uint32_t fb = ch__bin_pick(key, c->mf), res = fb;
    for (i = 4; i-- > 0;)
        res = ch_fam_sel32(b[i] <= c->mf, fb, ch_fam_sel32(b[i] < c->n, b[i], res));
    return res;
}

CH_INLINE int32_t ch__bin_full(uint64_t key, const void *ctx) {
    const ch_bin_ctx *c = (const ch_bin_ctx *)ctx;
    return ch_binomial_f(key, c->n, c->e, c->mf);
}

static inline void ch_binomial_batch(const uint64_t *h, size_t m, uint32_t n, int32_t *out) {
    size_t j;
    if (n < 2) {
        for (j = 0; j < m; j++) out[j] = 0;
        return;
    }
    ch_bin_ctx c;
    c.n = n;
    ch_bin_filters(n, &c.e, &c.mf);
    ch_fam_blocks(h, m, n, out, &c, ch__bin_first, ch__bin_second, ch__bin_full);
}

#endif
