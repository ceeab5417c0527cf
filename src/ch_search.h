/* Ring search kernels over sorted uint64 positions.
 *
 * Lookup semantics (the contract every kernel here is tested against):
 *   index(h) = first i with pos[i] >= h, or 0 when every position is < h,
 * that is np.searchsorted(pos, h, side="left") % V.
 *
 * The fast kernel is a prefix index: idx[b] is the first i whose position has top-k bits
 * >= b (b = 0 .. 2^k, idx[2^k] = V).  A hash h with top bits b has its answer in
 * [idx[b], idx[b + 1]]: positions of earlier buckets are all < h, the first position of a
 * later bucket is > h.  The scan counts positions < h four at a time; the position array is
 * padded with CH_PAD copies of UINT64_MAX so the scan needs no bounds check (a sentinel is
 * never < h), and since positions of later buckets are > h the count stops by itself.
 */
#ifndef CH_SEARCH_H
#define CH_SEARCH_H

#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define CH_PAD 8

#if defined(__GNUC__) || defined(__clang__)
#define CH_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 1)
#define CH_LIKELY(x) __builtin_expect(!!(x), 1)
#define CH_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define CH_PREFETCH(p) ((void)0)
#define CH_LIKELY(x) (x)
#define CH_UNLIKELY(x) (x)
#endif

/* Number of prefix bits for a ring of n positions. */
static inline int ch_prefix_bits(size_t n) {
    int lg = 0;
    while (((size_t)1 << (lg + 1)) <= n) lg++;      /* floor(log2 n), 0 for n <= 1 */
    int k = n < ((size_t)1 << 17) ? lg + 1 : lg;
    if (k < 1) k = 1;
    if (k > 24) k = 24;
    return k;
}

/* Fill idx[0 .. 2^k] for sorted pos[0 .. n-1]. */
static inline void ch_build_prefix(const uint64_t *pos, uint32_t n, int k, uint32_t *idx) {
    const uint64_t nb = (uint64_t)1 << k;
    const int shift = 64 - k;
    uint64_t b = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t top = pos[i] >> shift;
        while (b <= top) idx[b++] = i;
    }
    while (b <= nb) idx[b++] = n;
}

/* The prefix index of a ring that gained (sign +1) or lost (sign -1) the sorted positions
 * chg[0 .. m-1], from the old ring's index of the same k: idx[b] counts the positions whose top
 * k bits are below b, so each changed position shifts every bucket above its own by one.
 * One pass over the 2^k + 1 entries (the inner loops vectorize), no pass over the positions. */
static inline void ch_prefix_adjust(const uint32_t *old, int k, const uint64_t *chg, size_t m,
                                    int sign, uint32_t *idx) {
    const uint64_t nb = (uint64_t)1 << k;
    const int shift = 64 - k;
    uint64_t b = 0;
    for (size_t j = 0; j < m; j++) {
        const uint32_t d = (uint32_t)((int64_t)sign * (int64_t)j);
        const uint64_t top = chg[j] >> shift;
        for (; b <= top; b++) idx[b] = old[b] + d;
    }
    const uint32_t d = (uint32_t)((int64_t)sign * (int64_t)m);
    for (; b <= nb; b++) idx[b] = old[b] + d;
}

static inline uint32_t ch_find(const uint64_t *pos, uint32_t n, const uint32_t *idx, int shift,
                               uint64_t h) {
    uint32_t i = idx[h >> shift];
    const uint64_t *p = pos + i;
    for (;;) {
        uint32_t c = (uint32_t)(p[0] < h) + (uint32_t)(p[1] < h) + (uint32_t)(p[2] < h) +
                     (uint32_t)(p[3] < h);
        i += c;
        if (CH_LIKELY(c < 4)) break;
        p += 4;
    }
    return i == n ? 0 : i;
}

/* out[j] = owners[index(hashes[j])]; with owners == NULL, out[j] = index(hashes[j]). */
static inline void ch_lookup_batch(const uint64_t *pos, uint32_t n, const uint32_t *idx, int k,
                                   const int32_t *owners, const uint64_t *hashes, size_t m,
                                   int32_t *out) {
    const int shift = 64 - k;
    if (n > (1u << 16)) {
        /* Large rings: the positions no longer sit in L1; prefetch a few keys ahead. */
        const size_t D = 8;
        size_t j = 0;
        for (; j + D < m; j++) {
            CH_PREFETCH(pos + idx[hashes[j + D] >> shift]);
            uint32_t i = ch_find(pos, n, idx, shift, hashes[j]);
            out[j] = owners ? owners[i] : (int32_t)i;
        }
        for (; j < m; j++) {
            uint32_t i = ch_find(pos, n, idx, shift, hashes[j]);
            out[j] = owners ? owners[i] : (int32_t)i;
        }
        return;
    }
    if (owners) {
        for (size_t j = 0; j < m; j++) out[j] = owners[ch_find(pos, n, idx, shift, hashes[j])];
    } else {
        for (size_t j = 0; j < m; j++) out[j] = (int32_t)ch_find(pos, n, idx, shift, hashes[j]);
    }
}

