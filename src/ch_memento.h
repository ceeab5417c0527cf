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
#include "ch_family.h"

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

/* Four keys at a time, for a small R (in L1 / L2): one step takes each of the four one step of
 * ch_memento_resolve without a branch (x = R[b]: x < 0 done; x >= r follow it; else draw under
 * r = x: the draw is computed for all four and kept where it is taken), until all four are
 * done.  Four independent chains in flight and no mispredicted loop exits: at 90% removed,
 * 100 to 50,000 buckets, 23-35% faster than key by key (more keys a group measured slower:
 * the registers run out).  out[k] holds jump's bucket on entry, its working bucket's node
 * (slot_node) on exit. */
#define CH_MEMENTO_GROUP 4

static inline void ch__memento_group(const uint64_t *h, const int32_t *R,
                                     const int32_t *slot_node, int32_t *out) {
    int32_t b[CH_MEMENTO_GROUP], r[CH_MEMENTO_GROUP];
    int k, open = 0;
    for (k = 0; k < CH_MEMENTO_GROUP; k++) {
        b[k] = out[k];
        r[k] = INT32_MAX;
        open |= R[b[k]] >= 0;
    }
    while (open) {
        open = 0;
        for (k = 0; k < CH_MEMENTO_GROUP; k++) {
            int32_t x = R[b[k]];
            int done = x < 0, chain = x >= r[k];
            uint64_t u = ch_mix64(h[k] + (uint64_t)(b[k] + 1) * CH_GOLDEN);
            int32_t d = (int32_t)ch_mulhi(u, (uint64_t)(uint32_t)(done ? 0 : x));
            b[k] = done ? b[k] : chain ? x : d;
            r[k] = done | chain ? r[k] : x;
            open |= !done;
        }
    }
    for (k = 0; k < CH_MEMENTO_GROUP; k++) out[k] = slot_node[b[k]];
}

/* One lane step of ch_memento_fix (CH_FAM_LANE_WALK): R[b] < 0, b works (done); R[b] >= r,
 * follow it (b = R[b]) under the same bound; else a draw in [0, R[b]) under r = R[b]. */
CH_INLINE int32_t ch__memento_step(const int32_t *R, int32_t b, int32_t r, int32_t *nr,
                                   int *live, int *draw) {
    int32_t x = R[b];
    uint32_t chain = x >= r;
    *nr = (int32_t)ch_fam_sel32(chain, (uint32_t)r, (uint32_t)x);
    *live = x >= 0;
    *draw = !chain & (x >= 0);
    return (int32_t)ch_fam_sel32(chain, (uint32_t)x, (uint32_t)b);
}

/* out[j] holds jump(h[j], n) on entry; on exit the node index of the working bucket.  Four
 * keys at a time while R (n entries) is small (CH_FAM_LANES_MIN_BYTES); else in lockstep lanes
 * (CH_FAM_LANE_WALK; ch_family.h): a lane's state is its key's hash, its first bucket the
 * jump bucket, and a step is the scalar loop's: R[b] < 0, done; R[b] >= r, follow it; else
 * draw b in [0, R[b]). */
static inline void ch_memento_fix(const uint64_t *h, size_t m, size_t n, const int32_t *R,
                                  const int32_t *slot_node, int32_t *out) {
    size_t t;
    if (n * 4 < CH_FAM_LANES_MIN_BYTES) {
        for (t = 0; t + CH_MEMENTO_GROUP <= m; t += CH_MEMENTO_GROUP)
            ch__memento_group(h + t, R, slot_node, out + t);
        for (; t < m; t++) {
            int32_t b = out[t];
            if (R[b] >= 0) b = ch_memento_resolve(h[t], b, R);
            out[t] = slot_node[b];
        }
        return;
    }
#define CH__MEMENTO_INIT(t, s) (*(s) = h[t], out[t])
#define CH__MEMENTO_STEP(b, r, nr, live, draw) ch__memento_step(R, (b), (r), (nr), (live), (draw))
#define CH__MEMENTO_DRAW(s, b, r) \
    ((int32_t)ch_mulhi(ch_mix64(*(s) + (uint64_t)((b) + 1) * CH_GOLDEN), (uint64_t)(r)))
#define CH__MEMENTO_ROW(b) (&R[b])
    CH_FAM_LANE_WALK(m, out, CH__MEMENTO_INIT, CH__MEMENTO_STEP, CH__MEMENTO_DRAW,
                     CH__MEMENTO_ROW);
#undef CH__MEMENTO_INIT
#undef CH__MEMENTO_STEP
#undef CH__MEMENTO_DRAW
#undef CH__MEMENTO_ROW
    for (t = 0; t < m; t++) out[t] = slot_node[out[t]];
}

#endif
