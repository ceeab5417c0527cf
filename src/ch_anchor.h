/* AnchorHash (Mendelson, Vargaftik, Barabash, Lorenz, Keslassy & Orda, "AnchorHash: A Scalable
 * Consistent Hash", IEEE/ACM ToN 29(2), 2021), bit for bit as anchorhash/cpp-anchorhash
 * @ 3ef98f05cbfe AnchorHashQre(a, w): ComputeBucket(key1, key2), UpdateRemoval(b),
 * UpdateNewBucket().  All arithmetic uint32_t except the keys (uint64_t); crc(k, s) is
 * ch_crc32c_u64 (ch_family.h), the reference's crc32q.
 *
 * State over the anchor A = {0 .. a-1}: A[b] (0 for a working bucket, else the number of
 * working buckets its removal left), K[b] (whom b's removal handed its keys: b while working),
 * the working list W[0 .. N) with positions L, and the stack R of removed buckets.  Made by
 * treating a - 1, a - 2, .., w as removed in that order (A[b] = b, R = [a-1 .. w], top w).
 *
 *   bucket(key1, key2):  bs = crc(key1, key2);  b = bs % a
 *                        while A[b] != 0:                        (b is removed)
 *                            bs = crc(key1 - bs, key2 + bs);  h = bs % A[b]
 *                            if A[h] == 0 or A[h] < A[b]:  b = h (h worked when b left)
 *                            else:  b = translate(b, h)
 *   translate(i, j):     i == j: K[i];  else b = j; while A[i] <= A[b]: b = K[b]; b
 *   remove(b):           push b;  N -= 1;  W[L[b]] = W[N];  L[W[N]] = L[b];  K[b] = W[N];
 *                        A[b] = N
 *   add():               b = pop;  L[W[N]] = N;  W[L[b]] = b;  N += 1;  A[b] = 0;  K[b] = b
 *
 * add() undoes the last remove() exactly, so the state is a function of (a, R) alone.  The
 * reference never terminates for w = 0 (its loop `for (i = a - 1; i >= w; --i)` over an
 * unsigned i), and with every bucket removed its last one has A = 0 and answers lookups;
 * here w = 0 is a valid start (add() grows from it) and a lookup with nothing working raises.
 */
#ifndef CH_ANCHOR_H
#define CH_ANCHOR_H

#include <stddef.h>
#include <stdint.h>
#include "ch_family.h"

#define CH_ANCHOR_KERNEL(SUFFIX, CRC)                                                         \
    CH_INLINE uint32_t ch_anchor_bucket_##SUFFIX(const uint32_t *A, const uint32_t *K,        \
                                                     uint32_t a, uint64_t k1, uint64_t k2) {  \
        uint32_t bs = CRC(k1, k2);                                                            \
        uint32_t b = bs % a;                                                                  \
        while (A[b] != 0) {                                                                   \
            bs = CRC(k1 - bs, k2 + bs);                                                       \
            uint32_t h = bs % A[b];                                                           \
            if (A[h] == 0 || A[h] < A[b]) {                                                   \
                b = h;                                                                        \
            } else if (b == h) {                                                              \
                b = K[b];                                                                     \
            } else {                                                                          \
                uint32_t t = h;                                                               \
                while (A[b] <= A[t]) t = K[t];                                                \
                b = t;                                                                        \
            }                                                                                 \
        }                                                                                     \
        return b;                                                                             \
    }

CH_ANCHOR_KERNEL(sw, ch_crc32c_u64_sw)
#if CH_CRC32C_HAVE_HW
CH_ANCHOR_KERNEL(hw, ch_crc32c_u64_hw)
#endif

CH_INLINE uint32_t ch__anchor_crc(int hw, uint64_t k, uint64_t s) {
#if CH_CRC32C_HAVE_HW
    if (hw) return ch_crc32c_u64_hw(k, s);
#endif
    (void)hw;
    return ch_crc32c_u64_sw(k, s);
}

