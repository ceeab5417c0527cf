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
    CH_FAM_INLINE uint32_t ch_anchor_bucket_##SUFFIX(const uint32_t *A, const uint32_t *K,    \
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
    }                                                                                         \
    static void ch_anchor_batch_##SUFFIX(const uint32_t *A, const uint32_t *K, uint32_t a,    \
                                         const uint64_t *k1, const uint64_t *k2, size_t m,    \
                                         const int32_t *slot_node, int32_t *out) {            \
        size_t i;                                                                             \
        for (i = 0; i < m; i++) {                                                             \
            uint32_t b = ch_anchor_bucket_##SUFFIX(A, K, a, k1[i], k2 ? k2[i] : 0);           \
            out[i] = slot_node ? slot_node[b] : (int32_t)b;                                   \
        }                                                                                     \
    }

CH_ANCHOR_KERNEL(sw, ch_crc32c_u64_sw)
#if CH_CRC32C_HAVE_HW
CH_ANCHOR_KERNEL(hw, ch_crc32c_u64_hw)
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
#if CH_CRC32C_HAVE_HW
    if (ch_crc32c_hw) {
        ch_anchor_batch_hw(A, K, a, k1, k2, m, slot_node, out);
        return;
    }
#endif
    ch_anchor_batch_sw(A, K, a, k1, k2, m, slot_node, out);
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
