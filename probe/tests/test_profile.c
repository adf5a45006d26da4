/* test_profile.c - the profiler's parts (profile.h): the string table, frame
 * names in the folded format, the function-tracer parser on a known trace
 * (stacks rebuilt from caller edges, self time per stack, call counts, a
 * line cut between two reads, children), kernel and user symbols, and a
 * real perf_event_open profile of a getppid() loop (or "unsupported" with
 * a reason, as under qemu-user or without permission). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profile_int.h"
#include "symbols.h"
#include "tap.h"

static uint64_t get(const struct osm_strmap *m, const char *key)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] && !strcmp(m->keys[i], key))
			return m->vals[i];
	return 0;
}

static void test_strmap(void)
{
	struct osm_strmap m = {0};
	char k[32];
	int fails = 0;
	for (int i = 0; i < 5000; i++) {
		snprintf(k, sizeof(k), "key%d", i);
		fails += osm_strmap_add(&m, k, (uint64_t)i) != 0;
	}
	osm_strmap_add(&m, "key7", 100);
	is_int(fails, 0, "5000 keys added");
	is_int((int64_t)m.n, 5000, "each key once");
	is_int((int64_t)get(&m, "key7"), 107, "weights of one key are summed");
	is_int((int64_t)get(&m, "key4999"), 4999, "a key added after growing is found");
	osm_strmap_free(&m);
}

static void test_frame(void)
{
	char buf[64];
	size_t off = 0;
	osm_prof_frame(buf, sizeof(buf), &off, "root", 0);
	osm_prof_frame(buf, sizeof(buf), &off, "a;b\nc", 1);
	is_str(buf, "root;a:b c_[k]", "';' and newlines cannot split a folded line; kernel frames end in _[k]");
	char tiny[8];
	off = 0;
	osm_prof_frame(tiny, sizeof(tiny), &off, "abcdefghijkl", 0);
	is_int((int64_t)strlen(tiny), 7, "a long name is cut to the buffer");
}

static const char *TRACE =
	"  osmeter-probe-100   [000] ..... 10.000000: tracing_mark_write: osmeter-begin\n"
	"  osmeter-probe-100   [000] ..... 10.000001: __x64_sys_newfstatat <-do_syscall_64\n"
	"  osmeter-probe-100   [000] ..... 10.000003: vfs_statx <-__x64_sys_newfstatat\n"
	"  osmeter-probe-100   [000] ..... 10.000004: path_lookupat <-vfs_statx\n"
	"  osmeter-exec-he-101 [001] ..... 10.000004: do_exit <-__x64_sys_exit\n"
	"  osmeter-exec-he-101 [001] ..... 10.000009: exit_mmap <-do_exit\n"
	"  osmeter-probe-100   [000] ..... 10.000010: cp_new_stat <-__x64_sys_newfstatat\n"
	"  osmeter-probe-100   [000] d..1. 10.000012: tracing_mark_write: osmeter-end\n"
	"  osmeter-probe-100   [000] ..... 10.000020: outside_region <-do_syscall_64\n";

static void test_ftrace_parser(void)
{
	struct osm_profile_spec spec = {.mode = OSM_PROF_FUNCTION};
	struct osm_profile *p = osm_profile_new(&spec);
	/* Fed in two pieces cut inside a line, as reads of trace_pipe are. */
	size_t cut = 150;
	char first[200];
	memcpy(first, TRACE, cut);
	first[cut] = 0;
	osm_prof_ftrace_feed_text(p, first, 100);
	osm_prof_ftrace_feed_text(p, TRACE + cut, 100);
	const char *base = "osmeter-probe;do_syscall_64_[k];__x64_sys_newfstatat_[k]";
	char k[256];
	is_int((int64_t)get(&p->stacks, base), 2000, "1 us -> 3 us is the syscall's own time");
	snprintf(k, sizeof(k), "%s;vfs_statx_[k]", base);
	is_int((int64_t)get(&p->stacks, k), 1000, "vfs_statx: 3 us -> 4 us");
	snprintf(k, sizeof(k), "%s;vfs_statx_[k];path_lookupat_[k]", base);
	is_int((int64_t)get(&p->stacks, k), 6000, "path_lookupat until the next entry of the same task (10 us)");
	snprintf(k, sizeof(k), "%s;cp_new_stat_[k]", base);
	is_int((int64_t)get(&p->stacks, k), 2000, "an entry whose caller is on the stack pops to it; time to the end marker");
	is_int((int64_t)get(&p->stacks, "osmeter-exec-he (child);__x64_sys_exit_[k];do_exit_[k]"), 5000,
	       "a child's stack is its own, under its own process frame");
	is_int((int64_t)p->stacks.n, 5, "nothing else: no time after the end marker, none before a task's first event");
	is_int((int64_t)get(&p->calls, "vfs_statx_[k]"), 1, "calls are counted");
	is_int((int64_t)get(&p->calls, "outside_region_[k]"), 0, "events after the end marker are not");
	is_int((int64_t)p->samples, 6, "six function events in the region");
	osm_profile_free(p);
}

