/* compiler.h - portability and anti-optimisation helpers (google/benchmark
 * DoNotOptimize/ClobberMemory idea). */
#ifndef OSM_COMPILER_H
#define OSM_COMPILER_H

/* OSM_KEEP(x): the compiler must assume x is read, so the work that made it
 * cannot be removed. The "r,m" constraint lets it stay in a register. */
#define OSM_KEEP(x) __asm__ volatile("" : : "r,m"(x) : "memory")
/* OSM_CLOBBER(): every store before it must be done, every load after it
 * must be redone. Emits no instruction. */
#define OSM_CLOBBER() __asm__ volatile("" : : : "memory")

#define OSM_PRINTF(fmt, args) __attribute__((format(printf, (fmt), (args))))
#define OSM_UNUSED __attribute__((unused))
#define OSM_NORETURN __attribute__((noreturn))
#if defined(__clang__)
#define OSM_NOIPA __attribute__((noinline, optnone))
#elif defined(__GNUC__)
#define OSM_NOIPA __attribute__((noipa))
#else
#define OSM_NOIPA
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
