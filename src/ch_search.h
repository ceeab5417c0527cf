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
#include "ch_platform.h"   /* CH_PREFETCH, CH_LIKELY, CH_UNLIKELY */
#ifdef _MSC_VER
#include <intrin.h>         /* _InterlockedCompareExchange */
#endif
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#endif

#define CH_PAD 8


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

/* The route layout: the array every lookup reads, built with the ring beside the positions
 * and owners users see (8 bytes a position).  Word i is
 *     q[i] = (pos[i] with its low b bits cleared) | owner[i],   b = ch_owner_bits(nodes),
 * so one load gives a lookup both what it compares and what it answers: the search touches
 * the prefix index and then one cache line, instead of positions and then owners.
 *
 * With key = h with its low b bits cleared, q[i] < key exactly when pos[i] >> b < h >> b (an
 * owner is below 2^b), so counting the q < key from idx[bucket] lands on the first i with
 * pos[i] >> b >= h >> b.  That is the answer unless pos[i] >> b == h >> b: then pos[i] may
 * still be below h (they differ only in the low b bits), and the exact search over the
 * positions decides (a chance of about V * 2^b / 2^64 per key: never seen in practice, but
 * exact).  The CH_PAD words past the end are (all ones above b) | owner[0]: i == V (every
 * position below h) reads owner 0, the wrap-around, with no test of its own, and an h that is
 * all ones above b takes the exact search.  With one node b is 0 and q is the positions. */
static inline int ch_owner_bits(size_t nodes) {
    int b = 0;
    while (b < 31 && ((size_t)1 << b) < nodes) b++;
    return b;
}

/* q[0 .. n + CH_PAD) from the sorted positions and the (routing) owners of a ring. */
static inline void ch_route_layout(const uint64_t *pos, const int32_t *own, uint32_t n, int b,
                                   uint64_t *q) {
    const uint64_t low = ((uint64_t)1 << b) - 1;
    for (uint32_t i = 0; i < n; i++) q[i] = (pos[i] & ~low) | ((uint64_t)(uint32_t)own[i] & low);
    const uint64_t pad = ~low | (n ? ((uint64_t)(uint32_t)own[0] & low) : 0);
    for (uint32_t i = 0; i < CH_PAD; i++) q[n + i] = pad;
}

/* The word that answers key (h, low b bits cleared), from the first word of its bucket. */
static inline const uint64_t *ch__rscan(const uint64_t *p, uint64_t key) {
    for (;;) {
        uint32_t c = (uint32_t)(p[0] < key) + (uint32_t)(p[1] < key) + (uint32_t)(p[2] < key) +
                     (uint32_t)(p[3] < key);
        p += c;
        if (CH_LIKELY(c < 4)) return p;
    }
}

typedef struct {
    const uint64_t *q;      /* the route layout */
    const uint64_t *pos;    /* the padded positions (the exact search) */
    const uint32_t *idx;    /* the prefix index */
    const int32_t *own;     /* the owners q was built from */
    uint32_t n;
    int shift;              /* 64 - k */
    int b;
    const uint64_t *t;      /* the direct table, 2^tk words (NULL: none yet; published once,
                             * CH_STORE_RELEASE, while batches may be reading) */
    int tk;
    int tb;                 /* bits of a split kept in a table word */
    int pairs;              /* its words hold up to two positions (else one) */
    uint64_t smask;         /* pairs: the top tb bits, where a word's first split lies */
    int lines;              /* t is a table of 2^tk lines (ch_line), not of words */
} ch_route;

/* The owner of hash h through the route layout and prefix index (the ring is not empty). */
static inline int32_t ch__route_search(const ch_route *R, uint64_t h) {
    const uint64_t low = ((uint64_t)1 << R->b) - 1;
    const uint64_t e = *ch__rscan(R->q + R->idx[h >> R->shift], h & ~low);
    if (CH_UNLIKELY(((e ^ h) & ~low) == 0)) return R->own[ch_find(R->pos, R->n, R->idx, R->shift, h)];
    return (int32_t)(e & low);
}

/* The direct table of a small ring: one word per bucket of the top tk bits of a hash, with
 * 2^tk the power of two at least 4V (tk = ceil(log2 V) + 2, so a bucket holds a quarter of a
 * position on average), for rings of at most CH_DIRECT_MAX positions (a table of at most 2^17
 * words, 1 MB: 32 to 64 bytes a position).  A bucket holding no position answers every hash
 * in it with the owner of the first position of a later bucket (wrapping to position 0); one
 * holding a single position p answers a hash h <= p with p's owner, a larger one with the
 * next position's.  So its word is, high to low,
 *     split (tb bits) | o_le (b bits) | o_gt (b bits) | 0,
 * split the tb bits of p below its top tk (all ones for an empty bucket, above every hash),
 * o_le and o_gt the two owners, b = ch_owner_bits: a lookup loads one word (the search loads
 * a prefix entry and then a line of q, dependent), compares the same bits of h with the
 * split, and shifts out an owner.  A bucket of two or more positions has the word 1, and a
 * hash whose bits equal the split (p and h may still differ below them) is decided by the
 * search: both exact, both rare (about 2.6% and 2^-tb of the hashes, tb >= 16). */
#define CH_DIRECT_MAX ((uint32_t)1 << 15)

/* Where owners are narrow enough, a word holds a bucket of two positions p1 < p2 as well,
 * which the search would otherwise decide (2.6% of the hashes): high to low,
 *     split1 (tb bits) | split2 (tb bits) | 0 ... | o_c (b) | o_b (b) | o_a (b) | 0,
 * o_a answering h <= p1, o_b p1 < h <= p2, o_c a larger h (the owner of the first position
 * of a later bucket); a bucket of one position has split2 all ones and o_b = o_c, an empty
 * one both splits all ones and one owner three times.  The owner of h is then o_(c), c the
 * number of splits below the same bits of h, and a hash equal to either split goes to the
 * search.  With split1 in the word's top bits, a call on one key compares in place: the bits
 * of h below its top tk, shifted up and masked to tb, against the word masked (split1) and
 * shifted up by tb and masked (split2).  The word 1 is left for buckets of three or more
 * (0.2% of the hashes at a quarter of a position a bucket): 16,000 positions, 1,000,000 keys,
 * 2-core AMD EPYC (Zen 2), AVX2: 1.73 -> 1.53 ns a key; 2-core Intel Xeon (AVX-512, KVM),
 * with the AVX-512 kernel's branch below: 0.84-0.93 -> 0.75-0.85 (alternated processes).
 * Pairs need splits of at least 12 bits, 2 tb + 3 b + 1 <= 64: owners of up to 13 bits; every
 * kernel (AVX-512, AVX2, portable) reads both forms, so the form depends only on the ring
 * (ch_direct_pairs). */
static int ch_direct_pairs_on CH__UNUSED_FLAG = 1;  /* a test hook turns pairs off */

/* tb: the split bits below the top tk that fit beside 2 owners of b bits and the tag bit, or
 * two splits beside 3 owners. */
static inline int ch_direct_split_bits(int tk, int b, int pairs) {
    const int room = pairs ? (63 - 3 * b) / 2 : 63 - 2 * b, below = 64 - tk;
    return room < below ? room : below;
}

