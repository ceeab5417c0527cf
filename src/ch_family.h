/* What the modern family's kernels share (JumpBackHash, JumpBackAnchor, FlipHash, PowerCH,
 * BinomialHash, AnchorHash, DxHash; one ch_<algo>.h each): exact bit operations and the batch
 * kernels' block driver.
 *
 *   ch_fam_bsr32(x)    index of the highest set bit of x != 0 (Java's 31 - numberOfLeadingZeros)
 *   ch_fam_bsr64(x)    the same for a uint64_t x != 0 (Rust's ilog2)
 *   ch_fam_parity32(x) popcount(x) & 1: all that hash4j's `r0 >>> (bitCount(x) << 5)` uses of
 *                      the count, since a Java long shift takes its count mod 64
 *   ch_fam_sel32/64    c ? a : b without a branch; ch_fam_blocks, the batch kernels' driver
 * AnchorHash's and DxHash's CRC-32C is the core's (ch_crc.h).
 */
#ifndef CH_FAMILY_H
#define CH_FAMILY_H

#include <stddef.h>
#include <stdint.h>
#include "ch_mix.h"
#include "ch_platform.h"   /* CH_INLINE, CH_PREFETCH_KEEP */
#include "ch_crc.h"   /* CRC-32C (ch_crc32c_u64, _sw, _hw), the core's CRCs in one place */

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

CH_INLINE int ch_fam_bsr64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return 63 ^ __builtin_clzll(x);
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
    unsigned long r;
    _BitScanReverse64(&r, x);
    return (int)r;
#else
    int r = 0;
    while (x >>= 1) r++;
    return r;
#endif
}

CH_INLINE int ch_fam_bsr32(uint32_t x) { return ch_fam_bsr64(x); }

CH_INLINE uint32_t ch_fam_parity32(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_parity(x);
#else
    x ^= x >> 16;
    x ^= x >> 8;
    x ^= x >> 4;
    x ^= x >> 2;
    x ^= x >> 1;
    return x & 1u;
#endif
}

/* The removal-capable kernels (AnchorHash, DxHash, JumpBackAnchor, MementoHash) walk a key
 * through a chain of probes whose length varies from key to key.  Their batches run
 * CH_FAM_LANES keys at a time in lockstep: each pass takes every unfinished key one probe
 * further, drops the finished ones without a branch (the lanes are compacted) and refills the
 * free lanes with the next keys, so the next probe's array row is prefetched a whole pass
 * before it is read and one key's unpredictable exit costs no pipeline flush. */
#define CH_FAM_LANES 64

/* The lockstep walk of JumpBackAnchor and MementoHash, whose keys follow a chain of table
 * rows: a lane holds a key's state s (64 bits), its bucket b (the row ROW(b) prefetched a pass
 * earlier), the bound v it was drawn under (INT32_MAX before the first draw) and the key's
 * index.  A pass takes every lane one read further with STEP(b, v, &nv, &live, &draw), which
 * returns the next bucket and its bound nv, live = 0 when the key is done and draw = 1 when a
 * bucket is to be drawn under nv; the draws, DRAW(&s, b, nv), run in a second pass over the
 * list of the lanes that draw.  Finished lanes are dropped without a branch (the lanes are
 * compacted) and refilled from the next keys with INIT(t, &s) (key t's state and first
 * bucket).  out[t] holds key t's current bucket throughout and its last on exit.  INIT, STEP,
 * DRAW and ROW are names of the caller's function-like macros (over its own tables). */
