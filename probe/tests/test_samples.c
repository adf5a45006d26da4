/* test_samples.c - samples.h: the growable vector (growth past its first
 * capacity, reserve, free), the comparison and sort, the median of odd,
 * even, one and no values (NaN), the median of a copy leaving its input
 * alone, and the MAD against values worked out by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_vector(void)
{
	struct osm_samples s = {0};
	size_t want = 3 * OSM_SAMPLES_FIRST_CAP + 7, fails = 0;
	for (size_t i = 0; i < want; i++)
		fails += osm_samples_push(&s, (double)i) != 0;
	is_int((int64_t)fails, 0, "every push succeeds");
	is_int((int64_t)s.n, (int64_t)want, "n counts the pushes, past the first capacity");
	ok(s.cap >= s.n, "capacity %zu holds n %zu", s.cap, s.n);
	is_int((int64_t)s.cap, 4 * OSM_SAMPLES_FIRST_CAP, "capacity doubles from the first allocation");
	int same = 1;
	for (size_t i = 0; i < want; i++)
		same &= s.v[i] == (double)i;
	ok(same, "values kept in order across reallocations");

	size_t room = s.cap - s.n;
	double *before = s.v;
	is_int(osm_samples_reserve(&s, room), 0, "reserve of what is free: 0");
	ok(s.v == before && s.cap == 4 * OSM_SAMPLES_FIRST_CAP, "reserve of what is free allocates nothing");
	is_int(osm_samples_reserve(&s, room + 5 * OSM_SAMPLES_FIRST_CAP), 0, "reserve of more: 0");
	ok(s.cap - s.n >= room + 5 * OSM_SAMPLES_FIRST_CAP, "reserve makes room for all of it (cap %zu)", s.cap);
	is_int((int64_t)s.n, (int64_t)want, "reserve leaves n alone");

	osm_samples_free(&s);
	ok(!s.v && !s.n && !s.cap, "free leaves an empty vector");
	is_int(osm_samples_push(&s, 2.5), 0, "an emptied vector takes values again");
	is_int((int64_t)s.cap, OSM_SAMPLES_FIRST_CAP, "its first capacity");
	is_double_near(s.v[0], 2.5, 0, "and keeps them");
	osm_samples_free(&s);
}

static void test_sort(void)
{
	double a = 1, b = 2;
	is_int(osm_cmp_double(&a, &b), -1, "cmp 1 < 2");
	is_int(osm_cmp_double(&b, &a), 1, "cmp 2 > 1");
	is_int(osm_cmp_double(&a, &a), 0, "cmp 1 = 1");
	double v[] = {5, -1, 3.5, 0, 3.5, -7, 1e300, -0.0};
	double w[] = {-7, -1, 0, 0, 3.5, 3.5, 5, 1e300};
	osm_sort_doubles(v, N(v));
	int same = 1;
	for (size_t i = 0; i < N(v); i++)
		same &= v[i] == w[i];
	ok(same, "sort ascending");
	osm_sort_doubles(NULL, 0); /* nothing to do, nothing touched */
	ok(1, "sort of no values");
}

static void test_median(void)
{
	double odd[] = {9, 1, 5, 3, 7};
	is_double_near(osm_sort_median(odd, N(odd)), 5, 0, "median of 5 values: the middle one");
	ok(odd[0] == 1 && odd[4] == 9, "osm_sort_median sorts its input");
	double even[] = {4, 1, 10, 2};
	is_double_near(osm_sort_median(even, N(even)), 3, 0, "median of 4 values: mean of the middle two");
	double one[] = {42};
	is_double_near(osm_sort_median(one, 1), 42, 0, "median of one value: that value");
	ok(isnan(osm_sort_median(NULL, 0)), "median of no values: NaN");
	ok(isnan(osm_sorted_median(NULL, 0)), "sorted median of no values: NaN");
	double sorted[] = {1, 2, 3, 4, 100, 200};
	is_double_near(osm_sorted_median(sorted, N(sorted)), 3.5, 0, "median of sorted values, unsorted by it");

	double keep[] = {3, 1, 2, 8};
	is_double_near(osm_median(keep, N(keep)), 2.5, 0, "median of a copy");
	ok(keep[0] == 3 && keep[1] == 1 && keep[2] == 2 && keep[3] == 8, "osm_median leaves its input alone");
	ok(isnan(osm_median(NULL, 0)), "median of a copy of no values: NaN");
}

static void test_mad(void)
{
	/* {1, 2, 3, 4, 100}: median 3; deviations {2, 1, 0, 1, 97}, sorted
	 * {0, 1, 1, 2, 97}: MAD 1. */
	double v[] = {1, 2, 3, 4, 100};
	double scratch[N(v)];
	double med = osm_median(v, N(v));
	is_double_near(med, 3, 0, "median of {1, 2, 3, 4, 100}");
	is_double_near(osm_mad(v, N(v), med, scratch), 1, 0, "MAD of {1, 2, 3, 4, 100} is 1");
	ok(v[4] == 100 && v[0] == 1, "osm_mad leaves v alone");
	/* {2, 4, 6, 8, 10, 30}: median 7; deviations {5, 3, 1, 1, 3, 23}, sorted
	 * {1, 1, 3, 3, 5, 23}: MAD 3. */
	double e[] = {10, 2, 30, 6, 8, 4};
	double es[N(e)];
	is_double_near(osm_mad(e, N(e), osm_median(e, N(e)), es), 3, 0, "MAD of an even count: 3");
	/* About another center: {1, 2, 3} about 0 is the median of {1, 2, 3}. */
	double c[] = {-1, 2, -3}, cs[3];
	is_double_near(osm_mad(c, 3, 0, cs), 2, 0, "median absolute value about 0");
	double k[] = {5, 5, 5}, ks[3];
	is_double_near(osm_mad(k, 3, 5, ks), 0, 0, "MAD of identical values is 0");
	ok(isnan(osm_mad(NULL, 0, 0, NULL)), "MAD of no values: NaN");
}

int main(void)
{
	test_vector();
	test_sort();
	test_median();
	test_mad();
	return done_testing();
}
