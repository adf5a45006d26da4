/* test_rt_kernels.c - the rt study's workload kernels (bench/rt_kernels*.c):
 * every job returns its expected checksum, twice in a row (a job
 * re-initialises its inputs, so the second is the same work), the names are
 * the 19 of the study, unique, in the NULL-terminated name list in table
 * order, osm_rt_kernel_find() finds each and nothing else, and every kernel
 * states a working set and a description.
 *
 * The expected checksums come from the independent Python reference
 * (tests/probe/rt_kernels_ref.py); under qemu-user (the cross builds) this
 * test proves the kernels give the same bits on aarch64, armv7 and riscv64. */
#include <string.h>

#include "bench/rt_kernels.h"
#include "tap.h"

static const char *const study[] = {
	"bsort", "binarysearch", "bitonic", "complex_updates", "countnegative", "crc", "factorial",
	"filterbank", "fir2dim", "iir", "insertsort", "jfdctint", "lms", "ludcmp", "matrix1",
	"minver", "prime", "recursion", "st",
};
#define N_STUDY (sizeof(study) / sizeof(study[0]))

static void check_names(void)
{
	is_int((int64_t)osm_rt_n_kernels, (int64_t)N_STUDY, "the table has the study's 19 kernels");
	int dup = 0, listed = 1;
	for (size_t i = 0; i < osm_rt_n_kernels; i++) {
		for (size_t j = 0; j < i; j++)
			dup |= strcmp(osm_rt_kernels[i].name, osm_rt_kernels[j].name) == 0;
		listed &= osm_rt_kernel_names[i] && !strcmp(osm_rt_kernel_names[i], osm_rt_kernels[i].name);
	}
	ok(!dup, "kernel names are unique");
	ok(listed && osm_rt_kernel_names[osm_rt_n_kernels] == NULL,
	   "osm_rt_kernel_names lists the table's names in order, then NULL");
	for (size_t i = 0; i < N_STUDY; i++) {
		const struct osm_rt_kernel *k = osm_rt_kernel_find(study[i]);
		ok(k && !strcmp(k->name, study[i]), "find(\"%s\") finds it", study[i]);
	}
	ok(osm_rt_kernel_find("bubblesort") == NULL, "find() of an unknown name is NULL");
	ok(osm_rt_kernel_find("") == NULL, "find() of the empty name is NULL");
	ok(osm_rt_kernel_find("bsor") == NULL && osm_rt_kernel_find("bsortx") == NULL,
	   "find() matches whole names only");
	ok(osm_rt_kernel_find(NULL) == NULL, "find(NULL) is NULL");
}

static void check_kernel(const struct osm_rt_kernel *k)
{
	ok(k->ws_bytes > 0, "%s: ws_bytes %zu > 0", k->name, k->ws_bytes);
	ok(k->desc && strlen(k->desc) > 10 && !strchr(k->desc, '\n'), "%s: a one-line description", k->name);
	uint32_t a = k->run(), b = k->run();
	if (!ok(a == k->expected, "%s: first job's checksum is expected", k->name))
		diag("     got: 0x%08x\n#   wanted: 0x%08x", (unsigned)a, (unsigned)k->expected);
	if (!ok(b == k->expected, "%s: second job's checksum is expected", k->name))
		diag("     got: 0x%08x\n#   wanted: 0x%08x", (unsigned)b, (unsigned)k->expected);
}

int main(void)
{
	check_names();
	for (size_t i = 0; i < osm_rt_n_kernels; i++)
		check_kernel(&osm_rt_kernels[i]);
	return done_testing();
}
