/* JumpBackAnchor: hash4j's ConsistentHashing.jumpBackAnchorHash(splitMix64_V1()), bit for bit
 * (dynatrace-oss/hash4j @ 41d814f94c52): JumpBackHash over the a buckets ever used, plus the
 * memory-optimized AnchorHash's record of removals (anchorhash/cpp-anchorhash mem/README.md).
 *
 * State: a (hash4j's historicMaxNumBuckets) and the stack of removed buckets r_0 .. r_{k-1};
 * from it, per bucket b the pair ka[b] = (n_b, d_b): n_b = 0 for a bucket not removed, and for
 * the j-th removed bucket b = r_j
 *     n_b = a - 1 - j                   the number of buckets left by its removal
 *     d_b = view(n_b, n_b + 1) - b      where its keys look first
 * with view(b, v) = b while n_b < v, else view(b + d_b, v): the bucket that stands for b among
 * the first v working buckets.  (That is hash4j's setState; removeBucket computes the same
 * pair for the bucket it pushes.)
 *
 * Lookup of hash h (a >= 1 and at least one bucket working; a = 1: bucket 0):
 *     s = h;  b = jumpback_walk(&s, a)           the same SplitMix64 generator continues below
 *     while n_b != 0:  b = view(uniform(&s, n_b), n_b)
 * uniform(&s, bound) is hash4j's uniformInt: Lemire's nearly divisionless method on the low 32
 * bits of successive draws (x = draw & 0xFFFFFFFF; m = x * bound; redraw while the low half of
 * m is below 2^32 mod bound).
 *
 * With nothing removed a lookup is JumpBackHash over a buckets exactly; removing any bucket
 * moves only its keys; adding pops the last removed bucket (or appends bucket a), restoring the
 * previous state exactly.  Expected lookup cost O(1 + ln^2(a / n)) for random removals.
 */
#ifndef CH_JUMPBACK_ANCHOR_H
#define CH_JUMPBACK_ANCHOR_H

#include <stddef.h>
#include <stdint.h>
#include "ch_jumpback.h"

/* ka holds 2 int32 per bucket: ka[2 b] = n_b, ka[2 b + 1] = d_b. */
CH_INLINE int32_t ch_jba_view(const int32_t *ka, int32_t b, int32_t v) {
    while (ka[2 * b] >= v) b += ka[2 * b + 1];
    return b;
}

CH_INLINE uint32_t ch_jba_uniform(uint64_t *s, uint32_t bound) {
    *s += CH_GOLDEN;
    uint64_t m = (uint64_t)(uint32_t)ch_mix64(*s) * bound;
    if ((uint32_t)m < bound) {
        uint32_t t = (uint32_t)(0x100000000ULL % bound);
        while ((uint32_t)m < t) {
            *s += CH_GOLDEN;
            m = (uint64_t)(uint32_t)ch_mix64(*s) * bound;
        }
    }
    return (uint32_t)(m >> 32);
}

/* The bucket of hash h; a >= 1 buckets ever used, at least one of them working. */
CH_INLINE int32_t ch_jba_bucket(uint64_t h, uint32_t a, const int32_t *ka) {
    if (a <= 1) return 0;
    uint64_t s = h;
    int32_t b = ch_jumpback_walk(&s, a);
    int32_t nb;
    while ((nb = ka[2 * b]) != 0) b = ch_jba_view(ka, (int32_t)ch_jba_uniform(&s, (uint32_t)nb), nb);
    return b;
}

/* One lane step of ch_jba_batch (CH_FAM_LANE_WALK): n_b >= v, follow (b + d_b: ch_jba_view)
 * under the same bound; n_b = 0, done; else a draw under v = n_b. */
CH_INLINE int32_t ch__jba_step(const int32_t *ka, int32_t b, int32_t v, int32_t *nv, int *live,
                               int *draw) {
    int32_t nb = ka[2 * b], db = ka[2 * b + 1];
    int view = nb >= v;
    *nv = (int32_t)ch_fam_sel32((uint32_t)view, (uint32_t)v, (uint32_t)nb);
    *live = nb != 0;
    *draw = !view & (nb != 0);
    return b + (int32_t)((uint32_t)db & (0u - (uint32_t)view));
}

/* out[i] = slot_node[bucket of h[i]] (slot_node NULL: the bucket itself).  Key by key while ka
 * is small (CH_FAM_LANES_MIN_BYTES); else, after each key's walk, the rest runs in lockstep
 * lanes (CH_FAM_LANE_WALK; ch_family.h): a lane's state is the key's generator, its bound
 * INT32_MAX after the walk, and a step is the scalar loop's: n_b >= v, follow; n_b = 0, done;
 * else draw b = uniform(s, n_b). */
static inline void ch_jba_batch(const uint64_t *h, size_t m, uint32_t a, const int32_t *ka,
                                const int32_t *slot_node, int32_t *out) {
    size_t t;
    if ((size_t)a * 8 < CH_FAM_LANES_MIN_BYTES) {
        for (t = 0; t < m; t++) {
            int32_t b = ch_jba_bucket(h[t], a, ka);
            out[t] = slot_node ? slot_node[b] : b;
        }
        return;
    }
#define CH__JBA_INIT(t, s) (*(s) = h[t], ch_jumpback_walk((s), a))
#define CH__JBA_STEP(b, v, nv, live, draw) ch__jba_step(ka, (b), (v), (nv), (live), (draw))
#define CH__JBA_DRAW(s, b, v) ((int32_t)ch_jba_uniform((s), (uint32_t)(v)))
#define CH__JBA_ROW(b) (&ka[2 * (b)])
    CH_FAM_LANE_WALK(m, out, CH__JBA_INIT, CH__JBA_STEP, CH__JBA_DRAW, CH__JBA_ROW);
#undef CH__JBA_INIT
#undef CH__JBA_STEP
#undef CH__JBA_DRAW
#undef CH__JBA_ROW
    if (slot_node)
        for (t = 0; t < m; t++) out[t] = slot_node[out[t]];
}

/* Record the removal of bucket b as the j-th entry of the stack (ka[2 b] must be 0). */
static inline void ch_jba_push(int32_t *ka, uint32_t a, uint32_t j, int32_t b) {
    int32_t n = (int32_t)(a - 1 - j);
    int32_t h = ch_jba_view(ka, n, n + 1);
    ka[2 * b] = n;
    ka[2 * b + 1] = h - b;
}

/* ka (2 a int32) from the removal stack r[0 .. k): hash4j's setState. */
static inline void ch_jba_build(int32_t *ka, uint32_t a, const int32_t *r, uint32_t k) {
    uint32_t j;
    for (j = 0; j < 2 * a; j++) ka[j] = 0;
    for (j = 0; j < k; j++) ch_jba_push(ka, a, j, r[j]);
}

#endif
