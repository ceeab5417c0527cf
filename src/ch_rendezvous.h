/* Rendezvous (highest random weight) hashing, Thaler & Ravishankar 1996.
 *
 * The key is hashed once (h); node i has s_i = H(utf8(name_i), seed), and its draw for the key
 * is x_i = mix64(h ^ s_i) (SplitMix64's finalizer: one multiply-xorshift pass per node).
 *
 *   unweighted (all weights equal):  the node with the largest x_i
 *   weighted:                         the node with the smallest  L_i / w_i, where
 *                                     L_i = -log2((x_i | 1) / 2^64)
 *
 * The weighted rule is the logarithmic method (Schindelhauer & Schomaker; Resch): the winner of
 * -w / ln(u) over uniform u in (0, 1) is node i with probability w_i / sum(w).  To give the same
 * answer on every platform, L is computed in integers (ch_neglog2, Q8.56 fixed point, error
 * below 2^-56), and the only floating-point step is one correctly rounded IEEE multiply,
 * (double)L * (1.0 / w_i); no libm call, no fused operation whose contraction could differ.
 * Ties (equal draws or scores) go to the smaller node index, that is the smaller name.
 *
 * Top-r (replicas): nodes ordered by the same rule, best first.  Both rules map to one uint64
 * order key, ascending: ~x_i unweighted, the bits of the positive double score weighted (the
 * IEEE bit pattern of a positive double is monotone in its value).
 */
#ifndef CH_RENDEZVOUS_H
#define CH_RENDEZVOUS_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "ch_mix.h"
#include "ch_platform.h"
#if defined(_MSC_VER)
#include <intrin.h>
#endif

/* Tables of ch_neglog2 (values in tests/data/make_algo_vectors.py, from their definitions):
 *   CH_NL2_C[k] = ceil(2^39 / (128 + k))                      k = 0 .. 127
 *   CH_NL2_T[k] = round(log2(2^32 / CH_NL2_C[k]) * 2^63)
 *   CH_NL2_P[j] = round(2^63 / ((j + 1) * ln 2))              j = 0 .. 6  */
