/* procs.c - see procs.h. */
#include "procs.h"
#include "sysmem.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

void *osm_shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void osm_shared_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

static void kill_children(void *arg)
{
	struct osm_children *c = arg;
	int saved = errno;
	for (int i = 0; i < c->n; i++)
		if (c->pid[i] > 0)
			kill(c->pid[i], SIGKILL);
	for (int i = 0; i < c->n; i++) {
		if (c->pid[i] <= 0)
			continue;
		while (waitpid(c->pid[i], NULL, 0) < 0 && errno == EINTR)
			;
		c->pid[i] = 0;
	}
	errno = saved;
}

void osm_children_init(struct osm_children *c)
{
	c->n = 0;
	c->handle = -1;
}

int osm_children_add(struct osm_children *c, pid_t pid)
{
	if (c->n == OSM_MAX_CHILDREN)
		return -1;
	if (c->handle < 0 && (c->handle = osm_cleanup_push(kill_children, c)) < 0)
		return -1;
	c->pid[c->n] = pid;
	c->n = c->n + 1;
	return 0;
}

int osm_children_reap_dead(struct osm_children *c, pid_t *pid, int *status)
{
	for (int i = 0; i < c->n; i++) {
		if (c->pid[i] > 0 && waitpid(c->pid[i], status, WNOHANG) == c->pid[i]) {
			*pid = c->pid[i];
			c->pid[i] = 0;
			return 1;
		}
	}
	return 0;
}

void osm_children_kill(struct osm_children *c)
{
	if (c->handle >= 0)
		osm_cleanup_pop(c->handle, 1);
	else
		kill_children(c);
	c->handle = -1;
	c->n = 0;
}

void osm_child_init(pid_t parent)
{
	/* The signals cleanup.c handles in the probe (osm_cleanup_install_signals). */
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent may have died between fork() and prctl(): then nobody
	 * would send the death signal. */
	if (getppid() != parent)
		_exit(0);
}

int osm_futex_wait(atomic_uint *addr, unsigned val, int shared, const struct timespec *timeout)
{
	int op = FUTEX_WAIT | (shared ? 0 : FUTEX_PRIVATE_FLAG);
	long r = syscall(SYS_futex, (unsigned *)addr, op, val, timeout, NULL, 0);
	if (r == 0 || errno == EAGAIN || errno == EINTR)
		return 0; /* woken, value already changed, or a signal: the caller re-checks */
	return -1;
}

int osm_futex_wake(atomic_uint *addr, int n, int shared)
{
	int op = FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG);
	return (int)syscall(SYS_futex, (unsigned *)addr, op, n, NULL, NULL, 0);
}

void osm_barrier_init(struct osm_barrier *b, unsigned n, int shared)
{
	atomic_store(&b->count, 0);
	atomic_store(&b->gen, 0);
	b->n = n;
	b->shared = shared;
}

unsigned osm_barrier_arrive(struct osm_barrier *b)
{
	unsigned gen = atomic_load(&b->gen);
	if (atomic_fetch_add(&b->count, 1) + 1 == b->n) {
		/* Last one: reset the count before anyone can leave, then open. */
		atomic_store(&b->count, 0);
		atomic_fetch_add(&b->gen, 1);
		osm_futex_wake(&b->gen, INT_MAX, b->shared);
	}
	return gen;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int osm_barrier_await(struct osm_barrier *b, unsigned gen, int timeout_ms)
{
	int64_t end = mono_ns() + (int64_t)timeout_ms * 1000000;
	while (atomic_load(&b->gen) == gen) {
		int64_t left = end - mono_ns();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
		if (osm_futex_wait(&b->gen, gen, b->shared, &ts) && errno != ETIMEDOUT)
			return -1;
	}
	return 0;
}

int64_t osm_mem_available(void)
{
	int64_t avail = osm_meminfo_bytes("MemAvailable");
	int64_t cg = osm_cgroup_headroom();
	if (cg >= 0 && (avail < 0 || cg < avail))
		return cg;
	return avail;
}

int64_t osm_map_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	int64_t n = 0;
	int c;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int64_t osm_max_map_count(void)
{
	return osm_read_i64("/proc/sys/vm/max_map_count");
}

int osm_exec_helper_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	if (snprintf(buf, len, "%s/osmeter-exec-helper", exe) >= (int)len)
		return -1;
	return access(buf, X_OK) ? -1 : 0;
}
