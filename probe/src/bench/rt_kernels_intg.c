/* rt_kernels_intg.c - the rt kernels in integer arithmetic: crc, factorial,
 * jfdctint, matrix1, prime, recursion. Written for osmeter from the
 * descriptions of TACLeBench's kernels of these names.
 * Method: docs/methods/rt-kernels.md
 *
 * All arithmetic is unsigned (wraps, defined) or signed with proven bounds
 * (jfdctint in int64, where no value comes near 2^62). The kernels whose
 * inputs are constants read them from volatile objects, so the compiler
 * cannot compute the job at build time. */
#include "rt_kernels_int.h"

/* --- crc: CRC-32 and CRC-16 of a message ------------------------------------ */

static uint8_t crc_msg[RT_CRC_BYTES];
static uint32_t crc_table[256];

/* CRC-32 (IEEE 802.3 / zlib: reflected polynomial 0xedb88320, initial and
 * final value 0xffffffff), byte-wise through a 256-entry table built in the
 * job. */
static uint32_t crc32_of(const uint8_t *p, uint32_t n)
{
	uint32_t c = 0xffffffffu;
	for (uint32_t i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xffu] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* The message: RT_CRC_BYTES bytes, each the top byte of one LCG draw.
 * Results: the CRC-32 of each RT_CRC_BLOCK-byte block, the CRC-32 of the
 * whole message, then its CRC-16/CCITT-FALSE (polynomial 0x1021, initial
 * value 0xffff, not reflected, bit by bit), as a uint32. */
uint32_t osm_rt_crc(void)
{
	uint32_t x = rt_seed("crc");
	for (uint32_t i = 0; i < RT_CRC_BYTES; i++)
		crc_msg[i] = (uint8_t)(rt_lcg(&x) >> 24);
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[n] = c;
	}
	OSM_CLOBBER();
	uint32_t h = RT_FNV_BASIS;
	for (uint32_t b = 0; b < RT_CRC_BYTES; b += RT_CRC_BLOCK)
		h = rt_fnv_u32(h, crc32_of(crc_msg + b, RT_CRC_BLOCK));
	h = rt_fnv_u32(h, crc32_of(crc_msg, RT_CRC_BYTES));
	uint32_t c16 = 0xffffu;
	for (uint32_t i = 0; i < RT_CRC_BYTES; i++) {
		c16 ^= (uint32_t)crc_msg[i] << 8;
		for (int k = 0; k < 8; k++)
			c16 = ((c16 & 0x8000u) ? (c16 << 1) ^ 0x1021u : c16 << 1) & 0xffffu;
	}
	return rt_fnv_u32(h, c16);
}

/* --- factorial: n! exactly, and small factorials recursively ----------------- */

static uint32_t fact_limb[RT_FACT_LIMBS];
static volatile uint32_t fact_n = RT_FACT_N, fact_small = RT_FACT_SMALL;

static uint64_t fact_rec(uint32_t k)
{
	return k <= 1 ? 1 : k * fact_rec(k - 1);
}

/* n! as a multi-precision number in 32-bit limbs (least significant first),
 * built by multiplying by 2, 3, ..., n with a 64-bit carry; then the sum of
 * k! for k = 0..20 with k! computed recursively (20! < 2^62). Results: the
 * limb count, the limbs from the lowest, then the sum as a uint64. */
uint32_t osm_rt_factorial(void)
{
	uint32_t n = fact_n, len = 1;
	fact_limb[0] = 1;
	for (uint32_t k = 2; k <= n; k++) {
		uint64_t carry = 0;
		for (uint32_t i = 0; i < len; i++) {
			uint64_t t = (uint64_t)fact_limb[i] * k + carry;
			fact_limb[i] = (uint32_t)t;
			carry = t >> 32;
		}
		if (carry && len < RT_FACT_LIMBS)
			fact_limb[len++] = (uint32_t)carry;
	}
	uint64_t sum = 0;
	for (uint32_t k = 0, m = fact_small; k <= m; k++)
		sum += fact_rec(k);
	uint32_t h = rt_fnv_u32(RT_FNV_BASIS, len);
	for (uint32_t i = 0; i < len; i++)
		h = rt_fnv_u32(h, fact_limb[i]);
	return rt_fnv_u64(h, sum);
}

/* --- jfdctint: JPEG's integer forward DCT on 8 x 8 blocks --------------------- */