static const uint64_t CH_NL2_C[128] = {
    0x100000000ULL, 0x0FE03F810ULL, 0x0FC0FC0FDULL, 0x0FA232CF3ULL,
    0x0F83E0F84ULL, 0x0F6603D99ULL, 0x0F4898D60ULL, 0x0F2B9D649ULL,
    0x0F0F0F0F1ULL, 0x0EF2EB720ULL, 0x0ED7303B6ULL, 0x0EBBDB2A6ULL,
    0x0EA0EA0EBULL, 0x0E865AC7CULL, 0x0E6C2B449ULL, 0x0E525982BULL,
    0x0E38E38E4ULL, 0x0E1FC780FULL, 0x0E070381DULL, 0x0DEE95C4DULL,
    0x0DD67C8A7ULL, 0x0DBEB61EFULL, 0x0DA740DA8ULL, 0x0D901B204ULL,
    0x0D79435E6ULL, 0x0D62B80D7ULL, 0x0D4C77B04ULL, 0x0D3680D37ULL,
    0x0D20D20D3ULL, 0x0D0B69FCCULL, 0x0CF6474A9ULL, 0x0CE168A78ULL,
    0x0CCCCCCCDULL, 0x0CB8727C1ULL, 0x0CA4587E7ULL, 0x0C907DA4FULL,
    0x0C7CE0C7DULL, 0x0C6980C6AULL, 0x0C565C87CULL, 0x0C4372F86ULL,
    0x0C30C30C4ULL, 0x0C1E4BBD6ULL, 0x0C0C0C0C1ULL, 0x0BFA02FE9ULL,
    0x0BE82FA0CULL, 0x0BD691048ULL, 0x0BC52640CULL, 0x0BB3EE722ULL,
    0x0BA2E8BA3ULL, 0x0B92143FBULL, 0x0B81702E1ULL, 0x0B70FBB5BULL,
    0x0B60B60B7ULL, 0x0B509E68BULL, 0x0B40B40B5ULL, 0x0B30F6353ULL,
    0x0B21642C9ULL, 0x0B11FD3B9ULL, 0x0B02C0B03ULL, 0x0AF3ADDC7ULL,
    0x0AE4C415DULL, 0x0AD602B59ULL, 0x0AC769185ULL, 0x0AB8F69E3ULL,
    0x0AAAAAAABULL, 0x0A9C84A48ULL, 0x0A8E83F58ULL, 0x0A80A80A9ULL,
    0x0A72F053AULL, 0x0A655C43AULL, 0x0A57EB503ULL, 0x0A4A9CF1EULL,
    0x0A3D70A3EULL, 0x0A3065E40ULL, 0x0A237C32CULL, 0x0A16B312FULL,
    0x0A0A0A0A1ULL, 0x09FD809FEULL, 0x09F1165E8ULL, 0x09E4CAD24ULL,
    0x09D89D89EULL, 0x09CC8E161ULL, 0x09C09C09DULL, 0x09B4C6F9FULL,
    0x09A90E7DAULL, 0x099D722DBULL, 0x0991F1A52ULL, 0x09868C80AULL,
    0x097B425EEULL, 0x097012E03ULL, 0x0964FDA6DULL, 0x095A02569ULL,
    0x094F20950ULL, 0x094458095ULL, 0x0939A85C5ULL, 0x092F11385ULL,
    0x092492493ULL, 0x091A2B3C5ULL, 0x090FDBC0AULL, 0x0905A3864ULL,
    0x08FB823EFULL, 0x08F1779DAULL, 0x08E78356EULL, 0x08DDA5203ULL,
    0x08D3DCB09ULL, 0x08CA29C05ULL, 0x08C08C08DULL, 0x08B70344BULL,
    0x08AD8F2FCULL, 0x08A42F871ULL, 0x089AE408AULL, 0x0891AC73BULL,
    0x088888889ULL, 0x087F78088ULL, 0x08767AB60ULL, 0x086D90545ULL,
    0x0864B8A7EULL, 0x085BF3762ULL, 0x085340854ULL, 0x084A9F9C9ULL,
    0x084210843ULL, 0x083993053ULL, 0x083126E98ULL, 0x0828CBFBFULL,
    0x082082083ULL, 0x081848DA9ULL, 0x081020409ULL, 0x080808081ULL,
};
static const uint64_t CH_NL2_T[128] = {
    0x0000000000000000ULL, 0x016FE50B57DB3DB3ULL, 0x02DCF2D0085804CEULL,
    0x04473474C466A799ULL, 0x05AEB4DD4CAA1A67ULL, 0x07137EAD8E5499F7ULL,
    0x08759C4F74FAAFC5ULL, 0x09D517EDDCBFFAB9ULL, 0x0B31FB7D58FEE78CULL,
    0x0C8C50B6F4EF1E8DULL, 0x0DE421202E70A041ULL, 0x0F3976088EC5A157ULL,
    0x108C588C1C0A5694ULL, 0x11DCD196E786683EULL, 0x132AE9E1C2E687E3ULL,
    0x1476A9F97CC0A6E2ULL, 0x15C01A399F816A0BULL, 0x170742D437C99877ULL,
    0x184C2BCF67EC2B36ULL, 0x198EDD072F17B997ULL, 0x1ACF5E2CEAF2633BULL,
    0x1C0DB6CDB25A05C6ULL, 0x1D49EE4B90C47C05ULL, 0x1E840BE6C9AFF242ULL,
    0x1FBC16B832A88796ULL, 0x20F215B6A9272C2BULL, 0x22260FB5100C9B85ULL,
    0x23580B64B4CA790EULL, 0x24880F5546899E9DULL, 0x25B621F872D021EDULL,
    0x26E2499CD9141DA6ULL, 0x280C8C7571D3B410ULL, 0x2934F0976C0C8732ULL,
    0x2A5B7BF80D3C6626ULL, 0x2B803473B54FE1FCULL, 0x2CA31FC85FE0E634ULL,
    0x2DC4439B1D3F2371ULL, 0x2EE3A57487A969E3ULL, 0x30014AC5962E5854ULL,
    0x311D38E52877524BULL, 0x3237751157594776ULL, 0x33500471D749460FULL,
    0x3466EC14C228C5D1ULL, 0x357C30F21315CA6DULL, 0x368FD7EE59EFF9E3ULL,
    0x37A1E5D2DCC0F3B1ULL, 0x38B25F5A19017A80ULL, 0x39C149241B3E84EBULL,
    0x3ACEA7C04EBED697ULL, 0x3BDA7FA7BBE3BC5FULL, 0x3CE4D5432A320768ULL,
    0x3DEDACE5697E2291ULL, 0x3EF50AD09DE8DE1DULL, 0x3FFAF334A190C8A3ULL,
    0x40FF6A2D635E9463ULL, 0x420273C9831FEA00ULL, 0x43041402ABCB01ECULL,
    0x44044EC44FC8441EULL, 0x450327EA4537E136ULL, 0x4600A33D4431FA3FULL,
    0x46FCC479E99B246EULL, 0x47F78F4B34E3E161ULL, 0x48F1074F960D1402ULL,
    0x49E930159104311AULL, 0x4AE00D1CA196263BULL, 0x4BD5A1D7451CD709ULL,
    0x4CC9F1A9D48889C9ULL, 0x4DBCFFECA87CD693ULL, 0x4EAECFE9EA7B4B22ULL,
    0x4F9F64DD9408E6CCULL, 0x508EC1F9EB5D97B6ULL, 0x517CEA6211CFD4ADULL,
    0x5269E12E92D93835ULL, 0x5355A96C72E5F395ULL, 0x5440461B192F2E6DULL,
    0x5529BA32318272E3ULL, 0x56120899F4CFBBEEULL, 0x56F9343241292B87ULL,
    0x57DF3FCF7A3CA98BULL, 0x58C42E3D2C5BE411ULL, 0x59A8023893A382D6ULL,
    0x5A8ABE79218AFD7AULL, 0x5B6C65A8B4F8820AULL, 0x5C4CFA6C42F0A592ULL,
    0x5D2C7F5873E87040ULL, 0x5E0AF6FF27403883ULL, 0x5EE863E40A115F73ULL,
    0x5FC4C8857814B020ULL, 0x60A02755CDAD2B4DULL, 0x617A82C20163BC04ULL,
    0x6253DD2AECC6E3F3ULL, 0x632C38EBFC865948ULL, 0x64039856EB0BDB3CULL,
    0x64D9FDB59A669C0AULL, 0x65AF6B497E1B3CD8ULL, 0x6683E34D878DFE43ULL,
    0x675767F4596E03A6ULL, 0x6829FB68FAE37E7FULL, 0x68FB9FCD06868946ULL,
    0x69CC573FC45E5F76ULL, 0x6A9C23D4C2EEB845ULL, 0x6B6B079C443E2259ULL,
    0x6C390499C147BD63ULL, 0x6D061CD19EE177BEULL, 0x6DD2523D1B1636B0ULL,
    0x6E9DA6CDADBA0B11ULL, 0x6F681C71D3ED2660ULL, 0x7031B510B866B540ULL,
    0x70FA728B1316EFD4ULL, 0x71C256B9650650F3ULL, 0x72896372372745B8ULL,
    0x734F9A830BD82D54ULL, 0x7414FDB3F68D6608ULL, 0x74D98EC9F13CB0F3ULL,
    0x759D4F7FB6A8E33CULL, 0x766041903E5F6C5CULL, 0x772266ACDD35C662ULL,
    0x77E3C080F7500BD3ULL, 0x78A450B72E904B74ULL, 0x796418F0C7BD5EE2ULL,
    0x7A231ACC3AF53F6FULL, 0x7AE157E21C5B39C8ULL, 0x7B9ED1C62D104E32ULL,
    0x7C5B8A070A4CFD08ULL, 0x7D17822DDC14D474ULL, 0x7DD2BBC3B788110FULL,
    0x7E8D384487AC478BULL, 0x7F46F9314572FE58ULL,
};
static const uint64_t CH_NL2_P[7] = {
    0xB8AA3B295C17F0BCULL, 0x5C551D94AE0BF85EULL, 0x3D8E13B87407FAE9ULL,
    0x2E2A8ECA5705FC2FULL, 0x24EED8A1DF37FCF2ULL, 0x1EC709DC3A03FD75ULL,
    0x1A61762A7ADED93FULL,
};