/* Whether the table of a ring with tk bits (0: none) and owners of b bits holds pairs. */
static inline int ch_direct_pairs(int tk, int b) {
    return tk > 0 && ch_direct_pairs_on && ch_direct_split_bits(tk, b, 1) >= 12;
}

/* R's table form, for a table of 2^tk words (0: none) and owners of R->b bits, or of 2^tk
 * lines (lines nonzero: ch_lines_bits). */
static inline void ch_route_table_form(ch_route *R, int tk, int lines) {
    R->tk = tk;
    R->lines = tk > 0 && lines;
    R->pairs = R->lines ? 0 : ch_direct_pairs(tk, R->b);
    R->tb = tk && !R->lines ? ch_direct_split_bits(tk, R->b, R->pairs) : 0;
    R->smask = R->pairs ? ~(uint64_t)0 << (64 - R->tb) : 0;
}

/* tk for a ring of n positions whose owners have b bits, 0 for no table (a big ring, or
 * owners too wide to leave a split of 16 bits). */
static inline int ch_direct_bits(size_t n, int b) {
    if (n == 0 || n > CH_DIRECT_MAX || b > 23) return 0;
    int c = 0;
    while (((size_t)1 << c) < n) c++;   /* ceil(log2 n) */
    return c + 2;
}

/* t[0 .. 2^tk) for the sorted positions pos[0 .. n) and their routing owners own: a pass over
 * the positions, each writing its bucket's word and the empty buckets before it (whose hashes
 * go to it), then the empty buckets after the last (to position 0).  The empty words are a
 * plain fill, so the pass costs about a store a word plus a few ns a position (a loop over
 * the buckets that looked for their positions cost ~4 ns a bucket in mispredicted branches:
 * 250 us at 16,000 positions, on every membership change). */
static inline void ch__build_pairs(const uint64_t *pos, const int32_t *own, uint32_t n, int b,
                                   int tk, uint64_t *t) {
    const int tb = ch_direct_split_bits(tk, b, 1), a1 = 64 - tb, a2 = a1 - tb, sh = 64 - tk;
    const uint64_t nb = (uint64_t)1 << tk, low = ((uint64_t)1 << b) - 1;
    const uint64_t ones = ((uint64_t)1 << tb) - 1;
#define CH__OWN(j) ((uint64_t)(uint32_t)own[(j) < n ? (j) : 0] & low)
#define CH__SPLIT(p) (((p) << tk) >> (64 - tb))
#define CH__WORD(s1, s2, oa, ob, oc) \
    (((s1) << a1) | ((s2) << a2) | ((oc) << (1 + 2 * b)) | ((ob) << (1 + b)) | ((oa) << 1))
    uint64_t next = 0;
    uint32_t i = 0;
    while (i < n) {
        const uint64_t bk = pos[i] >> sh, o = CH__OWN(i);
        const uint64_t e = CH__WORD(ones, ones, o, o, o);
        for (; next < bk; next++) t[next] = e;
        uint32_t j = i + 1;
        while (j < n && (pos[j] >> sh) == bk) j++;
        if (j == i + 1)
            t[bk] = CH__WORD(CH__SPLIT(pos[i]), ones, o, CH__OWN(j), CH__OWN(j));
        else if (j == i + 2)
            t[bk] = CH__WORD(CH__SPLIT(pos[i]), CH__SPLIT(pos[i + 1]), o, CH__OWN(i + 1),
                             CH__OWN(j));
        else
            t[bk] = 1;
        next = bk + 1;
        i = j;
    }
    const uint64_t o0 = CH__OWN(0), e0 = CH__WORD(ones, ones, o0, o0, o0);
    for (; next < nb; next++) t[next] = e0;
#undef CH__OWN
#undef CH__SPLIT
#undef CH__WORD
}

static inline void ch_build_direct(const uint64_t *pos, const int32_t *own, uint32_t n, int b,
                                   int tk, int pairs, uint64_t *t) {
    if (pairs) {
        ch__build_pairs(pos, own, n, b, tk, t);
        return;
    }
    const int tb = ch_direct_split_bits(tk, b, 0), at = 1 + 2 * b, sh = 64 - tk;
    const uint64_t nb = (uint64_t)1 << tk, low = ((uint64_t)1 << b) - 1;
    const uint64_t empty = (((uint64_t)1 << tb) - 1) << at;  /* tb <= 62: the all-ones split */
    uint64_t next = 0;  /* the first bucket not written yet */
    uint32_t i = 0;
    while (i < n) {
        const uint64_t bk = pos[i] >> sh, o = (uint64_t)(uint32_t)own[i] & low;
        const uint64_t e = empty | (o << (1 + b)) | (o << 1);
        for (; next < bk; next++) t[next] = e;
        uint32_t j = i + 1;
        while (j < n && (pos[j] >> sh) == bk) j++;
        if (j == i + 1) {
            const uint64_t later = (uint64_t)(uint32_t)own[j < n ? j : 0] & low;
            t[bk] = (((pos[i] << tk) >> (64 - tb)) << at) | (o << (1 + b)) | (later << 1);
        } else {
            t[bk] = 1;
        }
        next = bk + 1;
        i = j;
    }
    const uint64_t o0 = (uint64_t)(uint32_t)own[0] & low;
    const uint64_t e0 = empty | (o0 << (1 + b)) | (o0 << 1);
    for (; next < nb; next++) t[next] = e0;
}

/* The line table of a ring past the direct table: one 64-byte line per bucket of the top tk
 * bits of a hash, tk = floor(log2 V) - 2 (4 to 8 positions a bucket), so that a lookup reads
 * one random line where the search reads a prefix entry and then a line of q, dependent (on
 * a ring past the caches, two misses a key where this has one).  A line holds its bucket's
 * positions in order, up to 15 of them, as
 *     f[16]: the 16 bits of each position below its top tk, xor 0x8000 (so that signed 16-bit
 *            compares order them as unsigned), then INT16_MAX in every slot left over;
 *     o[16]: each position's (routing) owner, then the owner of the first position of a later
 *            bucket (wrapping to position 0) in every slot left over.
 * The owner of h is o[c], c the number of f below the same 16 bits x of h: slot 15 is never
 * below x (at most 15 positions), so c <= 15 is a slot of the line.  When x equals an f (that
 * position and h agree in their top tk + 16 bits and may differ below them: about 2^-16 x 8
 * of the hashes), the search decides.  A bucket of 16 or more positions (about 0.8% of the
 * buckets at 8 a bucket; a hash that clusters its positions makes more) has every f INT16_MAX
 * and every owner CH_LINE_FULL, so each of its hashes goes to the search; owners are below
 * CH_LINE_FULL (rings of at most 65,535 nodes).  Since the f are sorted, c is found by four
 * steps of a binary search, and x equals an f exactly when it equals f[c]: the portable and
 * per-request form; with AVX2, one compare of the 16 f and a popcount.  8 to 16 bytes a
 * position, built on first use like the direct table.  Measured on the 2-core Intel Xeon
 * (KVM), 1,000,000 random keys at 1.6 M positions, in a standalone model of both kernels:
 * the search (prefetched 64 keys ahead) 10.5 ns a key, the lines 3.6-4.1. */
typedef struct {
    int16_t f[16];
    uint16_t o[16];
} ch_line;

#define CH_LINE_FULL 0xFFFF
#define CH_LINES_MAX_NODES 65535
static int ch_direct_lines_on CH__UNUSED_FLAG = 1;  /* a test hook turns line tables off */

