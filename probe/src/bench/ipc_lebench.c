/* ipc_lebench.c - ipc.unix_send and ipc.unix_recv: LEBench's "send",
 * "recv", "big send" and "big recv" (send_test and recv_test in
 * TEST_DIR/OS_Eval.c; nothing of its code is copied). Method:
 * docs/methods/ipc.md.
 *
 * LEBench's region, reproduced:
 *  - a Unix stream socket bound to a path, listen(10), and a connection
 *    accepted by the server; the client and the server are two processes;
 *    default socket buffer sizes (no SO_SNDBUF);
 *  - send: the probe is the client (LEBench's parent); the partner accepts
 *    and never reads. Per connection one untimed send of `size` bytes, then
 *    `per_conn` timed syscall(SYS_sendto, fd, buf, size, MSG_DONTWAIT,
 *    NULL, 0), so the unread messages pile up in the connection; then a new
 *    connection. LEBench: 50 per connection for 1 byte, 1 for 96 000 bytes
 *    (curr_iter_limit), the most its default buffers hold;
 *  - recv: the probe is the server (LEBench's parent) and accepts; the
 *    partner connects and sends per_conn + 1 messages of `size` bytes with
 *    MSG_DONTWAIT, and only then does the probe receive: one untimed
 *    recv, then `per_conn` timed syscall(SYS_recvfrom, fd, buf, size,
 *    MSG_DONTWAIT, NULL, NULL), each finding its bytes queued already.
 * Every timed call must move exactly `size` bytes: a failed or short call is
 * an error, never a figure (LEBench prints "[error]" and keeps the time).
 * The calls of one connection are timed with one clock pair per run of
 * consecutive calls (one per call under --lebench-exact, as LEBench); the
 * reconnection is outside the clock. per_conn=0 picks LEBench's rule: 50,
 * or fewer when the send buffer holds fewer messages of this size (1 at
 * 96 000 bytes with the default 212 992-byte buffer). */
#include "ipc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "../cleanup.h"
#include "../clock.h"

#define ANSWER_MS 5000
#define LEBENCH_PER_CONN 50
#define PER_CONN_MAX 1000 /* the parameter's maximum */

/* LEBench calls the system calls directly, past the C library. */
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
	struct ipc_party p;
	int recv;                 /* ipc.unix_recv */
	size_t size;
	int per_conn;             /* timed calls per connection */
	int left;                 /* timed calls left on conn */
	int conn;                 /* the probe's end of the current connection */
	int listener;             /* the partner's (send) or the probe's (recv) */
	int ack_in, ack_out;      /* partner -> probe: accepted (send), sent (recv) */
	int go_in, go_out;        /* probe -> partner: connect and send (recv) */
	struct sockaddr_un addr;
	char path[PATH_MAX];      /* the socket file, in the work directory */
	int have_path;
	int dirfd;                /* the work directory, when its path is too long for addr */
	char *buf;
	int sndbuf;
};

/* ---- the partner -------------------------------------------------------- */

/* send: accept each connection, hold it unread until the next one. */
static int server_body(void *arg)
{
	struct sr_state *s = arg;
	int held = -1;
	for (;;) {
		int c = accept(s->listener, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (held >= 0)
			close(held);
		held = c;
		int32_t code = 0;
		if (ipc_write_all(s->ack_out, &code, sizeof(code)))
			return 0; /* the probe is done */
	}
}

/* recv: on each request, a new connection and per_conn + 1 messages. */
static int client_body(void *arg)
{
	struct sr_state *s = arg;
	int c = -1;
	for (;;) {
		char go;
		int r = ipc_read_all(s->go_in, &go, 1);
		if (r)
			return r < 0;
		if (c >= 0)
			close(c);
		int32_t code = 0;
		c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0 || connect(c, (const struct sockaddr *)&s->addr, sizeof(s->addr)))
			code = errno;
		for (int j = 0; !code && j <= s->per_conn; j++) {
			ssize_t n = SENDTO(c, s->buf, s->size);
			if (n != (ssize_t)s->size)
				code = n < 0 ? errno : -1; /* -1: a short send */
		}
		if (ipc_write_all(s->ack_out, &code, sizeof(code)))
			return 0;
	}
}

/* ---- connections -------------------------------------------------------- */

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
	return ipc_party_fail(ctx, &s->p, what, e);
}

/* The answer the partner writes on the ack pipe, waited for with a bound. */
static int partner_answer(struct osm_ctx *ctx, struct sr_state *s, const char *what)
{
	int st = ipc_party_wait_readable(ctx, &s->p, s->ack_in, ANSWER_MS, what);
	if (st != OSM_OK)
		return st;
	int32_t code;
	int r = ipc_read_all(s->ack_in, &code, sizeof(code));
	if (r)
		return ipc_party_fail(ctx, &s->p, what, r < 0 ? errno : 0);
	if (code == -1)
		return osm_fail(ctx, OSM_ERROR, "%s: the partner's sends were short: the socket buffer (SO_SNDBUF %d "
				"bytes) cannot hold per_conn + 1 = %d messages of %zu bytes", what, s->sndbuf,
				s->per_conn + 1, s->size);
	if (code)
		return osm_fail(ctx, OSM_ERROR, "%s: in the partner: %s", what, strerror(code));
	return OSM_OK;
}

