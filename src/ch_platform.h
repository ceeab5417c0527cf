/* The compiler helpers every header of the core uses, in one place: forced inlining (the
 * kernels' callbacks and the per-key steps, which must expand into each kernel), the branch
 * hints, the prefetches and the out-of-line helper of a rare path. GCC and clang get the
 * attributes and builtins; MSVC its __forceinline; any other compiler plain C. */
#ifndef CH_PLATFORM_H
#define CH_PLATFORM_H

#if defined(__GNUC__) || defined(__clang__)
#  define CH_INLINE        static inline __attribute__((always_inline))
#  define CH_LIKELY(x)     __builtin_expect(!!(x), 1)
#  define CH_UNLIKELY(x)   __builtin_expect(!!(x), 0)
/* a read soon, used once (the search's next probes) / kept in every cache level (the family's
 * tables, read again by the next keys) */
#  define CH_PREFETCH(p)      __builtin_prefetch((const void *)(p), 0, 1)
#  define CH_PREFETCH_KEEP(p) __builtin_prefetch((const void *)(p), 0, 3)
/* out-of-line helper for a rare path (keeps the hot path lean); gcc rejects `inline` together
 * with noinline, clang flags `unused` on a used function */
#  if defined(__clang__)
#    define CH_OUTLINE     static inline __attribute__((noinline))
#  else
#    define CH_OUTLINE     static __attribute__((noinline, unused))
#  endif
#elif defined(_MSC_VER)
#  define CH_INLINE        static __forceinline
#  define CH_LIKELY(x)     (x)
#  define CH_UNLIKELY(x)   (x)
#  define CH_PREFETCH(p)      ((void)0)
#  define CH_PREFETCH_KEEP(p) ((void)0)
#  define CH_OUTLINE       static __inline __declspec(noinline)
#else
#  define CH_INLINE        static inline
#  define CH_LIKELY(x)     (x)
#  define CH_UNLIKELY(x)   (x)
#  define CH_PREFETCH(p)      ((void)0)
#  define CH_PREFETCH_KEEP(p) ((void)0)
#  define CH_OUTLINE       static inline
#endif

/* A pointer published once by one thread and read by others without a lock (a snapshot's
 * direct table, built on first use while batches may run): the readers see either NULL or
 * the pointer with everything written before it. */
#if defined(__GNUC__) || defined(__clang__)
#  define CH_LOAD_ACQUIRE(p)     __atomic_load_n((p), __ATOMIC_ACQUIRE)
#  define CH_STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else  /* plain accesses: what x86-64 orders as acquire / release (MSVC builds only there) */
#  define CH_LOAD_ACQUIRE(p)     (*(p))
#  define CH_STORE_RELEASE(p, v) (*(p) = (v))
#endif

/* *p += d, returning the old value: the counter of a lock whose uncontended take and give are
 * one add each (_CLock, _bounded.pxi).  Atomic, with acquire-release ordering, where threads
 * run Python code in parallel (a free-threaded CPython); with a GIL every take and give of that
 * lock runs holding it, so a plain add is enough there and skips the locked instruction's
 * cost.  The extension includes Python.h before this header, so Py_GIL_DISABLED is known. */
#if !defined(Py_GIL_DISABLED) && defined(PY_VERSION_HEX)
static inline long ch_fetch_add(long *p, long d) {
    const long old = *p;
    *p = old + d;
    return old;
}
#elif defined(__GNUC__) || defined(__clang__)
static inline long ch_fetch_add(long *p, long d) {
    return __atomic_fetch_add(p, d, __ATOMIC_ACQ_REL);
}
#elif defined(_MSC_VER)
#include <intrin.h>
static inline long ch_fetch_add(long *p, long d) {
    return _InterlockedExchangeAdd((volatile long *)p, d);
}
#endif

/* SIMD kernels, compiled where the compiler can target them on x86-64 and chosen at run time:
 * a caller reads the flag of its instruction set, which ch_simd_detect sets once at import, so
 * the extension still runs on any x86-64.  A test hook may clear the flags (ch_simd_cap).
 *   AVX-512F (Skylake-SP, Ice Lake, Zen 4 and later): CH_AVX512 marks each kernel, read
 *     ch_simd_avx512; those that also multiply 64-bit lanes (VPMULLQ, AVX-512DQ: every
 *     AVX-512 CPU but Xeon Phi) are marked CH_AVX512DQ and read ch_simd_avx512dq.
 *     -DCH_NO_AVX512 leaves them out.
 *   AVX2 (Haswell, Zen 1 and later): CH_AVX2, ch_simd_avx2, for the CPUs without AVX-512 (a
 *     caller tries AVX-512 first), or beside them where no AVX-512 form exists.  With AVX2
 *     come POPCNT, BMI1, BMI2 and LZCNT on every CPU that has it (Haswell, Zen), so the
 *     kernels may use them too, and the flag asks for all five.  ch_pack8 (filled with the
 *     flag) left-packs 8 flags: entry m holds the numbers 0-7 of m's set bits, in order, a
 *     byte each (the rest 0), so a kernel can append the lanes a compare picked to a list.  -DCH_NO_AVX2 leaves them out. */
#if (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 7)) && defined(__x86_64__)
#  define CH_SIMD_X86 1
#  include <immintrin.h>
#  if !defined(CH_NO_AVX512)
#    define CH_HAVE_AVX512 1
#    define CH_AVX512 __attribute__((target("avx512f"), noinline))
#    define CH_AVX512DQ __attribute__((target("avx512f,avx512dq"), noinline))
#  endif
#  if !defined(CH_NO_AVX2)
#    define CH_HAVE_AVX2 1
#    define CH_AVX2 __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt"), noinline))
#  endif
#endif
#if defined(__GNUC__) || defined(__clang__)
#  define CH__UNUSED_FLAG __attribute__((unused))
#else
#  define CH__UNUSED_FLAG
#endif
static int ch_simd_avx512 CH__UNUSED_FLAG = 0;
static int ch_simd_avx512dq CH__UNUSED_FLAG = 0;
static int ch_simd_avx2 CH__UNUSED_FLAG = 0;
static uint64_t ch_pack8[256] CH__UNUSED_FLAG;

/* Set the flags from what the CPU has, capped at cap: 2 everything, 1 no AVX-512, 0 the
 * portable kernels only (a test hook compares them on one machine). */
static inline void ch_simd_cap(int cap) {
    ch_simd_avx512 = ch_simd_avx512dq = ch_simd_avx2 = 0;
#ifdef CH_SIMD_X86
    __builtin_cpu_init();
#  ifdef CH_HAVE_AVX512
    ch_simd_avx512 = cap >= 2 && __builtin_cpu_supports("avx512f") ? 1 : 0;
    ch_simd_avx512dq = ch_simd_avx512 && __builtin_cpu_supports("avx512dq") ? 1 : 0;
#  endif
#  ifdef CH_HAVE_AVX2
    ch_simd_avx2 = cap >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                   __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("lzcnt") &&
                   __builtin_cpu_supports("popcnt") ? 1 : 0;
    if (ch_pack8[255] == 0) {  /* once, at import (the test hook calls this again later) */
        for (unsigned m = 0; m < 256; m++) {
            uint64_t v = 0;
            unsigned k = 0;
            for (unsigned b = 0; b < 8; b++)
                if (m >> b & 1u) v |= (uint64_t)b << (8 * k++);
            ch_pack8[m] = v;
        }
    }
#  endif
#else
    (void)cap;
#endif
}

static inline void ch_simd_detect(void) { ch_simd_cap(2); }

#endif /* CH_PLATFORM_H */
