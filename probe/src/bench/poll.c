/* poll.c - poll.*: readiness multiplexing, select(), poll() and epoll_wait()
 * over `nfds` descriptors of which `ready` are ready (LEBench "select",
 * "poll", "epoll" and their "big" rows). Method: docs/methods/poll.md
 *
 * One operation is one call with a zero timeout. How the descriptors live
 * (`make`):
 *  - once (default): the descriptors, the select() read set, the pollfd
 *    array and the epoll set are made in setup() and closed in teardown();
 *    a batch of calls over the same standing set is timed per clock pair
 *    (calls are sub-microsecond to tens of microseconds). The timed region
 *    is the calls alone, plus, for select() with some descriptors not ready,
 *    the copy of the read set each call overwrote.
 *  - per_call (the LEBench rows): before each call new descriptors and a new
 *    set are made, after it they are closed, both outside the clock, and the
 *    call is timed alone between two clock reads, as LEBench does; a sample
 *    sums a calibrated batch of such timings. An epoll set of TCP sockets is
 *    made in LEBench's order (make_set). Freshly made sockets are cold
 *    where a standing set is warm: over 1 000 descriptors the call costs
 *    1.3-2 x more.
 *
 * Descriptors (`fds`):
 *  - tcp (LEBench): unconnected socket(AF_INET, SOCK_STREAM) sockets. A TCP
 *    socket in state CLOSE polls as POLLHUP, which select() counts as
 *    readable and poll()/epoll report whatever was asked: all of them are
 *    ready, always, so `ready` must be all of nfds.
 *  - socketpair: one end of an AF_UNIX stream socket pair each; the first
 *    `ready` have one byte pending, written by their peer end and never read,
 *    so the readiness is the same on every call. The peer ends are moved
 *    above the watched ones (F_DUPFD), which stay numbered densely from the
 *    lowest free descriptor: select() needs them below FD_SETSIZE.
 *
 * Traps avoided: every call's return value is compared with the expected
 * ready count, and any other figure is an error record (a call that
 * reported fewer descriptors would be a different, cheaper quantity);
 * select() overwrites its read set with the ready ones, so the set is
 * restored before each call when some are not ready (when all are, a
 * return of nfds proves the set came back whole, and nothing is copied, as
 * in LEBench's region); a descriptor numbered FD_SETSIZE or more is a skip
 * for select(), never an FD_SET() past the end of the set; RLIMIT_NOFILE's
 * soft limit is raised to the hard one when nfds needs it, and put back in
 * teardown; the libc wrappers are called (no SYS_select on arm64). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"
#include "mem.h" /* osm_mem_fit: the sockets' kernel memory */
#include "poll.h"

enum poll_api { API_SELECT, API_POLL, API_EPOLL };

static const char *const api_names[] = {"select", "poll", "epoll_wait"};
/* Kernel memory per watched descriptor, rounded up from what a TCP socket
 * (3.8 KiB of slab) and a Unix socket pair (3 KiB) took on Linux 6.x. */
#define KERNEL_BYTES_PER_FD 4096
/* Descriptors the probe is taken to hold when /proc/self/fd cannot be read. */
#define FD_GUESS 64

struct poll_state {
	enum poll_api api;
	enum fd_kind kind;
	int nfds, ready;             /* ready: resolved, -1 became nfds */
	int per_call;                /* make=per_call: a new set for every call */
	int open;                    /* a set is made: descriptors, read set / pollfds / epoll set */
	int *fds;                    /* the watched descriptors */
	int *peers;                  /* socketpair: their other ends; NULL for tcp */
	int made;                    /* fds[0 .. made-1] (and their peers) are open */
	int held;                    /* descriptors the probe held before making any */
	int maxfd;                   /* the highest watched */
	int epfd;                    /* the epoll set, or -1 */
	struct pollfd *pfds;         /* poll: one per descriptor, POLLIN */
	struct epoll_event *events;  /* epoll: where epoll_wait() writes, nfds of them */
	fd_set tmpl, set;            /* select: the read set, and the one the call overwrites */
	size_t set_bytes;            /* the words of the set select() reads (up to maxfd's) */
	int restore;                 /* select, make=once: copy tmpl into set before each call */
	struct rlimit saved;         /* RLIMIT_NOFILE before setup */
	int raised;                  /* its soft limit was raised: restore it */
};

/* Closes the set: the epoll instance, the descriptors and their peers. */
static void close_set(struct poll_state *s)
{
	if (s->epfd >= 0)
		close(s->epfd);
	s->epfd = -1;
	for (int i = 0; i < s->made; i++) {
		close(s->fds[i]);
		if (s->peers)
			close(s->peers[i]);
	}
	s->made = 0;
	s->open = 0;
}

