/* net_dgram.c - the timed datagram round trip with loss accounting (UDP and
 * ICMP echo), and net.udp_rtt. Method: docs/methods/net.md
 *
 * A datagram can be lost; a lost one must neither hang the benchmark nor
 * be folded into its time. So each round trip has its own clock pair, from
 * just before send() to just after the recv() that returns its answer; an
 * answer that does not come within NET_LOSS_TIMEOUT_MS (SO_RCVTIMEO) is a
 * loss: counted (extra.lost), not timed, and the round trip is tried again
 * with the next sequence number. A datagram that is not the answer (a late
 * answer to a lost one, another process's ICMP) is counted (extra.stale)
 * and the wait goes on, up to the same deadline.
 *
 * net.udp_rtt: the peer's udp session gives a port and an 8-byte cookie;
 * the probe sends `size`-byte datagrams from a connected UDP socket: the
 * cookie, then the sequence number in the next min(8, size - 8) bytes,
 * then filler. The peer echoes each one; the answer must be `size` bytes
 * with the same cookie and sequence. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench.h"
#include "../clock.h"
#include "net.h"

#define LOSS_RUN_MAX 5      /* losses in a row: the peer is gone */
#define LOSS_TOTAL_MIN 10   /* and beyond this many ... */
#define LOSS_PERCENT_MAX 1  /* ... more than this share of the attempts */

/* Waits for the answer to seq: 1 answered, 0 lost (no answer in time),
 * -1 error (ctx->msg set). The first recv() waits by SO_RCVTIMEO (the
 * round trip's only system call on the way back); after a stale datagram,
 * poll() waits only what is left until the deadline, since a new recv()
 * would wait a whole SO_RCVTIMEO again. An answer that comes past the
 * deadline (poll's millisecond rounds up) is a loss too: no round trip
 * over NET_LOSS_TIMEOUT_MS is ever timed. */
static int await_answer(struct osm_ctx *ctx, struct net_peer *np, struct net_dgram *d, uint64_t seq)
{
	int64_t deadline = osm_mono_ns() + (int64_t)NET_LOSS_TIMEOUT_MS * 1000000;
	int flags = 0; /* MSG_DONTWAIT once poll() does the waiting */
	for (;;) {
		if (flags) {
			int64_t left = deadline - osm_mono_ns();
			struct pollfd pfd = {.fd = d->fd, .events = POLLIN};
			int n = left > 0 ? poll(&pfd, 1, (int)((left + 999999) / 1000000)) : 0;
			if (n == 0)
				return 0;
			if (n < 0 && errno != EINTR) {
				net_io_fail(ctx, np, -1, "poll");
				return -1;
			}
		}
		ssize_t r = recv(d->fd, d->rx, d->rx_cap, flags);
		if (r >= 0 && d->match(d, (size_t)r, seq))
			return osm_mono_ns() <= deadline ? 1 : 0;
		if (r >= 0) {
			d->stale++;
			flags = MSG_DONTWAIT;
			continue;
		}
		if (errno == EINTR || (flags && (errno == EAGAIN || errno == EWOULDBLOCK)))
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		net_io_fail(ctx, np, -1, "recv");
		return -1;
	}
}

static int too_many_losses(struct osm_ctx *ctx, const struct net_peer *np, const struct net_dgram *d)
{
	return osm_fail(ctx, OSM_ERROR,
			"peer %s: %llu of %llu datagrams lost (%u in a row; no answer within %d ms) after %llu %s%s",
			np->addr, (unsigned long long)d->lost, (unsigned long long)d->attempts, d->run_lost,
			NET_LOSS_TIMEOUT_MS, (unsigned long long)np->done, np->what, d->loss_hint ? d->loss_hint : "");
}

int net_dgram_run(struct osm_ctx *ctx, struct net_peer *np, struct net_dgram *d, uint64_t batch)
{
	double total = 0;
	uint64_t answered = 0;
	while (answered < batch) {
		uint64_t seq = d->seq++;
		size_t len = d->fill(d, seq);
		d->attempts++;
		osm_count_begin(ctx);
		uint64_t t0 = osm_clock_start();
		ssize_t w = send(d->fd, d->tx, len, MSG_NOSIGNAL);
		if (w != (ssize_t)len) {
			if (w >= 0)
				return osm_fail(ctx, OSM_ERROR, "send to peer %s: %zd of %zu bytes sent", np->addr, w, len);
			return net_io_fail(ctx, np, -1, "send");
		}
		int r = await_answer(ctx, np, d, seq);
		uint64_t t1 = osm_clock_stop();
		osm_count_end(ctx, r == 1); /* a lost round trip is no operation */
		if (r < 0)
			return OSM_ERROR;
		if (r == 1) {
			total += osm_ticks_to_ns(t1 - t0);
			answered++;
			np->done++;
			d->run_lost = 0;
			continue;
		}
		d->lost++;
		d->run_lost++;
		if (d->peer_gone) {
			int st = d->peer_gone(ctx, d);
			if (st != OSM_OK)
				return st;
		}
		if (d->run_lost >= LOSS_RUN_MAX ||
		    (d->lost > LOSS_TOTAL_MIN && d->lost * 100 > d->attempts * LOSS_PERCENT_MAX))
			return too_many_losses(ctx, np, d);
	}
	ctx->self_ns = total;
	return OSM_OK;
}

