/* ipc_party.c - the probe's partner in the ipc family: a forked process or
 * a thread, pinned per `placement`, and the signal arrangements that turn
 * a partner's death into an error instead of a hang or a dead probe.
 * Method: docs/methods/ipc.md ("The partner").
 *
 *  - SIGPIPE is ignored from the partner's start to its stop, so a write
 *    to a dead partner fails with EPIPE (an error record) instead of
 *    running the probe's SIGPIPE handler (which ends the whole run as
 *    "interrupted": it is there for a closed stdout, and nothing is
 *    written to stdout while a benchmark runs). The old handler is back
 *    before the instance's records are written.
 *  - In process mode a SIGCHLD handler wakes a probe blocked where the
 *    partner's death shows nothing (enum ipc_unblock).
 *  - A partner process resets both signals, asks for SIGKILL when the
 *    probe dies, closes the probe's descriptors (so its own death closes
 *    the channel) and ends with _exit (osm_child_init). */
#include "ipc.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../affinity.h"
#include "../clock.h"

static const char *const placements[] = {"same_cpu", "cross_cpu", NULL};

/* The SIGCHLD handler's orders; one ipc benchmark runs at a time. */
static volatile sig_atomic_t chld_kind = IPC_UNBLOCK_NONE;
static volatile sig_atomic_t chld_fd = -1;

static void on_sigchld(int sig)
{
	(void)sig;
	int saved = errno;
	int fd = chld_fd;
	if (fd >= 0 && chld_kind == IPC_UNBLOCK_SHUTDOWN) {
		shutdown(fd, SHUT_RDWR);
	} else if (fd >= 0 && chld_kind == IPC_UNBLOCK_EVENTFD) {
		uint64_t v = IPC_EFD_MARK;
		ssize_t r = write(fd, &v, sizeof(v));
		(void)r;
	}
	errno = saved;
}

void ipc_party_init(struct ipc_party *p)
{
	memset(p, 0, sizeof(*p));
	for (int i = 0; i < IPC_FDS; i++)
		p->mine[i] = p->theirs[i] = p->shared[i] = -1;
	p->unblock_fd = -1;
	osm_children_init(&p->children);
}

int ipc_placement(struct osm_ctx *ctx, int *cpu)
{
	int cross = osm_param_int(ctx, "placement") == 1;
	ctx->placement = placements[cross];
	*cpu = cross ? osm_other_cpu(ctx->cpu) : ctx->cpu;
	if (*cpu < 0)
		return osm_skip_one_cpu(ctx, "placement=cross_cpu", "--param placement=same_cpu");
	return OSM_OK;
}

int ipc_party_configure(struct osm_ctx *ctx, struct ipc_party *p, int has_mode)
{
	p->threads = has_mode && osm_param_int(ctx, "mode") == 1;
	return ipc_placement(ctx, &p->cpu);
}

