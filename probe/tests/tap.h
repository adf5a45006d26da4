/* tap.h - zero-dependency TAP (Test Anything Protocol) helpers for the
 * probe's C unit tests (fio mock-tests idea). Header only, stdout only.
 *
 *   plan(n);                       optional; else done_testing() prints it
 *   ok(cond, "name %d", i);        every check returns its condition
 *   is_int(got, want, "name");     int64 equality
 *   is_double_near(got, want, tol, "name");  |got - want| <= tol
 *   is_str(got, want, "name");     strcmp equality (NULL only equals NULL)
 *   skip(n, "reason");             n passing "# SKIP" lines
 *   diag("fmt", ...);              "# " comment line
 *   return done_testing();         0 only if every check passed and the
 *                                  count matches the plan
 *
 * A failing check prints what was got and what was wanted, so a CTest log
 * (--output-on-failure) is enough to see why. */
#ifndef OSM_TAP_H
#define OSM_TAP_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TAP_PRINTF(f, a) __attribute__((format(printf, (f), (a))))

static int tap_run_, tap_failed_, tap_planned_ = -1;

static inline void plan(int n)
{
	tap_planned_ = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline TAP_PRINTF(1, 0) void tap_vline_(const char *fmt, va_list ap)
{
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline TAP_PRINTF(1, 2) void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vline_(fmt, ap);
	va_end(ap);
}

static inline TAP_PRINTF(2, 0) int tap_vok_(int cond, const char *fmt, va_list ap)
{
	tap_run_++;
	if (!cond)
		tap_failed_++;
	printf("%sok %d - ", cond ? "" : "not ", tap_run_);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

static inline TAP_PRINTF(2, 3) int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vok_(cond, fmt, ap);
	va_end(ap);
	return cond;
}

static inline TAP_PRINTF(3, 4) int is_int(int64_t got, int64_t want, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int c = tap_vok_(got == want, fmt, ap);
	va_end(ap);
	if (!c)
		diag("     got: %" PRId64 "\n#   wanted: %" PRId64, got, want);
	return c;
}

static inline TAP_PRINTF(4, 5) int is_double_near(double got, double want, double tol,
						   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* Written so that NaN never passes. */
	int c = tap_vok_(fabs(got - want) <= tol, fmt, ap);
	va_end(ap);
	if (!c)
		diag("     got: %.17g\n#   wanted: %.17g +- %.3g", got, want, tol);
	return c;
}

static inline TAP_PRINTF(3, 4) int is_str(const char *got, const char *want, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int same = (got && want) ? !strcmp(got, want) : got == want;
	int c = tap_vok_(same, fmt, ap);
	va_end(ap);
	if (!c)
		diag("     got: %s%s%s\n#   wanted: %s%s%s", got ? "'" : "", got ? got : "NULL",
		     got ? "'" : "", want ? "'" : "", want ? want : "NULL", want ? "'" : "");
	return c;
}

static inline void skip(int n, const char *reason)
{
	for (int i = 0; i < n; i++) {
		tap_run_++;
		printf("ok %d # SKIP %s\n", tap_run_, reason);
	}
	fflush(stdout);
}

static inline int done_testing(void)
{
	if (tap_planned_ < 0)
		printf("1..%d\n", tap_run_);
	else if (tap_planned_ != tap_run_)
		diag("planned %d tests but ran %d", tap_planned_, tap_run_);
	if (tap_failed_)
		diag("failed %d of %d tests", tap_failed_, tap_run_);
	fflush(stdout);
	return tap_failed_ || (tap_planned_ >= 0 && tap_planned_ != tap_run_) || tap_run_ == 0;
}

#endif
