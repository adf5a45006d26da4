/* ipc_lebench.c - ipc.unix_send and ipc.unix_recv: LEBench's "send",
 * "recv", "big send" and "big recv" (send_test and recv_test in
 * TEST_DIR/OS_Eval.c; nothing of its code is copied). Method:
 * docs/methods/ipc.md.
 *
 * LEBench's structure, reproduced connection by connection: the probe
 * (LEBench's parent) forks a partner for each connection, as each call of
 * send_test/recv_test forks a child; a Unix stream socket is bound to a
 * path anew (the same path: the old socket file is removed first) with
 * listen(10); default socket buffers (no SO_SNDBUF).
 *  - send: the partner binds, listens, accepts and never reads; the probe
 *    connects, sends once untimed, then times `per_conn` calls of
 *    syscall(SYS_sendto, fd, buf, size, MSG_DONTWAIT, NULL, 0), so the
 *    connection's unread messages pile up. LEBench: 50 per connection for
 *    1 byte, 1 for 96 000 bytes (curr_iter_limit);
 *  - recv: the probe binds, listens and accepts; the partner connects and
 *    sends per_conn + 1 messages of `size` bytes with MSG_DONTWAIT, and
 *    only then does the probe receive: once untimed, then `per_conn` timed
 *    syscall(SYS_recvfrom, fd, buf, size, MSG_DONTWAIT, NULL, NULL), each
 *    finding its bytes queued already.
 * Every timed call must move exactly `size` bytes: a failed or short call is
 * an error, never a figure (LEBench prints "[error]" and keeps the time).
 * The calls of one connection are timed with one clock pair per run of
 * consecutive calls (one per call under --lebench-exact, as LEBench); the
 * new connection, its fork and the partner's end are outside the clock.
 * Unlike LEBench, the probe waits for the partner's accept before it times
 * a send (LEBench's child may be scheduled to accept during the first
 * timed sends). per_conn=0 picks LEBench's rule: 50, or fewer when the send
 * buffer holds fewer messages of this size (1 at 96 000 bytes with the
 * default 212 992-byte buffer). */
#include "ipc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../affinity.h"
#include "../cleanup.h"
#include "../clock.h"

#define ANSWER_MS 5000
#define LEBENCH_PER_CONN 50
#define PER_CONN_MAX 1000 /* the parameter's maximum */

/* LEBench makes the timed calls directly, past the C library. */
#ifdef SYS_sendto
#define SENDTO(fd, b, n) ((ssize_t)syscall(SYS_sendto, (long)(fd), (b), (size_t)(n), (long)MSG_DONTWAIT, NULL, 0L))
#else
#define SENDTO(fd, b, n) sendto((fd), (b), (n), MSG_DONTWAIT, NULL, 0)
#endif
#ifdef SYS_recvfrom
#define RECVFROM(fd, b, n) \
	((ssize_t)syscall(SYS_recvfrom, (long)(fd), (b), (size_t)(n), (long)MSG_DONTWAIT, NULL, NULL))
#else
#define RECVFROM(fd, b, n) recvfrom((fd), (b), (n), MSG_DONTWAIT, NULL, NULL)
#endif

struct sr_state {
	int recv;                 /* ipc.unix_recv */
	size_t size;
	int per_conn;             /* timed calls per connection */
	int left;                 /* timed calls left on conn */
	int cpu;                  /* the partners' CPU */
	int conn;                 /* the probe's end of the current connection */
	int listener;             /* recv: the probe's listening socket */
	int from_child, to_child; /* the partner's answers; its life (EOF: end) */
	pid_t pid;                /* the current connection's partner, 0 if none */
	int handle;               /* its cleanup-stack entry */
	struct sockaddr_un addr;
	char path[PATH_MAX];      /* the socket file, in the work directory */
	int have_path;
	int dirfd;                /* the work directory, when its path is too long for addr */
	char *buf;
	int sndbuf;
	int sig_set;
	struct sigaction old_pipe;
};

/* ---- the partner of one connection (a forked child) --------------------- */

/* send: bind, listen, accept, then hold the connection unread until the
 * probe is done with it. */
static int server_child(const struct sr_state *s, int answer, int hold)
{
	int32_t code = 0;
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (const struct sockaddr *)&s->addr, sizeof(s->addr)) || listen(l, 10))
		code = errno;
	if (ipc_write_all(answer, &code, sizeof(code)) || code)
		return 1;
	int c = accept(l, NULL, NULL);
	code = c < 0 ? errno : 0;
	if (ipc_write_all(answer, &code, sizeof(code)) || code)
		return 1;
	char x;
	ipc_read_all(hold, &x, 1);
	return 0;
}