/* Count of leading zeros of v != 0.  On x86-64 BSR leaves its destination unchanged for a zero
 * input, so the CPU treats the destination as an input: a false dependency that chains
 * successive calls (measured: 20 ns instead of 5 ns a log).  Zeroing it first breaks it. */
static inline int ch_clz64(uint64_t v) {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    uint64_t r;
    __asm__("xorl %k0, %k0\n\tbsrq %1, %0" : "=&r"(r) : "r"(v) : "cc");
    return (int)(63 ^ r);
#elif defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(v);
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
    unsigned long r;
    _BitScanReverse64(&r, v);
    return (int)(63 ^ r);
#else
    int n = 0;
    while (!(v & 0x8000000000000000ULL)) { v <<= 1; n++; }
    return n;
#endif
}

/* -log2(v / 2^64) in Q8.56 fixed point, for v odd (so 0 < v < 2^64); at least 1.
 *   n = clz(v), m = v << n (top bit set), k = the 7 bits after it;
 *   y = floor(m * C[k] / 2^32), so y / 2^63 = 1 + d with 0 <= d < 2^-7 + 2^-32;
 *   D = d * 2^64 = (y - 2^63) * 2;
 *   log2(1 + d) by Horner on d: P = D*(P0 - D*(P1 - ... D*P6)), each product mulhi (Q1.63);
 *   F = T[k] + P  (= log2(m / 2^63), Q1.63);  result = ((1 + n) << 56) - (F >> 7). */
