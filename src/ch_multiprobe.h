/* Multi-probe consistent hashing (Appleton & O'Reilly, "Multi-probe consistent hashing", 2015).
 *
 * One point per node on the ring, at H(utf8(name), seed) (sorted; equal points ordered by
 * name).  A key with hash h probes k points q_j = mix64(h + j * 0x9E3779B97F4A7C15) (mod 2^64),
 * j = 0 .. k-1 (the SplitMix64 sequence seeded with h); for each probe, the first point at or
 * after it clockwise is its candidate, at distance (point - q_j) mod 2^64.  The nearest
 * candidate wins; a tie goes to the earlier probe.  Adding a node only shortens distances to
 * it, so keys move only to it; removing one only lengthens distances to it, so only its keys
 * move. */
#ifndef CH_MULTIPROBE_H
#define CH_MULTIPROBE_H

#include <stdint.h>
#include <stddef.h>
#include "ch_mix.h"
#include "ch_search.h"

static inline void ch_multiprobe(const uint64_t *pos, uint32_t n, const uint32_t *idx, int kbits,
                                 const int32_t *owners, uint32_t probes, const uint64_t *h,
                                 size_t m, int32_t *out) {
    const int shift = 64 - kbits;
    for (size_t j = 0; j < m; j++) {
        uint64_t best = UINT64_MAX;
        uint32_t bi = 0;
        uint64_t q = h[j];
        for (uint32_t p = 0; p < probes; p++, q += CH_GOLDEN) {
            uint64_t x = ch_mix64(q);
            uint32_t i = ch_find(pos, n, idx, shift, x);
            uint64_t d = pos[i] - x;
            int better = d < best;
            best = better ? d : best;
            bi = better ? i : bi;
        }
        out[j] = owners[bi];
    }
}

#endif
