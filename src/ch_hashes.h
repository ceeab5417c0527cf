/* The one table of key hashes.  Every hash the core knows is one row,
 *
 *     X(ID, ENUM, NAME, FN, ...)
 *
 * ID its number (what a _Hasher carries; never renumbered), ENUM the C name of that number,
 * NAME the name the Python side looks it up by (HASH_IDS, built from ch_hash_rows at import),
 * FN its kernel, uint64_t FN(const uint8_t *p, size_t n, uint64_t seed).  From the table come
 * the enum, ch_hash() and the dispatch macros of ch_keys.h, and ch_hash_rows[]: no id is
 * written anywhere else.  The extra arguments (...) are passed through to X, so a dispatch
 * macro can hand its kernel and arguments to every row.
 *
 * Ids by family: the public hashes 0..3 (the only ones hash= takes), the compatibility
 * routers' 4..10 (ch_compat_hash.h), twemproxy's 40..51 (ch_hash_twemproxy.h), nginx's 60..61
 * (ch_hash_nginx.h), HAProxy's 65..72 (ch_hash_haproxy.h), Envoy's 80 (ch_hash_envoy.h). */
#ifndef CH_HASHES_H
#define CH_HASHES_H

#define CH_HASH_TABLE(X, ...)                                                                  \
    X(0, CH_XXH3, "xxh3", ch_h_xxh3, __VA_ARGS__)                                              \
    X(1, CH_XXH64, "xxh64", ch_h_xxh64, __VA_ARGS__)                                           \
    X(2, CH_MURMUR3, "murmur3", ch_h_mm3, __VA_ARGS__)                                         \
    X(3, CH_MD5, "md5", ch_h_md5, __VA_ARGS__)                                                 \
    X(4, CH_OAAT, "one_at_a_time", ch_h_oaat, __VA_ARGS__)                                     \
    X(5, CH_KETAMA_MD5, "ketama_md5", ch_h_kmd5, __VA_ARGS__)                                  \
    X(6, CH_KETAMA_MD5_NEXT, "ketama_md5_next", ch_h_kmd5_next, __VA_ARGS__)                   \
    X(7, CH_MD5_NEXT, "md5_next", ch_h_md5_next, __VA_ARGS__)                                  \
    X(8, CH_REDIS_SLOT, "redis_slot", ch_h_redis, __VA_ARGS__)                                 \
    X(9, CH_CASSANDRA, "cassandra", ch_h_cass, __VA_ARGS__)                                    \
    X(10, CH_CASSANDRA_RAW, "cassandra_raw", ch_h_cass_raw, __VA_ARGS__)                       \
    X(40, CH_TW_OAAT, "twemproxy_one_at_a_time", ch_h_tw_oaat, __VA_ARGS__)                    \
    X(41, CH_TW_MD5, "twemproxy_md5", ch_h_tw_md5, __VA_ARGS__)                                \
    X(42, CH_TW_CRC16, "twemproxy_crc16", ch_h_tw_crc16, __VA_ARGS__)                          \
    X(43, CH_TW_CRC32, "twemproxy_crc32", ch_h_tw_crc32, __VA_ARGS__)                          \
    X(44, CH_TW_CRC32A, "twemproxy_crc32a", ch_h_tw_crc32a, __VA_ARGS__)                       \
    X(45, CH_TW_FNV1_64, "twemproxy_fnv1_64", ch_h_tw_fnv1_64, __VA_ARGS__)                    \
    X(46, CH_TW_FNV1A_64, "twemproxy_fnv1a_64", ch_h_tw_fnv1a_64, __VA_ARGS__)                 \
    X(47, CH_TW_FNV1_32, "twemproxy_fnv1_32", ch_h_tw_fnv1_32, __VA_ARGS__)                    \
    X(48, CH_TW_FNV1A_32, "twemproxy_fnv1a_32", ch_h_tw_fnv1a_32, __VA_ARGS__)                 \
    X(49, CH_TW_HSIEH, "twemproxy_hsieh", ch_h_tw_hsieh, __VA_ARGS__)                          \
    X(50, CH_TW_MURMUR, "twemproxy_murmur", ch_h_tw_murmur, __VA_ARGS__)                       \
    X(51, CH_TW_JENKINS, "twemproxy_jenkins", ch_h_tw_jenkins, __VA_ARGS__)                    \
    X(60, CH_NGINX_CRC32, "nginx_crc32", ch_h_ngx_crc, __VA_ARGS__)                            \
    X(61, CH_NGINX_CRC32_LEN, "nginx_crc32_len", ch_h_ngx_crc_len, __VA_ARGS__)                \
    X(65, CH_HA_SDBM, "haproxy_sdbm", ch_h_ha_sdbm, __VA_ARGS__)                               \
    X(66, CH_HA_SDBM_AV, "haproxy_sdbm_avalanche", ch_h_ha_sdbm_av, __VA_ARGS__)               \
    X(67, CH_HA_DJB2, "haproxy_djb2", ch_h_ha_djb2, __VA_ARGS__)                               \
    X(68, CH_HA_DJB2_AV, "haproxy_djb2_avalanche", ch_h_ha_djb2_av, __VA_ARGS__)               \
    X(69, CH_HA_WT6, "haproxy_wt6", ch_h_ha_wt6, __VA_ARGS__)                                  \
    X(70, CH_HA_WT6_AV, "haproxy_wt6_avalanche", ch_h_ha_wt6_av, __VA_ARGS__)                  \
    X(71, CH_HA_CRC32, "haproxy_crc32", ch_h_ha_crc32, __VA_ARGS__)                            \
    X(72, CH_HA_CRC32_AV, "haproxy_crc32_avalanche", ch_h_ha_crc32_av, __VA_ARGS__)            \
    X(80, CH_ENVOY_MURMUR2, "envoy_murmur2", ch_h_envoy_mm2, __VA_ARGS__)

#define CH__HASH_ENUM(id, e, name, fn, ...) e = id,
enum { CH_HASH_TABLE(CH__HASH_ENUM, 0) };

/* The table for the Python side: name -> id of every row. */
typedef struct { const char *name; int id; } ch_hash_row;
#define CH__HASH_ROW(id, e, name, fn, ...) {name, id},
static const ch_hash_row ch_hash_rows[] = { CH_HASH_TABLE(CH__HASH_ROW, 0) };
static const int ch_hash_count = (int)(sizeof ch_hash_rows / sizeof ch_hash_rows[0]);

#endif
