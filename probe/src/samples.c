/* samples.c - see samples.h. */
#include "samples.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int osm_samples_reserve(struct osm_samples *s, size_t more)
{
	if (s->cap - s->n >= more)
		return 0;
	size_t nc = s->cap ? s->cap * 2 : OSM_SAMPLES_FIRST_CAP;
	while (nc - s->n < more)
		nc *= 2;
	double *nv = realloc(s->v, nc * sizeof(double));
	if (!nv)
		return -1;
	s->v = nv;
	s->cap = nc;
	return 0;
}

int osm_samples_push(struct osm_samples *s, double x)
{
	if (osm_samples_reserve(s, 1))
		return -1;
	s->v[s->n++] = x;
	return 0;
}

void osm_samples_free(struct osm_samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int osm_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void osm_sort_doubles(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(double), osm_cmp_double);
}

double osm_sorted_median(const double *v, size_t n)
{
	if (!n)
		return NAN;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double osm_sort_median(double *v, size_t n)
{
	osm_sort_doubles(v, n);
	return osm_sorted_median(v, n);
}

double osm_median(const double *v, size_t n)
{
	if (!n)
		return NAN;
	double *c = malloc(n * sizeof(double));
	if (!c)
		return NAN;
	memcpy(c, v, n * sizeof(double));
	double med = osm_sort_median(c, n);
	free(c);
	return med;
}

double osm_mad(const double *v, size_t n, double center, double *scratch)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs(v[i] - center);
	return osm_sort_median(scratch, n);
}
