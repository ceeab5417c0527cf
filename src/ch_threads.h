/* A small worker pool for splitting one batch call over cores.
 *
 * One process-wide pool of worker threads, started lazily (the first call that wants k
 * workers starts the missing ones) and kept for the life of the process.  Idle workers wait
 * on a condition variable: nothing ever spins.  A call is a job: ch_pool_start(job, fn, ctx,
 * k) asks k workers to each run fn(ctx) once; the calling thread runs fn(ctx) itself, then
 * ch_pool_finish(job) waits (passively) for the workers that joined the job to return.
 *
 * fn is expected to claim fixed-size chunks from an atomic counter (ch_claim) until none is
 * left, so the work splits itself dynamically: a worker that is descheduled (the other core
 * busy with other work) only delays the chunk it holds, and a worker that has not woken up by
 * the time the caller runs out of chunks is told to skip the job (ch_pool_finish closes it), so
 * the caller never waits for a thread that did no work.
 *
 * Several jobs may be in flight at once (calls from several Python threads): workers take the
 * oldest job that still wants workers.  After fork() the child has no worker threads; an
 * atfork handler resets the pool there so that it starts afresh when used.
 *
 * Placement (Linux): a worker woken for a job may run on any usable CPU but the one the calling
 * thread is on.  Left to itself, the scheduler tends to queue the woken worker behind its waker
 * (the caller, busy with its own share) when the other cores are held by low-priority work (a
 * nice-19 build): measured here, threads=2 then gave 1.00-1.04x; with the worker kept off the
 * caller's CPU it takes the other core from the niced work (1.5-1.9x).  The workers' CPU masks
 * are set when a job starts on another CPU than the last one (one sched_setaffinity a worker,
 * none while the caller stays put), and not while another job is in flight.  ch_pool_placement
 * (CONSISTENT_HASH_PLACEMENT=0 in consistent_hash/_threads.py) turns it off: the masks are put
 * back to the whole usable set.
 *
 * POSIX: pthreads.  Windows: Win32 threads, SRW locks and condition variables.  The chunk
 * counter: GCC / clang __atomic builtins, or the MSVC Interlocked intrinsics.  No other
 * dependency.  Workers never touch Python objects' reference counts or the C API that needs
 * an attached thread state; what a job's fn may read is decided by its caller
 * (_pipeline.pxi). */
#ifndef CH_THREADS_H
#define CH_THREADS_H

