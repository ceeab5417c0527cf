/* Health-aware routing on a ring: with some nodes marked down, position i routes to the owner
 * of the first position at or after i (clockwise, wrapping) whose owner is up.  That is the
 * first up node of the key's replica walk, so keys of up nodes never move and a down node's
 * keys go to their next replica.  One backward pass over the owners; the positions and the
 * prefix index are reused as they are. */
#ifndef CH_HEALTH_H
#define CH_HEALTH_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

/* eff[i] for i < n from owners and down (one byte per node, nonzero = down).  Returns the
 * number of positions whose owner is up; 0 means every node is down (eff is then all -1). */
static inline size_t ch_health_owners(const int32_t *owners, const uint8_t *down, uint32_t n,
                                      int32_t *eff) {
    size_t up = 0;
    int32_t wrap = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!down[owners[i]]) { wrap = owners[i]; break; }
    }
    int32_t cur = wrap;
    for (uint32_t i = n; i-- > 0;) {
        if (!down[owners[i]]) { cur = owners[i]; up++; }
        eff[i] = cur;
    }
    return up;
}

/* The same for a few down nodes (ids[0 .. nd-1], nd <= CH_HEALTH_FEW): eff is owners with only
 * the positions of down owners rewritten, in one pass back from the end, 64 positions a block:
 * the block is copied, then tested for any down owner against K ids (K = nd rounded up to 1, 2,
 * 4 or 8, the extra ones -2, which no owner is: a fixed-size test the compiler vectorizes), so a
 * block without one costs its copy; a down position takes the routing owner of the position
 * after it.  Same result as ch_health_owners; returns the same count. */
#define CH_HEALTH_FEW 8

#define CH_HEALTH_FEW_K(K)                                                                    \
    static inline size_t ch_health_few_##K(const int32_t *owners, const int32_t *ids,           \
                                           uint32_t n, int32_t *eff) {                         \
        int32_t wrap = -1;                                                                    \
        for (uint32_t i = 0; i < n && wrap < 0; i++) {                                        \
            int d = 0;                                                                        \
            for (int k = 0; k < K; k++) d |= owners[i] == ids[k];                             \
            if (!d) wrap = owners[i];                                                         \
        }                                                                                     \
        size_t down_count = 0;                                                                \
        uint32_t end = n;                                                                     \
        while (end > 0) {                                                                     \
            const uint32_t start = end >= 64 ? end - 64 : 0;                                  \
            memcpy(eff + start, owners + start, (size_t)(end - start) * sizeof(int32_t));     \
            int hit = 0;                                                                      \
            for (uint32_t t = start; t < end; t++)                                            \
                for (int k = 0; k < K; k++) hit |= owners[t] == ids[k];                       \
            if (hit) {                                                                        \
                for (uint32_t i = end; i-- > start;) {                                        \
                    int d = 0;                                                                \
                    for (int k = 0; k < K; k++) d |= owners[i] == ids[k];                     \
                    if (d) {                                                                  \
                        eff[i] = i + 1 < n ? eff[i + 1] : wrap;                               \
                        down_count++;                                                         \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
            end = start;                                                                      \
        }                                                                                     \
        return n - down_count;                                                                \
    }
CH_HEALTH_FEW_K(1)
CH_HEALTH_FEW_K(2)
CH_HEALTH_FEW_K(4)
CH_HEALTH_FEW_K(8)

static inline size_t ch_health_owners_few(const int32_t *owners, const int32_t *down_ids, int nd,
                                          uint32_t n, int32_t *eff) {
    int32_t ids[CH_HEALTH_FEW];
    for (int k = 0; k < CH_HEALTH_FEW; k++) ids[k] = k < nd ? down_ids[k] : -2;
    if (nd <= 1) return ch_health_few_1(owners, ids, n, eff);
    if (nd <= 2) return ch_health_few_2(owners, ids, n, eff);
    if (nd <= 4) return ch_health_few_4(owners, ids, n, eff);
    return ch_health_few_8(owners, ids, n, eff);
}

#endif