static inline int64_t ch_neglog2(uint64_t v) {
    int n = ch_clz64(v);
    uint64_t m = v << n;
    unsigned k = (unsigned)(m >> 56) & 0x7F;
    uint64_t c = CH_NL2_C[k];
    uint64_t y = (m >> 32) * c + (((m & 0xFFFFFFFFULL) * c) >> 32);
    uint64_t D = (y - 0x8000000000000000ULL) << 1;
    uint64_t acc = CH_NL2_P[6];
    acc = CH_NL2_P[5] - ch_mulhi(D, acc);
    acc = CH_NL2_P[4] - ch_mulhi(D, acc);
    acc = CH_NL2_P[3] - ch_mulhi(D, acc);
    acc = CH_NL2_P[2] - ch_mulhi(D, acc);
    acc = CH_NL2_P[1] - ch_mulhi(D, acc);
    acc = CH_NL2_P[0] - ch_mulhi(D, acc);
    uint64_t F = CH_NL2_T[k] + ch_mulhi(D, acc);
    int64_t L = (int64_t)((uint64_t)(1 + n) << 56) - (int64_t)(F >> 7);
    return L > 0 ? L : 1;
}

/* The order key of node i for hash h: smaller is better. */
static inline uint64_t ch_rdv_key(uint64_t h, uint64_t s, const double *invw, size_t i) {
    uint64_t x = ch_mix64(h ^ s);
    if (!invw) return ~x;
    double score = (double)ch_neglog2(x | 1) * invw[i];
    uint64_t bits;
    memcpy(&bits, &score, sizeof bits);
    return bits;
}

/* mix64's two multipliers, and the top bit, as the SIMD kernels' lanes take them. */
#define CH__RDV_C1 ((long long)0xBF58476D1CE4E5B9ULL)
#define CH__RDV_C2 ((long long)0x94D049BB133111EBULL)
#define CH__RDV_SIGN ((long long)0x8000000000000000ULL)

/* Keep order key k of node i among the best r so far (keys[0 .. *have) ascending, row their
 * nodes), if it beats the worst kept or fewer than r are kept; equal keys keep the earlier
 * node first (nodes come in index order). */