/* tk for the line table of a ring of n positions and `nodes` nodes, 0 for none (a ring that
 * has a direct table or is too small for one, owners too wide, or the hook off). */
static inline int ch_lines_bits(size_t n, size_t nodes) {
    if (!ch_direct_lines_on || n <= CH_DIRECT_MAX || nodes > CH_LINES_MAX_NODES) return 0;
    int lg = 0;
    while (((size_t)1 << (lg + 1)) <= n) lg++;      /* floor(log2 n) */
    return lg - 2;
}

/* The 16 bits of h below its top tk (fs = 48 - tk), as a line's f holds them. */
CH_INLINE int16_t ch__line_frag(uint64_t h, int fs) {
    return (int16_t)(uint16_t)((uint16_t)(h >> fs) ^ 0x8000u);
}

/* L[0 .. 2^tk) for the sorted positions pos[0 .. n) (n >= 1, padded) and their routing
 * owners own (each below CH_LINE_FULL), from the ring's prefix index idx of k >= tk bits:
 * bucket B of the lines holds positions idx[B << (k - tk)] up to idx[(B + 1) << (k - tk)],
 * so each line is filled from its range with no search and no branch on the positions (a
 * pass over the positions that looked for each bucket's end: 31 ms at 1.6 M positions). */
static inline void ch_build_lines(const uint64_t *pos, const int32_t *own, uint32_t n,
                                  const uint32_t *idx, int k, int tk, ch_line *L) {
    const int fs = 48 - tk, d = k - tk;
    const uint64_t nb = (uint64_t)1 << tk;
    for (uint64_t B = 0; B < nb; B++) {
        const uint32_t s = idx[B << d], e = idx[(B + 1) << d], m = e - s;
        const uint32_t kept = m <= 15 ? m : 0;  /* a full line keeps no position */
        const uint16_t nx = m <= 15 ? (uint16_t)own[e < n ? e : 0] : CH_LINE_FULL;
        ch_line l;
        for (uint32_t u = 0; u < 16; u++) {
            const int in = u < kept;
            const uint32_t p = in ? s + u : 0;
            l.f[u] = in ? ch__line_frag(pos[p], fs) : INT16_MAX;
            l.o[u] = in ? (uint16_t)own[p] : nx;
        }
        memcpy(L + B, &l, sizeof l);
    }
}

/* The owner of h from its line into *o; nonzero when the search must decide. */
CH_INLINE int ch__line1(const ch_line *L, int tk, uint64_t h, int32_t *o) {
    const ch_line *l = L + (h >> (64 - tk));
    const int16_t x = ch__line_frag(h, 48 - tk);
    unsigned c = l->f[7] < x ? 8u : 0u;
    c += l->f[c + 3] < x ? 4u : 0u;
    c += l->f[c + 1] < x ? 2u : 0u;
    c += l->f[c] < x ? 1u : 0u;
    const unsigned w = l->o[c];
    *o = (int32_t)w;
    return (l->f[c] == x) | (w == CH_LINE_FULL);
}

/* What a lookup in the direct table needs, in locals (a batch's stores could alias R). */
typedef struct {
    const uint64_t *t;
    int top, tk, below, at, le;     /* 64 - tk, tk, 64 - tb, the split's shift, o_le's */
    int pairs, a2, b;               /* pairs: at is split1's shift, a2 split2's */
    uint64_t low, ones;             /* ones: tb bits */
} ch__dt;

CH_INLINE ch__dt ch__dt_of(const ch_route *R, const uint64_t *t) {
    ch__dt d;
    d.t = t;
    d.top = 64 - R->tk;
    d.tk = R->tk;
    d.below = 64 - R->tb;
    d.pairs = R->pairs;
    d.b = R->b;
    d.a2 = 64 - 2 * R->tb;
    d.at = R->pairs ? 64 - R->tb : 1 + 2 * R->b;
    d.le = 1 + R->b;
    d.low = ((uint64_t)1 << R->b) - 1;
    d.ones = ((uint64_t)1 << R->tb) - 1;
    return d;
}

/* The owner of h from the direct table into *o; nonzero when the search must decide. */
CH_INLINE int ch__direct1(const ch__dt *d, uint64_t h, int32_t *o) {
    const uint64_t e = d->t[h >> d->top];
    const uint64_t hs = (h << d->tk) >> d->below, sp = e >> d->at;
    if (d->pairs) {
        const uint64_t s2 = (e >> d->a2) & d->ones;
        *o = (int32_t)((e >> (1 + d->b * ((hs > sp) + (hs > s2)))) & d->low);
        return (int)(e & 1) | (hs == sp) | (hs == s2);
    }
    *o = (int32_t)((e >> (hs > sp ? 1 : d->le)) & d->low);
    return (int)(e & 1) | (hs == sp);
}

/* Claim the one build of a snapshot's direct table: 1 for the one caller that turns *state
 * from 0 to 1 (threads may ask at once in a free-threaded build), 0 for every other. */
