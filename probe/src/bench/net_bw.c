/* net_bw.c - net.tcp_bw: TCP goodput of one stream, probe to peer
 * (direction=send, the peer's sink) or peer to probe (direction=recv, the
 * peer's source). Method: docs/methods/net.md
 *
 * One sample = one connection:
 *  1. a session (sink, or source with size=write_size), untimed;
 *  2. warm-up: stream for duration / 2 (at least 20 ms) and, for send,
 *     until a send() has found the socket buffer full, so slow start is
 *     over and the buffers on the way are filled (steady state);
 *  3. the measured interval: stream for `duration` ms; the sample is the
 *     bytes send() accepted (send) or recv() returned (recv) in it,
 *     divided by its length. With the buffers full at both ends of the
 *     interval, what send() accepts is what the path delivers;
 *  4. send: shutdown(SHUT_WR), and the sink's "DONE <bytes>" must equal
 *     every byte sent on the connection (warm-up included), else an error;
 *     recv: close (unread data makes it a RST; the source stops).
 * The harness gets the sample as a time per write_size bytes
 * (ctx->bytes_per_op = write_size, ctx->self_ns scaled), so its bytes/s
 * are the interval's bytes / its time. extra.bits_per_s is 8 x the median
 * of the sampled intervals (the result's median, in bits). */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench.h"
#include "../clock.h"
#include "../samples.h"
#include "net.h"

#define MIN_WARM_NS 20e6
#define BUF_OFFSET 64 /* bytes past a page boundary: one cache line in, see setup */

struct bw_state {
	struct net_peer np;
	int send;             /* direction=send */
	size_t wsize;
	double dur_ns, warm_ns;
	char *buf;             /* BUF_OFFSET bytes into mem */
	void *mem;
	struct osm_samples rates; /* sampled intervals, bytes/s */
	double bytes_moved;    /* every sample's connection, warm-ups included */
	double mss;
};

void net_bw_teardown(struct osm_ctx *ctx)
{
	struct bw_state *s = ctx->priv;
	if (!s)
		return;
	if (s->rates.n)
		osm_add_extra(ctx, "bits_per_s", 8 * osm_sort_median(s->rates.v, s->rates.n));
	if (s->bytes_moved > 0)
		osm_add_extra(ctx, "bytes_moved", s->bytes_moved);
	if (s->mss > 0)
		osm_add_extra(ctx, "mss", s->mss);
	net_peer_stop(&s->np);
	osm_samples_free(&s->rates);
	free(s->mem);
	free(s);
	ctx->priv = NULL;
}

int net_bw_setup(struct osm_ctx *ctx)
{
	struct bw_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	s->send = osm_param_int(ctx, "direction") == 0;
	s->wsize = (size_t)osm_param_int(ctx, "write_size");
	s->dur_ns = (double)osm_param_int(ctx, "duration") * 1e6;
	s->warm_ns = s->dur_ns / 2 > MIN_WARM_NS ? s->dur_ns / 2 : MIN_WARM_NS;
	ctx->bytes_per_op = (double)s->wsize;
	int st = net_peer_start(ctx, &s->np, "samples");
	if (st != OSM_OK) {
		net_bw_teardown(ctx);
		return st;
	}
	/* A fixed place, so the figure does not depend on where an allocator
	 * or a linker happens to put the buffer: BUF_OFFSET bytes past a page
	 * boundary. Not page-aligned: from a page-aligned buffer the kernel's
	 * copy into the (page-aligned) socket buffer pages was bimodal on a
	 * 2-vCPU EPYC guest, often half as fast (1.5-2.4 against 4-6 GB/s at
	 * 1 MiB writes), as 4K aliasing between source and destination would
	 * be; 16, 64 and 2048 bytes in were alike. docs/methods/net.md. */
	if (posix_memalign(&s->mem, 4096, s->wsize + BUF_OFFSET))
		s->mem = NULL;
	s->buf = s->mem ? (char *)s->mem + BUF_OFFSET : NULL;
	if (!s->buf) {
		net_bw_teardown(ctx);
		return osm_fail(ctx, OSM_ERROR, "out of memory for a %zu-byte buffer", s->wsize);
	}
	for (size_t i = 0; i < s->wsize; i++)
		s->buf[i] = (char)(i * 7 + 1);
	return OSM_OK;
}

/* One write_size chunk to the sink; *full is set once a send() has found
 * the socket buffer full (until then each send() tries MSG_DONTWAIT). */
