/* The one CRC-32 and the one CRC-16 of the core.
 *
 * CRC-32 is zlib's / Ethernet's (reflected polynomial 0xEDB88320, register starting at all
 * ones, result inverted): what nginx (ngx_crc32_long), HAProxy (hash_crc32) and twemproxy
 * (hash_crc32a, and hash_crc32's 15 bits of it) compute.  ch_crc32_run advances the register
 * (no final inversion) eight bytes at a time through slicing-by-8 tables; ch_crc32_gf_mul and
 * ch_crc32_x8n are the algebra of CRC-32's linearity (a CRC moved past n more bytes), which
 * nginx's plain `hash` rehashes use.  The tables are filled once by ch_crc_init(), which the
 * module calls at import, before any hash runs.
 *
 * CRC-16 is CRC16/XMODEM (polynomial 0x1021, register starting at 0, no reflection): Redis
 * Cluster's key slot and twemproxy's hash_crc16.  ch_crc16_run keeps the register in 32 bits
 * unmasked, as twemproxy does (its high bits accumulate the shifts; the low 16 are the CRC,
 * which is all Redis takes).
 *
 * CRC-32C is Castagnoli's (reflected polynomial 0x82F63B78) as SSE4.2's `crc32q key, seed`
 * leaves it in its destination: the register started at the low 32 bits of seed, advanced over
 * the 8 little-endian bytes of key, no inversions: AnchorHash's and DxHash's hash (their
 * references call the instruction through inline assembly, so they run only on x86-64).  Here
 * ch_crc32c_u64_sw is slicing-by-8 over the same kind of tables (the same bits everywhere),
 * and ch_crc32c_u64_hw the instruction itself where ch_crc_init found it (ch_crc32c_hw). */
#ifndef CH_CRC_H
#define CH_CRC_H

#include <stddef.h>
#include <stdint.h>

#define CH_CRC32_POLY 0xEDB88320u
#define CH_CRC32C_POLY 0x82F63B78u

static uint32_t ch__crc32_tab[8][256];
static uint32_t ch__crc32c_tab[8][256];
static int ch_crc32c_hw = 0; /* 1: the CPU has SSE4.2's crc32 (x86-64 with GCC or Clang) */
static uint32_t ch__crc32_x8pow[64]; /* x^(8 * 2^k) mod P, reflected */
static uint16_t ch__crc16_tab[256];
static int ch__crc_ready = 0;

/* a * b mod P over GF(2), both in the reflected order (bit 31 holds x^0) */
static inline uint32_t ch_crc32_gf_mul(uint32_t a, uint32_t b)
{
    uint32_t acc = 0;
    uint32_t term = 0x80000000u;
    while (term && a) {
        if (a & term) {
            acc ^= b;
            a ^= term;
        }
        b = (b & 1u) ? (b >> 1) ^ CH_CRC32_POLY : b >> 1; /* b *= x */
        term >>= 1;
    }
    return acc;
}

/* The slicing-by-8 tables of a reflected CRC-32 polynomial: tab[0] a byte through the register,
 * tab[k] a byte followed by k zero bytes. */
static inline void ch__crc_slice8(uint32_t poly, uint32_t tab[8][256])
{
    uint32_t i, k, c;
    for (i = 0; i < 256; i++) {
        c = i;
        for (k = 0; k < 8; k++)
            c = (c & 1u) ? (c >> 1) ^ poly : c >> 1;
        tab[0][i] = c;
    }
    for (i = 0; i < 256; i++) {
        c = tab[0][i];
        for (k = 1; k < 8; k++) {
            c = tab[0][c & 0xFFu] ^ (c >> 8);
            tab[k][i] = c;
        }
    }
}

/* Whether to use the crc32 instruction for CRC-32C (also a test hook's way back). */
static inline void ch_crc32c_detect(void)
{
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    __builtin_cpu_init();
    ch_crc32c_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
}