CH_INLINE void ch__rdv_keep(uint64_t *keys, int32_t *row, size_t *have, size_t r, uint64_t k,
                            size_t i) {
    if (*have == r && k >= keys[r - 1]) return;  /* not better than the worst kept */
    size_t p = *have < r ? (*have)++ : r - 1;
    while (p > 0 && keys[p - 1] > k) {
        keys[p] = keys[p - 1];
        row[p] = row[p - 1];
        p--;
    }
    keys[p] = k;
    row[p] = (int32_t)i;
}

#if defined(CH_HAVE_AVX512)
/* The unweighted draws of eight nodes at once (AVX-512DQ: VPMULLQ is the 64-bit multiply).
 * ch__rdv_mix8 is ch_mix64 lane by lane. */
#define CH__RDV_MIX8(z, c1, c2) do {                                                        \
        (z) = _mm512_mullo_epi64(_mm512_xor_si512((z), _mm512_srli_epi64((z), 30)), (c1));  \
        (z) = _mm512_mullo_epi64(_mm512_xor_si512((z), _mm512_srli_epi64((z), 27)), (c2));  \
        (z) = _mm512_xor_si512((z), _mm512_srli_epi64((z), 31));                            \
    } while (0)

/* The mask of the first k < 8 lanes, or of all eight for k >= 8. */
#define CH__RDV_LANES(k) ((k) >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (k)) - 1u))

/* ch_rdv_route for n >= 2, eight nodes a step.  Lane l keeps the largest draw of the nodes
 * l, l + 8, ... and the first index that drew it (a strict > replaces); the answer is the
 * largest lane, the smallest index among equal ones: the scalar loop's first i on a tie.
 * From 32 nodes two such sets of lanes run side by side (the compare-and-keep of one step
 * waits on the last: two chains halve that wait), then merge. */
CH_AVX512DQ static void ch__rdv_route_avx512(const uint64_t *s, size_t n, const uint64_t *h,
                                             size_t m, int32_t *out) {
    const __m512i c1 = _mm512_set1_epi64(CH__RDV_C1), c2 = _mm512_set1_epi64(CH__RDV_C2);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i eight = _mm512_set1_epi64(8), sixteen = _mm512_set1_epi64(16);
    const __mmask8 first = CH__RDV_LANES(n);
    const int two = n >= 32;
    for (size_t j = 0; j < m; j++) {
        const __m512i hv = _mm512_set1_epi64((long long)h[j]);
        __m512i a = _mm512_xor_si512(hv, _mm512_maskz_loadu_epi64(first, s));
        CH__RDV_MIX8(a, c1, c2);
        __m512i ai = lane, ia = lane;
        size_t i = 8;
        if (two) {
            __m512i b = _mm512_xor_si512(hv, _mm512_loadu_si512((const void *)(s + 8)));
            CH__RDV_MIX8(b, c1, c2);
            __m512i bi = _mm512_add_epi64(lane, eight), ib = bi;
            for (i = 16; i + 16 <= n; i += 16) {
                ia = _mm512_add_epi64(ia, sixteen);
                ib = _mm512_add_epi64(ib, sixteen);
                __m512i z = _mm512_xor_si512(hv, _mm512_loadu_si512((const void *)(s + i)));
                __m512i y = _mm512_xor_si512(hv, _mm512_loadu_si512((const void *)(s + i + 8)));
                CH__RDV_MIX8(z, c1, c2);
                CH__RDV_MIX8(y, c1, c2);
                const __mmask8 gz = _mm512_cmpgt_epu64_mask(z, a);
                const __mmask8 gy = _mm512_cmpgt_epu64_mask(y, b);
                a = _mm512_mask_mov_epi64(a, gz, z);
                ai = _mm512_mask_mov_epi64(ai, gz, ia);
                b = _mm512_mask_mov_epi64(b, gy, y);
                bi = _mm512_mask_mov_epi64(bi, gy, ib);
            }
            /* b's lanes into a's: where larger, or equal with a smaller index */
            const __mmask8 g = _mm512_cmpgt_epu64_mask(b, a) |
                               (_mm512_cmpeq_epu64_mask(b, a) & _mm512_cmplt_epi64_mask(bi, ai));
            a = _mm512_mask_mov_epi64(a, g, b);
            ai = _mm512_mask_mov_epi64(ai, g, bi);
        }
        for (; i < n; i += 8) {
            const __mmask8 mk = CH__RDV_LANES(n - i);
            ia = _mm512_add_epi64(lane, _mm512_set1_epi64((long long)i));
            __m512i z = _mm512_xor_si512(hv, _mm512_maskz_loadu_epi64(mk, s + i));
            CH__RDV_MIX8(z, c1, c2);
            const __mmask8 g = _mm512_mask_cmpgt_epu64_mask(mk, z, a);
            a = _mm512_mask_mov_epi64(a, g, z);
            ai = _mm512_mask_mov_epi64(ai, g, ia);
        }
        const uint64_t mx = _mm512_mask_reduce_max_epu64(first, a);
        const __mmask8 eq = _mm512_mask_cmpeq_epu64_mask(first, a, _mm512_set1_epi64((long long)mx));
        out[j] = (int32_t)_mm512_mask_reduce_min_epi64(eq, ai);
    }
}