/* recv: connect and send per_conn + 1 messages, then hold the connection. */
static int client_child(const struct sr_state *s, int answer, int hold)
{
	int32_t code = 0;
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (const struct sockaddr *)&s->addr, sizeof(s->addr)))
		code = errno;
	for (int j = 0; !code && j <= s->per_conn; j++) {
		ssize_t n = SENDTO(c, s->buf, s->size);
		if (n != (ssize_t)s->size)
			code = n < 0 ? errno : -1; /* -1: a short send */
	}
	if (ipc_write_all(answer, &code, sizeof(code)))
		return 1;
	char x;
	ipc_read_all(hold, &x, 1);
	return code != 0;
}

/* ---- connections -------------------------------------------------------- */

/* The partner's end: killed and reaped (it holds nothing but its end of
 * the connection), and the probe's ends closed. */
static void end_conn(struct sr_state *s)
{
	int *fds[] = {&s->conn, &s->to_child, &s->from_child, &s->listener};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	if (s->handle >= 0)
		osm_cleanup_pop(s->handle, 1);
	s->handle = -1;
	s->pid = 0;
}

/* Whether the current partner has died (reaped, *status its wait status). */
static int partner_dead(struct sr_state *s, pid_t *pid, int *status)
{
	if (s->pid <= 0 || waitpid(s->pid, status, WNOHANG) != s->pid)
		return 0;
	*pid = s->pid;
	osm_cleanup_pop(s->handle, 0);
	s->handle = -1;
	s->pid = 0;
	return 1;
}

/* A failed exchange with the partner: how it died, if it did. */
static int partner_gone(struct osm_ctx *ctx, struct sr_state *s, const char *what, int err)
{
	pid_t pid;
	int status;
	/* A dying process closes its descriptors before it can be reaped:
	 * give it a moment to become a zombie. */
	for (int i = 0; s->pid > 0 && i < 50; i++) {
		if (partner_dead(s, &pid, &status))
			return ipc_died(ctx, pid, status, what);
		usleep(2000);
	}
	return ipc_fail_errno(ctx, what, err);
}

static int spawn(struct osm_ctx *ctx, struct sr_state *s)
{
	int ans[2], hold[2];
	if (pipe2(ans, O_CLOEXEC))
		return osm_fail_errno(ctx, "pipe");
	if (pipe2(hold, O_CLOEXEC)) {
		close(ans[0]);
		close(ans[1]);
		return osm_fail_errno(ctx, "pipe");
	}
	pid_t self = getpid(), pid = fork();
	if (pid == 0) {
		osm_child_init(self);
		close(ans[0]);
		close(hold[1]);
		if (s->listener >= 0)
			close(s->listener);
		if (osm_pin_self(s->cpu))
			_exit(2);
		_exit(s->recv ? client_child(s, ans[1], hold[0]) : server_child(s, ans[1], hold[0]));
	}
	close(ans[1]);
	close(hold[0]);
	s->from_child = ans[0];
	s->to_child = hold[1];
	if (pid < 0)
		return osm_fail_errno(ctx, "fork of the partner");
	if ((s->handle = osm_cleanup_track_child(pid)) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return osm_fail(ctx, OSM_ERROR, "cannot register the partner for clean-up");
	}
	s->pid = pid;
	return OSM_OK;
}

/* The partner's next answer (0, an errno, or -1 for a short send). */
static int answer(struct osm_ctx *ctx, struct sr_state *s, const char *what)
{
	struct pollfd pf = {.fd = s->from_child, .events = POLLIN};
	int r;
	while ((r = poll(&pf, 1, ANSWER_MS)) < 0 && errno == EINTR)
		;
	if (r == 0)
		return osm_fail(ctx, OSM_ERROR, "%s: the partner did not answer within %d ms", what, ANSWER_MS);
	int32_t code;
	if ((r = ipc_read_all(s->from_child, &code, sizeof(code))))
		return partner_gone(ctx, s, what, r < 0 ? errno : 0);
	if (code == -1)
		return osm_fail(ctx, OSM_ERROR, "%s: the partner's sends were short: the socket buffer (SO_SNDBUF %d "
				"bytes) cannot hold per_conn + 1 = %d messages of %zu bytes", what, s->sndbuf,
				s->per_conn + 1, s->size);
	if (code)
		return osm_fail(ctx, OSM_ERROR, "%s: in the partner: %s", what, strerror(code));
	return OSM_OK;
}

