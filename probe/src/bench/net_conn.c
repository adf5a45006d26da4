/* net_conn.c - net.tcp_connect and net.tcp_close: a TCP connection's
 * set-up and teardown. Method: docs/methods/net.md
 *
 * net.tcp_connect: per operation, a new socket (untimed), then the timed
 * blocking connect() to the peer's port: from the call until it returns,
 * i.e. SYN sent, SYN-ACK received, ACK sent (established on our side; the
 * peer's accept() is not waited for). Then, untimed, close() with
 * SO_LINGER 0: a RST, so neither side keeps the connection in TIME_WAIT;
 * a FIN close would leave one TIME_WAIT socket per connect on the probe's
 * side for 60 s and use up the ephemeral ports (28 232 by default) within
 * a second at loopback rates. The peer takes a connection that closes
 * without a hello as exactly that. The peer's listen queue holds 128
 * connections; at loopback rates the probe can connect faster than the
 * peer accepts and drops them, and a full queue drops the next SYN: that
 * connect would then take the 1 s SYN retransmission. So after every
 * SYNC_EVERY connects the probe opens one close session, untimed, and
 * waits for its answer: the peer has then accepted everything before it.
 * Connects whose SYN was retransmitted anyway are counted
 * (extra.syn_retransmits, TCP_INFO) and kept: they are connects too.
 *
 * net.tcp_close: per operation, a close session (untimed: connect, hello,
 * answer), then one of
 *  - side=active (the probe closes first): the clock runs from just before
 *    shutdown(SHUT_WR) (our FIN) until recv() returns 0, i.e. the peer's
 *    FIN has arrived: our FIN out, the peer woken by its EOF, its close()
 *    and FIN back. close() afterwards is outside the value
 *    (extra.close_ns); extra.shutdown_ns is the shutdown() call alone.
 *    The probe's side ends in TIME_WAIT, as an active closer's does.
 *  - side=passive (the peer closes first): the clock runs from just before
 *    send() of the one byte 'C' that asks the peer to close, through the
 *    recv() that returns 0 (the peer's FIN seen), and our own close() (our
 *    FIN): extra.eof_ns is up to the EOF, extra.close_ns the close() call.
 *    The peer's side ends in TIME_WAIT. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../bench.h"
#include "../clock.h"
#include "../samples.h"
#include "net.h"

/* tcp_connect: connects between two sessions with the peer (see above). */
#define SYNC_EVERY 32

struct conn_state {
	struct net_peer np;
	int passive;            /* tcp_close side=passive */
	unsigned since_sync;    /* tcp_connect: connects since the last session */
	uint64_t syn_retrans;   /* tcp_connect: connects whose SYN went out again */
	struct osm_samples a, b; /* per sampled operation: the extras' parts */
	const char *a_key, *b_key;
};

void net_conn_teardown(struct osm_ctx *ctx)
{
	struct conn_state *s = ctx->priv;
	if (!s)
		return;
	if (!s->a_key && s->np.done)
		osm_add_extra(ctx, "syn_retransmits", (double)s->syn_retrans);
	if (s->a.n)
		osm_add_extra(ctx, s->a_key, osm_sort_median(s->a.v, s->a.n));
	if (s->b.n)
		osm_add_extra(ctx, s->b_key, osm_sort_median(s->b.v, s->b.n));
	net_peer_stop(&s->np);
	osm_samples_free(&s->a);
	osm_samples_free(&s->b);
	free(s);
	ctx->priv = NULL;
}

static int conn_setup(struct osm_ctx *ctx, const char *what)
{
	struct conn_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	int st = net_peer_start(ctx, &s->np, what);
	if (st != OSM_OK)
		net_conn_teardown(ctx);
	return st;
}

/* ---- net.tcp_connect -------------------------------------------------- */

/* A close session, opened and closed: its answer means the peer has
 * accepted every connection queued before it (the accept queue is FIFO). */
static int sync_peer(struct osm_ctx *ctx, struct conn_state *s)
{
	char answer[OSM_PEER_HELLO_MAX];
	int fd = net_session(ctx, &s->np, "close", "", answer, sizeof(answer));
	if (fd < 0)
		return OSM_ERROR;
	close(fd);
	s->since_sync = 0;
	return OSM_OK;
}

int net_connect_setup(struct osm_ctx *ctx)
{
	int st = conn_setup(ctx, "connects");
	if (st != OSM_OK)
		return st;
	/* The path MTU, and a first check that the peer is there. */
	st = sync_peer(ctx, ctx->priv);
	if (st != OSM_OK)
		net_conn_teardown(ctx);
	return st;
}

/* Whether the connection's SYN was sent more than once (TCP_INFO). */
static int syn_resent(int fd)
{
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	return !getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) && ti.tcpi_total_retrans > 0;
}