/* A new connection, its untimed first call done; per_conn timed calls left. */
static int reconnect(struct osm_ctx *ctx, struct sr_state *s)
{
	if (s->conn >= 0)
		close(s->conn);
	s->conn = -1;
	int st;
	if (s->recv) {
		char go = 'g';
		if (ipc_write_all(s->go_out, &go, 1))
			return ipc_party_fail(ctx, &s->p, "request to the partner", errno);
		if ((st = partner_answer(ctx, s, "the partner's connection and sends")) != OSM_OK)
			return st;
		/* The connection is queued already: accept() returns at once. */
		if ((s->conn = accept4(s->listener, NULL, NULL, SOCK_CLOEXEC)) < 0)
			return osm_fail_errno(ctx, "accept");
	} else {
		if ((s->conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			return osm_fail_errno(ctx, "socket");
		if (connect(s->conn, (const struct sockaddr *)&s->addr, sizeof(s->addr)))
			return ipc_party_fail(ctx, &s->p, "connect to the partner's socket", errno);
		if ((st = partner_answer(ctx, s, "the partner's accept")) != OSM_OK)
			return st;
	}
	/* LEBench's untimed first call goes through the C library. */
	ssize_t r = s->recv ? recv(s->conn, s->buf, s->size, MSG_DONTWAIT) : send(s->conn, s->buf, s->size, MSG_DONTWAIT);
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

/* The socket path in the work directory, and the listening socket on it.
 * A work directory too deep for a socket address (108 bytes) is reached
 * through /proc/self/fd/N of a descriptor of it, which the partner
 * inherits too; the bind and connect are outside the clock either way. */
static int make_listener(struct osm_ctx *ctx, struct sr_state *s)
{
	if (osm_workfile("ipc-unix.sock", s->path, sizeof(s->path)))
		return osm_fail(ctx, OSM_ERROR, "no work directory for the socket (TMPDIR not writable?)");
	unlink(s->path); /* a previous instance's */
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
	if ((s->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return osm_fail_errno(ctx, "socket");
	if (bind(s->listener, (const struct sockaddr *)&s->addr, sizeof(s->addr)))
		return osm_fail(ctx, OSM_ERROR, "bind %s (as %s): %s", s->path, name, strerror(errno));
	if (listen(s->listener, 10)) /* LEBench's backlog */
		return osm_fail_errno(ctx, "listen");
	return OSM_OK;
}

/* The pipes between the two and who keeps which end. */
static int make_pipes(struct osm_ctx *ctx, struct sr_state *s)
{
	int ack[2], go[2] = {-1, -1};
	if (pipe2(ack, O_CLOEXEC))
		return osm_fail_errno(ctx, "pipe");
	s->p.mine[0] = s->ack_in = ack[0];
	s->p.theirs[0] = s->ack_out = ack[1];
	if (s->recv && pipe2(go, O_CLOEXEC))
		return osm_fail_errno(ctx, "pipe");
	s->go_in = go[0];
	s->go_out = go[1];
	if (s->recv) {
		s->p.mine[1] = s->go_out;
		s->p.theirs[1] = s->go_in;
		s->p.mine[2] = s->listener;
	} else {
		s->p.theirs[1] = s->listener;
	}
	return OSM_OK;
}

static int sr_setup(struct osm_ctx *ctx, int recv)
{
	struct sr_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	ipc_party_init(&s->p);
	s->recv = recv;
	s->conn = s->listener = s->ack_in = s->ack_out = s->go_in = s->go_out = s->dirfd = -1;
	s->size = (size_t)osm_param_int(ctx, "size");
	s->p.body = recv ? client_body : server_body;
	s->p.arg = s;
	int st = OSM_OK;
	if (!(s->buf = malloc(s->size)))
		st = osm_fail(ctx, OSM_ERROR, "out of memory for a %zu-byte buffer", s->size);
	else
		memset(s->buf, 'a', s->size); /* LEBench fills its send buffer with 'a' */
	if (st == OSM_OK)
		st = ipc_party_configure(ctx, &s->p, 0);
	if (st == OSM_OK)
		st = choose_per_conn(ctx, s);
	if (st == OSM_OK)
		st = make_listener(ctx, s);
	if (st == OSM_OK)
		st = make_pipes(ctx, s);
	if (st == OSM_OK)
		st = ipc_party_start(ctx, &s->p);
	if (st != OSM_OK) {
		if (s->listener >= 0 && s->p.mine[2] != s->listener && s->p.theirs[1] != s->listener)
			close(s->listener);
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
	ipc_party_stop(&s->p);
	if (s->conn >= 0)
		close(s->conn);
	if (s->have_path)
		unlink(s->path);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->buf);
	free(s);
	ctx->priv = NULL;
}
