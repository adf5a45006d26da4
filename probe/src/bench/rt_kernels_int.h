/* rt_kernels_int.h - internal to the rt kernels (bench/rt_kernels*.c): their
 * sizes, the input generator, the checksum, and the job functions the table
 * in rt_kernels.c points at. Method: docs/methods/rt-kernels.md
 *
 * Inputs: one LCG, x' = x * 1664525 + 1013904223 (mod 2^32), each kernel's
 * state seeded with the FNV-1a 32 hash of its name; every draw advances the
 * state once and uses its value:
 *   rt_lcg(x)      the new state (32 bits)
 *   rt_below(x, n) floor(state * n / 2^32), in [0, n): the high bits
 *   rt_unit(x)     ((state >> 8) - 2^23) / 2^23, a double in [-1, 1),
 *                  exact (24 significant bits)
 * Checksum: FNV-1a 32 (offset basis 2166136261, prime 16777619) over the
 * result values in order, each as bytes from the least significant up:
 * 4 bytes for a 32-bit integer (signed ones as their two's complement
 * pattern), 8 for a 64-bit integer and 8 for a double (its IEEE 754 bit
 * pattern as a uint64). */
#ifndef OSM_BENCH_RT_KERNELS_INT_H
#define OSM_BENCH_RT_KERNELS_INT_H

#include <stdint.h>
#include <string.h>

#include "../compiler.h"

/* --- sizes (the table's descriptions and working sets use them) -------- */

#define RT_BSORT_N 8192         /* uint32 keys, nearly sorted */
#define RT_BSEARCH_N 16384      /* {key, value} uint32 records */
#define RT_BSEARCH_Q 2048       /* lookups */
#define RT_BITONIC_N 8192       /* uint32 keys, a power of two */
#define RT_CPLX_N 1024          /* complex doubles per array (a, b, c) */
#define RT_CPLX_ROUNDS 16
#define RT_COUNTNEG_N 256       /* N x N int32 matrix */
#define RT_CRC_BYTES 8192
#define RT_CRC_BLOCK 1024       /* bytes per block CRC */
#define RT_FACT_N 1000          /* n! in 32-bit limbs */
#define RT_FACT_LIMBS 300       /* 1000! has 8530 bits: 267 limbs */
#define RT_FACT_SMALL 20        /* sum of k! for k = 0..20, recursively */
#define RT_FB_LEN 256           /* filterbank: samples */
#define RT_FB_BRANCHES 8        /* branches = decimation factor */
#define RT_FB_TAPS 32
#define RT_FIR2_N 128           /* fir2dim: N x N image of doubles */
#define RT_IIR_LEN 4096
#define RT_IIR_SECTIONS 4
#define RT_INSERT_N 16384       /* uint32 keys, nearly sorted */
#define RT_JPEG_BLOCKS 128      /* 8 x 8 blocks of int32 */
#define RT_LMS_LEN 1024
#define RT_LMS_TAPS 32
#define RT_LU_N 80              /* N x N doubles */
#define RT_MAT_N 64             /* N x N uint32, three matrices */
#define RT_MINV_N 48            /* N x 2N doubles: [A | I] */
#define RT_PRIME_N 128          /* odd candidates in [2^24, 2^25) */
#define RT_FIB_N 22
#define RT_ACK_M 2
#define RT_ACK_N 40
#define RT_ST_N 8192            /* two arrays of doubles */

/* --- inputs: the LCG ------------------------------------------------------ */

static inline uint32_t rt_lcg(uint32_t *x)
{
	*x = *x * 1664525u + 1013904223u;
	return *x;
}

static inline uint32_t rt_below(uint32_t *x, uint32_t n)
{
	return (uint32_t)(((uint64_t)rt_lcg(x) * n) >> 32);
}

static inline double rt_unit(uint32_t *x)
{
	return ((double)(rt_lcg(x) >> 8) - 8388608.0) / 8388608.0;
}

/* --- checksum: FNV-1a 32 --------------------------------------------------- */

#define RT_FNV_BASIS 2166136261u

static inline uint32_t rt_fnv_byte(uint32_t h, uint32_t b)
{
	return (h ^ (b & 0xffu)) * 16777619u;
}

static inline uint32_t rt_fnv_u32(uint32_t h, uint32_t v)
{
	for (int i = 0; i < 32; i += 8)
		h = rt_fnv_byte(h, v >> i);
	return h;
}

static inline uint32_t rt_fnv_u64(uint32_t h, uint64_t v)
{
	for (int i = 0; i < 64; i += 8)
		h = rt_fnv_byte(h, (uint32_t)(v >> i));
	return h;
}

/* The double's bit pattern as a uint64 (same byte order as doubles on every
 * target), hashed from its low byte up like any uint64. */
static inline uint32_t rt_fnv_f64(uint32_t h, double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	return rt_fnv_u64(h, bits);
}

/* The LCG's first state for the kernel called `name`. */
static inline uint32_t rt_seed(const char *name)
{
	uint32_t h = RT_FNV_BASIS;
	while (*name)
		h = rt_fnv_byte(h, (unsigned char)*name++);
	return h;
}

/* |v| by comparison: exact, no libm. */
static inline double rt_abs(double v)
{
	return v < 0 ? -v : v;
}

/* x >> n rounding toward minus infinity for negative x too (>> of a
 * negative value is implementation-defined in C). */
static inline int64_t rt_asr(int64_t x, unsigned n)
{
	return x >= 0 ? x >> n : ~((~x) >> n);
}

/* --- the jobs -------------------------------------------------------------- */

/* rt_kernels_sort.c */
uint32_t osm_rt_bsort(void);
uint32_t osm_rt_binarysearch(void);
uint32_t osm_rt_bitonic(void);
uint32_t osm_rt_countnegative(void);
uint32_t osm_rt_insertsort(void);
/* rt_kernels_intg.c */
uint32_t osm_rt_crc(void);
uint32_t osm_rt_factorial(void);
uint32_t osm_rt_jfdctint(void);
uint32_t osm_rt_matrix1(void);
uint32_t osm_rt_prime(void);
uint32_t osm_rt_recursion(void);
/* rt_kernels_dsp.c */
uint32_t osm_rt_complex_updates(void);
uint32_t osm_rt_filterbank(void);
uint32_t osm_rt_fir2dim(void);
uint32_t osm_rt_iir(void);
uint32_t osm_rt_lms(void);
/* rt_kernels_num.c */
uint32_t osm_rt_ludcmp(void);
uint32_t osm_rt_minver(void);
uint32_t osm_rt_st(void);

#endif