/* The batch, the same answers as ch_anchor_bucket key by key.  A first pass over a block of
 * CH_FAM_BLOCK keys takes every key's first bucket without a branch (the answer wherever it
 * works) and queues the others; those go through lockstep lanes (CH_FAM_LANES; ch_family.h)
 * that take the scalar loop one array read at a time.  A lane holds the bucket b a key stands
 * on with ab = A[b], and x, the bucket it reads next (rows A[x] and K[x] prefetched a pass
 * earlier).  A pass reads them and settles: A[x] = 0 or A[x] < ab, the key moves to x
 * (done if x works, else it draws again under A[x]); else x == b, the reference's K[b]
 * (which worked when b was removed, so the next read settles on it; K[b] = b draws again);
 * else x = K[x] (the translation's walk).  The lanes that draw get their next x in a second
 * pass over a list of them; finished lanes are dropped without a branch and queued keys fill
 * the free ones.  hw is constant at each call. */
CH_INLINE void ch__anchor_lanes(const uint32_t *A, const uint32_t *K, uint32_t a,
                                    const uint64_t *k1, const uint64_t *k2, size_t m,
                                    int32_t *out, int hw) {
    uint64_t x1[CH_FAM_LANES], x2[CH_FAM_LANES];
    uint32_t bs[CH_FAM_LANES], b[CH_FAM_LANES], x[CH_FAM_LANES], ab[CH_FAM_LANES];
    uint8_t dl[CH_FAM_LANES];
    size_t id[CH_FAM_LANES], q[CH_FAM_BLOCK];
    uint32_t qs[CH_FAM_BLOCK];
    const uint64_t M = ch_fam_fastmod_m(a);
    size_t base = 0, nq = 0, iq = 0, na = 0, t, nw, nd, k;
    for (;;) {
        if (iq == nq && base < m) {
            size_t e = m - base < CH_FAM_BLOCK ? m - base : CH_FAM_BLOCK, j;
            for (j = 0, nq = 0; j < e; j++) {
                uint32_t s = ch__anchor_crc(hw, k1[base + j], k2 ? k2[base + j] : 0);
                uint32_t d = ch_fam_fastmod(s, M, a);
                out[base + j] = (int32_t)d;
                q[nq] = base + j;
                qs[nq] = s;
                nq += A[d] != 0;
            }
            iq = 0;
            base += e;
        }
        for (; na < CH_FAM_LANES && iq < nq; na++, iq++) {
            size_t i = q[iq];
            uint64_t u = k1[i], v = k2 ? k2[i] : 0;
            uint32_t s0 = qs[iq], d0 = (uint32_t)out[i], A0 = A[d0];
            uint32_t s = ch__anchor_crc(hw, u - s0, v + s0), d = s % A0;
            CH_PREFETCH_KEEP(&A[d]);
            CH_PREFETCH_KEEP(&K[d]);
            x1[na] = u;
            x2[na] = v;
            bs[na] = s;
            x[na] = d;
            b[na] = d0;
            ab[na] = A0;
            id[na] = i;
        }
        if (na == 0) {
            if (base < m) continue;
            return;
        }
        for (t = 0, nw = 0, nd = 0; t < na; t++) {
            uint32_t d = x[t], Ad = A[d], Kd = K[d], Ab = ab[t], bb = b[t];
            uint32_t settle = (Ad == 0) | (Ad < Ab);
            uint32_t nb = ch_fam_sel32(settle, d, bb), nab = ch_fam_sel32(settle, Ad, Ab);
            uint32_t redraw = (settle & (Ad != 0)) | (!settle & (d == bb) & (Kd == d));
            CH_PREFETCH_KEEP(&A[Kd]);
            CH_PREFETCH_KEEP(&K[Kd]);
            out[id[t]] = (int32_t)nb;
            x1[nw] = x1[t];
            x2[nw] = x2[t];
            bs[nw] = bs[t];
            b[nw] = nb;
            ab[nw] = nab;
            x[nw] = Kd;
            id[nw] = id[t];
            dl[nd] = (uint8_t)nw;
            nd += redraw;
            nw += nab != 0;
        }
        for (k = 0; k < nd; k++) {
            uint32_t l = dl[k], s = ch__anchor_crc(hw, x1[l] - bs[l], x2[l] + bs[l]);
            uint32_t d = s % ab[l];
            CH_PREFETCH_KEEP(&A[d]);
            CH_PREFETCH_KEEP(&K[d]);
            bs[l] = s;
            x[l] = d;
        }
        na = nw;
    }
}

