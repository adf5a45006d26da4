/* net_rtt.c - net.tcp_rtt: round trips of `size` bytes over one TCP
 * connection (TCP_NODELAY) to the peer's echo. Method: docs/methods/net.md
 *
 * One operation = one round trip: send() the message, recv() until all of
 * it has come back. The harness times batches of round trips (a round trip
 * of a microsecond or more is timed one by one). The first byte of every
 * message carries the round trip's number and must come back unchanged.
 *
 * A message larger than the socket buffers on the way cannot be sent whole
 * before its echo is read (the echo would stop, then we would): the send is
 * non-blocking (MSG_DONTWAIT), and when it would block the probe reads what
 * has come back so far; a small message goes out in one send() and comes
 * back in one recv(), the same two system calls as a blocking ping-pong. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench.h"
#include "net.h"

struct tcp_rtt {
	struct net_peer np;
	int fd;
	size_t size;
	unsigned char *tx, *rx;
};

void net_tcp_rtt_teardown(struct osm_ctx *ctx)
{
	struct tcp_rtt *s = ctx->priv;
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	net_peer_stop(&s->np);
	free(s->tx);
	free(s->rx);
	free(s);
	ctx->priv = NULL;
}

int net_tcp_rtt_setup(struct osm_ctx *ctx)
{
	struct tcp_rtt *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	s->fd = -1;
	s->size = (size_t)osm_param_int(ctx, "size");
	int st = net_peer_start(ctx, &s->np, "round trips");
	if (st != OSM_OK) {
		net_tcp_rtt_teardown(ctx);
		return st;
	}
	s->tx = malloc(s->size);
	s->rx = malloc(s->size);
	if (!s->tx || !s->rx) {
		net_tcp_rtt_teardown(ctx);
		return osm_fail(ctx, OSM_ERROR, "out of memory for two %zu-byte buffers", s->size);
	}
	for (size_t i = 0; i < s->size; i++)
		s->tx[i] = (unsigned char)(i * 7 + 1);
	char answer[OSM_PEER_HELLO_MAX];
	s->fd = net_session(ctx, &s->np, "echo", "", answer, sizeof(answer));
	int one = 1;
	if (s->fd >= 0 && setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		st = osm_fail_errno(ctx, "setsockopt TCP_NODELAY");
	if (s->fd < 0 || st != OSM_OK) {
		net_tcp_rtt_teardown(ctx);
		return OSM_ERROR;
	}
	return OSM_OK;
}

/* Waits until the socket takes more data (nothing of ours is in flight). */
static int wait_writable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int r;
	do
		r = poll(&p, 1, NET_IO_TIMEOUT_S * 1000);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = EAGAIN;
	return r > 0 ? 0 : -1;
}

/* One round trip. OSM_OK, or an error naming the peer. */
static int round_trip(struct osm_ctx *ctx, struct tcp_rtt *s)
{
	size_t n = s->size, sent = 0, got = 0;
	while (sent < n) {
		ssize_t w = send(s->fd, s->tx + sent, n - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			sent += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return net_io_fail(ctx, &s->np, -1, "send");
		if (got == sent) { /* nothing of ours to read back yet */
			if (wait_writable(s->fd))
				return net_io_fail(ctx, &s->np, -1, "poll for send");
			continue;
		}
		ssize_t r = recv(s->fd, s->rx + got, sent - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return net_io_fail(ctx, &s->np, r, "recv");
		got += (size_t)r;
	}
	if (got < n) {
		ssize_t r = net_recv_all(s->fd, s->rx + got, n - got);
		if (r <= 0)
			return net_io_fail(ctx, &s->np, r, "recv");
	}
	if (s->rx[0] != s->tx[0])
		return osm_fail(ctx, OSM_ERROR, "peer %s echoed other bytes than it was sent (round trip %llu)",
				s->np.addr, (unsigned long long)s->np.done + 1);
	return OSM_OK;
}

int net_tcp_rtt_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct tcp_rtt *s = ctx->priv;
	for (uint64_t i = 0; i < batch; i++) {
		s->tx[0] = (unsigned char)s->np.done;
		int st = round_trip(ctx, s);
		if (st != OSM_OK)
			return st;
		s->np.done++;
	}
	return OSM_OK;
}