void net_dgram_end(struct osm_ctx *ctx, struct net_dgram *d)
{
	if (d->attempts) {
		osm_add_extra(ctx, "lost", (double)d->lost);
		osm_add_extra(ctx, "loss_fraction", (double)d->lost / (double)d->attempts);
		osm_add_extra(ctx, "stale", (double)d->stale);
	}
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	free(d->tx);
	free(d->rx);
	d->tx = d->rx = NULL;
}

/* ---- net.udp_rtt ------------------------------------------------------ */

struct udp_rtt {
	struct net_peer np;
	int ctrl;              /* the session's TCP control connection */
	size_t size;
	struct net_dgram d;
};

/* Bytes of the sequence number a datagram of this size carries. */
static size_t seq_bytes(size_t size)
{
	return size - 8 < 8 ? size - 8 : 8;
}

static size_t udp_fill(struct net_dgram *d, uint64_t seq)
{
	for (size_t i = 0; i < seq_bytes(d->tx_len); i++)
		d->tx[8 + i] = (unsigned char)(seq >> (8 * i));
	return d->tx_len;
}

static int udp_match(const struct net_dgram *d, size_t n, uint64_t seq)
{
	(void)seq; /* udp_fill put it in tx, which the answer must repeat */
	return n == d->tx_len && !memcmp(d->rx, d->tx, 8 + seq_bytes(d->tx_len));
}

/* After a loss: is the peer still there? Its control connection says. */
static int udp_peer_gone(struct osm_ctx *ctx, struct net_dgram *d)
{
	struct udp_rtt *s = d->user;
	char c;
	ssize_t r = recv(s->ctrl, &c, 1, MSG_DONTWAIT | MSG_PEEK);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
		return net_io_fail(ctx, &s->np, r, "recv on the udp session's control connection");
	return OSM_OK;
}

void net_udp_rtt_teardown(struct osm_ctx *ctx)
{
	struct udp_rtt *s = ctx->priv;
	if (!s)
		return;
	net_dgram_end(ctx, &s->d);
	if (s->ctrl >= 0)
		close(s->ctrl);
	net_peer_stop(&s->np);
	free(s);
	ctx->priv = NULL;
}

/* "udp_port=P" and "cookie=HEX16" from the session's answer. */
static int parse_answer(const char *answer, unsigned *port, unsigned char cookie[8])
{
	const char *p = strstr(answer, "udp_port=");
	const char *c = strstr(answer, "cookie=");
	if (!p || !c || sscanf(p + 9, "%u", port) != 1 || *port == 0 || *port > 65535)
		return -1;
	c += 7;
	for (int i = 0; i < 8; i++) {
		unsigned v;
		if (sscanf(c + 2 * i, "%2x", &v) != 1)
			return -1;
		cookie[i] = (unsigned char)v;
	}
	return 0;
}

/* The connected UDP socket to the peer's session port. */
static int udp_socket(struct osm_ctx *ctx, struct udp_rtt *s, unsigned port)
{
	struct sockaddr_storage ss = s->np.p.addr;
	if (ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)&ss)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)(void *)&ss)->sin_port = htons((uint16_t)port);
	s->d.fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->d.fd < 0)
		return osm_fail_errno(ctx, "socket(SOCK_DGRAM)");
	if (connect(s->d.fd, (struct sockaddr *)&ss, s->np.p.addr_len))
		return osm_fail(ctx, OSM_ERROR, "connect UDP to peer %s port %u: %s", s->np.addr, port,
				strerror(errno));
	if (net_timeouts(s->d.fd, NET_LOSS_TIMEOUT_MS))
		return osm_fail_errno(ctx, "setsockopt SO_RCVTIMEO");
	net_note_mtu(ctx, s->d.fd);
	return OSM_OK;
}

int net_udp_rtt_setup(struct osm_ctx *ctx)
{
	struct udp_rtt *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	s->ctrl = s->d.fd = -1;
	s->size = (size_t)osm_param_int(ctx, "size");
	int st = net_peer_start(ctx, &s->np, "round trips");
	char answer[OSM_PEER_HELLO_MAX];
	if (st == OSM_OK && (s->ctrl = net_session(ctx, &s->np, "udp", "", answer, sizeof(answer))) < 0)
		st = OSM_ERROR;
	unsigned port = 0;
	unsigned char cookie[8];
	if (st == OSM_OK && parse_answer(answer, &port, cookie))
		st = osm_fail(ctx, OSM_ERROR, "peer %s: no udp_port= and cookie= in its answer '%s'", s->np.addr,
			      answer);
	if (st == OSM_OK)
		st = udp_socket(ctx, s, port);
	if (st == OSM_OK) {
		s->d.tx_len = s->size;
		s->d.rx_cap = 65536;
		s->d.tx = malloc(s->size);
		s->d.rx = malloc(s->d.rx_cap);
		if (!s->d.tx || !s->d.rx)
			st = osm_fail(ctx, OSM_ERROR, "out of memory");
	}
	if (st != OSM_OK) {
		net_udp_rtt_teardown(ctx);
		return st;
	}
	for (size_t i = 0; i < s->size; i++)
		s->d.tx[i] = (unsigned char)(i * 7 + 1);
	memcpy(s->d.tx, cookie, 8);
	s->d.fill = udp_fill;
	s->d.match = udp_match;
	s->d.peer_gone = udp_peer_gone;
	s->d.user = s;
	return OSM_OK;
}

int net_udp_rtt_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct udp_rtt *s = ctx->priv;
	return net_dgram_run(ctx, &s->np, &s->d, batch);
}
