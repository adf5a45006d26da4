/* rt_kernels.c - the table of the rt study's 19 periodic real-time workload
 * kernels (rt.workload runs one job of one of them per period). They are
 * TACLeBench's single-path set, written for osmeter from the descriptions
 * of TACLeBench's kernels of the same names (no TACLeBench code), with
 * inputs sized so one job takes 10-500 us on a 3 GHz core and, for the
 * array kernels, a working set of tens to hundreds of KiB, where memory
 * stressors on other cores can matter. Method: docs/methods/rt-kernels.md
 *
 *   bsort          bubble sort (early exit) of nearly sorted keys
 *   binarysearch   lookups in a sorted table of records
 *   bitonic        bitonic sorting network over random keys
 *   complex_updates  complex multiply-accumulate rounds
 *   countnegative  counts and sums of negative/positive matrix entries
 *   crc            CRC-32 (table) and CRC-16/CCITT (bitwise) of a message
 *   factorial      1000! in multi-precision; small factorials recursively
 *   filterbank     M-branch analysis/synthesis filter bank (FIR, decimate,
 *                  expand, FIR)
 *   fir2dim        3 x 3 FIR filter over an image
 *   iir            cascade of biquad IIR sections
 *   insertsort     insertion sort of nearly sorted keys
 *   jfdctint       JPEG's integer forward DCT (LL&M, 13-bit fixed point)
 *                  on 8 x 8 blocks
 *   lms            LMS adaptive filter identifying an unknown FIR
 *   ludcmp         LU decomposition (Doolittle) and solve of A x = b
 *   matrix1        integer matrix product modulo 2^32
 *   minver         matrix inversion, Gauss-Jordan with partial pivoting
 *   prime          smallest factors by trial division
 *   recursion      recursive Fibonacci and Ackermann, calls counted
 *   st             sums, means, variances, deviations, correlation
 *
 * Every job re-initialises its inputs from its own seed (the LCG in
 * rt_kernels_int.h), so every job does the same work and returns the same
 * checksum: FNV-1a 32 over its results, defined byte by byte from the low
 * end (never a memcpy of a host layout), so a checksum is the same on every
 * architecture. `expected` is computed by an independent Python reference
 * (tests/probe/rt_kernels_ref.py), and tests/probe/test_rt_kernels.py checks
 * that the two agree; probe/tests/test_rt_kernels.c that every job returns
 * it, natively and under qemu on aarch64, armv7 and riscv64.
 *
 * Traps avoided:
 *  - FP contraction: a * b + c fused into one FMA rounds once, not twice,
 *    and changes the bits (aarch64, riscv64 and x86 with FMA would differ
 *    from each other and from Python). The files are compiled with
 *    -ffp-contract=off (probe/CMakeLists.txt), the ISO C default too; no
 *    -ffast-math; only + - * / and sqrt, which IEEE 754 rounds correctly.
 *  - Undefined behaviour: unsigned arithmetic where values wrap; signed
 *    values only with proven bounds (jfdctint in int64); no left shift of a
 *    negative value (a multiply instead), no right shift of one (rt_asr).
 *  - Dead-code elimination: the checksum reads every result, and run()
 *    returns it through a function pointer the caller checks; OSM_CLOBBER()
 *    between initialisation and computation makes the inputs real stores
 *    and loads; constant inputs (factorial, recursion) are read from
 *    volatile objects, so nothing is computed at build time.
 *  - Data-dependent work: the inputs are the same on every job, so each job
 *    does exactly the same operations (single-path in time, up to caches). */
#include <string.h>

#include "rt_kernels.h"
#include "rt_kernels_int.h"

/* Sizes: every static array the job touches. prime has none (a few scalars:
 * 64 bytes stands for them); recursion's is its stack, at most 84 calls
 * deep (Ackermann), 80 bytes a frame as gcc -O3 makes them on x86-64. */