/* A socket to connect: timeouts (connect obeys SO_SNDTIMEO) and SO_LINGER 0. */
static int fresh_socket(struct osm_ctx *ctx, const struct net_peer *np)
{
	int fd = socket(np->p.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return osm_fail_errno(ctx, "socket(SOCK_STREAM)"), -1;
	struct linger lg = {1, 0};
	if (net_timeouts(fd, NET_IO_TIMEOUT_S * 1000) || setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg))) {
		osm_fail_errno(ctx, "setsockopt of a socket to connect");
		close(fd);
		return -1;
	}
	return fd;
}

int net_connect_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct conn_state *s = ctx->priv;
	double total = 0;
	for (uint64_t i = 0; i < batch; i++) {
		if (s->since_sync >= SYNC_EVERY && sync_peer(ctx, s) != OSM_OK)
			return OSM_ERROR;
		int fd = fresh_socket(ctx, &s->np);
		if (fd < 0)
			return OSM_ERROR;
		osm_count_begin(ctx);
		uint64_t t0 = osm_clock_start();
		int r = connect(fd, (const struct sockaddr *)&s->np.p.addr, s->np.p.addr_len);
		uint64_t t1 = osm_clock_stop();
		osm_count_end(ctx, r == 0);
		int e = errno;
		if (!r && ctx->counting && syn_resent(fd))
			s->syn_retrans++;
		close(fd);
		s->since_sync++;
		if (r) {
			errno = e;
			if (e == EADDRNOTAVAIL)
				return osm_fail(ctx, OSM_ERROR,
						"connect to peer %s: no free local port after %llu connects (%s; see "
						"net.ipv4.ip_local_port_range)", s->np.addr,
						(unsigned long long)s->np.done, strerror(e));
			return net_io_fail(ctx, &s->np, -1, "connect");
		}
		total += osm_ticks_to_ns(t1 - t0);
		s->np.done++;
	}
	ctx->self_ns = total;
	return OSM_OK;
}

/* ---- net.tcp_close ---------------------------------------------------- */

int net_close_setup(struct osm_ctx *ctx)
{
	int st = conn_setup(ctx, "closes");
	if (st != OSM_OK)
		return st;
	struct conn_state *s = ctx->priv;
	s->passive = osm_param_int(ctx, "side") == 1;
	s->a_key = s->passive ? "eof_ns" : "shutdown_ns";
	s->b_key = "close_ns";
	return OSM_OK;
}

/* The byte recv() must not return: the peer sends nothing on a close
 * session, so anything but EOF is a protocol error. */
static int expect_eof(struct osm_ctx *ctx, struct conn_state *s, int fd)
{
	char c;
	ssize_t r;
	do
		r = recv(fd, &c, 1, 0);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return OSM_OK;
	if (r > 0)
		return osm_fail(ctx, OSM_ERROR, "peer %s sent data on a close session (after %llu closes)", s->np.addr,
				(unsigned long long)s->np.done);
	return net_io_fail(ctx, &s->np, r, "recv of the peer's FIN");
}

/* One teardown; *a, *b: the extras' parts, *ns: the value. */
static int one_close(struct osm_ctx *ctx, struct conn_state *s, int fd, double *a, double *b, double *ns)
{
	uint64_t t0, t1, t2;
	int st;
	osm_count_begin(ctx);
	if (!s->passive) {
		t0 = osm_clock_start();
		int r = shutdown(fd, SHUT_WR);
		t1 = osm_clock_stop();
		st = r ? osm_fail_errno(ctx, "shutdown(SHUT_WR)") : expect_eof(ctx, s, fd);
		t2 = osm_clock_stop();
		osm_count_end(ctx, st == OSM_OK);
		uint64_t t3 = osm_clock_start();
		close(fd);
		*b = osm_ticks_to_ns(osm_clock_stop() - t3);
		*a = osm_ticks_to_ns(t1 - t0);
		*ns = osm_ticks_to_ns(t2 - t0);
		return st;
	}
	t0 = osm_clock_start();
	ssize_t w = send(fd, "C", 1, MSG_NOSIGNAL);
	st = w == 1 ? expect_eof(ctx, s, fd) : net_io_fail(ctx, &s->np, w, "send of 'C'");
	t1 = osm_clock_stop();
	close(fd);
	t2 = osm_clock_stop();
	osm_count_end(ctx, st == OSM_OK);
	*a = osm_ticks_to_ns(t1 - t0);
	*b = osm_ticks_to_ns(t2 - t1);
	*ns = osm_ticks_to_ns(t2 - t0);
	return st;
}

int net_close_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct conn_state *s = ctx->priv;
	double total = 0;
	char answer[OSM_PEER_HELLO_MAX];
	for (uint64_t i = 0; i < batch; i++) {
		int fd = net_session(ctx, &s->np, "close", "", answer, sizeof(answer));
		if (fd < 0)
			return OSM_ERROR;
		double a, b, ns;
		int st = one_close(ctx, s, fd, &a, &b, &ns);
		if (st != OSM_OK)
			return st;
		if (ctx->counting && (osm_samples_push(&s->a, a) || osm_samples_push(&s->b, b)))
			return osm_fail(ctx, OSM_ERROR, "out of memory");
		total += ns;
		s->np.done++;
	}
	ctx->self_ns = total;
	return OSM_OK;
}
