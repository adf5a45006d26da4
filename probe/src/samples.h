/* samples.h - figures kept as doubles: a growable vector, sorting, the
 * median and the median absolute deviation (MAD). The one home of what the
 * harness and the benchmarks used to write out each for itself.
 *
 * Order: ascending by `<`; a NaN compares equal to everything, so where it
 * ends up is unspecified (no figure the probe keeps is NaN: the harness
 * refuses a non-finite sample). The median of an even count is the mean of
 * the two middle values; of none, NaN. */
#ifndef OSM_SAMPLES_H
#define OSM_SAMPLES_H

#include <stddef.h>

/* A growable vector; {0} is an empty one. */
struct osm_samples {
	double *v;
	size_t n, cap;
};

#define OSM_SAMPLES_FIRST_CAP 1024 /* the first allocation, in values */

/* Room for `more` values beyond n (capacity doubled as often as needed,
 * first OSM_SAMPLES_FIRST_CAP): after it, that many pushes allocate
 * nothing. 0, or -1 out of memory (the vector is unchanged). */
int osm_samples_reserve(struct osm_samples *s, size_t more);
/* Appends x. 0, or -1 out of memory (the vector is unchanged). */
int osm_samples_push(struct osm_samples *s, double x);
void osm_samples_free(struct osm_samples *s);

/* qsort()'s comparison of two doubles: -1, 0, 1. */
int osm_cmp_double(const void *a, const void *b);
/* Sorts v[0..n) in place, ascending. */
void osm_sort_doubles(double *v, size_t n);
/* The median of v[0..n), sorted already. NaN for n = 0. */
double osm_sorted_median(const double *v, size_t n);
/* Sorts v[0..n) in place and returns its median. NaN for n = 0. */
double osm_sort_median(double *v, size_t n);
/* The median of a copy of v (v is not reordered). NaN for n = 0, or when
 * the copy cannot be allocated. */
double osm_median(const double *v, size_t n);
/* The median of |v[i] - center| (center: v's median for the MAD). scratch
 * holds n doubles and is overwritten (sorted deviations); v may not be
 * scratch. NaN for n = 0. */
double osm_mad(const double *v, size_t n, double center, double *scratch);

#endif