/* ch_rdv_top unweighted (invw NULL, n >= 8), the order keys ~x made eight at a time.  Once r
 * are kept, only the lanes below the worst kept key at the step's start are looked at, in
 * index order: any other lane is no better than the worst then, nor than any later worst
 * (it only falls), so the scalar loop skips it too. */
CH_AVX512DQ static void ch__rdv_top_avx512(const uint64_t *s, size_t n, uint64_t h, size_t r,
                                           int32_t *row, uint64_t *keys) {
    const __m512i c1 = _mm512_set1_epi64(CH__RDV_C1), c2 = _mm512_set1_epi64(CH__RDV_C2);
    const __m512i hv = _mm512_set1_epi64((long long)h);
    uint64_t kb[8];
    size_t have = 0;
    for (size_t i = 0; i < n; i += 8) {
        const __mmask8 mk = CH__RDV_LANES(n - i);
        __m512i z = _mm512_xor_si512(hv, _mm512_maskz_loadu_epi64(mk, s + i));
        CH__RDV_MIX8(z, c1, c2);
        z = _mm512_xor_si512(z, _mm512_set1_epi64(-1));  /* ~x: smaller is better */
        unsigned look = mk;
        if (have == r)
            look = _mm512_mask_cmplt_epu64_mask(mk, z, _mm512_set1_epi64((long long)keys[r - 1]));
        if (!look) continue;
        _mm512_storeu_si512((void *)kb, z);
        for (; look; look &= look - 1) {
            const unsigned l = (unsigned)__builtin_ctz(look);
            ch__rdv_keep(keys, row, &have, r, kb[l], i + l);
        }
    }
}
#endif

#if defined(CH_HAVE_AVX2)
/* The same four nodes at a time with AVX2 (no AVX-512).  AVX2 has no 64-bit multiply: each of
 * mix64's is made of three 32x32 -> 64 ones (VPMULUDQ: lo*lo + ((hi*lo + lo*hi) << 32)), and
 * no unsigned compare: the draws are kept with their top bit flipped, so that the signed
 * compare orders them.  Measured on Zen 2 against the scalar loop (1.8 ns a node): 1.0 ns a
 * node at 100 nodes, 1.1 at 32, 1.4 at 10, alike at 5. */
#define CH__RDV_MUL4(z, cl, chi)                                                            \
    _mm256_add_epi64(_mm256_mul_epu32((z), (cl)),                                           \
                     _mm256_slli_epi64(_mm256_add_epi64(                                     \
                         _mm256_mul_epu32(_mm256_srli_epi64((z), 32), (cl)),                 \
                         _mm256_mul_epu32((z), (chi))), 32))

