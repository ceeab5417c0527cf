/* What the modern family's kernels share (JumpBackHash, JumpBackAnchor, FlipHash, PowerCH,
 * BinomialHash, AnchorHash, DxHash; one ch_<algo>.h each): exact bit operations, and CRC-32C
 * as AnchorHash's and DxHash's references compute it.
 *
 *   ch_fam_bsr32(x)    index of the highest set bit of x != 0 (Java's 31 - numberOfLeadingZeros)
 *   ch_fam_bsr64(x)    the same for a uint64_t x != 0 (Rust's ilog2)
 *   ch_fam_parity32(x) popcount(x) & 1: all that hash4j's `r0 >>> (bitCount(x) << 5)` uses of
 *                      the count, since a Java long shift takes its count mod 64
 *   ch_crc32c_u64(key, seed)
 *                      what SSE4.2's `crc32q key, seed` leaves in its destination: the CRC-32C
 *                      register (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78)
 *                      started at the low 32 bits of seed, advanced over the 8 little-endian
 *                      bytes of key, with no pre- or post-inversion.  Both references call it
 *                      through inline assembly, so they run only on x86-64; here it is
 *                      slicing-by-8 over tables filled once by ch_crc32c_init() (the module
 *                      calls it at import), the same bits on every platform, and the
 *                      instruction itself where the CPU has it (ch_crc32c_hw, chosen once per
 *                      batch; both paths are tested against each other).
 */
#ifndef CH_FAMILY_H
#define CH_FAMILY_H

#include <stddef.h>
#include <stdint.h>
#include "ch_mix.h"

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CH_FAM_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define CH_FAM_INLINE static __forceinline
#else
#define CH_FAM_INLINE static inline
#endif

CH_FAM_INLINE int ch_fam_bsr64(uint64_t x) {
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

CH_FAM_INLINE int ch_fam_bsr32(uint32_t x) { return ch_fam_bsr64(x); }

CH_FAM_INLINE uint32_t ch_fam_parity32(uint32_t x) {
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

/* c ? a : b without a branch (c is 0 or 1): compilers turn chains of ?: back into jumps, which
 * is the very cost the batch kernels' second passes avoid. */
CH_FAM_INLINE uint32_t ch_fam_sel32(uint32_t c, uint32_t a, uint32_t b) {
    return b ^ ((a ^ b) & (0u - c));
}

CH_FAM_INLINE uint64_t ch_fam_sel64(uint64_t c, uint64_t a, uint64_t b) {
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

CH_FAM_INLINE void ch_fam_blocks(const uint64_t *h, size_t m, uint32_t n, int32_t *out,
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

/* -- CRC-32C ---------------------------------------------------------------------------- */

#define CH_CRC32C_POLY 0x82F63B78u

static uint32_t ch__crc32c_tab[8][256];
static int ch_crc32c_hw = 0;   /* 1: the CPU has SSE4.2's crc32 (x86-64 with GCC or Clang) */

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define CH_CRC32C_HAVE_HW 1
/* The instruction through inline assembly (as the references write it), so it inlines into
 * any kernel without a target attribute; it runs only when ch_crc32c_hw says the CPU has it. */
CH_FAM_INLINE uint32_t ch_crc32c_u64_hw(uint64_t key, uint64_t seed) {
    uint64_t c = (uint32_t)seed;
    __asm__("crc32q %1, %0" : "+r"(c) : "rm"(key));
    return (uint32_t)c;
}
#else
#define CH_CRC32C_HAVE_HW 0
#endif

static inline void ch_crc32c_init(void) {
    uint32_t i, k, c;
    for (i = 0; i < 256; i++) {
        c = i;
        for (k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ CH_CRC32C_POLY : c >> 1;
        ch__crc32c_tab[0][i] = c;
    }
    for (i = 0; i < 256; i++) {
        c = ch__crc32c_tab[0][i];
        for (k = 1; k < 8; k++) {
            c = (c >> 8) ^ ch__crc32c_tab[0][c & 0xFFu];
            ch__crc32c_tab[k][i] = c;
        }
    }
#if CH_CRC32C_HAVE_HW
    __builtin_cpu_init();
    ch_crc32c_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
}

/* Slicing-by-8: the register XORed into the key's low 4 bytes, then one table a byte. */
CH_FAM_INLINE uint32_t ch_crc32c_u64_sw(uint64_t key, uint64_t seed) {
    uint64_t x = key ^ (uint64_t)(uint32_t)seed;
    return ch__crc32c_tab[7][x & 0xFF] ^ ch__crc32c_tab[6][(x >> 8) & 0xFF] ^
           ch__crc32c_tab[5][(x >> 16) & 0xFF] ^ ch__crc32c_tab[4][(x >> 24) & 0xFF] ^
           ch__crc32c_tab[3][(x >> 32) & 0xFF] ^ ch__crc32c_tab[2][(x >> 40) & 0xFF] ^
           ch__crc32c_tab[1][(x >> 48) & 0xFF] ^ ch__crc32c_tab[0][x >> 56];
}

#if !CH_CRC32C_HAVE_HW
#define ch_crc32c_u64_hw ch_crc32c_u64_sw
#endif

static inline uint32_t ch_crc32c_u64(uint64_t key, uint64_t seed) {
    return ch_crc32c_hw ? ch_crc32c_u64_hw(key, seed) : ch_crc32c_u64_sw(key, seed);
}

#endif
