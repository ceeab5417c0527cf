/* MementoHash (Coluzzi, Brocco, Antonucci & Leidi, "MementoHash: A Stateful, Minimal Memory,
 * Best Performing Consistent Hash Algorithm", 2023): jump hash plus a memory of removals.
 *
 * State: n, the b-array size (jump hash runs over n buckets), and for each removed bucket b its
 * replacer R[b] = the working-set size left by its removal (R[b] = -1 for a working bucket).
 * Lookup of hash h:
 *     b = jump(h, n);  r = R[b]
 *     while r >= 0:                          b was removed, leaving r buckets
 *         b = floor(mix64(h + (b + 1) * 0x9E3779B97F4A7C15) * r / 2^64)     in [0, r)
 *         while R[b] >= r: b = R[b]          b went earlier: follow who replaced it
 *         r = R[b]
 * With nothing removed this is jump hash exactly.  The rehash uses the key's 64-bit hash h
 * (the paper rehashes the key with seed b; mixing h with b is the same idea without the key's
 * bytes), and reduces by a multiply instead of a modulo. */
#ifndef CH_MEMENTO_H
#define CH_MEMENTO_H

#include <stdint.h>
#include <stddef.h>
#include "ch_mix.h"

static inline int32_t ch_memento_resolve(uint64_t h, int32_t b, const int32_t *R) {
    int32_t r = R[b];
    while (r >= 0) {
        uint64_t x = ch_mix64(h + (uint64_t)(b + 1) * CH_GOLDEN);
        b = (int32_t)ch_mulhi(x, (uint64_t)r);
        int32_t r2 = R[b];
        while (r2 >= r) {
            b = r2;
            r2 = R[b];
        }
        r = r2;
    }
    return b;
}

/* out[j] holds jump(h[j], n) on entry; on exit the node index of the working bucket. */
static inline void ch_memento_fix(const uint64_t *h, size_t m, const int32_t *R,
                                  const int32_t *slot_node, int32_t *out) {
    for (size_t j = 0; j < m; j++) {
        int32_t b = out[j];
        if (R[b] >= 0) b = ch_memento_resolve(h[j], b, R);
        out[j] = slot_node[b];
    }
}

#endif
