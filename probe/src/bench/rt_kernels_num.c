/* rt_kernels_num.c - the rt kernels of numerical linear algebra and
 * statistics, in double: ludcmp, minver, st. Written for osmeter from the
 * descriptions of TACLeBench's kernels of these names.
 * Method: docs/methods/rt-kernels.md
 *
 * Only + - * / and sqrt on doubles, in the order written, compiled with
 * -ffp-contract=off (see rt_kernels_dsp.c): bit-identical everywhere. */
#include <math.h>

#include "rt_kernels_int.h"

/* --- ludcmp: LU decomposition and solve ---------------------------------------- */

static double lu_a[RT_LU_N][RT_LU_N], lu_b[RT_LU_N], lu_y[RT_LU_N], lu_x[RT_LU_N];

/* A (row-major, uniform in [-1, 1), then N added to each diagonal entry:
 * diagonally dominant, so no pivoting is needed), then b. In place,
 * Doolittle, right-looking: for k = 0..N-1, for i > k: a[i][k] = a[i][k] /
 * a[k][k], then for j > k: a[i][j] = a[i][j] - a[i][k] a[k][j]. Then
 * L y = b forward (y[i] = b[i] - a[i][j] y[j] for j = 0..i-1 in turn) and
 * U x = y backward (i from N-1 down: s = y[i] - a[i][j] x[j] for
 * j = i+1..N-1 in turn, x[i] = s / a[i][i]). Results: x, then U's diagonal. */
uint32_t osm_rt_ludcmp(void)
{
	uint32_t x = rt_seed("ludcmp");
	for (int i = 0; i < RT_LU_N; i++)
		for (int j = 0; j < RT_LU_N; j++)
			lu_a[i][j] = rt_unit(&x);
	for (int i = 0; i < RT_LU_N; i++)
		lu_a[i][i] = lu_a[i][i] + (double)RT_LU_N;
	for (int i = 0; i < RT_LU_N; i++)
		lu_b[i] = rt_unit(&x);
	OSM_CLOBBER();
	for (int k = 0; k < RT_LU_N; k++) {
		for (int i = k + 1; i < RT_LU_N; i++) {
			double l = lu_a[i][k] / lu_a[k][k];
			lu_a[i][k] = l;
			for (int j = k + 1; j < RT_LU_N; j++)
				lu_a[i][j] = lu_a[i][j] - l * lu_a[k][j];
		}
	}
	for (int i = 0; i < RT_LU_N; i++) {
		double s = lu_b[i];
		for (int j = 0; j < i; j++)
			s = s - lu_a[i][j] * lu_y[j];
		lu_y[i] = s;
	}
	for (int i = RT_LU_N - 1; i >= 0; i--) {
		double s = lu_y[i];
		for (int j = i + 1; j < RT_LU_N; j++)
			s = s - lu_a[i][j] * lu_x[j];
		lu_x[i] = s / lu_a[i][i];
	}
	uint32_t h = RT_FNV_BASIS;
	for (int i = 0; i < RT_LU_N; i++)
		h = rt_fnv_f64(h, lu_x[i]);
	for (int i = 0; i < RT_LU_N; i++)
		h = rt_fnv_f64(h, lu_a[i][i]);
	return h;
}

/* --- minver: matrix inversion --------------------------------------------------- */

#define MINV_W (2 * RT_MINV_N)
static double minv_m[RT_MINV_N][MINV_W];

/* Swaps rows p and k of [A | I] (whole rows). */
static void minv_swap(int p, int k)
{
	for (int j = 0; j < MINV_W; j++) {
		double t = minv_m[p][j];
		minv_m[p][j] = minv_m[k][j];
		minv_m[k][j] = t;
	}
}

/* A (row-major, uniform in [-1, 1)) inverted by Gauss-Jordan elimination
 * with partial pivoting on [A | I]: for each column k, the pivot row p is
 * the first of rows k..N-1 with the largest |m[p][k]|; rows p and k swap
 * (det = -det when p != k); det = det * pivot; row k is divided by the
 * pivot (m[k][j] = m[k][j] / pivot, all 2N columns); every other row i
 * gets m[i][j] = m[i][j] - f m[k][j] for all 2N columns, f = m[i][k] taken
 * before. Results: the inverse (the right half, row-major), the
 * determinant (det from 1.0), then each step's pivot row (uint32). */