static void poll_free(struct poll_state *s)
{
	if (!s)
		return;
	close_set(s);
	if (s->raised)
		setrlimit(RLIMIT_NOFILE, &s->saved);
	free(s->fds);
	free(s->peers);
	free(s->pfds);
	free(s->events);
	free(s);
}

void osm_poll_teardown(struct osm_ctx *ctx)
{
	poll_free(ctx->priv);
	ctx->priv = NULL;
}

/* The parameters together (bench.h's check: refused before anything
 * runs; the catalogue checks each value alone): ready=-1 is all of nfds,
 * ready more than nfds cannot be built, nor fds=tcp with fewer ready. */
int osm_poll_check(const struct osm_bench *b, const struct osm_pval *pv, char *err, size_t len)
{
	long long nfds = (long long)osm_pval_of(b, pv, "nfds")->i, ready = (long long)osm_pval_of(b, pv, "ready")->i;
	if (ready < 0)
		ready = nfds;
	if (ready > nfds) {
		snprintf(err, len, "ready=%lld is more than nfds=%lld: at most the %lld watched descriptors can be "
			 "ready; use ready=0..%lld (or -1: all)", ready, nfds, nfds, nfds);
		return -1;
	}
	if (osm_pval_of(b, pv, "fds")->i == FDS_TCP && ready != nfds) {
		snprintf(err, len, "fds=tcp: an unconnected TCP socket always polls as POLLHUP, so all %lld are "
			 "ready and ready=%lld cannot be built; use fds=socketpair for ready < nfds", nfds, ready);
		return -1;
	}
	return 0;
}

/* ready=-1 resolved; the combination checked again (an instance made
 * otherwise than by `run`) and the kernel memory the set takes. */
static int check_params(struct osm_ctx *ctx, struct poll_state *s)
{
	if (osm_poll_check(ctx->bench, ctx->params, ctx->msg, sizeof(ctx->msg)))
		return OSM_ERROR;
	if (s->ready < 0)
		s->ready = s->nfds;
	char what[96];
	snprintf(what, sizeof(what), "%d descriptors (about 4 KiB of kernel memory each)", s->nfds);
	return osm_mem_fit(ctx, what, (int64_t)s->nfds * KERNEL_BYTES_PER_FD);
}

/* Descriptors this process holds (/proc/self/fd, whose own descriptor
 * counts too: one too many), or FD_GUESS. */
static int held_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return FD_GUESS;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Raise RLIMIT_NOFILE's soft limit to the hard one when the descriptors
 * need more; skip when even the hard limit is short. The kernel hands out
 * the lowest free number, so with `held` open the n-th new descriptor is
 * numbered below held + n; socket pairs' peers start at held + nfds (see
 * make_pair) and end below 2 held + 2 nfds. One more for the epoll set. */
static int fit_nofile(struct osm_ctx *ctx, struct poll_state *s)
{
	s->held = held_fds();
	rlim_t need = (rlim_t)s->held + (rlim_t)s->nfds + 1;
	if (s->kind == FDS_SOCKETPAIR)
		need += (rlim_t)s->held + (rlim_t)s->nfds;
	if (getrlimit(RLIMIT_NOFILE, &s->saved))
		return osm_fail_errno(ctx, "getrlimit(RLIMIT_NOFILE)");
	if (s->saved.rlim_cur == RLIM_INFINITY || s->saved.rlim_cur >= need)
		return OSM_OK;
	if (s->saved.rlim_max != RLIM_INFINITY && s->saved.rlim_max < need)
		return osm_fail(ctx, OSM_SKIP, "nfds=%d needs %llu open descriptors (the probe holds %d) but "
				"RLIMIT_NOFILE allows %llu (its hard limit): raise it (ulimit -Hn as root, "
				"LimitNOFILE= for a service) or lower nfds", s->nfds, (unsigned long long)need, s->held,
				(unsigned long long)s->saved.rlim_max);
	struct rlimit up = {s->saved.rlim_max, s->saved.rlim_max};
	if (setrlimit(RLIMIT_NOFILE, &up))
		return osm_fail_errno(ctx, "setrlimit(RLIMIT_NOFILE) to its hard limit");
	s->raised = 1;
	osm_add_info(ctx, "rlimit_nofile", "soft limit raised from %llu to %llu (the hard limit) for this "
		     "benchmark, restored after it", (unsigned long long)s->saved.rlim_cur,
		     (unsigned long long)s->saved.rlim_max);
	return OSM_OK;
}