#include <stddef.h>
#include <stdint.h>

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <process.h>
#include <intrin.h>
typedef SRWLOCK ch_mutex;
typedef CONDITION_VARIABLE ch_cond;
#define CH_MUTEX_INIT SRWLOCK_INIT
#define CH_COND_INIT CONDITION_VARIABLE_INIT
static void ch_lock(ch_mutex *m) { AcquireSRWLockExclusive(m); }
static void ch_unlock(ch_mutex *m) { ReleaseSRWLockExclusive(m); }
static void ch_wait(ch_cond *c, ch_mutex *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
static void ch_signal(ch_cond *c) { WakeConditionVariable(c); }
static void ch_broadcast(ch_cond *c) { WakeAllConditionVariable(c); }
#else
#include <pthread.h>
#include <signal.h>
#if defined(__linux__) && defined(_GNU_SOURCE)
#include <sched.h>
#define CH_PLACEMENT 1
#endif
typedef pthread_mutex_t ch_mutex;
typedef pthread_cond_t ch_cond;
#define CH_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define CH_COND_INIT PTHREAD_COND_INITIALIZER
static void ch_lock(ch_mutex *m) { pthread_mutex_lock(m); }
static void ch_unlock(ch_mutex *m) { pthread_mutex_unlock(m); }
static void ch_wait(ch_cond *c, ch_mutex *m) { pthread_cond_wait(c, m); }
static void ch_signal(ch_cond *c) { pthread_cond_signal(c); }
static void ch_broadcast(ch_cond *c) { pthread_cond_broadcast(c); }
#endif

/* The chunk counter: claim the next chunk index (relaxed ordering is enough: the chunks'
 * data are published by the pool's mutex at start and collected by it at finish).  A
 * register-sized counter, lock-free on every target (no libatomic on 32-bit ARM or x86). */
#if defined(_MSC_VER) && !defined(__clang__)
typedef volatile long ch_counter;
static int64_t ch_claim(ch_counter *c) { return (int64_t)_InterlockedExchangeAdd(c, 1); }
#else
typedef intptr_t ch_counter;
static int64_t ch_claim(ch_counter *c) {
    return (int64_t)__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}
#endif

/* Python objects may be read by workers only while the calling thread holds the GIL (see
 * _pipeline.pxi); a free-threaded CPython has no GIL to hold, so object keys stay serial. */
#ifdef Py_GIL_DISABLED
#define CH_GIL_BUILD 0
#else
#define CH_GIL_BUILD 1
#endif

#define CH_MAX_WORKERS 63               /* beyond the calling thread */
#define CH_WORKER_STACK (1 << 20)       /* a job's fn keeps ~40 KB of buffers on its stack;
                                         * musl's and macOS's defaults are smaller than this */

typedef void (*ch_job_fn)(void *ctx);

typedef struct ch_job {
    ch_job_fn fn;
    void *ctx;
    int want;                   /* workers still to join; 0 once closed */
    int active;                 /* workers running fn now */
    struct ch_job *next;        /* the pool's queue of jobs wanting workers */
} ch_job;

static ch_mutex ch_pool_mu = CH_MUTEX_INIT;
static ch_cond ch_pool_work = CH_COND_INIT;     /* workers wait here for a job */
static ch_cond ch_pool_done = CH_COND_INIT;     /* callers wait here for their workers */
static ch_job *ch_pool_queue = NULL;
static int ch_pool_size = 0;                    /* workers started */
static int ch_pool_idle = 0;                    /* workers waiting for a job */
static int ch_pool_place = 1;                   /* keep woken workers off the caller's CPU */

#ifdef CH_PLACEMENT
static pthread_t ch_pool_tids[CH_MAX_WORKERS];
static int ch_pool_off = -1;                    /* the CPU the workers are kept off, or -1 */

/* Keep every worker off CPU cpu (-1: allow them the whole usable set).  Called with the
 * pool's mutex held. */
static void ch_pool_keep_off(int cpu) {
    cpu_set_t set;
    int i;
    if (cpu == ch_pool_off) return;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return;
    if (cpu >= 0) {
        if (!CPU_ISSET(cpu, &set) || CPU_COUNT(&set) < 2) return;  /* nowhere else to go */
        CPU_CLR(cpu, &set);
    }
    for (i = 0; i < ch_pool_size; i++) pthread_setaffinity_np(ch_pool_tids[i], sizeof set, &set);
    ch_pool_off = cpu;
}
#endif

/* Placement on (1) or off (0); returns the previous setting. */
static int ch_pool_placement(int on) {
    int old;
    ch_lock(&ch_pool_mu);
    old = ch_pool_place;
    ch_pool_place = on != 0;
#ifdef CH_PLACEMENT
    if (!ch_pool_place) ch_pool_keep_off(-1);
#endif
    ch_unlock(&ch_pool_mu);
    return old;
}

static void ch_pool_unqueue(ch_job *job) {
    ch_job **p = &ch_pool_queue;
    while (*p != NULL) {
        if (*p == job) {
            *p = job->next;
            return;
        }
        p = &(*p)->next;
    }
}

static void ch_pool_loop(void) {
    ch_lock(&ch_pool_mu);
    for (;;) {
        ch_job *job = ch_pool_queue;
        if (job == NULL) {
            ch_pool_idle++;
            ch_wait(&ch_pool_work, &ch_pool_mu);
            ch_pool_idle--;
            continue;
        }
        if (--job->want == 0) ch_pool_unqueue(job);
        job->active++;
        ch_unlock(&ch_pool_mu);
        job->fn(job->ctx);
        ch_lock(&ch_pool_mu);
        if (--job->active == 0 && job->want == 0) ch_broadcast(&ch_pool_done);
    }
}

#ifdef _WIN32
static unsigned __stdcall ch_pool_main(void *arg) {
    (void)arg;
    ch_pool_loop();
    return 0;
}
static int ch_pool_spawn(void) {
    uintptr_t t = _beginthreadex(NULL, CH_WORKER_STACK, ch_pool_main, NULL,
                                 STACK_SIZE_PARAM_IS_A_RESERVATION, NULL);
    if (t == 0) return -1;
    CloseHandle((HANDLE)t);
    return 0;
}
#else
static void *ch_pool_main(void *arg) {
    (void)arg;
    ch_pool_loop();
    return NULL;
}
static void ch_pool_atfork_child(void) {
    /* Only the forking thread exists in the child: no workers, no jobs. */
    pthread_mutex_init(&ch_pool_mu, NULL);
    pthread_cond_init(&ch_pool_work, NULL);
    pthread_cond_init(&ch_pool_done, NULL);
    ch_pool_queue = NULL;
    ch_pool_size = 0;
    ch_pool_idle = 0;
#ifdef CH_PLACEMENT
    ch_pool_off = -1;
#endif
}
static int ch_pool_spawn(void) {
    static int atfork_done = 0;
    pthread_t t;
    pthread_attr_t attr;
    sigset_t all, old;
    int rc;
    if (!atfork_done) {
        if (pthread_atfork(NULL, NULL, ch_pool_atfork_child) != 0) return -1;
        atfork_done = 1;
    }
    if (pthread_attr_init(&attr) != 0) return -1;
    pthread_attr_setstacksize(&attr, CH_WORKER_STACK);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* Workers block every signal (they inherit the mask at creation), so signals keep going
     * to the interpreter's threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&t, &attr, ch_pool_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) return -1;
#ifdef CH_PLACEMENT
    ch_pool_tids[ch_pool_size] = t;  /* detached, but alive for the life of the process */
    ch_pool_off = -2;                /* the new worker's mask is not set yet */
#endif
    return 0;
}
#endif

/* Write a zero into every 4 KB page of out[0 .. bytes), which the caller will overwrite
 * entirely: a freshly mapped output is faulted in by one thread, before the workers start,
 * instead of by all of them at once (concurrent first-touch faults of one mapping contend in
 * the kernel: measured 3-4x the cost of the same faults on one thread).  A mapped page costs
 * one store. */
static void ch_prefault(void *out, size_t bytes) {
    volatile uint8_t *p = (volatile uint8_t *)out;
    size_t k;
    for (k = 0; k < bytes; k += 4096) p[k] = 0;
    if (bytes) p[bytes - 1] = 0;
}

/* Ask k workers (capped at CH_MAX_WORKERS) to run fn(ctx) once each.  Returns how many were
 * asked: fewer when threads could not be started (0: the caller does all the work). */
static int ch_pool_start(ch_job *job, ch_job_fn fn, void *ctx, int k) {
    int i;
    if (k > CH_MAX_WORKERS) k = CH_MAX_WORKERS;
    job->fn = fn;
    job->ctx = ctx;
    job->active = 0;
    job->next = NULL;
    ch_lock(&ch_pool_mu);
    while (ch_pool_size < k && ch_pool_spawn() == 0) ch_pool_size++;
    if (k > ch_pool_size) k = ch_pool_size;
    job->want = k;
#ifdef CH_PLACEMENT
    if (k > 0 && ch_pool_place && ch_pool_queue == NULL) ch_pool_keep_off(sched_getcpu());
#endif
    if (k > 0) {
        ch_job **p = &ch_pool_queue;
        while (*p != NULL) p = &(*p)->next;
        *p = job;
        if (k >= ch_pool_idle) {
            ch_broadcast(&ch_pool_work);
        } else {
            for (i = 0; i < k; i++) ch_signal(&ch_pool_work);
        }
    }
    ch_unlock(&ch_pool_mu);
    return k;
}

/* Close the job (workers that have not joined it yet skip it) and wait for the workers that
 * did join to return from fn.  Call it after the calling thread's own fn(ctx). */
static void ch_pool_finish(ch_job *job) {
    ch_lock(&ch_pool_mu);
    if (job->want > 0) {
        job->want = 0;
        ch_pool_unqueue(job);
    }
    while (job->active > 0) ch_wait(&ch_pool_done, &ch_pool_mu);
    ch_unlock(&ch_pool_mu);
}

#endif /* CH_THREADS_H */