/* Sort (key, val) pairs by (key, val).  Ring positions are uniform hashes, so a counting
 * pass over the top bits spreads them into buckets of a few pairs each, which an insertion
 * sort finishes; a bucket that is large anyway (a degenerate custom hash) goes to qsort, so
 * the worst case stays O(n log n).  tmp holds n pairs; count holds (n >> 1) + 2 size_t. */
typedef struct { uint64_t key; int32_t val; } ch_pair;

static int ch_pair_cmp(const void *a, const void *b) {
    const ch_pair *x = (const ch_pair *)a, *y = (const ch_pair *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->val > y->val) - (x->val < y->val);
}

static inline int ch_pair_less(const ch_pair *x, const ch_pair *y) {
    return x->key < y->key || (x->key == y->key && x->val < y->val);
}

static inline int ch_sort_bits(size_t n) {
    int lg = 0;
    while (((size_t)1 << (lg + 1)) <= n) lg++;
    return lg > 1 ? lg - 1 : 1;
}

static inline void ch_sort_pairs(uint64_t *key, int32_t *val, size_t n, ch_pair *tmp,
                                 size_t *count) {
    const int k = ch_sort_bits(n);
    const int shift = 64 - k;
    const size_t nb = (size_t)1 << k;
    memset(count, 0, (nb + 1) * sizeof(size_t));
    for (size_t i = 0; i < n; i++) count[(key[i] >> shift) + 1]++;
    for (size_t b = 0; b < nb; b++) count[b + 1] += count[b];
    /* count[b] is now the start of bucket b; scatter, advancing a copy of the starts. */
    for (size_t i = 0; i < n; i++) {
        size_t b = (size_t)(key[i] >> shift);
        ch_pair *d = tmp + count[b]++;
        d->key = key[i];
        d->val = val[i];
    }
    /* Now count[b] is the end of bucket b (the start of b + 1). */
    size_t start = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t end = count[b];
        size_t m = end - start;
        if (m > 32) {
            qsort(tmp + start, m, sizeof(ch_pair), ch_pair_cmp);
        } else {
            for (size_t i = start + 1; i < end; i++) {
                ch_pair x = tmp[i];
                size_t j = i;
                while (j > start && ch_pair_less(&x, &tmp[j - 1])) { tmp[j] = tmp[j - 1]; j--; }
                tmp[j] = x;
            }
        }
        start = end;
    }
    for (size_t i = 0; i < n; i++) { key[i] = tmp[i].key; val[i] = tmp[i].val; }
}

/* Merge two rings sorted by (position, owner) into out (length na + nb). */
static inline void ch_merge(const uint64_t *pa, const int32_t *oa, size_t na, const uint64_t *pb,
                            const int32_t *ob, size_t nb, uint64_t *po, int32_t *oo) {
    size_t i = 0, j = 0, o = 0;
    while (i < na && j < nb) {
        int take_b = pb[j] < pa[i] || (pb[j] == pa[i] && ob[j] < oa[i]);
        if (take_b) { po[o] = pb[j]; oo[o++] = ob[j++]; }
        else { po[o] = pa[i]; oo[o++] = oa[i++]; }
    }
    while (i < na) { po[o] = pa[i]; oo[o++] = oa[i++]; }
    while (j < nb) { po[o] = pb[j]; oo[o++] = ob[j++]; }
}

/* Successor table of distinct owners: row i holds the first r distinct owners met walking
 * clockwise from position i (i itself first).  Two backward passes, O(n * r): row i is owner[i]
 * followed by row i+1 without owner[i]; the first pass fills row 0 correctly (every owner occurs
 * in positions 0..n-1), the second pass wraps from it.  rows is n * r int32. */
static inline void ch_build_replicas(const int32_t *owners, uint32_t n, uint32_t r,
                                     int32_t *rows) {
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t ii = n; ii-- > 0;) {
            int32_t *row = rows + (size_t)ii * r;
            const int32_t *next;
            uint32_t next_len;
            if (ii + 1 < n) { next = rows + (size_t)(ii + 1) * r; next_len = r; }
            else if (pass == 1) { next = rows; next_len = r; }
            else { next = NULL; next_len = 0; }
            int32_t me = owners[ii];
            uint32_t w = 0;
            /* In pass 0, an unfilled tail of next is marked with -1. */
            int32_t buf[64];
            int32_t *dst = r <= 64 ? buf : row;  /* row may alias next only when ii+1 == ii: never */
            dst[w++] = me;
            for (uint32_t t = 0; t < next_len && w < r; t++) {
                int32_t o = next[t];
                if (o < 0) break;
                if (o != me) dst[w++] = o;
            }
            for (uint32_t t = w; t < r; t++) dst[t] = -1;
            if (dst != row) memcpy(row, dst, r * sizeof(int32_t));
        }
    }
}

#endif
