/* affinity.c - see affinity.h. */
#include "affinity.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_CPUS 1024

/* The mask the probe started with. osm_pin_self() narrows the calling
 * thread's mask to one CPU, after which sched_getaffinity() would report
 * only that CPU; the CPUs the probe may use (for a second party, a
 * migration, concurrent workers) are the ones it was started with. */
static cpu_set_t initial_set;
static int have_initial;

static int save_initial(void)
{
	if (!have_initial && sched_getaffinity(0, sizeof(initial_set), &initial_set) == 0)
		have_initial = 1;
	return have_initial ? 0 : -1;
}

int osm_allowed_cpus(int *cpus, int max)
{
	int n = 0;
	if (save_initial())
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &initial_set))
			cpus[n++] = c;
	return n;
}

/* Idle + iowait jiffies per CPU from /proc/stat. */
static int read_idle(uint64_t *idle, int max)
{
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	char line[512];
	for (int i = 0; i < max; i++)
		idle[i] = 0;
	while (fgets(line, sizeof(line), f)) {
		int cpu;
		uint64_t v[8] = {0};
		if (sscanf(line, "cpu%d %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
			   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4]) == 6 && cpu >= 0 && cpu < max)
			idle[cpu] = v[3] + v[4];
	}
	fclose(f);
	return 0;
}

static uint64_t idle_a[MAX_CPUS];
static struct timespec idle_t0;
static int idle_started; /* 1: idle_a and idle_t0 hold a first reading */

void osm_least_busy_begin(void)
{
	int cpus[2];
	idle_started = osm_allowed_cpus(cpus, 2) > 1 && read_idle(idle_a, MAX_CPUS) == 0 &&
		       clock_gettime(CLOCK_MONOTONIC, &idle_t0) == 0;
}

int osm_least_busy_end(int sample_ms)
{
	static uint64_t b[MAX_CPUS];
	uint64_t *a = idle_a;
	int cpus[MAX_CPUS];
	int n = osm_allowed_cpus(cpus, MAX_CPUS);
	if (n <= 0)
		return 0;
	if (n == 1 || !idle_started)
		return cpus[0];
	idle_started = 0;
	/* Sleep what is left of the sample_ms since the first reading. */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t left = (int64_t)sample_ms * 1000000 - ((int64_t)(now.tv_sec - idle_t0.tv_sec) * 1000000000 +
							 (now.tv_nsec - idle_t0.tv_nsec));
	if (left > 0) {
		struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
		nanosleep(&ts, NULL);
	}
	if (read_idle(b, MAX_CPUS))
		return cpus[0];
	int best = cpus[0];
	uint64_t best_idle = 0;
	for (int i = 0; i < n; i++) {
		int c = cpus[i];
		if (c >= MAX_CPUS)
			continue;
		uint64_t d = b[c] - a[c];
		if (i == 0 || d > best_idle) {
			best = c;
			best_idle = d;
		}
	}
	return best;
}

int osm_least_busy_cpu(int sample_ms)
{
	osm_least_busy_begin();
	return osm_least_busy_end(sample_ms);
}

int osm_pin_self(int cpu)
{
	save_initial();
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int osm_other_cpu(int cpu)
{
	int cpus[MAX_CPUS];
	int n = osm_allowed_cpus(cpus, MAX_CPUS);
	for (int i = 0; i < n; i++)
		if (cpus[i] != cpu)
			return cpus[i];
	return -1;
}

int osm_set_fifo(int prio, char *why, size_t len)
{
	struct sched_param sp;
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = prio;
	if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0)
		return 0;
	if (errno == EPERM)
		snprintf(why, len, "SCHED_FIFO needs root or CAP_SYS_NICE (or an RLIMIT_RTPRIO of at least %d)", prio);
	else
		snprintf(why, len, "sched_setscheduler(SCHED_FIFO, %d): %s", prio, strerror(errno));
	return -1;
}

int osm_lock_memory(char *why, size_t len)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
		return 0;
	if (errno == EPERM || errno == ENOMEM) {
		struct rlimit rl;
		getrlimit(RLIMIT_MEMLOCK, &rl);
		snprintf(why, len, "mlockall needs root or CAP_IPC_LOCK (RLIMIT_MEMLOCK is %llu KiB): %s",
			 (unsigned long long)(rl.rlim_cur == RLIM_INFINITY ? 0 : rl.rlim_cur / 1024),
			 strerror(errno));
	} else {
		snprintf(why, len, "mlockall: %s", strerror(errno));
	}
	return -1;
}
