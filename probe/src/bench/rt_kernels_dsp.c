/* rt_kernels_dsp.c - the rt kernels of signal processing, in double:
 * complex_updates, filterbank, fir2dim, iir, lms. Written for osmeter from
 * the descriptions of TACLeBench's kernels of these names.
 * Method: docs/methods/rt-kernels.md
 *
 * Only + - * / on doubles, each written out in the order it is evaluated
 * (C evaluates a - b * c - d as (a - (b * c)) - d, as Python does), compiled
 * with -ffp-contract=off: IEEE 754 rounds each operation correctly, so the
 * results are the same bits on every target and in the Python reference. */
#include "rt_kernels_int.h"

/* --- complex_updates: complex multiply-accumulate ----------------------------- */

static double cx_ar[RT_CPLX_N], cx_ai[RT_CPLX_N], cx_br[RT_CPLX_N], cx_bi[RT_CPLX_N];
static double cx_cr[RT_CPLX_N], cx_ci[RT_CPLX_N];

/* Arrays a, b, c of N complex numbers (re then im of each a[i], b[i], c[i]
 * in turn, uniform in [-1, 1)). R rounds of, for each i:
 *   c[i] = c[i] + a[i] b[i]   (re: ar br - ai bi, im: ar bi + ai br)
 *   b[i] = c[i] * 0.5
 * Results: c, re and im of each element. */
uint32_t osm_rt_complex_updates(void)
{
	uint32_t x = rt_seed("complex_updates");
	for (int i = 0; i < RT_CPLX_N; i++) {
		cx_ar[i] = rt_unit(&x);
		cx_ai[i] = rt_unit(&x);
		cx_br[i] = rt_unit(&x);
		cx_bi[i] = rt_unit(&x);
		cx_cr[i] = rt_unit(&x);
		cx_ci[i] = rt_unit(&x);
	}
	OSM_CLOBBER();
	for (int r = 0; r < RT_CPLX_ROUNDS; r++) {
		for (int i = 0; i < RT_CPLX_N; i++) {
			double tr = cx_ar[i] * cx_br[i] - cx_ai[i] * cx_bi[i];
			double ti = cx_ar[i] * cx_bi[i] + cx_ai[i] * cx_br[i];
			cx_cr[i] = cx_cr[i] + tr;
			cx_ci[i] = cx_ci[i] + ti;
			cx_br[i] = cx_cr[i] * 0.5;
			cx_bi[i] = cx_ci[i] * 0.5;
		}
	}
	uint32_t h = RT_FNV_BASIS;
	for (int i = 0; i < RT_CPLX_N; i++) {
		h = rt_fnv_f64(h, cx_cr[i]);
		h = rt_fnv_f64(h, cx_ci[i]);
	}
	return h;
}

/* --- filterbank: analysis and synthesis filter bank --------------------------- */

static double fb_x[RT_FB_LEN], fb_y[RT_FB_LEN], fb_v[RT_FB_LEN], fb_u[RT_FB_LEN];
static double fb_h[RT_FB_BRANCHES][RT_FB_TAPS], fb_f[RT_FB_BRANCHES][RT_FB_TAPS];

/* out[n] = sum over k = 0..min(n, TAPS-1) of c[k] in[n-k], k ascending,
 * from 0.0. */
static void fb_fir(const double *c, const double *in, double *out)
{
	for (int n = 0; n < RT_FB_LEN; n++) {
		double acc = 0.0;
		for (int k = 0; k < RT_FB_TAPS && k <= n; k++)
			acc = acc + c[k] * in[n - k];
		out[n] = acc;
	}
}

/* A signal x of LEN samples, then the analysis filters H[m] and the
 * synthesis filters F[m] (TAPS each, m = 0..M-1, all of H before F), all
 * uniform in [-1, 1). Each branch m: v = H[m] * x (FIR), keep every M-th
 * sample (v[0], v[M], ...), put M-1 zeros after each (u), w = F[m] * u;
 * y = y + w (y from 0.0, branches in order). Results: y. */