static inline void ch_crc_init(void)
{
    uint32_t i, k, c;
    if (ch__crc_ready)
        return;
    ch__crc_slice8(CH_CRC32_POLY, ch__crc32_tab);
    ch__crc_slice8(CH_CRC32C_POLY, ch__crc32c_tab);
    for (i = 0; i < 256; i++) {
        c = i << 8;  /* CRC-16: byte i shifted through the register, MSB first */
        for (k = 0; k < 8; k++)
            c = (c & 0x8000u) ? (c << 1) ^ 0x1021u : c << 1;
        ch__crc16_tab[i] = (uint16_t)c;
    }
    ch__crc32_x8pow[0] = 0x00800000u; /* x^8 */
    for (k = 1; k < 64; k++)
        ch__crc32_x8pow[k] = ch_crc32_gf_mul(ch__crc32_x8pow[k - 1], ch__crc32_x8pow[k - 1]);
    ch_crc32c_detect();
    ch__crc_ready = 1;
}

/* advance the CRC-32 register over n bytes (eight at a time, then byte by byte) */
static inline uint32_t ch_crc32_run(uint32_t c, const uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                           ((uint32_t)p[3] << 24));
        c = ch__crc32_tab[7][lo & 0xFFu] ^ ch__crc32_tab[6][(lo >> 8) & 0xFFu] ^
            ch__crc32_tab[5][(lo >> 16) & 0xFFu] ^ ch__crc32_tab[4][lo >> 24] ^
            ch__crc32_tab[3][p[4]] ^ ch__crc32_tab[2][p[5]] ^ ch__crc32_tab[1][p[6]] ^
            ch__crc32_tab[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = ch__crc32_tab[0][(c ^ *p++) & 0xFFu] ^ (c >> 8);
    return c;
}

static inline uint32_t ch_crc32(const uint8_t *p, size_t n)
{
    return ch_crc32_run(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
}

/* x^(8 n) mod P: the factor that moves a CRC past n more bytes */
static inline uint32_t ch_crc32_x8n(uint64_t n)
{
    uint32_t r = 0x80000000u; /* 1 */
    int k = 0;
    while (n) {
        if (n & 1u)
            r = ch_crc32_gf_mul(r, ch__crc32_x8pow[k]);
        n >>= 1;
        k++;
    }
    return r;
}

/* CRC16/XMODEM over n bytes from register crc, kept in 32 bits (see above) */
static inline uint32_t ch_crc16_run(uint32_t crc, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        crc = (crc << 8) ^ ch__crc16_tab[((crc >> 8) ^ p[i]) & 0xFFu];
    return crc;
}

static inline uint16_t ch_crc16_xmodem(const uint8_t *p, size_t n)
{
    return (uint16_t)ch_crc16_run(0, p, n);
}

/* CRC-32C of key's 8 bytes from register seed: slicing-by-8, the key's low 4 bytes XORed with
 * the register first. */
static inline uint32_t ch_crc32c_u64_sw(uint64_t key, uint64_t seed)
{
    uint64_t x = key ^ (uint64_t)(uint32_t)seed;
    return ch__crc32c_tab[7][x & 0xFF] ^ ch__crc32c_tab[6][(x >> 8) & 0xFF] ^
           ch__crc32c_tab[5][(x >> 16) & 0xFF] ^ ch__crc32c_tab[4][(x >> 24) & 0xFF] ^
           ch__crc32c_tab[3][(x >> 32) & 0xFF] ^ ch__crc32c_tab[2][(x >> 40) & 0xFF] ^
           ch__crc32c_tab[1][(x >> 48) & 0xFF] ^ ch__crc32c_tab[0][x >> 56];
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define CH_CRC32C_HAVE_HW 1
/* The instruction through inline assembly (as the references write it), so it inlines into
 * any kernel without a target attribute; used only where ch_crc32c_hw says the CPU has it. */
static inline uint32_t ch_crc32c_u64_hw(uint64_t key, uint64_t seed)
{
    uint64_t c = (uint32_t)seed;
    __asm__("crc32q %1, %0" : "+r"(c) : "rm"(key));
    return (uint32_t)c;
}
#else
#define CH_CRC32C_HAVE_HW 0
#define ch_crc32c_u64_hw ch_crc32c_u64_sw
#endif

static inline uint32_t ch_crc32c_u64(uint64_t key, uint64_t seed)
{
    return ch_crc32c_hw ? ch_crc32c_u64_hw(key, seed) : ch_crc32c_u64_sw(key, seed);
}

#endif