static inline int ch_direct_claim(int *state) {
#if defined(__GNUC__) || defined(__clang__)
    int zero = 0;
    return __atomic_compare_exchange_n(state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#elif defined(_MSC_VER)
    return _InterlockedCompareExchange((volatile long *)state, 1, 0) == 0;
#else
    if (*state) return 0;
    *state = 1;
    return 1;
#endif
}

/* R's direct table as a batch would read it (NULL: not published yet). */
static inline const uint64_t *ch_direct_table(const ch_route *R) {
    return CH_LOAD_ACQUIRE(&R->t);
}

/* Publish t as R's direct table (built for R's positions and owners, tk and tb set). */
static inline void ch_direct_publish(ch_route *R, const uint64_t *t) {
    CH_STORE_RELEASE(&R->t, t);
}

/* The owner of hash h (the ring is not empty): ch__direct1 read from R as it stands, for a
 * call on one key (ch__dt_of's fields are what a batch keeps in registers). */
static inline int32_t ch_route1(const ch_route *R, uint64_t h) {
    const uint64_t *t = ch_direct_table(R);
    if (t && R->lines) {
        int32_t o;
        if (CH_LIKELY(!ch__line1((const ch_line *)(const void *)t, R->tk, h, &o))) return o;
    } else if (t) {
        const int tk = R->tk, b = R->b, tb = R->tb;
        const uint64_t e = t[h >> (64 - tk)];
        const uint64_t low = ((uint64_t)1 << b) - 1;
        if (R->pairs) {
            const uint64_t m = R->smask, x = (h << tk) & m, s1 = e & m, s2 = (e << tb) & m;
            if (CH_LIKELY(!((e & 1) | (x == s1) | (x == s2))))
                return (int32_t)((e >> (1 + (x > s1 ? b : 0) + (x > s2 ? b : 0))) & low);
        } else {
            const uint64_t hs = (h << tk) >> (64 - tb), sp = e >> (1 + 2 * b);
            if (CH_LIKELY(!((e & 1) | (hs == sp))))
                return (int32_t)((e >> (hs > sp ? 1 : 1 + b)) & low);
        }
    }
    return ch__route_search(R, h);
}

/* The index of the first position >= h, wrapping to 0 (the ring is not empty). */
static inline uint32_t ch_route_index(const ch_route *R, uint64_t h) {
    const uint64_t low = ((uint64_t)1 << R->b) - 1;
    const uint64_t *p = ch__rscan(R->q + R->idx[h >> R->shift], h & ~low);
    if (CH_UNLIKELY(((*p ^ h) & ~low) == 0)) return ch_find(R->pos, R->n, R->idx, R->shift, h);
    const uint32_t i = (uint32_t)(p - R->q);
    return i == R->n ? 0 : i;
}

/* out[j] = the owner of hashes[j], j < m (the ring is not empty).  The loads of one key
 * depend on each other (prefix index, then the line of q), those of different keys do not:
 * each key's prefix entry is prefetched 2D keys ahead and read D keys ahead, where its q
 * line is prefetched, so both are in cache when the key's turn comes.  On a ring past the
 * caches that turns two dependent misses per key into overlapped ones; on a small ring it
 * still shortens what each key waits for.  D (a power of two, at most CH__ROUTE_DMAX) must
 * cover the latency of what the two loads miss: 16 keys ahead while the layout is in L2 or
 * L3, 64 once it is in DRAM (past 2^19 positions, 4 MB of q; measured with a 1,000,000-key
 * batch, 2-core AMD EPYC: 1.6 M positions 6.2 -> 3.5 ns a key, 16 M 13.3 -> 8.2, at 100,000
 * - 400,000 positions 16 is 5-10% faster than 64; bench/bench_hotpath.py shows the rows). */
#define CH__ROUTE_DMAX 64
CH_INLINE void ch__route_batch(const ch_route *R, const uint64_t *hashes, size_t m,
                               int32_t *out, const size_t D, const int far) {
    const uint64_t *q = R->q;
    const uint32_t *idx = R->idx;
    const int shift = R->shift;
    const uint64_t low = ((uint64_t)1 << R->b) - 1;
    if (m <= D) {
        for (size_t j = 0; j < m; j++) out[j] = ch_route1(R, hashes[j]);
        return;
    }
    uint32_t st[CH__ROUTE_DMAX];
    for (size_t t = 0; t < D; t++) {
        st[t] = idx[hashes[t] >> shift];
        CH_PREFETCH(q + st[t]);
    }
    /* Key j: its q word from st (read D keys ago), then key j + D's prefix entry read and its
     * q line prefetched, key j + 2D's prefix entry prefetched.  Near the end of the batch the
     * keys ahead run out, not the prefetching of those that are left. */
    size_t j = 0;
#define CH__ROUTE_STEP(AHEAD, FAR_AHEAD)                                        \
    do {                                                                         \
        uint32_t nx = 0;                                                         \
        if (FAR_AHEAD) CH_PREFETCH(idx + (hashes[j + 2 * D] >> shift));         \
        if (AHEAD) {                                                             \
            nx = idx[hashes[j + D] >> shift];                                    \
            CH_PREFETCH(q + nx);                                                 \
            if (far) CH_PREFETCH(q + nx + 3);                                    \
        }                                                                        \
        const uint64_t h = hashes[j];                                            \
        const uint64_t e = *ch__rscan(q + st[j & (D - 1)], h & ~low);            \
        st[j & (D - 1)] = nx;                                                    \
        out[j] = (int32_t)(e & low);                                             \
        if (CH_UNLIKELY(((e ^ h) & ~low) == 0))                                  \
            out[j] = R->own[ch_find(R->pos, R->n, idx, shift, h)];               \
    } while (0)
    for (; j + 2 * D < m; j++) CH__ROUTE_STEP(1, 1);
    for (; j + D < m; j++) CH__ROUTE_STEP(1, 0);
    for (; j < m; j++) CH__ROUTE_STEP(0, 0);
#undef CH__ROUTE_STEP
}

/* One copy each (far: past 2^16 positions a key's 4 words may span two lines, so both are
 * prefetched), out of line so that each gets the registers to itself. */
CH_OUTLINE void ch__route_batch_l1(const ch_route *R, const uint64_t *h, size_t m, int32_t *out) {
    ch__route_batch(R, h, m, out, 16, 0);
}
CH_OUTLINE void ch__route_batch_l2(const ch_route *R, const uint64_t *h, size_t m, int32_t *out) {
    ch__route_batch(R, h, m, out, 16, 1);
}
CH_OUTLINE void ch__route_batch_mem(const ch_route *R, const uint64_t *h, size_t m, int32_t *out) {
    ch__route_batch(R, h, m, out, CH__ROUTE_DMAX, 1);
}

/* How far ahead (bytes) the AVX-512 batch of the direct table prefetches its keys.  A lookup
 * there is a few cycles, so the batch runs at the speed the keys stream in: once a batch's 8
 * bytes a key are out of cache (a big batch, after other work), the hardware's stream prefetch
 * alone left the kernel waiting on them.  Measured on 1,000,000 keys at 16,000 positions,
 * right after an np.searchsorted over the same keys: 2.1 -> 1.1-1.2 ns a key (512 bytes ahead:
 * 1.6; 2-8 KB alike).  The portable batch (1.7 ns a key) gained nothing from it.  The address
 * is made as an integer: it may lie past the keys, which a prefetch may touch and C pointer
 * arithmetic may not. */
#define CH__KEYS_AHEAD 2048

/* The direct table over a batch: a word a key, the few keys it leaves to the search. */
CH_OUTLINE void ch__direct_batch(const ch_route *R, const uint64_t *t, const uint64_t *h,
                                 size_t m, int32_t *out) {
    const ch__dt d = ch__dt_of(R, t);
    for (size_t j = 0; j < m; j++) {
        int32_t o;
        const int hard = ch__direct1(&d, h[j], &o);
        out[j] = o;
        if (CH_UNLIKELY(hard)) out[j] = ch__route_search(R, h[j]);
    }
}

/* The same 8 keys at a time with AVX-512 (one gather of 8 table words), where the compiler
 * can target it and the CPU has it (ch_platform.h).  A table of pairs takes the same loop, as
 * in the AVX2 kernel below: the second split read and compared, each lane's owner shifted out
 * by 1 + b for every split below its hash (two masked adds). */
#ifdef CH_HAVE_AVX512
CH_AVX512 static void ch__direct_batch_avx512(const ch_route *R, const uint64_t *table,
                                              const uint64_t *h, size_t m, int32_t *out) {
    const ch__dt d = ch__dt_of(R, table);
    const int pairs = d.pairs;
    const long long *t = (const long long *)table;
    const __m128i c_top = _mm_cvtsi32_si128(d.top), c_tk = _mm_cvtsi32_si128(d.tk);
    const __m128i c_below = _mm_cvtsi32_si128(d.below), c_at = _mm_cvtsi32_si128(d.at);
    const __m128i c_a2 = _mm_cvtsi32_si128(d.a2);
    const __m512i low = _mm512_set1_epi64((long long)d.low), one = _mm512_set1_epi64(1);
    const __m512i at_le = _mm512_set1_epi64(d.le), bv = _mm512_set1_epi64(d.b);
    const __m512i ones = _mm512_set1_epi64((long long)d.ones);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    /* Single words leave a key in 40 to the search, a vector in 5: those keys are noted
     * (their offsets compressed into a vector and stored whole, without a branch) and searched
     * after each run of 256 keys.  Pairs leave a key in 500, and a branch on the vector's mask,
     * seldom taken, costs less than the compress and store (16,000 positions, 1,000,000 keys,
     * Intel Xeon: 0.89-0.92 -> 0.70-0.71 ns a key; with single words the branch is taken too
     * often: 0.89-0.97 -> 1.05-1.20). */
    long long left[256 + 8];
    size_t j = 0;
    while (j + 8 <= m) {
        const size_t stop = j + 256 <= m ? j + 256 : m - (m - j) % 8;
        size_t nl = 0;
        for (; j < stop; j += 8) {
            _mm_prefetch((const char *)((uintptr_t)(h + j) + CH__KEYS_AHEAD), _MM_HINT_T0);
            const __m512i hv = _mm512_loadu_si512((const void *)(h + j));
            const __m512i e = _mm512_i64gather_epi64(_mm512_srl_epi64(hv, c_top), t, 8);
            const __m512i hs = _mm512_srl_epi64(_mm512_sll_epi64(hv, c_tk), c_below);
            const __m512i sp = _mm512_srl_epi64(e, c_at);
            const __mmask8 gt = _mm512_cmpgt_epu64_mask(hs, sp);
            __mmask8 bad = _mm512_test_epi64_mask(e, one) | _mm512_cmpeq_epu64_mask(hs, sp);
            __m512i sh;
            if (pairs) {  /* o_(c): shift 1 + b per split below the hash */
                const __m512i s2 = _mm512_and_si512(_mm512_srl_epi64(e, c_a2), ones);
                sh = _mm512_mask_add_epi64(one, gt, one, bv);
                sh = _mm512_mask_add_epi64(sh, _mm512_cmpgt_epu64_mask(hs, s2), sh, bv);
                bad |= _mm512_cmpeq_epu64_mask(hs, s2);
            } else {      /* o_gt (shift 1) past the split, o_le (shift le) up to it */
                sh = _mm512_mask_blend_epi64(gt, at_le, one);
            }
            const __m512i o = _mm512_and_si512(_mm512_srlv_epi64(e, sh), low);
            _mm256_storeu_si256((__m256i *)(void *)(out + j), _mm512_cvtepi64_epi32(o));
            if (pairs) {  /* a vector in 60 has a key to search: a branch seldom taken */
                if (CH_UNLIKELY(bad)) {
                    for (unsigned bb = bad; bb; bb &= bb - 1) {
                        const size_t i = j + (size_t)__builtin_ctz(bb);
                        out[i] = ch__route_search(R, h[i]);
                    }
                }
                continue;
            }
            _mm512_storeu_si512((void *)(left + nl), _mm512_maskz_compress_epi64(
                bad, _mm512_add_epi64(lane, _mm512_set1_epi64((long long)j))));
            nl += (size_t)__builtin_popcount((unsigned)bad);
        }
        for (size_t i = 0; i < nl; i++)
            out[left[i]] = ch__route_search(R, h[left[i]]);
    }
    if (j < m) ch__direct_batch(R, table, h + j, m - j, out + j);  /* the last 1-7 keys */
}
#endif

/* The same with AVX2 (Haswell, Zen 1 and later, where there is no AVX-512): 8 keys a step, as
 * two vectors of 4.  Each table word is loaded by a scalar load, the vector built from four:
 * on Zen 2 that is faster than VPGATHERQQ (16,000 positions, 1,000,000 keys: 1.8-2.0 ns a key
 * against 2.6 with the gather and 3.6 for the portable loop; in L1, 1.3 against 1.7 and 2.3).
 * Lanes never need an unsigned compare: a split and the same bits of a hash are below 2^62.
 * The keys the search decides are noted in a bitmap of 64 keys and searched after them.
 * Once the table is past L2 (2^16 words, 512 KB), the table words of the keys 32 ahead are
 * prefetched (1.8 -> 1.5 ns at 30,000 positions; below, it costs more than it saves).  A
 * table of pairs takes the same loop: a second split read and compared, and each lane's owner
 * shifted out by 1 + b times the number of splits below its hash. */
#ifdef CH_HAVE_AVX2
CH_AVX2 static void ch__direct_batch_avx2(const ch_route *R, const uint64_t *table,
                                          const uint64_t *h, size_t m, int32_t *out) {
    const ch__dt d = ch__dt_of(R, table);
    const int top = d.top, far = d.tk >= 16, pairs = d.pairs;
    const __m128i c_tk = _mm_cvtsi32_si128(d.tk), c_below = _mm_cvtsi32_si128(d.below);
    const __m128i c_at = _mm_cvtsi32_si128(d.at), c_a2 = _mm_cvtsi32_si128(d.a2);
    const __m256i low = _mm256_set1_epi64x((long long)d.low), one = _mm256_set1_epi64x(1);
    const __m256i le = _mm256_set1_epi64x(d.le), bv = _mm256_set1_epi64x(d.b);
    const __m256i ones = _mm256_set1_epi64x((long long)d.ones);
    size_t j = 0;
    for (; j + 64 <= m; j += 64) {
        uint64_t hard = 0;
        for (int i = 0; i < 64; i += 8) {
            const uint64_t *k = h + j + i;
            if (far && j + i + 40 <= m)
                for (int u = 32; u < 40; u++) CH_PREFETCH(table + (k[u] >> top));
            /* lanes 0-3 and 4-7: the table words */
            const __m256i e[2] = {
                _mm256_set_epi64x((long long)table[k[3] >> top], (long long)table[k[2] >> top],
                                  (long long)table[k[1] >> top], (long long)table[k[0] >> top]),
                _mm256_set_epi64x((long long)table[k[7] >> top], (long long)table[k[6] >> top],
                                  (long long)table[k[5] >> top], (long long)table[k[4] >> top])};
            __m256i o[2];
            unsigned bits = 0;
            for (int v = 0; v < 2; v++) {
                /* the same bits of the hash and the (first) split; hard: the tag (bit 0
                 * moved to the sign) or a split equal to the hash's bits */
                const __m256i hv = _mm256_loadu_si256((const __m256i *)(const void *)(k + 4 * v));
                const __m256i sv = _mm256_srl_epi64(_mm256_sll_epi64(hv, c_tk), c_below);
                const __m256i p = _mm256_srl_epi64(e[v], c_at);
                __m256i sh, bad = _mm256_or_si256(_mm256_slli_epi64(e[v], 63),
                                                  _mm256_cmpeq_epi64(sv, p));
                if (pairs) {  /* o_(c): shift 1 + b per split below the hash */
                    const __m256i q = _mm256_and_si256(_mm256_srl_epi64(e[v], c_a2), ones);
                    sh = _mm256_add_epi64(one, _mm256_add_epi64(
                        _mm256_and_si256(_mm256_cmpgt_epi64(sv, p), bv),
                        _mm256_and_si256(_mm256_cmpgt_epi64(sv, q), bv)));
                    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(sv, q));
                } else {      /* o_gt (shift 1) past the split, o_le (shift le) up to it */
                    sh = _mm256_blendv_epi8(le, one, _mm256_cmpgt_epi64(sv, p));
                }
                o[v] = _mm256_and_si256(_mm256_srlv_epi64(e[v], sh), low);
                bits |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(bad)) << (4 * v);
            }
            /* the low halves of the 8 lanes, in order: (0 2 4 6 | 1 3 5 7) of each 128-bit
             * half picked pairwise, then the 64-bit quarters put back in order */
            const __m256 pk = _mm256_shuffle_ps(_mm256_castsi256_ps(o[0]),
                                                _mm256_castsi256_ps(o[1]), 0x88);
            _mm256_storeu_si256((__m256i *)(void *)(out + j + i),
                                _mm256_permute4x64_epi64(_mm256_castps_si256(pk), 0xD8));
            hard |= (uint64_t)bits << i;
        }
        while (hard) {
            const int i = __builtin_ctzll(hard);
            hard &= hard - 1;
            out[j + i] = ch__route_search(R, h[j + i]);
        }
    }
    if (j < m) ch__direct_batch(R, table, h + j, m - j, out + j);  /* the last 1-63 keys */
}
#endif

