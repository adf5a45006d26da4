/* rt_kernels_sort.c - the rt kernels that sort, search and scan integer
 * arrays: bsort, insertsort, bitonic, binarysearch, countnegative. Written
 * for osmeter from the descriptions of TACLeBench's kernels of these names;
 * sizes raised so the working set is tens to hundreds of KiB.
 * Method: docs/methods/rt-kernels.md */
#include "rt_kernels_int.h"

/* --- bsort: bubble sort with early exit ------------------------------------ */

static uint32_t bsort_a[RT_BSORT_N];

/* Keys 4 i + r, r uniform in [0, 32): nearly sorted, no key more than 7
 * places right of its place, so the sort takes 7 passes (a random array of
 * this size would take ~8000 passes: 130 ms on a 2.1 GHz Xeon). Each pass
 * swaps neighbours out of order and ends where the last swap was; the sort
 * ends when a pass swaps nothing. Results: the sorted keys, then the swap
 * count (= the number of inversions, 8397). */
uint32_t osm_rt_bsort(void)
{
	uint32_t x = rt_seed("bsort");
	for (uint32_t i = 0; i < RT_BSORT_N; i++)
		bsort_a[i] = 4 * i + rt_below(&x, 32);
	OSM_CLOBBER();
	uint32_t swaps = 0, end = RT_BSORT_N;
	while (end > 1) {
		uint32_t last = 0;
		for (uint32_t i = 1; i < end; i++) {
			if (bsort_a[i - 1] > bsort_a[i]) {
				uint32_t t = bsort_a[i - 1];
				bsort_a[i - 1] = bsort_a[i];
				bsort_a[i] = t;
				last = i;
				swaps++;
			}
		}
		end = last;
	}
	uint32_t h = RT_FNV_BASIS;
	for (uint32_t i = 0; i < RT_BSORT_N; i++)
		h = rt_fnv_u32(h, bsort_a[i]);
	return rt_fnv_u32(h, swaps);
}

/* --- insertsort: insertion sort -------------------------------------------- */

static uint32_t insert_a[RT_INSERT_N];

/* Keys 8 i + r, r uniform in [0, 256): nearly sorted (no key more than 31
 * places from its place). Each key is moved left past the larger keys
 * before it. Results: the sorted keys, then the number of moves
 * (= inversions, 82157). */
uint32_t osm_rt_insertsort(void)
{
	uint32_t x = rt_seed("insertsort");
	for (uint32_t i = 0; i < RT_INSERT_N; i++)
		insert_a[i] = 8 * i + rt_below(&x, 256);
	OSM_CLOBBER();
	uint32_t moves = 0;
	for (uint32_t i = 1; i < RT_INSERT_N; i++) {
		uint32_t v = insert_a[i], j = i;
		while (j > 0 && insert_a[j - 1] > v) {
			insert_a[j] = insert_a[j - 1];
			j--;
			moves++;
		}
		insert_a[j] = v;
	}
	uint32_t h = RT_FNV_BASIS;
	for (uint32_t i = 0; i < RT_INSERT_N; i++)
		h = rt_fnv_u32(h, insert_a[i]);
	return rt_fnv_u32(h, moves);
}

/* --- bitonic: bitonic sorting network -------------------------------------- */

static uint32_t bitonic_a[RT_BITONIC_N];

/* Random 32-bit keys sorted ascending by the iterative bitonic network:
 * for block sizes k = 2, 4, ..., N and distances j = k/2, ..., 1, each
 * element i with i & j == 0 and its partner i + j are put in ascending
 * order when i & k is 0, else in descending order (the same for all i of
 * one aligned run of 2 j, as 2 j <= k). Results: the sorted keys. */