/* A failed or short call: why, in words a user can act on. */
static int call_error(struct osm_ctx *ctx, struct sr_state *s, const char *what, ssize_t r, int e)
{
	const char *op = s->recv ? "recvfrom" : "sendto";
	if (r >= 0)
		return osm_fail(ctx, OSM_ERROR, "%s: %s of %zu bytes moved only %zd (the socket buffer, SO_SNDBUF "
				"%d bytes, is full)", what, op, s->size, r, s->sndbuf);
	if (e == EAGAIN || e == EWOULDBLOCK)
		return osm_fail(ctx, OSM_ERROR, "%s: %s of %zu bytes with MSG_DONTWAIT: %s (%s; per_conn=%d is "
				"more than this buffer holds: lower it)", what, op, s->size, strerror(e),
				s->recv ? "no data queued" : "the socket buffer is full", s->per_conn);
	return partner_gone(ctx, s, what, e);
}

static int listen_here(struct osm_ctx *ctx, struct sr_state *s)
{
	if ((s->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return osm_fail_errno(ctx, "socket");
	if (bind(s->listener, (const struct sockaddr *)&s->addr, sizeof(s->addr)))
		return osm_fail(ctx, OSM_ERROR, "bind %s (as %s): %s", s->path, s->addr.sun_path, strerror(errno));
	if (listen(s->listener, 10)) /* LEBench's backlog */
		return osm_fail_errno(ctx, "listen");
	return OSM_OK;
}

/* A new connection with a new partner, its untimed first call done;
 * per_conn timed calls left. */
static int reconnect(struct osm_ctx *ctx, struct sr_state *s)
{
	/* The last partner waits, alive, for its end: if it died (the OOM
	 * killer, a stray kill), say so, though its connection's figures
	 * are whole. */
	pid_t pid;
	int status;
	if (partner_dead(s, &pid, &status))
		return ipc_died(ctx, pid, status, "the partner of the last connection died before its end");
	end_conn(s);
	unlink(s->path); /* the last connection's socket file */
	int st = s->recv ? listen_here(ctx, s) : OSM_OK;
	if (st == OSM_OK)
		st = spawn(ctx, s);
	if (st == OSM_OK && s->recv) {
		st = answer(ctx, s, "the partner's connect and sends");
		/* The connection is queued already: accept() returns at once. */
		if (st == OSM_OK && (s->conn = accept4(s->listener, NULL, NULL, SOCK_CLOEXEC)) < 0)
			st = osm_fail_errno(ctx, "accept");
	} else if (st == OSM_OK) {
		st = answer(ctx, s, "the partner's bind and listen");
		if (st == OSM_OK && (s->conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			st = osm_fail_errno(ctx, "socket");
		if (st == OSM_OK && connect(s->conn, (const struct sockaddr *)&s->addr, sizeof(s->addr)))
			st = partner_gone(ctx, s, "connect to the partner's socket", errno);
		if (st == OSM_OK)
			st = answer(ctx, s, "the partner's accept");
	}
	if (st != OSM_OK)
		return st;
	/* LEBench's untimed first call goes through the C library. */
	ssize_t r = s->recv ? recv(s->conn, s->buf, s->size, MSG_DONTWAIT)
			    : send(s->conn, s->buf, s->size, MSG_DONTWAIT);
	if (r != (ssize_t)s->size)
		return call_error(ctx, s, "the untimed first call of a connection", r, errno);
	s->left = s->per_conn;
	return OSM_OK;
}

int ipc_sendrecv_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct sr_state *s = ctx->priv;
	uint64_t ticks = 0;
	for (uint64_t done = 0; done < batch;) {
		if (s->left == 0) {
			int st = reconnect(ctx, s);
			if (st != OSM_OK)
				return st;
		}
		uint64_t n = batch - done < (uint64_t)s->left ? batch - done : (uint64_t)s->left, i = 0;
		ssize_t r = 0;
		const ssize_t want = (ssize_t)s->size;
		osm_count_begin(ctx);
		uint64_t t0 = osm_clock_start();
		if (s->recv)
			while (i < n && (r = RECVFROM(s->conn, s->buf, s->size)) == want)
				i++;
		else
			while (i < n && (r = SENDTO(s->conn, s->buf, s->size)) == want)
				i++;
		uint64_t t1 = osm_clock_stop();
		int e = errno;
		osm_count_end(ctx, i);
		if (i < n)
			return call_error(ctx, s, s->recv ? "a timed recv" : "a timed send", r, e);
		ticks += t1 - t0;
		done += n;
		s->left -= (int)n;
	}
	ctx->self_ns = osm_ticks_to_ns(ticks);
	return OSM_OK;
}

/* ---- set-up ------------------------------------------------------------- */

/* How many messages of `size` bytes a fresh connection's send buffer
 * takes with MSG_DONTWAIT (at most PER_CONN_MAX + 1), on a socket pair
 * with the same default buffers; and that buffer's size. */
static int buffer_holds(struct osm_ctx *ctx, struct sr_state *s, int *k)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return osm_fail_errno(ctx, "socketpair");
	s->sndbuf = ipc_sndbuf(sv[0]);
	*k = 0;
	while (*k < PER_CONN_MAX + 1 && send(sv[0], s->buf, s->size, MSG_DONTWAIT) == (ssize_t)s->size)
		(*k)++;
	close(sv[0]);
	close(sv[1]);
	return OSM_OK;
}

static int choose_per_conn(struct osm_ctx *ctx, struct sr_state *s)
{
	int k = 0, st = buffer_holds(ctx, s, &k);
	if (st != OSM_OK)
		return st;
	int want = (int)osm_param_int(ctx, "per_conn");
	if (k < 2)
		return osm_fail(ctx, OSM_SKIP, "a Unix stream socket's send buffer here (SO_SNDBUF %d bytes, "
				"net.core.wmem_default) holds %d message(s) of %zu bytes; LEBench's region needs two, "
				"an untimed and a timed one: use a smaller size or raise net.core.wmem_default",
				s->sndbuf, k, s->size);
	if (want > k - 1)
		return osm_fail(ctx, OSM_SKIP, "per_conn=%d: the send buffer (SO_SNDBUF %d bytes) holds only %d "
				"messages of %zu bytes, one of them untimed: use per_conn=%d or less (0: LEBench's rule)",
				want, s->sndbuf, k, s->size, k - 1);
	s->per_conn = want ? want : (k - 1 < LEBENCH_PER_CONN ? k - 1 : LEBENCH_PER_CONN);
	return OSM_OK;
}

/* The socket's path in the work directory. A work directory too deep for
 * a socket address (108 bytes) is reached through /proc/self/fd/N of a
 * descriptor of it, which the partner inherits; bind and connect are
 * outside the clock either way. */
static int make_address(struct osm_ctx *ctx, struct sr_state *s)
{
	if (osm_workfile("ipc-unix.sock", s->path, sizeof(s->path)))
		return osm_fail(ctx, OSM_ERROR, "no work directory for the socket (TMPDIR not writable?)");
	s->have_path = 1;
	const char *name = s->path;
	char shortname[64];
	if (strlen(s->path) >= sizeof(s->addr.sun_path)) {
		if ((s->dirfd = open(osm_workdir(), O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			return osm_fail_errno(ctx, "open of the work directory");
		snprintf(shortname, sizeof(shortname), "/proc/self/fd/%d/ipc-unix.sock", s->dirfd);
		name = shortname;
	}
	s->addr.sun_family = AF_UNIX;
	memcpy(s->addr.sun_path, name, strlen(name) + 1);
	return OSM_OK;
}

static int sr_setup(struct osm_ctx *ctx, int recv)
{
	struct sr_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	s->recv = recv;
	s->conn = s->listener = s->from_child = s->to_child = s->dirfd = s->handle = -1;
	s->size = (size_t)osm_param_int(ctx, "size");
	int st = OSM_OK;
	if (!(s->buf = malloc(s->size)))
		st = osm_fail(ctx, OSM_ERROR, "out of memory for a %zu-byte buffer", s->size);
	else
		memset(s->buf, 'a', s->size); /* LEBench fills its send buffer with 'a' */
	if (st == OSM_OK)
		st = ipc_placement(ctx, &s->cpu);
	if (st == OSM_OK)
		st = choose_per_conn(ctx, s);
	if (st == OSM_OK)
		st = make_address(ctx, s);
	if (st == OSM_OK && (st = ipc_sigpipe_ignore(ctx, &s->old_pipe)) == OSM_OK)
		s->sig_set = 1;
	if (st == OSM_OK)
		st = reconnect(ctx, s); /* the first connection: set-up problems show here */
	if (st != OSM_OK) {
		ipc_sendrecv_teardown(ctx);
		return st;
	}
	osm_add_extra(ctx, "per_conn", s->per_conn);
	osm_add_extra(ctx, "sndbuf_bytes", s->sndbuf);
	return OSM_OK;
}

int ipc_send_setup(struct osm_ctx *ctx) { return sr_setup(ctx, 0); }
int ipc_recv_setup(struct osm_ctx *ctx) { return sr_setup(ctx, 1); }

void ipc_sendrecv_teardown(struct osm_ctx *ctx)
{
	struct sr_state *s = ctx->priv;
	if (!s)
		return;
	end_conn(s);
	if (s->have_path)
		unlink(s->path);
	if (s->dirfd >= 0)
		close(s->dirfd);
	if (s->sig_set)
		ipc_sigpipe_restore(&s->old_pipe);
	free(s->buf);
	free(s);
	ctx->priv = NULL;
}