static int32_t jpeg_blk[RT_JPEG_BLOCKS][64];

/* The Loeffler-Ligtenberg-Moschytz 8-point DCT in fixed point with 13
 * fraction bits, the constants round(c * 2^13) of its cosine factors; the
 * row pass keeps 2 more bits (PASS1), the column pass removes them and the
 * scaling, so the outputs are 8 x the orthonormal 2-D DCT-II, rounded. */
#define JPEG_CB 13
#define JPEG_P1 2
#define FIX_0_298631336 2446 /* 0.298631336 * 2^13 rounded, and so on */
#define FIX_0_390180644 3196
#define FIX_0_541196100 4433
#define FIX_0_765366865 6270
#define FIX_0_899976223 7373
#define FIX_1_175875602 9633
#define FIX_1_501321110 12299
#define FIX_1_847759065 15137
#define FIX_1_961570560 16069
#define FIX_2_053119869 16819
#define FIX_2_562915447 20995
#define FIX_3_072711026 25172

/* (v + 2^(n-1)) >> n, the shift flooring for negative v. */
static int64_t descale(int64_t v, unsigned n)
{
	return rt_asr(v + ((int64_t)1 << (n - 1)), n);
}

/* One 8-point transform in place on d[0], d[s], ..., d[7 s]: the row pass
 * (col = 0) or the column pass (col = 1). */
static void jpeg_fdct8(int32_t *d, int s, int col)
{
	int64_t t0 = (int64_t)d[0] + d[7 * s], t7 = (int64_t)d[0] - d[7 * s];
	int64_t t1 = (int64_t)d[s] + d[6 * s], t6 = (int64_t)d[s] - d[6 * s];
	int64_t t2 = (int64_t)d[2 * s] + d[5 * s], t5 = (int64_t)d[2 * s] - d[5 * s];
	int64_t t3 = (int64_t)d[3 * s] + d[4 * s], t4 = (int64_t)d[3 * s] - d[4 * s];
	unsigned sh = col ? JPEG_CB + JPEG_P1 : JPEG_CB - JPEG_P1;

	/* even part: outputs 0, 4 (pure sums), 2, 6 (one rotation) */
	int64_t t10 = t0 + t3, t13 = t0 - t3, t11 = t1 + t2, t12 = t1 - t2;
	d[0] = (int32_t)(col ? descale(t10 + t11, JPEG_P1) : (t10 + t11) * 4);
	d[4 * s] = (int32_t)(col ? descale(t10 - t11, JPEG_P1) : (t10 - t11) * 4);
	int64_t z1 = (t12 + t13) * FIX_0_541196100;
	d[2 * s] = (int32_t)descale(z1 + t13 * FIX_0_765366865, sh);
	d[6 * s] = (int32_t)descale(z1 - t12 * FIX_1_847759065, sh);

	/* odd part: outputs 7, 5, 3, 1 */
	int64_t z1o = t4 + t7, z2 = t5 + t6, z3 = t4 + t6, z4 = t5 + t7;
	int64_t z5 = (z3 + z4) * FIX_1_175875602;
	t4 *= FIX_0_298631336;
	t5 *= FIX_2_053119869;
	t6 *= FIX_3_072711026;
	t7 *= FIX_1_501321110;
	z1o *= -FIX_0_899976223;
	z2 *= -FIX_2_562915447;
	z3 = z3 * -FIX_1_961570560 + z5;
	z4 = z4 * -FIX_0_390180644 + z5;
	d[7 * s] = (int32_t)descale(t4 + z1o + z3, sh);
	d[5 * s] = (int32_t)descale(t5 + z2 + z4, sh);
	d[3 * s] = (int32_t)descale(t6 + z2 + z3, sh);
	d[s] = (int32_t)descale(t7 + z1o + z4, sh);
}

/* RT_JPEG_BLOCKS blocks of samples uniform in [-128, 127] (8-bit samples
 * less 128), block by block, row-major; each transformed rows first, then
 * columns. Results: every coefficient, block by block, row-major (int32). */