uint32_t osm_rt_filterbank(void)
{
	uint32_t x = rt_seed("filterbank");
	for (int n = 0; n < RT_FB_LEN; n++)
		fb_x[n] = rt_unit(&x);
	for (int m = 0; m < RT_FB_BRANCHES; m++)
		for (int k = 0; k < RT_FB_TAPS; k++)
			fb_h[m][k] = rt_unit(&x);
	for (int m = 0; m < RT_FB_BRANCHES; m++)
		for (int k = 0; k < RT_FB_TAPS; k++)
			fb_f[m][k] = rt_unit(&x);
	for (int n = 0; n < RT_FB_LEN; n++)
		fb_y[n] = 0.0;
	OSM_CLOBBER();
	for (int m = 0; m < RT_FB_BRANCHES; m++) {
		fb_fir(fb_h[m], fb_x, fb_v);
		for (int n = 0; n < RT_FB_LEN; n++)
			fb_u[n] = n % RT_FB_BRANCHES == 0 ? fb_v[n] : 0.0;
		fb_fir(fb_f[m], fb_u, fb_v);
		for (int n = 0; n < RT_FB_LEN; n++)
			fb_y[n] = fb_y[n] + fb_v[n];
	}
	uint32_t h = RT_FNV_BASIS;
	for (int n = 0; n < RT_FB_LEN; n++)
		h = rt_fnv_f64(h, fb_y[n]);
	return h;
}

/* --- fir2dim: 2-D FIR filter over an image ------------------------------------ */

#define FIR2_OUT (RT_FIR2_N - 2)
static double fir2_img[RT_FIR2_N][RT_FIR2_N], fir2_out[FIR2_OUT][FIR2_OUT];
static double fir2_c[3][3];

/* The 3 x 3 coefficients, then an N x N image (row-major), uniform in
 * [-1, 1). out[y][x] = sum over r, then s, of c[r][s] img[y+r][x+s] from
 * 0.0 (the valid part: (N-2) x (N-2)). Results: out, row-major. */
uint32_t osm_rt_fir2dim(void)
{
	uint32_t x = rt_seed("fir2dim");
	for (int r = 0; r < 3; r++)
		for (int s = 0; s < 3; s++)
			fir2_c[r][s] = rt_unit(&x);
	for (int i = 0; i < RT_FIR2_N; i++)
		for (int j = 0; j < RT_FIR2_N; j++)
			fir2_img[i][j] = rt_unit(&x);
	OSM_CLOBBER();
	for (int i = 0; i < FIR2_OUT; i++) {
		for (int j = 0; j < FIR2_OUT; j++) {
			double acc = 0.0;
			for (int r = 0; r < 3; r++)
				for (int s = 0; s < 3; s++)
					acc = acc + fir2_c[r][s] * fir2_img[i + r][j + s];
			fir2_out[i][j] = acc;
		}
	}
	uint32_t h = RT_FNV_BASIS;
	for (int i = 0; i < FIR2_OUT; i++)
		for (int j = 0; j < FIR2_OUT; j++)
			h = rt_fnv_f64(h, fir2_out[i][j]);
	return h;
}

/* --- iir: cascade of biquad sections ------------------------------------------- */

static double iir_x[RT_IIR_LEN], iir_y[RT_IIR_LEN];
/* Per section: a1, a2 (poles, all inside the unit circle: stable), b0, b1,
 * b2; dyadic, so exact in binary. */
static const double iir_coef[RT_IIR_SECTIONS][5] = {
	{-1.5, 0.75, 0.25, 0.5, 0.25},
	{-1.25, 0.5625, 0.125, -0.25, 0.125},
	{-0.5, 0.375, 1.0, 0.75, 0.5},
	{0.75, 0.25, 0.5, -1.0, 0.5},
};

/* A signal of LEN samples uniform in [-1, 1) through SECTIONS biquads in
 * direct form II, states from 0.0; per sample and section:
 *   w = in - a1 w1 - a2 w2;  out = b0 w + b1 w1 + b2 w2;  w2 = w1; w1 = w.
 * Results: the output signal, then each section's w1 and w2. */
