/*
 * ch_envoy.h - Envoy's Maglev table (source/extensions/load_balancing_policies/maglev/
 * maglev_lb.cc), built and read exactly as Envoy builds and reads it.
 *
 * Entries come sorted by their hash key (done by the caller).  Entry i has
 *   offset_i = xxHash64(key_i, seed 0) mod M,  skip_i = xxHash64(key_i, seed 1) mod (M - 1) + 1
 * and prefers the table slots (offset_i + next * skip_i) mod M, next = 0, 1, 2, ...
 * Filling: iteration = 1, 2, ...; in each, the entries in order; entry i takes a turn unless
 * iteration * w_i < target_i (doubles; target_i starts at 0.0), and when it does,
 * target_i += w_max, then it advances next past the slots already taken, takes the slot,
 * and advances next once more.  Everything stops the moment the table is full, even in the
 * middle of an iteration.  (Envoy's "compact" table fills the same slots with the same
 * hosts; only its storage differs.)
 * Lookup: slot = hash mod M (a 64-bit remainder, not a multiply-shift).
 */
#ifndef CH_ENVOY_H
#define CH_ENVOY_H

#include <stddef.h>
#include <stdint.h>
#include "ch_maglev.h"  /* ch_maglev_take: the fill step both tables share */

/* table: M int32 (filled with the entry index i of each slot); pos: n uint64 holding offset_i
 * on entry (advanced in place); skip: n uint64; w: n doubles; target: n doubles (scratch);
 * n >= 1.  Returns the number of iterations. */
static inline uint64_t ch_envoy_maglev_build(uint64_t *pos, const uint64_t *skip,
                                             const double *w, double w_max, double *target,
                                             uint32_t n, uint64_t M, int32_t *table)
{
    uint64_t e, filled = 0;
    uint32_t iteration, i;
    for (e = 0; e < M; e++) table[e] = -1;
    for (i = 0; i < n; i++) target[i] = 0.0;
    for (iteration = 1; filled < M; iteration++) {
        for (i = 0; i < n && filled < M; i++) {
            if ((double)iteration * w[i] < target[i]) continue;
            target[i] += w_max;
            ch_maglev_take(table, &pos[i], skip[i], M, (int32_t)i);
            filled++;
        }
    }
    return (uint64_t)iteration - 1;
}

static inline void ch_envoy_maglev_lookup(const int32_t *table, uint64_t M, const uint64_t *h,
                                          size_t m, int32_t *out)
{
    size_t j;
    for (j = 0; j < m; j++) out[j] = table[h[j] % M];
}

#endif
