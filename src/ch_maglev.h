/* Maglev hashing (Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load
 * Balancer", NSDI 2016): a lookup table of M (prime) entries, filled by the nodes' permutations.
 *
 * Node i (names sorted, so the table does not depend on the order nodes were given):
 *   a = H(utf8(name), seed);  offset = a mod M;  skip = floor(a / M) mod (M - 1) + 1
 *   its j-th preference is (offset + j * skip) mod M   (a permutation of 0 .. M-1: M is prime)
 * Filling, round after round until every entry is taken: in each round, nodes in index order
 * add ratio_i = w_i / w_max (a double) to their credit; a node whose credit reaches 1.0 pays 1.0
 * and takes its next preferred entry that is still empty.  With equal weights every node takes
 * one entry a round: the paper's algorithm.  Credits only ever add and subtract doubles, so the
 * table is the same on every IEEE-754 platform.
 * Lookup: entry = floor(h * M / 2^64) (a multiply, no division), node = table[entry].
 */
#ifndef CH_MAGLEV_H
#define CH_MAGLEV_H

#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include "ch_mix.h"
#include "ch_platform.h"

/* Node i takes its next preferred entry that is still empty: advance pos past the taken ones,
 * take it, advance once more (every Maglev variant fills this way: ours, Envoy's). */
static inline void ch_maglev_take(int32_t *table, uint64_t *pos, uint64_t skip, uint64_t M,
                                  int32_t i) {
    uint64_t c = *pos;
    while (table[c] >= 0) {
        c += skip;
        if (c >= M) c -= M;
    }
    table[c] = i;
    c += skip;
    if (c >= M) c -= M;
    *pos = c;
}

/* table: M int32; pos, skip: n uint64 (pos starts as offset, and is advanced in place);
 * credit: n doubles.  The heaviest node's ratio is exactly 1.0 (w / w), so every round claims at
 * least one entry and the build ends within M rounds. */
static inline void ch_maglev_build(uint64_t *pos, const uint64_t *skip, const double *ratio,
                                   double *credit, uint32_t n, uint32_t M, int32_t *table) {
    for (uint32_t e = 0; e < M; e++) table[e] = -1;
    for (uint32_t i = 0; i < n; i++) credit[i] = 0.0;
    uint32_t filled = 0;
    while (n && filled < M) {
        for (uint32_t i = 0; i < n && filled < M; i++) {
            credit[i] += ratio[i];
            if (!(credit[i] >= 1.0)) continue;
            credit[i] -= 1.0;
            ch_maglev_take(table, &pos[i], skip[i], M, (int32_t)i);
            filled++;
        }
    }
}

/* A lookup is a multiply and a load, so a batch runs at the speed its keys stream in: they
 * are prefetched 2 KB ahead (the address made as an integer: it may lie past the array, which
 * a prefetch may touch and C pointer arithmetic may not).  1,000,000 keys just evicted from
 * the caches: 0.69 -> 0.51 ns a key; 0.43 either way when they are in cache. */
static inline void ch_maglev_lookup(const int32_t *table, uint32_t M, const uint64_t *h,
                                    size_t m, int32_t *out) {
    size_t j = 0;
    for (; j + 8 <= m; j += 8) {
        CH_PREFETCH_KEEP((uintptr_t)(h + j) + 2048);
        for (size_t t = j; t < j + 8; t++) out[t] = table[ch_mulhi(h[t], M)];
    }
    for (; j < m; j++) out[j] = table[ch_mulhi(h[j], M)];
}

#endif
