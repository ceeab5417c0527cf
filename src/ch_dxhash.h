/* DxHash (Dong, Wang et al., "DxHash: A Memory-Saving Consistent Hashing Algorithm", 2023,
 * arXiv:2107.07930), bit for bit as ChaosD/DxHash @ acadb66fb953 DxHash(n_total, n_working):
 * getNodeID(key, &probes), updateRemoval(b), updateAddition().  One bit per slot (1: working);
 * keys are uint32_t; crc(k, s) is ch_crc32c_u64 (ch_family.h), the reference's crc32q.
 *
 *   probe(key, want):  key2 = key * 421757 + 1 (mod 2^32);  bs = crc(key, key2)
 *                      i = 1;  b = bs % size
 *                      while bit(b) != want:
 *                          bs = crc(bs, key2);  b = bs % size;  i += 1
 *                          if i >= 4 * size (mod 2^32): the reference gives up (see below)
 *   bucket(key)        = probe(key, 1)                              (getNodeID)
 *   remove(b)          = clear bit b                               (updateRemoval)
 *   add()              = if every slot works: grow size to the least power of two above the
 *                        working count (new slots free; every key is re-placed);
 *                        b = probe(1228, 0); set bit b                (updateAddition)
 *
 * Where the reference gives up, getNodeID answers -1 ("no node": a key of a nearly empty set
 * gets it with probability about e^-(4 working), e.g. 1.8% with one node left), and
 * updateAddition writes slot 0xFFFFFFFF (past its bit vector: a crash or a corrupted heap; it
 * happens when free slots are few, e.g. about 1 in 55 sets with one free slot).  Here the
 * probe then goes on deterministically: the first slot of the wanted kind at or after the
 * last slot probed, circularly.  That keeps every answer valid and keeps the mapping
 * consistent (removing a slot moves only its keys; adding one moves keys only to it), and
 * everywhere the reference answers, the answer is the reference's.
 */
#ifndef CH_DXHASH_H
#define CH_DXHASH_H

#include <stddef.h>
#include <stdint.h>
#include "ch_family.h"

#define CH_DX_ADD_KEY 1228u

CH_INLINE uint32_t ch_dx_bit(const uint64_t *bits, uint32_t b) {
    return (uint32_t)(bits[b >> 6] >> (b & 63)) & 1u;
}

/* The first slot at or after b (circularly) whose bit is want; one exists. */
static inline uint32_t ch_dx_scan(const uint64_t *bits, uint32_t size, uint32_t b,
                                  uint32_t want) {
    uint32_t nw = (size + 63) >> 6, w = b >> 6, k;
    uint64_t flip = want ? 0 : ~(uint64_t)0;
    uint64_t x = (bits[w] ^ flip) & (~(uint64_t)0 << (b & 63));
    for (k = 0; k <= nw; k++) {
        if (w == nw - 1 && (size & 63)) x &= ((uint64_t)1 << (size & 63)) - 1;
        if (x) {
#if defined(__GNUC__) || defined(__clang__)
            return (w << 6) + (uint32_t)__builtin_ctzll(x);
#else
            uint32_t t = 0;
            while (!(x & 1)) { x >>= 1; t++; }
            return (w << 6) + t;
#endif
        }
        w = w + 1 == nw ? 0 : w + 1;
        x = bits[w] ^ flip;
    }
    return 0; /* not reached: the caller guarantees a slot of the wanted kind */
}

/* probe(key, want) as above, with probes (the reference's numHash, counted until it gives up)
 * in *probes when probes is not NULL.  POW2: size is a power of two (bs % size == bs & mask);
 * else the remainder is Lemire's (ch_fam_fastmod): the reference's value without a division,
 * which was most of a probe's cost.  A lockstep batch (all keys of a block one probe at a time)
 * measured slower here than this loop: a probe's only dependency is the CRC chain, so the
 * branch predictor's "not found yet" (right 9 times in 10 at 90% removed) already overlaps
 * the probes of one key.  slot_node is applied in a pass of its own: branch-free, its reads
 * (4 bytes a slot: out of cache at 10^6 slots) overlap, where inside the probe loop each
 * waited behind the key's mispredicted exit (measured 2.2x at 10^5 of 10^6 slots working). */