/* Why making descriptor i failed: out of descriptors or memory is a skip a
 * user can act on, anything else an error. */
static int make_failed(struct osm_ctx *ctx, struct poll_state *s, const char *call)
{
	int e = errno;
	if (e == EMFILE || e == ENFILE)
		return osm_fail(ctx, OSM_SKIP, "%s failed after %d of %d descriptors: %s; raise RLIMIT_NOFILE "
				"(ulimit -n) or fs.file-max, or lower nfds", call, s->made, s->nfds, strerror(e));
	if (e == ENOMEM || e == ENOBUFS)
		return osm_fail(ctx, OSM_SKIP, "%s failed after %d of %d descriptors: %s; free memory or lower nfds",
				call, s->made, s->nfds, strerror(e));
	if (e == EAFNOSUPPORT)
		return osm_fail(ctx, OSM_SKIP, "%s: no IPv4 sockets in this kernel or namespace (%s); use "
				"fds=socketpair", call, strerror(e));
	return osm_fail(ctx, OSM_ERROR, "%s failed after %d of %d descriptors: %s", call, s->made, s->nfds,
			strerror(e));
}

/* One socket pair: fds[i] stays where it was made, its peer moves to the
 * lowest free number >= held + nfds. The watched ends are the nfds lowest
 * free numbers, all below that (held are taken), so they stay dense and
 * never land above a peer. */
static int make_pair(struct osm_ctx *ctx, struct poll_state *s, int i)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp))
		return make_failed(ctx, s, "socketpair(AF_UNIX, SOCK_STREAM)");
	int base = s->held + s->nfds;
	int peer = fcntl(sp[1], F_DUPFD_CLOEXEC, base);
	int e = errno;
	close(sp[1]);
	if (peer < 0) {
		close(sp[0]);
		errno = e == EINVAL ? EMFILE : e; /* base beyond the soft limit */
		return make_failed(ctx, s, "fcntl(F_DUPFD) of a peer end");
	}
	s->fds[i] = sp[0];
	s->peers[i] = peer;
	return OSM_OK;
}

/* epoll_ctl(ADD) of descriptor i, for EPOLLIN. */
static int epoll_add(struct osm_ctx *ctx, struct poll_state *s, int i)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = s->fds[i]};
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->fds[i], &ev) == 0)
		return OSM_OK;
	if (errno == ENOSPC)
		return osm_fail(ctx, OSM_SKIP, "epoll_ctl(EPOLL_CTL_ADD) refused descriptor %d of %d: the limit "
				"fs.epoll.max_user_watches is reached; raise it (sysctl, as root) or lower nfds", i + 1,
				s->nfds);
	return osm_fail_errno(ctx, "epoll_ctl(EPOLL_CTL_ADD)");
}

/* The descriptors; with an epoll set already open, each added to it as it
 * is made (LEBench's order). */
static int make_fds(struct osm_ctx *ctx, struct poll_state *s)
{
	s->maxfd = -1;
	for (int i = 0; i < s->nfds; i++) {
		if (s->kind == FDS_TCP) {
			s->fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (s->fds[i] < 0)
				return make_failed(ctx, s, "socket(AF_INET, SOCK_STREAM)");
		} else {
			int st = make_pair(ctx, s, i);
			if (st != OSM_OK)
				return st;
		}
		s->made = i + 1;
		if (s->fds[i] > s->maxfd)
			s->maxfd = s->fds[i];
		if (s->api == API_SELECT && s->fds[i] >= FD_SETSIZE)
			return osm_fail(ctx, OSM_SKIP, "select() can watch only descriptors below FD_SETSIZE (%d), and "
					"descriptor %d of %d got number %d (the probe holds %d below it): use nfds=%d at "
					"most here, or poll.poll / poll.epoll", FD_SETSIZE, i + 1, s->nfds, s->fds[i],
					s->fds[i] - i, i);
		int st = s->epfd >= 0 ? epoll_add(ctx, s, i) : OSM_OK;
		if (st != OSM_OK)
			return st;
	}
	for (int i = 0; i < s->ready && s->kind == FDS_SOCKETPAIR; i++)
		if (write(s->peers[i], "x", 1) != 1)
			return osm_fail_errno(ctx, "write of the pending byte to a socket pair");
	return OSM_OK;
}