uint32_t osm_rt_jfdctint(void)
{
	uint32_t x = rt_seed("jfdctint");
	for (uint32_t b = 0; b < RT_JPEG_BLOCKS; b++)
		for (int i = 0; i < 64; i++)
			jpeg_blk[b][i] = (int32_t)rt_below(&x, 256) - 128;
	OSM_CLOBBER();
	for (uint32_t b = 0; b < RT_JPEG_BLOCKS; b++) {
		for (int r = 0; r < 8; r++)
			jpeg_fdct8(&jpeg_blk[b][8 * r], 1, 0);
		for (int c = 0; c < 8; c++)
			jpeg_fdct8(&jpeg_blk[b][c], 8, 1);
	}
	uint32_t h = RT_FNV_BASIS;
	for (uint32_t b = 0; b < RT_JPEG_BLOCKS; b++)
		for (int i = 0; i < 64; i++)
			h = rt_fnv_u32(h, (uint32_t)jpeg_blk[b][i]);
	return h;
}

/* --- matrix1: integer matrix product ------------------------------------------ */

static uint32_t mat_a[RT_MAT_N][RT_MAT_N], mat_b[RT_MAT_N][RT_MAT_N], mat_c[RT_MAT_N][RT_MAT_N];

/* A and B (random 32-bit entries, A then B, row-major); C = A B modulo 2^32.
 * Results: C, row-major. */
uint32_t osm_rt_matrix1(void)
{
	uint32_t x = rt_seed("matrix1");
	for (int i = 0; i < RT_MAT_N; i++)
		for (int j = 0; j < RT_MAT_N; j++)
			mat_a[i][j] = rt_lcg(&x);
	for (int i = 0; i < RT_MAT_N; i++)
		for (int j = 0; j < RT_MAT_N; j++)
			mat_b[i][j] = rt_lcg(&x);
	OSM_CLOBBER();
	for (int i = 0; i < RT_MAT_N; i++) {
		for (int j = 0; j < RT_MAT_N; j++) {
			uint32_t acc = 0;
			for (int k = 0; k < RT_MAT_N; k++)
				acc += mat_a[i][k] * mat_b[k][j];
			mat_c[i][j] = acc;
		}
	}
	uint32_t h = RT_FNV_BASIS;
	for (int i = 0; i < RT_MAT_N; i++)
		for (int j = 0; j < RT_MAT_N; j++)
			h = rt_fnv_u32(h, mat_c[i][j]);
	return h;
}

/* --- prime: trial division ---------------------------------------------------- */

/* RT_PRIME_N odd candidates 2^24 | (draw >> 8) | 1, in [2^24, 2^25); each
 * one's smallest factor by trial division by 3, 5, 7, ... while d^2 <= n
 * (d^2 < 2^26: no overflow). Results: per candidate its smallest factor (n
 * itself for a prime), then the number of primes. */
uint32_t osm_rt_prime(void)
{
	uint32_t x = rt_seed("prime");
	uint32_t h = RT_FNV_BASIS, primes = 0;
	for (uint32_t c = 0; c < RT_PRIME_N; c++) {
		uint32_t n = (1u << 24) | (rt_lcg(&x) >> 8) | 1u, f = n;
		for (uint32_t d = 3; d * d <= n; d += 2) {
			if (n % d == 0) {
				f = d;
				break;
			}
		}
		primes += f == n;
		h = rt_fnv_u32(h, f);
	}
	return rt_fnv_u32(h, primes);
}

/* --- recursion: doubly recursive Fibonacci and Ackermann ----------------------- */

static volatile uint32_t fib_n = RT_FIB_N, ack_m = RT_ACK_M, ack_n = RT_ACK_N;

static uint32_t fib(uint32_t n, uint32_t *calls)
{
	(*calls)++;
	return n < 2 ? n : fib(n - 1, calls) + fib(n - 2, calls);
}

static uint32_t ack(uint32_t m, uint32_t n, uint32_t *calls)
{
	(*calls)++;
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ack(m - 1, 1, calls);
	return ack(m - 1, ack(m, n - 1, calls), calls);
}

/* fib(n) = fib(n-1) + fib(n-2) by plain recursion (2 fib(n+1) - 1 calls),
 * then Ackermann's A(m, n) by its definition, each counting its calls.
 * Results: fib(n), its calls, A(m, n), its calls (uint32). */
uint32_t osm_rt_recursion(void)
{
	uint32_t fcalls = 0, acalls = 0;
	uint32_t f = fib(fib_n, &fcalls);
	uint32_t a = ack(ack_m, ack_n, &acalls);
	uint32_t h = rt_fnv_u32(RT_FNV_BASIS, f);
	h = rt_fnv_u32(h, fcalls);
	h = rt_fnv_u32(h, a);
	return rt_fnv_u32(h, acalls);
}