static ssize_t send_chunk(struct bw_state *s, int fd, int *full)
{
	if (*full)
		return net_send_all(fd, s->buf, s->wsize);
	ssize_t r = send(fd, s->buf, s->wsize, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (r == (ssize_t)s->wsize || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
		return r;
	*full = 1;
	size_t off = r > 0 ? (size_t)r : 0;
	ssize_t rest = net_send_all(fd, s->buf + off, s->wsize - off);
	return rest > 0 ? (ssize_t)s->wsize : rest;
}

/* Streams until `ns` have passed (and, with until_full, until a send()
 * found the buffer full); adds the bytes moved to *bytes. OSM_OK or an
 * error. */
static int stream(struct osm_ctx *ctx, struct bw_state *s, int fd, double ns, int until_full, double *bytes)
{
	uint64_t t0 = osm_clock_start();
	int full = !until_full;
	for (;;) {
		ssize_t r = s->send ? send_chunk(s, fd, &full) : recv(fd, s->buf, s->wsize, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return net_io_fail(ctx, &s->np, r, s->send ? "send" : "recv");
		*bytes += (double)r;
		if (osm_ticks_to_ns(osm_clock_stop() - t0) >= ns && full)
			return OSM_OK;
	}
}

/* send: the sink's count after our EOF must be what we sent. */
static int sink_done(struct osm_ctx *ctx, struct bw_state *s, int fd, double sent)
{
	if (shutdown(fd, SHUT_WR))
		return osm_fail_errno(ctx, "shutdown(SHUT_WR) of the stream");
	char line[OSM_PEER_HELLO_MAX];
	size_t n = 0;
	while (n < sizeof(line) - 1 && (n == 0 || line[n - 1] != '\n')) {
		ssize_t r = recv(fd, line + n, sizeof(line) - 1 - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return net_io_fail(ctx, &s->np, r, "recv of the sink's DONE");
		n += (size_t)r;
	}
	line[n] = 0;
	unsigned long long got;
	if (sscanf(line, "DONE %llu", &got) != 1)
		return osm_fail(ctx, OSM_ERROR, "peer %s: the sink answered '%.*s', not DONE <bytes>", s->np.addr,
				(int)strcspn(line, "\r\n"), line);
	if ((double)got != sent)
		return osm_fail(ctx, OSM_ERROR, "peer %s: the sink received %llu bytes, the probe sent %.0f", s->np.addr,
				got, sent);
	return OSM_OK;
}

/* One sample: its own connection, warm-up, measured interval, check. */
static int one_sample(struct osm_ctx *ctx, struct bw_state *s, double *bytes, double *ns)
{
	char answer[OSM_PEER_HELLO_MAX], args[64];
	snprintf(args, sizeof(args), "size=%zu", s->wsize);
	int fd = net_session(ctx, &s->np, s->send ? "sink" : "source", s->send ? "" : args, answer, sizeof(answer));
	if (fd < 0)
		return OSM_ERROR;
	int mss = 0;
	socklen_t ml = sizeof(mss);
	if (!getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &ml) && mss > 0)
		s->mss = mss;
	double warm = 0, meas = 0;
	int st = stream(ctx, s, fd, s->warm_ns, s->send, &warm);
	osm_count_begin(ctx);
	uint64_t t0 = osm_clock_start();
	if (st == OSM_OK)
		st = stream(ctx, s, fd, s->dur_ns, 0, &meas);
	*ns = osm_ticks_to_ns(osm_clock_stop() - t0);
	osm_count_end(ctx, (uint64_t)(meas / (double)s->wsize)); /* per write_size bytes */
	*bytes = meas;
	s->bytes_moved += warm + meas;
	if (st == OSM_OK && s->send)
		st = sink_done(ctx, s, fd, warm + meas);
	close(fd);
	return st;
}

int net_bw_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct bw_state *s = ctx->priv;
	double bytes = 0, ns = 0;
	for (uint64_t i = 0; i < batch; i++) {
		double b, t;
		int st = one_sample(ctx, s, &b, &t);
		if (st != OSM_OK)
			return st;
		s->np.done++;
		if (ctx->counting && t > 0 && osm_samples_push(&s->rates, b * 1e9 / t))
			return osm_fail(ctx, OSM_ERROR, "out of memory");
		bytes += b;
		ns += t;
	}
	/* The harness' value is bytes_per_op * batch per self_ns. */
	ctx->self_ns = bytes > 0 ? ns * (double)s->wsize * (double)batch / bytes : ns;
	return OSM_OK;
}
