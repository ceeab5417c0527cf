/* Health-aware routing on a ring: with some nodes marked down, position i routes to the owner
 * of the first position at or after i (clockwise, wrapping) whose owner is up.  That is the
 * first up node of the key's replica walk, so keys of up nodes never move and a down node's
 * keys go to their next replica.  One backward pass over the owners; the positions and the
 * prefix index are reused as they are. */
#ifndef CH_HEALTH_H
#define CH_HEALTH_H

#include <stdint.h>
#include <stddef.h>

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

#endif