static void ch_anchor_batch_sw(const uint32_t *A, const uint32_t *K, uint32_t a,
                               const uint64_t *k1, const uint64_t *k2, size_t m, int32_t *out) {
    ch__anchor_lanes(A, K, a, k1, k2, m, out, 0);
}

#if CH_CRC32C_HAVE_HW
static void ch_anchor_batch_hw(const uint32_t *A, const uint32_t *K, uint32_t a,
                               const uint64_t *k1, const uint64_t *k2, size_t m, int32_t *out) {
    ch__anchor_lanes(A, K, a, k1, k2, m, out, 1);
}
#endif

/* The bucket of (key1, key2); at least one bucket working. */
static inline uint32_t ch_anchor_bucket(const uint32_t *A, const uint32_t *K, uint32_t a,
                                        uint64_t k1, uint64_t k2) {
#if CH_CRC32C_HAVE_HW
    if (ch_crc32c_hw) return ch_anchor_bucket_hw(A, K, a, k1, k2);
#endif
    return ch_anchor_bucket_sw(A, K, a, k1, k2);
}

/* out[i] = slot_node[bucket(k1[i], k2[i])] (k2 NULL: 0 for every key; slot_node NULL: the
 * bucket itself). */
static inline void ch_anchor_batch(const uint32_t *A, const uint32_t *K, uint32_t a,
                                   const uint64_t *k1, const uint64_t *k2, size_t m,
                                   const int32_t *slot_node, int32_t *out) {
    size_t i;
#if CH_CRC32C_HAVE_HW
    if (ch_crc32c_hw)
        ch_anchor_batch_hw(A, K, a, k1, k2, m, out);
    else
#endif
        ch_anchor_batch_sw(A, K, a, k1, k2, m, out);
    if (slot_node)
        for (i = 0; i < m; i++) out[i] = slot_node[out[i]];
}

/* The mutable state: A, K, W, L (a uint32_t each), the stack R (a entries) of depth *r and
 * the working count *n.  init: a - 1 .. w removed in that order. */
static inline void ch_anchor_init(uint32_t *A, uint32_t *K, uint32_t *W, uint32_t *L,
                                  uint32_t *R, uint32_t a, uint32_t w, uint32_t *r,
                                  uint32_t *n) {
    uint32_t i;
    for (i = 0; i < a; i++) {
        A[i] = 0;
        K[i] = W[i] = L[i] = i;
    }
    *r = 0;
    for (i = a; i > w; i--) {
        A[i - 1] = i - 1;
        R[(*r)++] = i - 1;
    }
    *n = w;
}

/* remove(b): b working (the caller checks). */
static inline void ch_anchor_remove(uint32_t *A, uint32_t *K, uint32_t *W, uint32_t *L,
                                    uint32_t *R, uint32_t b, uint32_t *r, uint32_t *n) {
    R[(*r)++] = b;
    uint32_t N = --(*n);
    W[L[b]] = W[N];
    L[W[N]] = L[b];
    K[b] = W[N];
    A[b] = N;
}

/* add(): the stack not empty (the caller checks); returns the restored bucket. */
static inline uint32_t ch_anchor_add(uint32_t *A, uint32_t *K, uint32_t *W, uint32_t *L,
                                     uint32_t *R, uint32_t *r, uint32_t *n) {
    uint32_t b = R[--(*r)];
    uint32_t N = *n;
    L[W[N]] = N;
    W[L[b]] = b;
    *n = N + 1;
    A[b] = 0;
    K[b] = b;
    return b;
}

#endif
