/*
 * ch_hash_nginx.h - nginx's upstream `hash` balancer (ngx_http_upstream_hash_module, 1.22).
 *
 * Written from the recipe as docs/agreeing-with-nginx.md states it (read from nginx's source;
 * tests/test_nginx.py checks it against a live nginx):
 *
 * CRC-32 is the zlib / Ethernet CRC (ch_crc.h).  ch_ngx_crc_run(state, p, n) advances the
 * register without the final inversion, so a hash can be continued the way nginx continues
 * its points' hashes.
 *
 *   consistent: a server point is CRC-32 of  host, one NUL byte, port, prev  where prev is the
 *     previous point of the same server as 4 little-endian bytes (0 for the first); weight x
 *     160 points per server.  ch_ngx_points computes one server's chain from the register
 *     after host NUL port.  A key's hash is CRC-32 of the key; the ring position is hash << 32
 *     (hasher id CH_NGINX_CRC32), as ketama's 32-bit points are placed.
 *
 *   plain `hash`: try r = 0, 1, ...: v = CRC-32 of (r > 0 ? decimal(r) : "") followed by the
 *     key; acc += (v >> 16) & 0x7fff; the server is the one whose weight interval holds
 *     acc mod total_weight; a down server means the next r.  The key's hash carries
 *     CRC-32(key) << 32 | length (hasher id CH_NGINX_CRC32_LEN): CRC-32 is linear, so
 *     CRC-32(prefix . key) = CRC-32(prefix) * x^(8 len) xor CRC-32(key) over GF(2) mod the
 *     polynomial, and the rehashes need nothing but those two numbers.
 *
 * CRC-32 and its GF(2) algebra are the core's one CRC (ch_crc.h, filled at import).
 */
#ifndef CH_HASH_NGINX_H
#define CH_HASH_NGINX_H

#include <stddef.h>
#include <stdint.h>
#include "ch_crc.h"

/* nginx gives up after its 21st try (rehash 0..20) and round-robins; we keep going this far */
#define CH_NGX_TRIES 21
#define CH_NGX_MAX_REHASH 65536

/* nginx's CRC-32 is the core's one (ch_crc.h). */
static inline uint32_t ch_ngx_crc_run(uint32_t c, const uint8_t *p, size_t n) { return ch_crc32_run(c, p, n); }
static inline uint32_t ch_ngx_crc32(const uint8_t *p, size_t n) { return ch_crc32(p, n); }

/* Hasher forms (p, n, seed) -> uint64 for the keys stage's dispatch. */
static inline uint64_t ch_h_ngx_crc(const uint8_t *p, size_t n, uint64_t s)
{
    (void)s;
    return (uint64_t)ch_ngx_crc32(p, n) << 32;
}
static inline uint64_t ch_h_ngx_crc_len(const uint8_t *p, size_t n, uint64_t s)
{
    (void)s;
    return ((uint64_t)ch_ngx_crc32(p, n) << 32) | (uint64_t)(n > 0xFFFFFFFFu ? 0xFFFFFFFFu : n);
}

/* One server's consistent points: out[j] for j < count, from the register after
 * host NUL port (not yet inverted). */
static inline void ch_ngx_points(uint32_t base, uint32_t count, uint64_t *out)
{
    uint32_t prev = 0, j;
    uint8_t b[4];
    for (j = 0; j < count; j++) {
        b[0] = (uint8_t)prev;
        b[1] = (uint8_t)(prev >> 8);
        b[2] = (uint8_t)(prev >> 16);
        b[3] = (uint8_t)(prev >> 24);
        prev = ch_ngx_crc_run(base, b, 4) ^ 0xFFFFFFFFu;
        out[j] = (uint64_t)prev << 32;
    }
}

/* CRC-32 of decimal(r) followed by a key whose CRC-32 is crc, given x8 = x^(8 len) */
static inline uint32_t ch_ngx_rehash(uint32_t r, uint32_t crc, uint32_t x8)
{
    uint8_t t[12];
    int k = 0;
    uint32_t c = 0xFFFFFFFFu;
    do {
        t[k++] = (uint8_t)('0' + r % 10u);
        r /= 10u;
    } while (r);
    while (k--) /* the digits, most significant first */
        c = ch__crc32_tab[0][(c ^ t[k]) & 0xFFu] ^ (c >> 8);
    return ch_crc32_gf_mul(c ^ 0xFFFFFFFFu, x8) ^ crc;
}

/* the first server whose weight interval ends past w (ends: cumulative weights), without
 * branches: count the servers whose interval ends at or before w, in halving steps */
static inline uint32_t ch_ngx_pick(const uint32_t *ends, uint32_t ns, uint32_t w)
{
    const uint32_t *base = ends;
    uint32_t n = ns;
    while (n > 1) {
        uint32_t half = n / 2;
        base = (base[half - 1] <= w) ? base + half : base;
        n -= half;
    }
    return (uint32_t)(base - ends) + (base[0] <= w);
}

/* the rehash loop from try 1 on, for a key whose first pick was down; *tries gets r + 1 */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int32_t ch_ngx_rehash_walk(uint32_t crc, uint32_t len, uint32_t acc, const uint32_t *ends,
                                  uint32_t ns, const uint8_t *down, uint32_t *tries)
{
    uint32_t total = ends[ns - 1], x8 = ch_crc32_x8n(len), r, p, i;
    for (r = 1; r < CH_NGX_MAX_REHASH; r++) {
        acc += (ch_ngx_rehash(r, crc, x8) >> 16) & 0x7FFFu;
        p = ch_ngx_pick(ends, ns, acc % total);
        if (!down[p]) {
            *tries = r + 1;
            return (int32_t)p;
        }
    }
    *tries = r;
    for (i = 0; i < ns && down[i]; i++) { /* not reached in practice: the first server up */
    }
    return (int32_t)i;
}

/* The server of plain `hash` for hashes h (CRC-32(key) << 32 | length).  ends[i]: the
 * cumulative weight of servers 0..i (ends[ns - 1] = total); down[i] nonzero for a down server;
 * live: servers not down (0 gives -1).  tries_out (may be NULL): the tries used, r + 1, so a
 * caller can tell keys nginx would hand to round robin (> CH_NGX_TRIES).  table (may be
 * NULL): the server of every w < total, for the first try without a search. */
static inline void ch_ngx_hash_route(const uint64_t *h, size_t m, const uint32_t *ends,
                                     uint32_t ns, const uint8_t *down, uint32_t live,
                                     const int32_t *table, int32_t *out, uint32_t *tries_out)
{
    size_t j;
    uint32_t total = ns ? ends[ns - 1] : 0, t;
    if (live == 0 || total == 0) {
        for (j = 0; j < m; j++) {
            out[j] = -1;
            if (tries_out)
                tries_out[j] = 0;
        }
        return;
    }
    for (j = 0; j < m; j++) {
        uint32_t crc = (uint32_t)(h[j] >> 32), acc = (crc >> 16) & 0x7FFFu;
        uint32_t p = table ? (uint32_t)table[acc % total] : ch_ngx_pick(ends, ns, acc % total);
        t = 1;
        out[j] = down[p] ? ch_ngx_rehash_walk(crc, (uint32_t)h[j], acc, ends, ns, down, &t)
                         : (int32_t)p;
        if (tries_out)
            tries_out[j] = t;
    }
}

#endif /* CH_HASH_NGINX_H */
