/* Jump consistent hash (Lamping & Veach 2014), bit for bit as Guava's
 * Hashing.consistentHash(long input, int buckets):
 *
 *   state = input;  candidate = 0
 *   loop:  state = state * 2862933555777941757 + 1            (mod 2^64)
 *          r = (int)(state >>> 33) + 1                        (Java int: 2^31 wraps to -2^31)
 *          next = (int)((candidate + 1) / (r / 2^31))          (double)
 *          if 0 <= next < buckets: candidate = next  else return candidate
 *
 * (candidate + 1) / (r / 2^31) equals ((candidate + 1) * 2^31) / r in double (scaling by a
 * power of two is exact), which is what the C below computes: one division a step.  The one
 * place Guava departs from the paper's code is r = 2^31 (state >>> 33 all ones): Java's int
 * overflow makes next negative and ends the walk, where the paper would go on.  Probability
 * 2^-31 a step; the golden vectors include a key that takes that branch.
 */
#ifndef CH_JUMP_H
#define CH_JUMP_H

#include <float.h>   /* FLT_EVAL_METHOD */
#include <stdint.h>
#include <stddef.h>

#define CH_JUMP_MUL 2862933555777941757ULL

/* Reference form: Guava's step with the division on the walk's critical path. */
static inline int32_t ch_jump_ref(uint64_t key, int32_t n) {
    int64_t b = 0;
    const double dn = (double)n;
    for (;;) {
        key = key * CH_JUMP_MUL + 1;
        uint32_t r = (uint32_t)(key >> 33);
        if (r == 0x7FFFFFFFu) return (int32_t)b;
        double j = (double)((b + 1) << 31) / (double)(r + 1);
        if (!(j < dn)) return (int32_t)b;
        b = (int64_t)j;
    }
}

/* The same function, faster.  inv = 2^31 / r depends only on the key's generator, so it can be
 * computed ahead of the candidate; ja = (b + 1) * inv then differs from Guava's correctly
 * rounded j = ((b + 1) * 2^31) / r by under 3 * 2^-22 wherever j < 2^31.  So ja gives the same
 * truncation as j unless its fractional part is within 2^-20 of an integer, and only then
 * (probability about 2^-19 a step) the exact division is done.  A ja >= n + 0.5 is past n for
 * j too (the relative error is below 2^-51).
 *
 * The candidate stays a double, bp = b + 1, so that a step's critical path is a multiply and
 * two adds: floor(ja) is read from y = ja + (2^52 - 0.5), rounded to an integer by the add
 * itself (ja >= 1 puts the sum at or above 2^52 + 0.5, where doubles are the integers):
 * y - 2^52 is the integer nearest ja - 0.5, which is floor(ja) unless ja is within 2^-20 of an
 * integer, exactly the case the exact division takes (there it is floor(ja) or one below, and
 * ja minus it is then below 2^-20 or at least 1, so the test sees it).  Where the integer
 * candidate took a conversion to double and one back each step (ja from b + 1, b from ja), a
 * walk at 100 buckets, key after dependent key, went 59-71 -> 36-57 ns (the 2-core Intel
 * Xeon, a build running beside it). */
#define CH_JUMP_EPS (1.0 / 1048576.0)
#define CH_JUMP_2P52 4503599627370496.0

static inline int ch_jump_step(uint64_t *key, double *bp, double dn) {
    *key = *key * CH_JUMP_MUL + 1;
    uint32_t r = (uint32_t)(*key >> 33);
    double inv = 2147483648.0 / (double)(r + 1);
    double ja = *bp * inv;
    if (r == 0x7FFFFFFFu || ja >= dn + 0.5) return 0;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
    volatile double y = ja + (CH_JUMP_2P52 - 0.5);  /* x87: rounded to a double by the store */
    double fl = y - CH_JUMP_2P52;
#else
    double fl = (ja + (CH_JUMP_2P52 - 0.5)) - CH_JUMP_2P52;
#endif
    double f = ja - fl;
    if (f < CH_JUMP_EPS || f > 1.0 - CH_JUMP_EPS) {
        double j = (double)(((int64_t)*bp) << 31) / (double)(r + 1);
        if (!(j < dn)) return 0;
        fl = (double)(int64_t)j;
    }
    if (fl >= dn) return 0;
    *bp = fl + 1.0;
    return 1;
}

static inline int32_t ch_jump(uint64_t key, int32_t n) {
    double bp = 1.0;
    const double dn = (double)n;
    while (ch_jump_step(&key, &bp, dn)) {}
    return (int32_t)bp - 1;
}

/* Batch: four walks in flight, each lane taking the next key as soon as its walk ends, so the
 * latencies of independent walks overlap and no lane idles while another finishes a long walk.
 * Same result as ch_jump for every key (the lanes only reorder the work). */
#define CH_JUMP_LANES 4

static inline void ch_jump_batch(const uint64_t *keys, size_t m, int32_t n, int32_t *out) {
    const double dn = (double)n;
    if (m < CH_JUMP_LANES) {
        for (size_t i = 0; i < m; i++) out[i] = ch_jump(keys[i], n);
        return;
    }
    uint64_t k[CH_JUMP_LANES];
    double b[CH_JUMP_LANES];    /* each walk's candidate + 1 */
    size_t idx[CH_JUMP_LANES];
    size_t next = 0, live = CH_JUMP_LANES;
    for (int l = 0; l < CH_JUMP_LANES; l++) { idx[l] = next; k[l] = keys[next++]; b[l] = 1.0; }
    while (live) {
        for (int l = 0; l < CH_JUMP_LANES; l++) {
            if (idx[l] == (size_t)-1) continue;
            if (!ch_jump_step(&k[l], &b[l], dn)) {
                out[idx[l]] = (int32_t)b[l] - 1;
                if (next < m) { idx[l] = next; k[l] = keys[next++]; b[l] = 1.0; }
                else { idx[l] = (size_t)-1; live--; }
            }
        }
    }
}

/* The paper's C++ code as written (a plain loop; it differs from Guava on the rare keys shown in
 * the golden vectors): the baseline the benchmark compares with, not used for routing. */
static inline void ch_jump_paper_batch(const uint64_t *keys, size_t m, int32_t n, int32_t *out) {
    for (size_t i = 0; i < m; i++) {
        uint64_t key = keys[i];
        int64_t b = -1, j = 0;
        while (j < n) {
            b = j;
            key = key * CH_JUMP_MUL + 1;
            j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1)));
        }
        out[i] = (int32_t)b;
    }
}

/* Guava's formulation, one division a step on the critical path: the reference the fast
 * kernels are tested against. */
static inline void ch_jump_ref_batch(const uint64_t *keys, size_t m, int32_t n, int32_t *out) {
    for (size_t i = 0; i < m; i++) out[i] = ch_jump_ref(keys[i], n);
}

#endif