/* The line table over a batch: each key's line prefetched CH__LINES_AHEAD keys ahead (the
 * line is the key's one miss), the keys the search decides noted in a bitmap of 64 keys and
 * searched after them (a branch on each key, seldom taken, still held the loads of the keys
 * after it back: 5.6-6.0 against 3.6-4.1 ns a key in the standalone model). */
#define CH__LINES_AHEAD 64
#define CH__LINES_BATCH(ONE)                                                                \
    do {                                                                                    \
        const int tk = R->tk, top = 64 - tk;                                                \
        for (size_t j = 0; j < m; j += 64) {                                                \
            const size_t e = j + 64 < m ? j + 64 : m;                                       \
            uint64_t hard = 0;                                                              \
            for (size_t i = j; i < e; i++) {                                                \
                if (i + CH__LINES_AHEAD < m) CH_PREFETCH(L + (h[i + CH__LINES_AHEAD] >> top)); \
                int32_t o;                                                                  \
                const uint64_t bad = (uint64_t)ONE(L, tk, h[i], &o);                        \
                out[i] = o;                                                                 \
                hard |= bad << (i - j);                                                     \
            }                                                                               \
            while (CH_UNLIKELY(hard != 0)) {                                                \
                const size_t i = j + (size_t)ch__ctz64(hard);                               \
                hard &= hard - 1;                                                           \
                out[i] = ch__route_search(R, h[i]);                                         \
            }                                                                               \
        }                                                                                   \
    } while (0)

