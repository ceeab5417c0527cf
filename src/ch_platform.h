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

#endif /* CH_PLATFORM_H */