const struct osm_rt_kernel osm_rt_kernels[] = {
	{"bsort", "bubble sort of 8192 nearly sorted uint32 keys (32 KiB; 7 passes)",
	 sizeof(uint32_t) * RT_BSORT_N, osm_rt_bsort, 0xbfb2e79bu},
	{"binarysearch", "2048 binary searches in a sorted table of 16384 {key, value} uint32 records (128 KiB)",
	 2 * sizeof(uint32_t) * RT_BSEARCH_N, osm_rt_binarysearch, 0x163dbac2u},
	{"bitonic", "bitonic sorting network over 8192 random uint32 keys (32 KiB)",
	 sizeof(uint32_t) * RT_BITONIC_N, osm_rt_bitonic, 0x56038c78u},
	{"complex_updates", "16 rounds of c = c + a b over 3 x 1024 complex doubles (48 KiB)",
	 6 * sizeof(double) * RT_CPLX_N, osm_rt_complex_updates, 0x81a9c132u},
	{"countnegative", "counts and sums of negative and positive entries of a 256 x 256 int32 matrix (256 KiB)",
	 sizeof(int32_t) * RT_COUNTNEG_N * RT_COUNTNEG_N, osm_rt_countnegative, 0x2ff24632u},
	{"crc", "CRC-32 (table) and CRC-16/CCITT (bitwise) of an 8 KiB message (9 KiB)",
	 RT_CRC_BYTES + 256 * sizeof(uint32_t), osm_rt_crc, 0x5a314332u},
	{"factorial", "1000! in 32-bit limbs (267 limbs) and recursive k! for k = 0..20 (1.2 KiB)",
	 sizeof(uint32_t) * RT_FACT_LIMBS, osm_rt_factorial, 0x44ef1287u},
	{"filterbank", "8-branch filter bank, 32-tap FIRs, over 256 double samples (12 KiB)",
	 4 * sizeof(double) * RT_FB_LEN + 2 * sizeof(double) * RT_FB_BRANCHES * RT_FB_TAPS,
	 osm_rt_filterbank, 0x1e53fda2u},
	{"fir2dim", "3 x 3 FIR over a 128 x 128 image of doubles into 126 x 126 (252 KiB)",
	 sizeof(double) * (RT_FIR2_N * RT_FIR2_N + (RT_FIR2_N - 2) * (RT_FIR2_N - 2) + 9),
	 osm_rt_fir2dim, 0xf33bbf72u},
	{"iir", "4 cascaded biquad IIR sections over 4096 double samples (64 KiB)",
	 2 * sizeof(double) * RT_IIR_LEN, osm_rt_iir, 0xb97766c9u},
	{"insertsort", "insertion sort of 16384 nearly sorted uint32 keys (64 KiB)",
	 sizeof(uint32_t) * RT_INSERT_N, osm_rt_insertsort, 0x2828dcdfu},
	{"jfdctint", "JPEG integer forward DCT of 128 8 x 8 blocks of int32 (32 KiB)",
	 sizeof(int32_t) * 64 * RT_JPEG_BLOCKS, osm_rt_jfdctint, 0xdbf9855bu},
	{"lms", "32-tap LMS adaptive filter over 1024 double samples (25 KiB)",
	 sizeof(double) * (3 * RT_LMS_LEN + RT_LMS_TAPS - 1 + 2 * RT_LMS_TAPS), osm_rt_lms, 0x8c95c0b6u},
	{"ludcmp", "LU decomposition of an 80 x 80 double matrix and solve of A x = b (52 KiB)",
	 sizeof(double) * (RT_LU_N * RT_LU_N + 3 * RT_LU_N), osm_rt_ludcmp, 0xb1373ca4u},
	{"matrix1", "64 x 64 uint32 matrix product modulo 2^32 (48 KiB)",
	 3 * sizeof(uint32_t) * RT_MAT_N * RT_MAT_N, osm_rt_matrix1, 0xf0c0927bu},
	{"minver", "inverse of a 48 x 48 double matrix, Gauss-Jordan with partial pivoting (36 KiB)",
	 2 * sizeof(double) * RT_MINV_N * RT_MINV_N, osm_rt_minver, 0x73dd4828u},
	{"prime", "smallest factor of 128 odd 25-bit numbers by trial division (no arrays)",
	 64, osm_rt_prime, 0x1e94e727u},
	{"recursion", "recursive fib(22) and Ackermann A(2, 40), calls counted (stack only: <= 84 frames, ~7 KiB)",
	 84 * 80, osm_rt_recursion, 0x252b099cu},
	{"st", "sums, means, variances, deviations and correlation of two 8192-double arrays (128 KiB)",
	 2 * sizeof(double) * RT_ST_N, osm_rt_st, 0xc275a1f5u},
};

const size_t osm_rt_n_kernels = ARRAY_SIZE(osm_rt_kernels);

const char *const osm_rt_kernel_names[] = {
	"bsort", "binarysearch", "bitonic", "complex_updates", "countnegative", "crc", "factorial",
	"filterbank", "fir2dim", "iir", "insertsort", "jfdctint", "lms", "ludcmp", "matrix1",
	"minver", "prime", "recursion", "st", NULL,
};

const struct osm_rt_kernel *osm_rt_kernel_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < osm_rt_n_kernels; i++)
		if (strcmp(osm_rt_kernels[i].name, name) == 0)
			return &osm_rt_kernels[i];
	return NULL;
}