uint32_t osm_rt_minver(void)
{
	uint32_t x = rt_seed("minver"), piv_row[RT_MINV_N];
	for (int i = 0; i < RT_MINV_N; i++) {
		for (int j = 0; j < RT_MINV_N; j++) {
			minv_m[i][j] = rt_unit(&x);
			minv_m[i][RT_MINV_N + j] = i == j ? 1.0 : 0.0;
		}
	}
	OSM_CLOBBER();
	double det = 1.0;
	for (int k = 0; k < RT_MINV_N; k++) {
		int p = k;
		double best = rt_abs(minv_m[k][k]);
		for (int i = k + 1; i < RT_MINV_N; i++) {
			if (rt_abs(minv_m[i][k]) > best) {
				best = rt_abs(minv_m[i][k]);
				p = i;
			}
		}
		piv_row[k] = (uint32_t)p;
		if (p != k) {
			minv_swap(p, k);
			det = -det;
		}
		double pv = minv_m[k][k];
		det = det * pv;
		for (int j = 0; j < MINV_W; j++)
			minv_m[k][j] = minv_m[k][j] / pv;
		for (int i = 0; i < RT_MINV_N; i++) {
			if (i == k)
				continue;
			double f = minv_m[i][k];
			for (int j = 0; j < MINV_W; j++)
				minv_m[i][j] = minv_m[i][j] - f * minv_m[k][j];
		}
	}
	uint32_t h = RT_FNV_BASIS;
	for (int i = 0; i < RT_MINV_N; i++)
		for (int j = 0; j < RT_MINV_N; j++)
			h = rt_fnv_f64(h, minv_m[i][RT_MINV_N + j]);
	h = rt_fnv_f64(h, det);
	for (int k = 0; k < RT_MINV_N; k++)
		h = rt_fnv_u32(h, piv_row[k]);
	return h;
}

/* --- st: statistics of two arrays ------------------------------------------------ */

static double st_a[RT_ST_N], st_b[RT_ST_N];

/* Per i: u, v uniform in [-1, 1) (u first); a[i] = u, b[i] = u 0.75 + v 0.25
 * (correlated). Sums i ascending from 0.0: sum_a, sum_b; mean = sum / N;
 * var = sum (a[i] - mean_a)(a[i] - mean_a) / N (b alike); sd = sqrt(var);
 * cov = sum (a[i] - mean_a)(b[i] - mean_b) / N; corr = cov / (sd_a sd_b).
 * Results: sum_a, sum_b, mean_a, mean_b, var_a, var_b, sd_a, sd_b, corr. */
uint32_t osm_rt_st(void)
{
	uint32_t x = rt_seed("st");
	for (int i = 0; i < RT_ST_N; i++) {
		double u = rt_unit(&x), v = rt_unit(&x);
		st_a[i] = u;
		st_b[i] = u * 0.75 + v * 0.25;
	}
	OSM_CLOBBER();
	double r[9], sa = 0.0, sb = 0.0;
	for (int i = 0; i < RT_ST_N; i++)
		sa = sa + st_a[i];
	for (int i = 0; i < RT_ST_N; i++)
		sb = sb + st_b[i];
	double ma = sa / RT_ST_N, mb = sb / RT_ST_N, va = 0.0, vb = 0.0, cv = 0.0;
	for (int i = 0; i < RT_ST_N; i++)
		va = va + (st_a[i] - ma) * (st_a[i] - ma);
	for (int i = 0; i < RT_ST_N; i++)
		vb = vb + (st_b[i] - mb) * (st_b[i] - mb);
	for (int i = 0; i < RT_ST_N; i++)
		cv = cv + (st_a[i] - ma) * (st_b[i] - mb);
	va = va / RT_ST_N;
	vb = vb / RT_ST_N;
	cv = cv / RT_ST_N;
	double da = sqrt(va), db = sqrt(vb);
	r[0] = sa, r[1] = sb, r[2] = ma, r[3] = mb, r[4] = va, r[5] = vb;
	r[6] = da, r[7] = db, r[8] = cv / (da * db);
	uint32_t h = RT_FNV_BASIS;
	for (int k = 0; k < 9; k++)
		h = rt_fnv_f64(h, r[k]);
	return h;
}