/* mix64(h ^ s[i .. i + 4)) lane by lane, top bit flipped. */
CH_INLINE __attribute__((target("avx2"))) __m256i ch__rdv_draw4(__m256i hv, const uint64_t *s) {
    const __m256i c1l = _mm256_set1_epi64x(CH__RDV_C1);
    const __m256i c1h = _mm256_set1_epi64x((long long)((uint64_t)CH__RDV_C1 >> 32));
    const __m256i c2l = _mm256_set1_epi64x(CH__RDV_C2);
    const __m256i c2h = _mm256_set1_epi64x((long long)((uint64_t)CH__RDV_C2 >> 32));
    __m256i z = _mm256_xor_si256(hv, _mm256_loadu_si256((const __m256i *)(const void *)s));
    z = CH__RDV_MUL4(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), c1l, c1h);
    z = CH__RDV_MUL4(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), c2l, c2h);
    return _mm256_xor_si256(_mm256_xor_si256(z, _mm256_srli_epi64(z, 31)),
                            _mm256_set1_epi64x(CH__RDV_SIGN));
}

/* ch_rdv_route for n >= 4: lane l keeps the largest draw of nodes l, l + 4, ... and the first
 * index that drew it; the lanes are merged without a branch (larger, or equal with a smaller
 * index), then the last n % 4 nodes go through the scalar loop's rule. */
CH_AVX2 static void ch__rdv_route_avx2(const uint64_t *s, size_t n, const uint64_t *h,
                                       size_t m, int32_t *out) {
    const __m256i four = _mm256_set1_epi64x(4);
    const size_t n4 = n & ~(size_t)3;
    for (size_t j = 0; j < m; j++) {
        const __m256i hv = _mm256_set1_epi64x((long long)h[j]);
        __m256i best = ch__rdv_draw4(hv, s), bi = _mm256_setr_epi64x(0, 1, 2, 3), ii = bi;
        for (size_t i = 4; i < n4; i += 4) {
            const __m256i z = ch__rdv_draw4(hv, s + i);
            ii = _mm256_add_epi64(ii, four);
            const __m256i g = _mm256_cmpgt_epi64(z, best);
            best = _mm256_blendv_epi8(best, z, g);
            bi = _mm256_blendv_epi8(bi, ii, g);
        }
        for (int half = 0; half < 2; half++) {  /* lane l against l ^ 2, then l ^ 1 */
            const __m256i p = half ? _mm256_shuffle_epi32(best, 0x4E)
                                   : _mm256_permute4x64_epi64(best, 0x4E);
            const __m256i pi = half ? _mm256_shuffle_epi32(bi, 0x4E)
                                    : _mm256_permute4x64_epi64(bi, 0x4E);
            const __m256i g = _mm256_or_si256(_mm256_cmpgt_epi64(p, best), _mm256_and_si256(
                _mm256_cmpeq_epi64(p, best), _mm256_cmpgt_epi64(bi, pi)));
            best = _mm256_blendv_epi8(best, p, g);
            bi = _mm256_blendv_epi8(bi, pi, g);
        }
        uint64_t b = (uint64_t)_mm256_extract_epi64(best, 0) ^ (uint64_t)CH__RDV_SIGN;
        int32_t k = _mm256_cvtsi256_si32(bi);
        for (size_t i = n4; i < n; i++) {
            const uint64_t x = ch_mix64(h[j] ^ s[i]);
            const int better = x > b;
            b = better ? x : b;
            k = better ? (int32_t)i : k;
        }
        out[j] = k;
    }
}

/* ch_rdv_top unweighted (n >= 4), four order keys ~x at a time: as the AVX-512 form, only the
 * lanes below the worst kept key at the step's start are looked at, in index order. */