uint32_t osm_rt_bitonic(void)
{
	uint32_t x = rt_seed("bitonic");
	for (uint32_t i = 0; i < RT_BITONIC_N; i++)
		bitonic_a[i] = rt_lcg(&x);
	OSM_CLOBBER();
	for (uint32_t k = 2; k <= RT_BITONIC_N; k <<= 1) {
		for (uint32_t j = k >> 1; j > 0; j >>= 1) {
			for (uint32_t b = 0; b < RT_BITONIC_N; b += 2 * j) {
				int up = (b & k) == 0;
				uint32_t *p = &bitonic_a[b], *q = &bitonic_a[b + j];
				for (uint32_t i = 0; i < j; i++) {
					uint32_t lo = p[i] < q[i] ? p[i] : q[i];
					uint32_t hi = p[i] < q[i] ? q[i] : p[i];
					p[i] = up ? lo : hi;
					q[i] = up ? hi : lo;
				}
			}
		}
	}
	uint32_t h = RT_FNV_BASIS;
	for (uint32_t i = 0; i < RT_BITONIC_N; i++)
		h = rt_fnv_u32(h, bitonic_a[i]);
	return h;
}

/* --- binarysearch: lookups in a sorted table --------------------------------- */

static uint32_t bsearch_key[RT_BSEARCH_N];
static uint32_t bsearch_val[RT_BSEARCH_N];

/* A table of N records, key 4 i + r (r uniform in [0, 4): strictly
 * increasing) and a random 32-bit value, drawn in that order per record;
 * then Q lookups of keys uniform in [0, 4 N) (about one in four present).
 * Each lookup finds the first key >= q by halving [lo, hi). Results: per
 * lookup the value found or 0xffffffff, then the number found. */
uint32_t osm_rt_binarysearch(void)
{
	uint32_t x = rt_seed("binarysearch");
	for (uint32_t i = 0; i < RT_BSEARCH_N; i++) {
		bsearch_key[i] = 4 * i + rt_below(&x, 4);
		bsearch_val[i] = rt_lcg(&x);
	}
	OSM_CLOBBER();
	uint32_t h = RT_FNV_BASIS, found = 0;
	for (uint32_t n = 0; n < RT_BSEARCH_Q; n++) {
		uint32_t q = rt_below(&x, 4 * RT_BSEARCH_N);
		uint32_t lo = 0, hi = RT_BSEARCH_N;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (bsearch_key[mid] < q)
				lo = mid + 1;
			else
				hi = mid;
		}
		uint32_t v = 0xffffffffu;
		if (lo < RT_BSEARCH_N && bsearch_key[lo] == q) {
			v = bsearch_val[lo];
			found++;
		}
		h = rt_fnv_u32(h, v);
	}
	return rt_fnv_u32(h, found);
}

/* --- countnegative: signs in a matrix ---------------------------------------- */

static int32_t countneg_m[RT_COUNTNEG_N][RT_COUNTNEG_N];

/* An N x N matrix of integers uniform in [-1000, 1000], row by row. Per row:
 * the count and sum of the negative entries and of the positive ones.
 * Results: those four per row (int32), then the four totals. No sum can
 * overflow: |sum| <= 1000 N^2 = 6.6e7. */
uint32_t osm_rt_countnegative(void)
{
	uint32_t x = rt_seed("countnegative");
	for (uint32_t i = 0; i < RT_COUNTNEG_N; i++)
		for (uint32_t j = 0; j < RT_COUNTNEG_N; j++)
			countneg_m[i][j] = (int32_t)rt_below(&x, 2001) - 1000;
	OSM_CLOBBER();
	uint32_t h = RT_FNV_BASIS;
	int32_t tot[4] = {0, 0, 0, 0};
	for (uint32_t i = 0; i < RT_COUNTNEG_N; i++) {
		int32_t r[4] = {0, 0, 0, 0}; /* neg count, neg sum, pos count, pos sum */
		for (uint32_t j = 0; j < RT_COUNTNEG_N; j++) {
			int32_t v = countneg_m[i][j];
			if (v < 0) {
				r[0]++;
				r[1] += v;
			} else if (v > 0) {
				r[2]++;
				r[3] += v;
			}
		}
		for (int k = 0; k < 4; k++) {
			h = rt_fnv_u32(h, (uint32_t)r[k]);
			tot[k] += r[k];
		}
	}
	for (int k = 0; k < 4; k++)
		h = rt_fnv_u32(h, (uint32_t)tot[k]);
	return h;
}