#define CH_DX_KERNEL(SUFFIX, CRC, POW2)                                                       \
    CH_INLINE uint32_t ch_dx_probe_##SUFFIX(const uint64_t *bits, uint32_t size,              \
                                                uint32_t key, uint32_t want,                 \
                                                uint32_t *probes) {                          \
        const uint64_t M = ch_fam_fastmod_m(size);                                            \
        uint32_t key2 = key * 421757u + 1u;                                                   \
        uint32_t bs = CRC(key, key2);                                                         \
        uint32_t b = POW2 ? bs & (size - 1) : ch_fam_fastmod(bs, M, size);                    \
        uint32_t i = 1, limit = 4u * size;                                                    \
        while (ch_dx_bit(bits, b) != want) {                                                  \
            bs = CRC(bs, key2);                                                               \
            b = POW2 ? bs & (size - 1) : ch_fam_fastmod(bs, M, size);                         \
            i += 1;                                                                           \
            if (i >= limit) {                                                                 \
                b = ch_dx_scan(bits, size, b, want);                                          \
                break;                                                                        \
            }                                                                                 \
        }                                                                                     \
        if (probes) *probes = i;                                                              \
        return b;                                                                             \
    }                                                                                         \
    static void ch_dx_batch_##SUFFIX(const uint64_t *bits, uint32_t size, const uint64_t *k,  \
                                     size_t m, const int32_t *slot_node, int32_t *out) {      \
        size_t i;                                                                             \
        for (i = 0; i < m; i++)                                                               \
            out[i] = (int32_t)ch_dx_probe_##SUFFIX(bits, size, (uint32_t)k[i], 1u, NULL);     \
        if (slot_node)                                                                        \
            for (i = 0; i < m; i++) out[i] = slot_node[out[i]];                               \
    }

CH_DX_KERNEL(sw, ch_crc32c_u64_sw, 0)
CH_DX_KERNEL(sw2, ch_crc32c_u64_sw, 1)
#if CH_CRC32C_HAVE_HW
CH_DX_KERNEL(hw, ch_crc32c_u64_hw, 0)
CH_DX_KERNEL(hw2, ch_crc32c_u64_hw, 1)
#endif

CH_INLINE int ch_dx_pow2(uint32_t size) { return (size & (size - 1)) == 0; }

/* probe(key, want); a slot of the wanted kind exists. */
static inline uint32_t ch_dx_probe(const uint64_t *bits, uint32_t size, uint32_t key,
                                   uint32_t want, uint32_t *probes) {
    int p2 = ch_dx_pow2(size);
#if CH_CRC32C_HAVE_HW
    if (ch_crc32c_hw)
        return p2 ? ch_dx_probe_hw2(bits, size, key, want, probes)
                  : ch_dx_probe_hw(bits, size, key, want, probes);
#endif
    return p2 ? ch_dx_probe_sw2(bits, size, key, want, probes)
              : ch_dx_probe_sw(bits, size, key, want, probes);
}

/* out[i] = slot_node[bucket((uint32_t)k[i])] (slot_node NULL: the slot); one slot works. */
static inline void ch_dx_batch(const uint64_t *bits, uint32_t size, const uint64_t *k, size_t m,
                               const int32_t *slot_node, int32_t *out) {
    int p2 = ch_dx_pow2(size);
#if CH_CRC32C_HAVE_HW
    if (ch_crc32c_hw) {
        if (p2) ch_dx_batch_hw2(bits, size, k, m, slot_node, out);
        else ch_dx_batch_hw(bits, size, k, m, slot_node, out);
        return;
    }
#endif
    if (p2) ch_dx_batch_sw2(bits, size, k, m, slot_node, out);
    else ch_dx_batch_sw(bits, size, k, m, slot_node, out);
}

/* Whether the reference's own probe (no fallback) finds a slot of the wanted kind: 1, and the
 * slot in *b; 0 where it answers -1 (getNodeID) or writes slot 0xFFFFFFFF (updateAddition). */
static inline int ch_dx_reference_finds(const uint64_t *bits, uint32_t size, uint32_t key,
                                        uint32_t want, uint32_t *b) {
    uint32_t key2 = key * 421757u + 1u;
    uint32_t bs = ch_crc32c_u64(key, key2);
    uint32_t s = bs % size, i = 1, limit = 4u * size;
    while (ch_dx_bit(bits, s) != want) {
        bs = ch_crc32c_u64(bs, key2);
        s = bs % size;
        i += 1;
        if (i >= limit) return 0;
    }
    *b = s;
    return 1;
}

#endif