static void test_ksyms(void)
{
	char why[512];
	struct osm_ksyms *k = osm_ksyms_load(why, sizeof(why));
	if (!k) {
		diag("kernel symbols: %s", why);
		ok(strstr(why, "kallsyms") != NULL, "no kernel symbols: the reason names /proc/kallsyms");
		skip(2, "no kernel symbols here");
		return;
	}
	is_str(why, "kallsyms", "kernel symbols loaded");
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256] = "", type;
	unsigned long long addr = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && (type == 'T' || type == 't') && addr &&
		    !strchr(line, '['))
			break;
	if (f)
		fclose(f);
	const char *got = osm_ksyms_find(k, addr);
	/* Several names may share an address: any of them is right, but the
	 * one found must be at that address. */
	int same = 0;
	f = fopen("/proc/kallsyms", "r");
	unsigned long long a2;
	char n2[256];
	while (got && f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a2, &type, n2) == 3 && a2 == addr && !strcmp(n2, got))
			same = 1;
	if (f)
		fclose(f);
	ok(got && same, "an address of kallsyms is found, as a name at that address (%s at %llx: %s)", name, addr,
	   got ? got : "none");
	ok(!osm_ksyms_find(k, 1), "an address below every symbol is not");
	osm_ksyms_free(k);
}

__attribute__((noinline)) static int known_user_function(int x)
{
	return x * 3 + 1;
}

static void test_usyms(void)
{
	struct osm_usyms *u = osm_usyms_load();
	char name[256];
	ok(u != NULL, "/proc/self/maps read");
	osm_usyms_name(u, (uint64_t)(uintptr_t)&known_user_function + 2, name, sizeof(name));
	ok(strstr(name, "known_user_function") != NULL, "a function of this program is named (%s)", name);
	osm_usyms_name(u, 8, name, sizeof(name));
	is_str(name, "[unknown]", "an address outside every mapping is [unknown]");
	osm_usyms_free(u);
	(void)known_user_function(1);
}

/* This thread's CPU time: cpu-clock samples CPU time, so batches of 20 ms
 * of it give 0.4 s x 2000 Hz samples however busy the machine is (20 ms of
 * wall time gave a quarter of that with a neighbour on each CPU). */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_sampling(void)
{
	struct osm_profile_spec spec = {.mode = OSM_PROF_SAMPLE, .event = OSM_PROF_CPU_CLOCK, .frequency = 2000};
	struct osm_profile *p = osm_profile_new(&spec);
	osm_profile_open(p);
	if (strcmp(p->status, "ok")) {
		diag("sampling: %s", p->reason);
		ok(p->reason[0] != 0, "sampling unsupported here, with a reason");
		skip(3, "no sampling here");
		osm_profile_free(p);
		return;
	}
	volatile long sink = 0;
	for (int b = 0; b < 20; b++) {
		osm_profile_enable(p);
		for (double t0 = cpu_s(); cpu_s() - t0 < 0.02;) /* a system call too: read rarely */
			for (int i = 0; i < 100; i++)
				sink += getppid();
		osm_profile_disable(p, 1);
	}
	osm_profile_finish(p);
	is_str(p->status, "ok", "a profile of 0.4 s of getppid()");
	ok(p->samples >= 100, "samples at 2000 Hz over 0.4 s: %llu", (unsigned long long)p->samples);
	uint64_t hit = 0, all = 0;
	for (size_t i = 0; i < p->stacks.cap; i++) {
		if (!p->stacks.keys[i])
			continue;
		all += p->stacks.vals[i];
		if (strstr(p->stacks.keys[i], "getppid"))
			hit += p->stacks.vals[i];
	}
	ok(all && hit * 2 > all, "most samples are in getppid (%llu of %llu)", (unsigned long long)hit,
	   (unsigned long long)all);
	osm_profile_free(p);
	(void)sink;
}

int main(void)
{
	test_strmap();
	test_frame();
	test_ftrace_parser();
	test_ksyms();
	test_usyms();
	test_sampling();
	return done_testing();
}