CH_INLINE unsigned ch__ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(x);
#else
    unsigned c = 0;
    while (!(x & 1)) { x >>= 1; c++; }
    return c;
#endif
}

CH_OUTLINE void ch__lines_batch(const ch_route *R, const ch_line *L, const uint64_t *h, size_t m,
                                int32_t *out) {
    CH__LINES_BATCH(ch__line1);
}

/* With AVX2: c from one compare of the line's 16 f against x (two bytes of the mask a lane),
 * an f equal to x from a second. */
#ifdef CH_HAVE_AVX2
static inline __attribute__((always_inline, target("avx2,popcnt"))) int ch__line1_avx2(const ch_line *L, int tk, uint64_t h, int32_t *o) {
    const ch_line *l = L + (h >> (64 - tk));
    const __m256i f = _mm256_load_si256((const __m256i *)(const void *)l->f);
    const __m256i x = _mm256_set1_epi16(ch__line_frag(h, 48 - tk));
    const unsigned lt = (unsigned)_mm256_movemask_epi8(_mm256_cmpgt_epi16(x, f));
    const unsigned eq = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi16(x, f));
    const unsigned w = l->o[(unsigned)_mm_popcnt_u32(lt) >> 1];
    *o = (int32_t)w;
    return (eq != 0) | (w == CH_LINE_FULL);
}

CH_AVX2 static void ch__lines_batch_avx2(const ch_route *R, const ch_line *L, const uint64_t *h,
                                         size_t m, int32_t *out) {
    CH__LINES_BATCH(ch__line1_avx2);
}
#endif
#undef CH__LINES_BATCH

static inline void ch_route_batch(const ch_route *R, const uint64_t *hashes, size_t m,
                                  int32_t *out) {
    const uint64_t *t = ch_direct_table(R);
    if (t && R->lines) {
        const ch_line *L = (const ch_line *)(const void *)t;
#ifdef CH_HAVE_AVX2
        if (ch_simd_avx2) {
            ch__lines_batch_avx2(R, L, hashes, m, out);
            return;
        }
#endif
        ch__lines_batch(R, L, hashes, m, out);
    } else if (t) {
#ifdef CH_HAVE_AVX512
        if (ch_simd_avx512) {
            ch__direct_batch_avx512(R, t, hashes, m, out);
            return;
        }
#endif
#ifdef CH_HAVE_AVX2
        if (ch_simd_avx2) {
            ch__direct_batch_avx2(R, t, hashes, m, out);
            return;
        }
#endif
        ch__direct_batch(R, t, hashes, m, out);
    } else if (R->n > (1u << 19))
        ch__route_batch_mem(R, hashes, m, out);
    else if (R->n > (1u << 16))
        ch__route_batch_l2(R, hashes, m, out);
    else
        ch__route_batch_l1(R, hashes, m, out);
}

/* Sort (key, val) pairs by (key, val).  Ring positions are uniform hashes, so a sort by the
 * top bits leaves each pair among a few others of the same top bits, which an insertion sort
 * finishes; a group of equal top bits that is large anyway (a degenerate custom hash) goes to
 * qsort, so the worst case stays O(n log n).
 *
 * Small inputs (< 2^16 pairs: a node's labels, a small ring) take one counting pass over the
 * top bits into about n / 2 buckets; large ones ch_radix_layout.  tmp holds n pairs; count
 * holds 2^ch_sort_bits(n) + 1 size_t for small inputs (unused for large ones). */
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

#define CH_RADIX_MIN ((size_t)1 << 16)

/* Insertion-sort key[s .. e) / val[s .. e) by (key, val), unless a pair would move more than
 * far places: then 0, the pairs a permutation of what they were within every run a pair
 * could not leave (a group of equal top bits, for ch_radix_layout).  1 when sorted. */
static inline int ch__insert_near(uint64_t *key, int32_t *val, size_t s, size_t e, size_t far) {
    for (size_t i = s + 1; i < e; i++) {
        const uint64_t x = key[i];
        const int32_t y = val[i];
        if (CH_LIKELY(key[i - 1] < x || (key[i - 1] == x && val[i - 1] <= y))) continue;
        size_t j = i;
        while (j > s && (key[j - 1] > x || (key[j - 1] == x && val[j - 1] > y))) {
            if (i - j >= far) {  /* put the pair back where it was: nothing is lost */
                for (size_t t = j; t < i; t++) { key[t] = key[t + 1]; val[t] = val[t + 1]; }
                key[i] = x;
                val[i] = y;
                return 0;
            }
            key[j] = key[j - 1];
            val[j] = val[j - 1];
            j--;
        }
        key[j] = x;
        val[j] = y;
    }
    return 1;
}

/* Sort the pairs key[s .. e) / val[s .. e) of one group by (key, val): insertion, or qsort
 * through scratch (e - s pairs) for a large group.  Returns -1 if scratch is needed but
 * cannot be allocated. */
static inline int ch__sort_group(uint64_t *key, int32_t *val, size_t s, size_t e) {
    const size_t m = e - s;
    if (m <= 32) {
        (void)ch__insert_near(key, val, s, e, m);  /* no pair moves m places: always sorts */
        return 0;
    }
    ch_pair *t = (ch_pair *)malloc(m * sizeof(ch_pair));
    if (t == NULL) return -1;
    for (size_t i = 0; i < m; i++) { t[i].key = key[s + i]; t[i].val = val[s + i]; }
    qsort(t, m, sizeof(ch_pair), ch_pair_cmp);
    for (size_t i = 0; i < m; i++) { key[s + i] = t[i].key; val[s + i] = t[i].val; }
    free(t);
    return 0;
}