/* A new set: the descriptors (the ready ones made ready), and the
 * structure each call reads: the read set, the pollfd array or the epoll
 * set. The arrays were allocated in setup. make=per_call makes an epoll set
 * of TCP sockets in LEBench's order: epoll_create, then per socket socket()
 * and epoll_ctl(ADD). The order moves the wait: over 1 000 sockets 241
 * against 148 us median on the 2-vCPU EPYC guest, sockets first
 * (benchmarks/lebench_regions.py epoll1000). */
static int make_set(struct osm_ctx *ctx, struct poll_state *s)
{
	int leb_order = s->api == API_EPOLL && s->per_call && s->kind == FDS_TCP;
	if (leb_order && (s->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return make_failed(ctx, s, "epoll_create1");
	int st = make_fds(ctx, s);
	if (st != OSM_OK)
		return st;
	s->open = 1;
	switch (s->api) {
	case API_SELECT:
		FD_ZERO(&s->tmpl);
		for (int i = 0; i < s->nfds; i++)
			FD_SET(s->fds[i], &s->tmpl);
		/* select(maxfd + 1, ...) reads the words up to maxfd's. */
		s->set_bytes = ((size_t)s->maxfd / (8 * sizeof(long)) + 1) * sizeof(long);
		if (s->set_bytes > sizeof(fd_set))
			s->set_bytes = sizeof(fd_set);
		s->set = s->tmpl;
		/* per_call: one call per set, which is whole before it */
		s->restore = !s->per_call && s->ready < s->nfds;
		return OSM_OK;
	case API_POLL:
		for (int i = 0; i < s->nfds; i++)
			s->pfds[i] = (struct pollfd){.fd = s->fds[i], .events = POLLIN};
		return OSM_OK;
	case API_EPOLL:
		if (leb_order)
			return OSM_OK;
		s->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (s->epfd < 0)
			return make_failed(ctx, s, "epoll_create1");
		for (int i = 0; i < s->nfds; i++)
			if ((st = epoll_add(ctx, s, i)) != OSM_OK)
				return st;
		return OSM_OK;
	}
	return osm_fail(ctx, OSM_ERROR, "internal: unknown call");
}

static int alloc_arrays(struct osm_ctx *ctx, struct poll_state *s)
{
	size_t n = (size_t)s->nfds;
	s->fds = calloc(n, sizeof(int));
	if (s->kind == FDS_SOCKETPAIR)
		s->peers = calloc(n, sizeof(int));
	if (s->api == API_POLL)
		s->pfds = calloc(n, sizeof(*s->pfds));
	if (s->api == API_EPOLL)
		s->events = calloc(n, sizeof(*s->events));
	if (!s->fds || (s->kind == FDS_SOCKETPAIR && !s->peers) || (s->api == API_POLL && !s->pfds) ||
	    (s->api == API_EPOLL && !s->events))
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	return OSM_OK;
}

/* The watched descriptors' numbers exactly, in the order made: runs of a
 * constant step as "3..13" or "3..21 by 2", others one by one ("3, 5"). */
static void fd_numbers(const struct poll_state *s, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < s->nfds && off < len; ) {
		int j = i + 1, step = j < s->nfds ? s->fds[j] - s->fds[i] : 0;
		while (j < s->nfds && step > 0 && s->fds[j] - s->fds[j - 1] == step)
			j++;
		int n;
		if (j - i >= 3 && step == 1)
			n = snprintf(buf + off, len - off, "%s%d..%d", i ? ", " : "", s->fds[i], s->fds[j - 1]);
		else if (j - i >= 3)
			n = snprintf(buf + off, len - off, "%s%d..%d by %d", i ? ", " : "", s->fds[i], s->fds[j - 1],
				     step);
		else {
			j = i + 1;
			n = snprintf(buf + off, len - off, "%s%d", i ? ", " : "", s->fds[i]);
		}
		off += n > 0 ? (size_t)n : 0;
		i = j;
	}
}

static void describe(struct osm_ctx *ctx, const struct poll_state *s)
{
	char nums[OSM_INFO_LEN - 200];
	fd_numbers(s, nums, sizeof(nums));
	if (s->kind == FDS_TCP)
		osm_add_info(ctx, "descriptors", "%d unconnected TCP sockets (AF_INET, SOCK_STREAM), numbers %s, "
			     "all ready (POLLHUP)", s->nfds, nums);
	else
		osm_add_info(ctx, "descriptors", "%d AF_UNIX stream socket pair ends, numbers %s, %d ready (the "
			     "first ones: 1 byte pending, POLLIN), %d with nothing pending", s->nfds, nums,
			     s->ready, s->nfds - s->ready);
	osm_add_extra(ctx, "ready", s->ready);
	osm_add_extra(ctx, "max_fd", s->maxfd);
}

static int poll_setup(struct osm_ctx *ctx, enum poll_api api)
{
	struct poll_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	s->api = api;
	s->epfd = -1;
	s->nfds = (int)osm_param_int(ctx, "nfds");
	s->kind = (enum fd_kind)osm_param_int(ctx, "fds");
	s->ready = (int)osm_param_int(ctx, "ready");
	s->per_call = osm_param_int(ctx, "make") == 1;
	int st = check_params(ctx, s);
	if (st == OSM_OK)
		st = fit_nofile(ctx, s);
	if (st == OSM_OK)
		st = alloc_arrays(ctx, s);
	/* The first set, also with make=per_call (its first call uses it):
	 * what cannot be made here is a skip or an error before any sample. */
	if (st == OSM_OK)
		st = make_set(ctx, s);
	if (st != OSM_OK) {
		poll_free(s); /* teardown() is not called when setup fails */
		return st;
	}
	describe(ctx, s);
	ctx->priv = s;
	return OSM_OK;
}

int osm_poll_select_setup(struct osm_ctx *ctx) { return poll_setup(ctx, API_SELECT); }
int osm_poll_poll_setup(struct osm_ctx *ctx) { return poll_setup(ctx, API_POLL); }
int osm_poll_epoll_setup(struct osm_ctx *ctx) { return poll_setup(ctx, API_EPOLL); }

/* A call that failed (errno e) or reported another number of ready
 * descriptors. */
static int unexpected(struct osm_ctx *ctx, int got, int e)
{
	const struct poll_state *s = ctx->priv;
	if (got < 0) {
		errno = e;
		return osm_fail_errno(ctx, api_names[s->api]);
	}
	return osm_fail(ctx, OSM_ERROR, "%s() reported %d ready descriptors of %d, expected %d: the descriptors' "
			"readiness changed under the benchmark, so its figure would be another quantity",
			api_names[s->api], got, s->nfds, s->ready);
}

/* n calls over the set; 0, or -1 with the return value that was not the
 * expected ready count in *got. Nothing but the calls (and select's set
 * restore) runs inside the loops. */
static int calls(struct poll_state *s, uint64_t n, int *got)
{
	int r = s->ready;
	switch (s->api) {
	case API_SELECT:
		for (uint64_t i = 0; i < n && r == s->ready; i++) {
			if (s->restore)
				memcpy(&s->set, &s->tmpl, s->set_bytes);
			struct timeval tv = {0, 0};
			r = select(s->maxfd + 1, &s->set, NULL, NULL, &tv);
		}
		break;
	case API_POLL:
		for (uint64_t i = 0; i < n && r == s->ready; i++)
			r = poll(s->pfds, (nfds_t)s->nfds, 0);
		break;
	case API_EPOLL:
		for (uint64_t i = 0; i < n && r == s->ready; i++)
			r = epoll_wait(s->epfd, s->events, s->nfds, 0);
		break;
	}
	*got = r;
	return r == s->ready ? 0 : -1;
}

/* make=once: the batch over the standing set, one clock pair. */
static int run_standing(struct osm_ctx *ctx, struct poll_state *s, uint64_t batch)
{
	int got;
	osm_count_begin(ctx);
	uint64_t t0 = osm_clock_start();
	int bad = calls(s, batch, &got);
	uint64_t t1 = osm_clock_stop();
	int e = errno;
	osm_count_end(ctx, batch);
	if (bad)
		return unexpected(ctx, got, e);
	ctx->self_ns = osm_ticks_to_ns(t1 - t0);
	return OSM_OK;
}

/* make=per_call: a new set for each call, made and closed outside its
 * clock pair; the sample is the sum of the calls' times. */
static int run_fresh(struct osm_ctx *ctx, struct poll_state *s, uint64_t batch)
{
	double ns = 0;
	for (uint64_t i = 0; i < batch; i++) {
		int got;
		if (!s->open) {
			int st = make_set(ctx, s);
			if (st != OSM_OK)
				return st;
		}
		osm_count_begin(ctx);
		uint64_t t0 = osm_clock_start();
		int bad = calls(s, 1, &got);
		uint64_t t1 = osm_clock_stop();
		int e = errno;
		osm_count_end(ctx, 1);
		close_set(s);
		if (bad)
			return unexpected(ctx, got, e);
		ns += osm_ticks_to_ns(t1 - t0);
	}
	ctx->self_ns = ns;
	return OSM_OK;
}

int osm_poll_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct poll_state *s = ctx->priv;
	return s->per_call ? run_fresh(ctx, s, batch) : run_standing(ctx, s, batch);
}