static void close_list(int *fds)
{
	for (int i = 0; i < IPC_FDS; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

static void *partner_thread(void *arg)
{
	struct ipc_party *p = arg;
	p->body(p->arg);
	return NULL;
}

static int start_thread(struct osm_ctx *ctx, struct ipc_party *p)
{
	pthread_attr_t a;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	pthread_attr_init(&a);
	pthread_attr_setaffinity_np(&a, sizeof(set), &set);
	int e = pthread_create(&p->th, &a, partner_thread, p);
	pthread_attr_destroy(&a);
	if (e)
		return osm_fail(ctx, OSM_ERROR, "pthread_create of the partner: %s", strerror(e));
	p->have_thread = 1;
	return OSM_OK;
}

static int start_process(struct osm_ctx *ctx, struct ipc_party *p)
{
	pid_t self = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		osm_child_init(self);
		signal(SIGCHLD, SIG_DFL);
		close_list(p->mine);
		if (osm_pin_self(p->cpu))
			_exit(2);
		_exit(p->body(p->arg) ? 1 : 0);
	}
	if (pid < 0)
		return osm_fail_errno(ctx, "fork of the partner");
	if (osm_children_add(&p->children, pid)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return osm_fail(ctx, OSM_ERROR, "cannot register the partner for clean-up");
	}
	close_list(p->theirs);
	return OSM_OK;
}

int ipc_sigpipe_ignore(struct osm_ctx *ctx, struct sigaction *old)
{
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	return sigaction(SIGPIPE, &ign, old) ? osm_fail_errno(ctx, "sigaction") : OSM_OK;
}

void ipc_sigpipe_restore(const struct sigaction *old)
{
	sigaction(SIGPIPE, old, NULL);
}

int ipc_party_start(struct osm_ctx *ctx, struct ipc_party *p)
{
	struct sigaction chld;
	memset(&chld, 0, sizeof(chld));
	chld.sa_handler = on_sigchld;
	chld.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigfillset(&chld.sa_mask);
	if (sigaction(SIGCHLD, NULL, &p->old_chld))
		return osm_fail_errno(ctx, "sigaction");
	int st = ipc_sigpipe_ignore(ctx, &p->old_pipe);
	if (st != OSM_OK)
		return st;
	p->signals_set = 1;
	if (p->threads)
		return start_thread(ctx, p);
	chld_fd = p->unblock_fd;
	chld_kind = p->unblock;
	if (sigaction(SIGCHLD, &chld, NULL))
		return osm_fail_errno(ctx, "sigaction");
	return start_process(ctx, p);
}

void ipc_party_stop(struct ipc_party *p)
{
	/* The handler first: from here on a child's death (ours, below)
	 * must not touch a descriptor that is being closed. */
	if (p->signals_set)
		sigaction(SIGCHLD, &p->old_chld, NULL);
	chld_fd = -1;
	chld_kind = IPC_UNBLOCK_NONE;
	if (p->have_thread) {
		/* Shut the partner's sockets down (a datagram socket learns
		 * nothing from its peer's close), close the probe's ends (EOF
		 * on pipes and streams), or let the benchmark wake it. */
		for (int i = 0; i < IPC_FDS; i++)
			if (p->theirs[i] >= 0)
				shutdown(p->theirs[i], SHUT_RDWR);
		if (p->wake)
			p->wake(p->arg);
		close_list(p->mine);
		pthread_join(p->th, NULL);
		p->have_thread = 0;
	}
	close_list(p->mine);
	osm_children_kill(&p->children);
	close_list(p->theirs);
	close_list(p->shared);
	if (p->signals_set)
		ipc_sigpipe_restore(&p->old_pipe);
	p->signals_set = 0;
}

int ipc_died(struct osm_ctx *ctx, pid_t pid, int status, const char *what)
{
	if (WIFSIGNALED(status))
		return osm_fail(ctx, OSM_ERROR, "the partner process (pid %d) died of signal %d (%s): %s", (int)pid,
				WTERMSIG(status), strsignal(WTERMSIG(status)), what);
	return osm_fail(ctx, OSM_ERROR, "the partner process (pid %d) ended with status %d: %s", (int)pid,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1, what);
}

int ipc_fail_errno(struct osm_ctx *ctx, const char *what, int err)
{
	if (!err)
		return osm_fail(ctx, OSM_ERROR, "%s: end of file (the partner closed its end)", what);
	return osm_fail(ctx, OSM_ERROR, "%s: %s", what, strerror(err));
}

int ipc_party_fail(struct osm_ctx *ctx, struct ipc_party *p, const char *what, int err)
{
	pid_t pid;
	int status;
	/* A dying process closes its descriptors before it can be reaped:
	 * give it a moment to become a zombie. */
	for (int i = 0; !p->threads && i < 50; i++) {
		if (osm_children_reap_dead(&p->children, &pid, &status))
			return ipc_died(ctx, pid, status, what);
		usleep(2000);
	}
	return ipc_fail_errno(ctx, what, err);
}

int ipc_party_wait_readable(struct osm_ctx *ctx, struct ipc_party *p, int fd, int timeout_ms, const char *what)
{
	for (int waited = 0; waited < timeout_ms; waited += 100) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int r = poll(&pf, 1, 100);
		if (r > 0)
			return OSM_OK;
		if (r < 0 && errno != EINTR)
			return osm_fail_errno(ctx, "poll");
		pid_t pid;
		int status;
		if (!p->threads && osm_children_reap_dead(&p->children, &pid, &status))
			return osm_fail(ctx, OSM_ERROR, "the partner process (pid %d) died: %s", (int)pid, what);
	}
	return osm_fail(ctx, OSM_ERROR, "the partner did not answer within %d ms: %s", timeout_ms, what);
}

int ipc_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ipc_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			return 1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ipc_sndbuf(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &l) ? -1 : v;
}

int ipc_dgram_fits(struct osm_ctx *ctx, int a, int b, char *buf, size_t size)
{
	ssize_t n = send(a, buf, size, MSG_DONTWAIT);
	if (n < 0 && errno == EMSGSIZE)
		return osm_fail(ctx, OSM_SKIP,
				"a datagram of %zu bytes is over this Unix socket's limit: the kernel refuses datagrams "
				"longer than SO_SNDBUF (here %d bytes, net.core.wmem_default) less 32; use a smaller "
				"size, or type=stream", size, ipc_sndbuf(a));
	if (n != (ssize_t)size)
		return osm_fail_errno(ctx, "a trial datagram");
	if (recv(b, buf, size, MSG_DONTWAIT) != (ssize_t)size)
		return osm_fail_errno(ctx, "receiving the trial datagram");
	return OSM_OK;
}