CH_AVX2 static void ch__rdv_top_avx2(const uint64_t *s, size_t n, uint64_t h, size_t r,
                                     int32_t *row, uint64_t *keys) {
    const __m256i hv = _mm256_set1_epi64x((long long)h);
    const size_t n4 = n & ~(size_t)3;
    uint64_t kb[4];
    size_t have = 0, i = 0;
    for (; i < n4; i += 4) {
        /* the draw with its top bit flipped, complemented: ~x with its top bit flipped, so the
         * signed compare orders the order keys */
        const __m256i z = _mm256_xor_si256(ch__rdv_draw4(hv, s + i), _mm256_set1_epi64x(-1));
        unsigned look = 0xF;
        if (have == r)
            look = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(
                _mm256_set1_epi64x((long long)(keys[r - 1] ^ (uint64_t)CH__RDV_SIGN)), z)));
        if (!look) continue;
        _mm256_storeu_si256((__m256i *)(void *)kb, z);
        for (; look; look &= look - 1) {
            const unsigned l = (unsigned)__builtin_ctz(look);
            ch__rdv_keep(keys, row, &have, r, kb[l] ^ (uint64_t)CH__RDV_SIGN, i + l);
        }
    }
    for (; i < n; i++) ch__rdv_keep(keys, row, &have, r, ~ch_mix64(h ^ s[i]), i);
}
#endif

/* Unweighted: out[j] = argmax_i mix64(h[j] ^ s[i]), the first i on a tie. */
static inline void ch_rdv_route(const uint64_t *s, size_t n, const uint64_t *h, size_t m,
                                int32_t *out) {
#if defined(CH_HAVE_AVX512)
    if (ch_simd_avx512dq && n >= 4) {  /* below 4 nodes the scalar loop is as fast */
        ch__rdv_route_avx512(s, n, h, m, out);
        return;
    }
#endif
#if defined(CH_HAVE_AVX2)
    if (ch_simd_avx2 && n >= 8) {  /* from 5 nodes on a par, 1.2-1.4x at 8-16 (Zen 2) */
        ch__rdv_route_avx2(s, n, h, m, out);
        return;
    }
#endif
    for (size_t j = 0; j < m; j++) {
        const uint64_t hj = h[j];
        uint64_t best = ch_mix64(hj ^ s[0]);
        int32_t bi = 0;
        for (size_t i = 1; i < n; i++) {
            uint64_t x = ch_mix64(hj ^ s[i]);
            int better = x > best;
            best = better ? x : best;
            bi = better ? (int32_t)i : bi;
        }
        out[j] = bi;
    }
}

/* Weighted: out[j] = argmin_i (double)neglog2(mix64(h[j] ^ s[i]) | 1) * invw[i], the first i
 * on a tie.  Branchless: every node's logarithm is computed (pruning nodes by a cheap bound on
 * the logarithm was measured slower, the branch being unpredictable). */
static inline void ch_rdv_route_w(const uint64_t *s, const double *invw, size_t n,
                                  const uint64_t *h, size_t m, int32_t *out) {
    for (size_t j = 0; j < m; j++) {
        const uint64_t hj = h[j];
        double best = (double)ch_neglog2(ch_mix64(hj ^ s[0]) | 1) * invw[0];
        int32_t bi = 0;
        for (size_t i = 1; i < n; i++) {
            double sc = (double)ch_neglog2(ch_mix64(hj ^ s[i]) | 1) * invw[i];
            int better = sc < best;
            best = better ? sc : best;
            bi = better ? (int32_t)i : bi;
        }
        out[j] = bi;
    }
}

/* The best r nodes for hash h, best first, into row (r <= n).  keys is scratch of r uint64. */
static inline void ch_rdv_top(const uint64_t *s, const double *invw, size_t n, uint64_t h,
                              size_t r, int32_t *row, uint64_t *keys) {
#if defined(CH_HAVE_AVX512)
    if (ch_simd_avx512dq && !invw && n >= 8) {
        ch__rdv_top_avx512(s, n, h, r, row, keys);
        return;
    }
#endif
#if defined(CH_HAVE_AVX2)
    if (ch_simd_avx2 && !invw && n >= 8) {
        ch__rdv_top_avx2(s, n, h, r, row, keys);
        return;
    }
#endif
    size_t have = 0;
    for (size_t i = 0; i < n; i++) ch__rdv_keep(keys, row, &have, r, ch_rdv_key(h, s[i], invw, i), i);
}

#endif