#define CH_FAM_LANE_WALK(m, out, INIT, STEP, DRAW, ROW)                                        \
    do {                                                                                      \
        uint64_t ls_[CH_FAM_LANES];                                                           \
        int32_t lb_[CH_FAM_LANES], lv_[CH_FAM_LANES];                                         \
        size_t id_[CH_FAM_LANES];                                                             \
        uint8_t dl_[CH_FAM_LANES];                                                            \
        size_t next_ = 0, na_ = 0, t_, nw_, nd_, k_;                                          \
        for (;;) {                                                                            \
            for (; na_ < CH_FAM_LANES && next_ < (m); next_++) {                              \
                uint64_t s_;                                                                  \
                int32_t b_ = INIT(next_, &s_);                                                \
                CH_PREFETCH_KEEP(ROW(b_));                                                    \
                ls_[na_] = s_;                                                                \
                lb_[na_] = b_;                                                                \
                lv_[na_] = INT32_MAX;                                                         \
                id_[na_] = next_;                                                             \
                na_++;                                                                        \
            }                                                                                 \
            if (na_ == 0) break;                                                              \
            for (t_ = 0, nw_ = 0, nd_ = 0; t_ < na_; t_++) {                                  \
                int32_t nv_;                                                                  \
                int live_, draw_;                                                             \
                int32_t nb_ = STEP(lb_[t_], lv_[t_], &nv_, &live_, &draw_);                   \
                CH_PREFETCH_KEEP(ROW(nb_));                                                   \
                (out)[id_[t_]] = nb_;                                                         \
                ls_[nw_] = ls_[t_];                                                           \
                lb_[nw_] = nb_;                                                               \
                lv_[nw_] = nv_;                                                               \
                id_[nw_] = id_[t_];                                                           \
                dl_[nd_] = (uint8_t)nw_;                                                      \
                nd_ += (size_t)draw_;                                                         \
                nw_ += (size_t)live_;                                                         \
            }                                                                                 \
            for (k_ = 0; k_ < nd_; k_++) {                                                    \
                size_t l_ = dl_[k_];                                                          \
                int32_t d_ = DRAW(&ls_[l_], lb_[l_], lv_[l_]);                                \
                CH_PREFETCH_KEEP(ROW(d_));                                                    \
                (out)[id_[l_]] = d_;                                                          \
                lb_[l_] = d_;                                                                 \
            }                                                                                 \
            na_ = nw_;                                                                        \
        }                                                                                     \
    } while (0)

/* JumpBackAnchor's and MementoHash's lanes win where their arrays are out of L2 (the reads are
 * cache misses that the prefetches overlap); below this many bytes of state the scalar loop is
 * faster here (measured on the project's 2-vCPU AMD EPYC: 80 KB and 40 KB arrays scalar, 400
 * KB and up lanes). */
#define CH_FAM_LANES_MIN_BYTES (256u * 1024u)

/* x % d for 32-bit x and d >= 1 given M = ch_fam_fastmod_m(d) (Lemire, Kaser & Kurz, "Faster
 * remainder by direct computation", 2019: exact for every 32-bit x and d). */
CH_INLINE uint64_t ch_fam_fastmod_m(uint32_t d) { return ~(uint64_t)0 / d + 1; }

CH_INLINE uint32_t ch_fam_fastmod(uint32_t x, uint64_t M, uint32_t d) {
    return (uint32_t)ch_mulhi(M * x, d);
}

/* c ? a : b without a branch (c is 0 or 1): compilers turn chains of ?: back into jumps, which
 * is the very cost the batch kernels' second passes avoid. */
CH_INLINE uint32_t ch_fam_sel32(uint32_t c, uint32_t a, uint32_t b) {
    return b ^ ((a ^ b) & (0u - c));
}

CH_INLINE uint64_t ch_fam_sel64(uint64_t c, uint64_t a, uint64_t b) {
    return b ^ ((a ^ b) & ((uint64_t)0 - c));
}

/* The batch kernels work in blocks of CH_FAM_BLOCK keys (ch_fam_blocks): a first pass computes
 * every key's common case without a branch and lists the keys whose answer it is not (an
 * answer >= n); a second pass takes the listed keys one branch-free step further (its answer,
 * or CH_FAM_OPEN); the full function finishes the rest.  The branch on "is this the common
 * case" is what costs otherwise: at n just above a power of two it goes either way for half the
 * keys.  The callbacks are always_inline and constant at every call, so each kernel compiles
 * to three plain loops. */
#define CH_FAM_BLOCK 256
#define CH_FAM_OPEN 0xFFFFFFFFu

typedef uint32_t (*ch_fam_step)(uint64_t key, const void *ctx);
typedef int32_t (*ch_fam_full)(uint64_t key, const void *ctx);

CH_INLINE void ch_fam_blocks(const uint64_t *h, size_t m, uint32_t n, int32_t *out,
                                 const void *ctx, ch_fam_step first, ch_fam_step second,
                                 ch_fam_full full) {
    size_t base, j, k, e, ns, nw;
    uint16_t slow[CH_FAM_BLOCK];
    for (base = 0; base < m; base += CH_FAM_BLOCK) {
        e = m - base < CH_FAM_BLOCK ? m - base : CH_FAM_BLOCK;
        ns = 0;
        for (j = 0; j < e; j++) {
            uint32_t b = first(h[base + j], ctx);
            out[base + j] = (int32_t)b;
            slow[ns] = (uint16_t)j;
            ns += b >= n;
        }
        nw = 0;
        for (k = 0; k < ns; k++) {
            uint32_t b = second(h[base + slow[k]], ctx);
            out[base + slow[k]] = (int32_t)b;
            slow[nw] = slow[k];
            nw += b == CH_FAM_OPEN;
        }
        for (k = 0; k < nw; k++) out[base + slow[k]] = full(h[base + slow[k]], ctx);
    }
}

#endif