/* Large inputs: one MSD counting pass over the top W1 bits (up to 2^8 buckets: 512 write
 * streams, which the caches keep up with) into the scratch (tk, tv), then each bucket, now up
 * to 2^15 pairs or so that sit in L2, counting-sorted by its next W2 bits (up to 15) back into
 * (key, val), and each group of equal top W1 + W2 bits (one or two pairs from uniform hashes)
 * finished by ch__sort_group.  Up to 2^11 first buckets and 2^12 second ones were measured
 * slower: 324 vs 291 ms at 16 M pairs, 30 vs 26 ms at 1.6 M.  Every pair is moved twice, where a radix sort of the top bits
 * in 8-bit passes moves it three times, and one pass into millions of buckets makes every write
 * a cache miss (measured 4x slower than this at 16 M).
 *
 * Optionally (idx != NULL, q != NULL) the same pass writes the prefix index of k bits and
 * the route layout of b owner bits for the sorted pairs (ch_build_prefix, ch_route_layout,
 * CH_PAD words included), while the bucket is in cache; q may be the memory of tk (a
 * bucket's scratch keys are read before its route words are written over them).  Returns -1
 * on a failed allocation (the pairs are then unsorted, nothing is lost). */
static inline int ch_radix_layout(uint64_t *key, int32_t *val, size_t n, uint64_t *tk,
                                  int32_t *tv, int k, uint32_t *idx, int b, uint64_t *q) {
    int bits = 0;
    while (((size_t)1 << (bits + 1)) <= n) bits++;    /* floor(log2 n) */
    int w1 = bits / 2 < 8 ? bits / 2 : 8;
    if (w1 < 1) w1 = 1;
    int w2 = bits - w1 < 15 ? bits - w1 : 15;
    if (w2 < 1) w2 = 1;
    const size_t nb1 = (size_t)1 << w1, nb2 = (size_t)1 << w2;
    const int sh1 = 64 - w1, sh2 = 64 - w1 - w2;
    size_t *c1 = (size_t *)calloc(nb1 + 1, sizeof(size_t));
    size_t *c2 = (size_t *)malloc((nb2 + 1) * sizeof(size_t));
    if (c1 == NULL || c2 == NULL) { free(c1); free(c2); return -1; }
    for (size_t i = 0; i < n; i++) c1[(key[i] >> sh1) + 1]++;
    for (size_t t = 0; t < nb1; t++) c1[t + 1] += c1[t];
    /* scatter; afterwards c1[t] is the end of bucket t, c1[t - 1] (or 0) its start */
    for (size_t i = 0; i < n; i++) {
        const uint64_t x = key[i];
        const size_t d = c1[x >> sh1]++;
        tk[d] = x;
        tv[d] = val[i];
    }
    const uint64_t low = ((uint64_t)1 << b) - 1;
    const int kshift = 64 - k;
    const uint64_t nidx = ((uint64_t)1 << k) + 1;   /* idx's entries */
    uint64_t cursor = 0;    /* the next prefix entry to write */
    int rc = 0;
    size_t s0 = 0;
    for (size_t t = 0; t < nb1; t++) {
        const size_t e0 = c1[t];
        if (e0 > s0) {
            memset(c2, 0, (nb2 + 1) * sizeof(size_t));
            for (size_t i = s0; i < e0; i++) c2[((tk[i] >> sh2) & (nb2 - 1)) + 1]++;
            for (size_t u = 0; u < nb2; u++) c2[u + 1] += c2[u];
            for (size_t i = s0; i < e0; i++) {
                const uint64_t x = tk[i];
                const size_t d = s0 + c2[(x >> sh2) & (nb2 - 1)]++;
                key[d] = x;
                val[d] = tv[i];
            }
            /* The bucket is in order of its top w1 + w2 bits; what is left is the order
             * within each group of equal top bits (one or two pairs from uniform hashes).
             * One insertion pass over the bucket does it, as a pair never moves past its
             * group's start; if one would move more than 32 places (a large group: a
             * degenerate custom hash), the groups are sorted one by one instead
             * (ch__sort_group: qsort past 32 pairs; c2[u] is the end of group u). */
            if (!ch__insert_near(key, val, s0, e0, 32)) {
                size_t g = s0;
                for (size_t u = 0; u < nb2 && rc == 0; u++) {
                    const size_t ge = s0 + c2[u];
                    if (ge - g > 1) rc = ch__sort_group(key, val, g, ge);
                    g = ge;
                }
            }
            if (idx != NULL) {
                /* idx[t] = the first i whose top k bits are >= t.  Each pair writes four
                 * entries from the cursor without a branch on how many it owns (almost always
                 * 0-3); one past its own are provisional: the pair that moves the cursor
                 * there writes them again. */
                for (size_t i = s0; i < e0; i++) {
                    const uint64_t top = key[i] >> kshift;
                    if (CH_LIKELY(top < cursor + 4 && cursor + 4 <= nidx)) {
                        idx[cursor] = idx[cursor + 1] = idx[cursor + 2] = idx[cursor + 3] =
                            (uint32_t)i;
                        cursor = top + 1 > cursor ? top + 1 : cursor;
                    } else {
                        while (cursor <= top) idx[cursor++] = (uint32_t)i;
                    }
                    q[i] = (key[i] & ~low) | ((uint64_t)(uint32_t)val[i] & low);
                }
            }
        }
        s0 = e0;
    }
    free(c1);
    free(c2);
    if (rc < 0) return -1;
    if (idx != NULL) {
        while (cursor <= ((uint64_t)1 << k)) idx[cursor++] = (uint32_t)n;
        const uint64_t pad = ~low | (n ? ((uint64_t)(uint32_t)val[0] & low) : 0);
        for (size_t i = 0; i < CH_PAD; i++) q[n + i] = pad;
    }
    return 0;
}

static inline int ch_sort_pairs(uint64_t *key, int32_t *val, size_t n, ch_pair *tmp,
                                size_t *count) {
    if (n >= CH_RADIX_MIN) {
        /* tmp (16 n bytes) holds the scratch arrays (12 n bytes) */
        uint64_t *tk = (uint64_t *)tmp;
        return ch_radix_layout(key, val, n, tk, (int32_t *)(tk + n), 0, NULL, 0, NULL);
    }
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
    return 0;
}

/* Growing and shrinking a ring by one owner in one pass (HashRing.add / remove): the runs of
 * the old ring between the changed positions are copied whole, their owners renumbered (an
 * owner inserted at r shifts the old owners >= r up by one; owner r removed shifts those > r
 * down), and, when q is not NULL, their route words written for b owner bits as they go. */
static inline void ch__copy_run(const uint64_t *pa, const int32_t *oa, size_t k, int32_t r,
                                int up, uint64_t low, uint64_t *po, int32_t *oo, uint64_t *q) {
    if (k == 0) return;
    memcpy(po, pa, k * sizeof(uint64_t));
    if (up) {
        for (size_t t = 0; t < k; t++) oo[t] = oa[t] + (int32_t)(oa[t] >= r);
    } else {
        for (size_t t = 0; t < k; t++) oo[t] = oa[t] - (int32_t)(oa[t] > r);
    }
    if (q != NULL)
        for (size_t t = 0; t < k; t++) q[t] = (pa[t] & ~low) | ((uint64_t)(uint32_t)oo[t] & low);
}

