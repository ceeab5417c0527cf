/* Bounded loads: exact capacities ceil(m * num / den) in integer arithmetic (_bounded.pxi). */
#ifndef CH_BOUNDED_H
#define CH_BOUNDED_H

#include <stdint.h>

/* ceil(m * num / den) for den > 0, exact (the product in 128 bits when it overflows 64),
 * saturated at INT64_MAX: a load never reaches that, so a larger capacity is the same bound. */
static inline int64_t ch_ceil_ratio(uint64_t m, uint64_t num, uint64_t den) {
    uint64_t q;
    if (num == 0 || m <= UINT64_MAX / num) {
        uint64_t p = m * num;
        q = p / den + (p % den != 0);
    } else {
        unsigned __int128 p = (unsigned __int128)m * num;
        unsigned __int128 r = p / den + (p % den != 0);
        if (r > (unsigned __int128)INT64_MAX) return INT64_MAX;
        q = (uint64_t)r;
    }
    return q > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)q;
}

#endif
