/* The compiled core's portable parts, built and run outside CPython: the worker pool
 * (ch_threads.h: pthreads, or Win32 threads / SRW locks / condition variables), the key hash
 * (ch_hash.h: XXH3-64) and the ring search (ch_search.h), on each platform the wheels target
 * that this machine can build for: glibc (gcc), musl (musl-gcc, static) and Windows
 * (x86_64-w64-mingw32-gcc, run under Wine).  tests/test_portability.py writes a ring and keys
 * to in.bin in the working directory, runs this program there, and checks out.bin against
 * xxhash and np.searchsorted.
 *
 *   in.bin:  u32 n_positions, u32 n_keys, u64 positions[n] (sorted), i32 owners[n],
 *            then per key: u32 length, the key's bytes
 *   out.bin: u64 hashes[n_keys], i32 owners_of_keys[n_keys]
 *
 * The lookups run as one pool job per call, fn claiming 4,096-key chunks from a ch_counter, k
 * = 1..8 workers, from 3 caller threads at once (several jobs in flight, as from several
 * Python threads), every result compared with the serial one.  Prints "ok <jobs>" and exits 0,
 * or names the first mismatch and exits 1. */
#define _POSIX_C_SOURCE 200809L /* sigset_t, pthread_sigmask: what Python.h's pyconfig.h sets */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/ch_hash.h"
#include "../../src/ch_search.h"
#include "../../src/ch_threads.h"

#define CHUNK 4096
#define CALLERS 3
#define ROUNDS 40

typedef struct {
    const uint64_t *pos;
    uint32_t n;
    const uint32_t *idx;
    int k;
    const int32_t *owners;
    const uint64_t *hashes;
    size_t m;
    int32_t *out;
    ch_counter next;
} lookup_ctx;

static void lookup_chunks(void *arg) {
    lookup_ctx *c = (lookup_ctx *)arg;
    for (;;) {
        size_t start = (size_t)ch_claim(&c->next) * CHUNK;
        if (start >= c->m) return;
        size_t len = c->m - start < CHUNK ? c->m - start : CHUNK;
        ch_lookup_batch(c->pos, c->n, c->idx, c->k, c->owners, c->hashes + start, len,
                        c->out + start);
    }
}

static uint64_t *g_pos;
static int32_t *g_owners;
static uint32_t *g_idx;
static uint32_t g_n;
static int g_k;
static uint64_t *g_hashes;
static size_t g_m;
static int32_t *g_serial;
static volatile int g_bad = 0;
static ch_counter g_jobs = 0;

static void one_call(int workers, int32_t *out) {
    lookup_ctx c = {g_pos, g_n, g_idx, g_k, g_owners, g_hashes, g_m, out, 0};
    ch_job job;
    ch_pool_start(&job, lookup_chunks, &c, workers);
    lookup_chunks(&c);
    ch_pool_finish(&job);
}

static void caller(int id) {
    int32_t *out = (int32_t *)malloc(g_m * sizeof(int32_t) + 1);
    for (int r = 0; r < ROUNDS && !g_bad; r++) {
        int workers = 1 + (r + id) % 8;
        memset(out, 0xff, g_m * sizeof(int32_t));
        one_call(workers, out);
        if (memcmp(out, g_serial, g_m * sizeof(int32_t)) != 0) {
            fprintf(stderr, "caller %d round %d (%d workers): result differs from serial\n",
                    id, r, workers);
            g_bad = 1;
        }
        ch_claim(&g_jobs);
    }
    free(out);
}

#ifdef _WIN32
static unsigned __stdcall caller_main(void *arg) { caller((int)(intptr_t)arg); return 0; }
#else
static void *caller_main(void *arg) { caller((int)(intptr_t)arg); return NULL; }
#endif

static int read_exact(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n; }

int main(void) {
    FILE *f = fopen("in.bin", "rb");
    uint32_t hdr[2];
    if (!f || !read_exact(f, hdr, sizeof hdr)) { fprintf(stderr, "cannot read in.bin\n"); return 2; }
    g_n = hdr[0];
    g_m = hdr[1];
    g_pos = (uint64_t *)malloc((g_n + CH_PAD) * sizeof(uint64_t));
    g_owners = (int32_t *)malloc(g_n * sizeof(int32_t));
    g_hashes = (uint64_t *)malloc(g_m * sizeof(uint64_t) + 1);
    g_serial = (int32_t *)malloc(g_m * sizeof(int32_t) + 1);
    if (!read_exact(f, g_pos, g_n * sizeof(uint64_t)) ||
        !read_exact(f, g_owners, g_n * sizeof(int32_t))) return 2;
    for (int i = 0; i < CH_PAD; i++) g_pos[g_n + i] = UINT64_MAX;
    uint8_t buf[1024];
    for (size_t j = 0; j < g_m; j++) {
        uint32_t len;
        if (!read_exact(f, &len, 4) || len > sizeof buf || !read_exact(f, buf, len)) return 2;
        g_hashes[j] = ch_xxh3_64(buf, len, 0);
    }
    fclose(f);
    g_k = ch_prefix_bits(g_n);
    g_idx = (uint32_t *)malloc((((size_t)1 << g_k) + 1) * sizeof(uint32_t));
    ch_build_prefix(g_pos, g_n, g_k, g_idx);
    ch_lookup_batch(g_pos, g_n, g_idx, g_k, g_owners, g_hashes, g_m, g_serial);

#ifdef _WIN32
    HANDLE t[CALLERS];
    for (int i = 0; i < CALLERS; i++)
        t[i] = (HANDLE)_beginthreadex(NULL, 0, caller_main, (void *)(intptr_t)i, 0, NULL);
    WaitForMultipleObjects(CALLERS, t, TRUE, INFINITE);
    for (int i = 0; i < CALLERS; i++) CloseHandle(t[i]);
#else
    pthread_t t[CALLERS];
    for (int i = 0; i < CALLERS; i++) pthread_create(&t[i], NULL, caller_main, (void *)(intptr_t)i);
    for (int i = 0; i < CALLERS; i++) pthread_join(t[i], NULL);
#endif
    if (g_bad) return 1;
    f = fopen("out.bin", "wb");
    if (!f || fwrite(g_hashes, 8, g_m, f) != g_m || fwrite(g_serial, 4, g_m, f) != g_m) return 2;
    fclose(f);
    printf("ok %ld jobs, %d pool workers\n", (long)g_jobs, ch_pool_size);
    return 0;
}