/* The padding of a ring of o positions written by a merge, words [from, to): positions
 * UINT64_MAX, and with q the route pad (all ones above b, owner oo[0]). */
static inline void ch__pad_end(uint64_t *po, const int32_t *oo, uint64_t *q, size_t o,
                               size_t to, uint64_t low) {
    for (size_t t = o; t < to; t++) po[t] = ~(uint64_t)0;
    if (q) {
        const uint64_t pad = ~low | (o ? ((uint64_t)(uint32_t)oo[0] & low) : 0);
        for (size_t t = o; t < to; t++) q[t] = pad;
    }
}

/* The ring (pa, oa, na; prefix index idx of k bits) with owner r's sorted positions
 * pb[0 .. nb) inserted: positions po (na + nb, then CH_PAD UINT64_MAX), owners oo, and with q
 * the route words (+ CH_PAD pad) for b owner bits.  Ties at a position: the old owners below
 * r come first (renumbered, they stay below r), as a sort by (position, owner) of the whole
 * ring puts them.  Where a new position goes is found from the old prefix index (a few
 * compares; pa is padded with UINT64_MAX, so the scan stops by itself). */
static inline void ch_ring_insert(const uint64_t *pa, const int32_t *oa, size_t na,
                                  const uint32_t *idx, int k, const uint64_t *pb, size_t nb,
                                  int32_t r, int b, uint64_t *po, int32_t *oo, uint64_t *q) {
    const uint64_t low = ((uint64_t)1 << b) - 1;
    const int shift = 64 - k;
    size_t i = 0, o = 0;
    for (size_t j = 0; j < nb; j++) {
        const uint64_t x = pb[j];
        size_t e = na ? idx[x >> shift] : 0;
        if (e < i) e = i;
        while (e < na && pa[e] < x) e++;
        while (e < na && pa[e] == x && oa[e] < r) e++;
        ch__copy_run(pa + i, oa + i, e - i, r, 1, low, po + o, oo + o, q ? q + o : NULL);
        o += e - i;
        i = e;
        po[o] = x;
        oo[o] = r;
        if (q) q[o] = (x & ~low) | ((uint64_t)(uint32_t)r & low);
        o++;
    }
    ch__copy_run(pa + i, oa + i, na - i, r, 1, low, po + o, oo + o, q ? q + o : NULL);
    o += na - i;
    ch__pad_end(po, oo, q, o, o + CH_PAD, low);
}

/* The ring (pa, oa, na; prefix index idx of k bits) with the pairs (pb, ob)[0 .. nb), sorted
 * by (position, owner), merged in: a deferred batch of added nodes in one pass (RingRouter
 * coalesces add() calls until the next read).  The old owners are renumbered through remap
 * (old index -> new index, increasing, so the old runs stay in (position, owner) order); the
 * new pairs' owners are already final.  Output as ch_ring_insert: positions po (na + nb, then
 * CH_PAD UINT64_MAX), owners oo, and with q the route words (+ CH_PAD pad) for b owner bits.
 * The result is the (position, owner) sort of the whole ring, as a build gives. */
static inline void ch_ring_merge(const uint64_t *pa, const int32_t *oa, size_t na,
                                 const uint32_t *idx, int k, const int32_t *remap,
                                 const uint64_t *pb, const int32_t *ob, size_t nb, int b,
                                 uint64_t *po, int32_t *oo, uint64_t *q) {
    const uint64_t low = ((uint64_t)1 << b) - 1;
    const int shift = 64 - k;
    size_t i = 0, o = 0;
    for (size_t j = 0; j <= nb; j++) {
        size_t e = na;
        if (j < nb) {
            const uint64_t x = pb[j];
            const int32_t r = ob[j];
            e = na ? idx[x >> shift] : 0;
            if (e < i) e = i;
            while (e < na && pa[e] < x) e++;
            while (e < na && pa[e] == x && remap[oa[e]] < r) e++;
        }
        if (e > i) {
            memcpy(po + o, pa + i, (e - i) * sizeof(uint64_t));
            for (size_t t = i; t < e; t++, o++) {
                const int32_t w = remap[oa[t]];
                oo[o] = w;
                if (q) q[o] = (pa[t] & ~low) | ((uint64_t)(uint32_t)w & low);
            }
        }
        i = e;
        if (j < nb) {
            po[o] = pb[j];
            oo[o] = ob[j];
            if (q) q[o] = (pb[j] & ~low) | ((uint64_t)(uint32_t)ob[j] & low);
            o++;
        }
    }
    ch__pad_end(po, oo, q, o, o + CH_PAD, low);
}

/* Bit t of the result: a[t] == r, for t < m <= 64. */
static inline uint64_t ch__eq_mask64(const int32_t *a, size_t m, int32_t r) {
    uint64_t mask = 0;
    size_t t = 0;
#if defined(__SSE2__) || defined(_M_X64)
    const __m128i rv = _mm_set1_epi32(r);
    for (; t + 4 <= m; t += 4) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(a + t));
        mask |= (uint64_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, rv))) << t;
    }
#endif
    for (; t < m; t++) mask |= (uint64_t)(a[t] == r) << t;
    return mask;
}

#if defined(__GNUC__) || defined(__clang__)
#define CH_CTZ64(x) __builtin_ctzll(x)
#elif defined(_MSC_VER) && defined(_M_X64)
static __forceinline int ch__ctz64(uint64_t x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
#define CH_CTZ64(x) ch__ctz64(x)
#else
static inline int ch__ctz64(uint64_t x) { int i = 0; while (!(x & 1)) { x >>= 1; i++; } return i; }
#define CH_CTZ64(x) ch__ctz64(x)
#endif

/* The ring (pa, oa, n) without owner r: positions po (then CH_PAD UINT64_MAX up to n +
 * CH_PAD), owners oo, with q the route words for b owner bits; the removed positions, in
 * order, into rem.  r's positions are found 64 owners at a time as a bit mask (SSE2 compares
 * where there are), so the runs between them cost a compare per 4 owners and one copy.
 * Returns the number of positions kept. */
static inline size_t ch_ring_remove(const uint64_t *pa, const int32_t *oa, size_t n, int32_t r,
                                    int b, uint64_t *po, int32_t *oo, uint64_t *q,
                                    uint64_t *rem) {
    const uint64_t low = ((uint64_t)1 << b) - 1;
    size_t start = 0, o = 0, nr = 0;
    for (size_t blk = 0; blk < n; blk += 64) {
        uint64_t hit = ch__eq_mask64(oa + blk, n - blk < 64 ? n - blk : 64, r);
        while (hit) {
            const size_t i = blk + (size_t)CH_CTZ64(hit);
            hit &= hit - 1;
            rem[nr++] = pa[i];
            ch__copy_run(pa + start, oa + start, i - start, r, 0, low, po + o, oo + o,
                         q ? q + o : NULL);
            o += i - start;
            start = i + 1;
        }
    }
    ch__copy_run(pa + start, oa + start, n - start, r, 0, low, po + o, oo + o, q ? q + o : NULL);
    o += n - start;
    ch__pad_end(po, oo, q, o, n + CH_PAD, low);
    return o;
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