uint32_t osm_rt_iir(void)
{
	uint32_t x = rt_seed("iir");
	for (int n = 0; n < RT_IIR_LEN; n++)
		iir_x[n] = rt_unit(&x);
	double w1[RT_IIR_SECTIONS], w2[RT_IIR_SECTIONS];
	for (int s = 0; s < RT_IIR_SECTIONS; s++)
		w1[s] = w2[s] = 0.0;
	OSM_CLOBBER();
	for (int n = 0; n < RT_IIR_LEN; n++) {
		double v = iir_x[n];
		for (int s = 0; s < RT_IIR_SECTIONS; s++) {
			const double *c = iir_coef[s];
			double w = v - c[0] * w1[s] - c[1] * w2[s];
			v = c[2] * w + c[3] * w1[s] + c[4] * w2[s];
			w2[s] = w1[s];
			w1[s] = w;
		}
		iir_y[n] = v;
	}
	uint32_t h = RT_FNV_BASIS;
	for (int n = 0; n < RT_IIR_LEN; n++)
		h = rt_fnv_f64(h, iir_y[n]);
	for (int s = 0; s < RT_IIR_SECTIONS; s++) {
		h = rt_fnv_f64(h, w1[s]);
		h = rt_fnv_f64(h, w2[s]);
	}
	return h;
}

/* --- lms: least-mean-squares adaptive filter ----------------------------------- */

#define LMS_PAD (RT_LMS_TAPS - 1)
static double lms_x[LMS_PAD + RT_LMS_LEN], lms_noise[RT_LMS_LEN], lms_e[RT_LMS_LEN];
static double lms_h[RT_LMS_TAPS], lms_w[RT_LMS_TAPS];

/* Identifies an unknown FIR system. Draws: the input signal (LEN samples),
 * the system's TAPS coefficients h, then LEN noise samples, all uniform in
 * [-1, 1); the input is preceded by TAPS-1 zeros. Per sample n, with
 * X(k) = x[n-k] and every sum over k ascending from 0.0:
 *   d = sum h[k] X(k), then d = d + noise[n] / 128   (desired)
 *   y = sum w[k] X(k)                                (the filter, w from 0)
 *   e = d - y;  g = e / 64 (mu);  w[k] = w[k] + g X(k) for each k
 * Results: e for every sample, then the final w. */
uint32_t osm_rt_lms(void)
{
	uint32_t x = rt_seed("lms");
	for (int n = 0; n < LMS_PAD; n++)
		lms_x[n] = 0.0;
	for (int n = 0; n < RT_LMS_LEN; n++)
		lms_x[LMS_PAD + n] = rt_unit(&x);
	for (int k = 0; k < RT_LMS_TAPS; k++) {
		lms_h[k] = rt_unit(&x);
		lms_w[k] = 0.0;
	}
	for (int n = 0; n < RT_LMS_LEN; n++)
		lms_noise[n] = rt_unit(&x);
	OSM_CLOBBER();
	for (int n = 0; n < RT_LMS_LEN; n++) {
		const double *xn = &lms_x[LMS_PAD + n]; /* xn[-k] = X(k) */
		double d = 0.0, y = 0.0;
		for (int k = 0; k < RT_LMS_TAPS; k++)
			d = d + lms_h[k] * xn[-k];
		d = d + lms_noise[n] / 128.0;
		for (int k = 0; k < RT_LMS_TAPS; k++)
			y = y + lms_w[k] * xn[-k];
		double e = d - y, g = e / 64.0;
		for (int k = 0; k < RT_LMS_TAPS; k++)
			lms_w[k] = lms_w[k] + g * xn[-k];
		lms_e[n] = e;
	}
	uint32_t h = RT_FNV_BASIS;
	for (int n = 0; n < RT_LMS_LEN; n++)
		h = rt_fnv_f64(h, lms_e[n]);
	for (int k = 0; k < RT_LMS_TAPS; k++)
		h = rt_fnv_f64(h, lms_w[k]);
	return h;
}
