/* ipc_bw.c - bandwidth from the partner to the probe: ipc.pipe_bw (lmbench
 * bw_pipe) and ipc.unix_bw (bw_unix, and the same over a datagram socket
 * pair). Method: docs/methods/ipc.md.
 *
 * One operation is one transfer of `total` bytes, lmbench's method: the
 * probe writes the request (the byte count) on a control pipe, the partner
 * writes `total` bytes in write()s of `size` bytes (datagrams of `size`
 * bytes, the last one shorter), and the probe read()s with a `size`-byte
 * buffer until it has received all of them. The harness times run(), so a
 * sample spans the request's wake-up of the partner to the probe's read of
 * the last byte: every byte counted has been received by the reader, none
 * is left parked in the pipe or socket buffer, which is empty when a
 * transfer starts and when it ends. Value: total / time, bytes/s
 * (ctx->bytes_per_op = total). The request's wake-up (a few µs) is part of
 * every transfer, as in lmbench; with total=0 (the default) a transfer is
 * lmbench's 10 MiB, or 1024 writes when that is less, so the wake-up stays
 * under about 1 % of it and a 1-byte write size does not make one sample
 * last ten million writes.
 *
 * Traps avoided: as ipc_lat.c (disjoint descriptors, SIGPIPE ignored, a
 * datagram socket shut down by the SIGCHLD handler when the partner dies);
 * a datagram longer than the socket allows is a skip with the limit. */
#include "ipc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ANSWER_MS 5000
#define LMBENCH_TOTAL ((uint64_t)10 << 20) /* bw_pipe, bw_unix: XFER */
#define AUTO_WRITES 1024

struct bw_state {
	struct ipc_party p;
	size_t size;
	uint64_t total;
	int data_in, ctl_out;  /* the probe's */
	int data_out, ctl_in;  /* the partner's */
	char *buf, *pbuf;
};

static int writer_body(void *arg)
{
	struct bw_state *s = arg;
	for (;;) {
		uint64_t todo;
		int r = ipc_read_all(s->ctl_in, &todo, sizeof(todo));
		if (r)
			return r < 0; /* end of file: the probe is done */
		while (todo) {
			size_t n = todo < s->size ? (size_t)todo : s->size;
			ssize_t w = write(s->data_out, s->pbuf, n);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				return 0; /* the probe closed its end */
			}
			todo -= (uint64_t)w;
		}
	}
}

/* One transfer: the request, then every byte of it. The first one (set-up)
 * waits for the partner's first bytes with a bound. */
static int transfer(struct osm_ctx *ctx, struct bw_state *s, int first)
{
	if (ipc_write_all(s->ctl_out, &s->total, sizeof(s->total)))
		return ipc_party_fail(ctx, &s->p, "request to the partner", errno);
	if (first) {
		int st = ipc_party_wait_readable(ctx, &s->p, s->data_in, ANSWER_MS, "waiting for its first bytes");
		if (st != OSM_OK)
			return st;
	}
	uint64_t got = 0;
	while (got < s->total) {
		ssize_t n = read(s->data_in, s->buf, s->size);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return ipc_party_fail(ctx, &s->p, "read from the partner", n < 0 ? errno : 0);
		}
		got += (uint64_t)n;
	}
	return OSM_OK;
}

int ipc_bw_check(const struct osm_bench *b, const struct osm_pval *pv, char *err, size_t len)
{
	long long size = (long long)osm_pval_of(b, pv, "size")->i, total = (long long)osm_pval_of(b, pv, "total")->i;
	if (total && total < size) {
		snprintf(err, len, "total=%lld is less than size=%lld: a transfer is at least one write of size bytes; "
			 "give total >= %lld, or 0 (the default)", total, size, size);
		return -1;
	}
	return 0;
}

static int bw_alloc(struct osm_ctx *ctx, struct bw_state **out)
{
	struct bw_state *s = calloc(1, sizeof(*s));
	*out = s;
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	ipc_party_init(&s->p);
	s->data_in = s->ctl_out = s->data_out = s->ctl_in = -1;
	s->size = (size_t)osm_param_int(ctx, "size");
	s->total = (uint64_t)osm_param_int(ctx, "total");
	if (!s->total) /* lmbench's 10 MiB; small writes: 1024 of them, a transfer of milliseconds */
		s->total = s->size * AUTO_WRITES < LMBENCH_TOTAL ? s->size * AUTO_WRITES : LMBENCH_TOTAL;
	if (s->total < s->size) /* a write bigger than 10 MiB: one whole write */
		s->total = s->size;
	ctx->bytes_per_op = (double)s->total;
	osm_add_extra(ctx, "total_bytes", (double)s->total);
	s->p.body = writer_body;
	s->p.arg = s;
	/* Page-aligned, as lmbench's bw_pipe and bw_unix (valloc): where malloc
	 * puts a large buffer (16 bytes into a page) the kernel's copies run
	 * slower, and the figure would depend on the allocator. */
	void *a = NULL, *b = NULL;
	s->buf = posix_memalign(&a, 4096, s->size) ? NULL : a;
	s->pbuf = posix_memalign(&b, 4096, s->size) ? NULL : b;
	if (!s->buf || !s->pbuf)
		return osm_fail(ctx, OSM_ERROR, "out of memory for %zu-byte buffers", s->size);
	memset(s->buf, 'a', s->size); /* resident before anything is timed */
	memset(s->pbuf, 'b', s->size);
	int st = ipc_party_configure(ctx, &s->p, 1);
	int ctl[2];
	if (st == OSM_OK && pipe2(ctl, O_CLOEXEC))
		st = osm_fail_errno(ctx, "pipe");
	if (st == OSM_OK) {
		s->p.mine[1] = s->ctl_out = ctl[1];
		s->p.theirs[1] = s->ctl_in = ctl[0];
	}
	return st;
}

/* Starts the partner and moves one transfer; on failure tears down. */
static int bw_go(struct osm_ctx *ctx, struct bw_state *s, int st)
{
	osm_count_note(ctx, "the writing partner (started in setup) is not counted: the probe's reads only");
	if (st == OSM_OK)
		st = ipc_party_start(ctx, &s->p);
	if (st == OSM_OK)
		st = transfer(ctx, s, 1);
	if (st != OSM_OK)
		ipc_bw_teardown(ctx);
	return st;
}

int ipc_pipe_bw_setup(struct osm_ctx *ctx)
{
	struct bw_state *s;
	int st = bw_alloc(ctx, &s);
	if (!s)
		return st;
	int data[2];
	if (st == OSM_OK && pipe2(data, O_CLOEXEC))
		st = osm_fail_errno(ctx, "pipe");
	if (st == OSM_OK) {
		s->p.mine[0] = s->data_in = data[0];
		s->p.theirs[0] = s->data_out = data[1];
	}
	return bw_go(ctx, s, st);
}

int ipc_unix_bw_setup(struct osm_ctx *ctx)
{
	struct bw_state *s;
	int st = bw_alloc(ctx, &s);
	if (!s)
		return st;
	int dgram = st == OSM_OK && osm_param_int(ctx, "type") == 1;
	int sv[2];
	if (st == OSM_OK && socketpair(AF_UNIX, (dgram ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0, sv))
		st = osm_fail_errno(ctx, "socketpair");
	if (st == OSM_OK) {
		s->p.mine[0] = s->data_in = sv[0];
		s->p.theirs[0] = s->data_out = sv[1];
		if (dgram) {
			s->p.unblock = IPC_UNBLOCK_SHUTDOWN;
			s->p.unblock_fd = sv[0];
			/* the partner sends, the probe receives */
			st = ipc_dgram_fits(ctx, sv[1], sv[0], s->buf, s->size);
		}
	}
	return bw_go(ctx, s, st);
}

int ipc_bw_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct bw_state *s = ctx->priv;
	for (uint64_t i = 0; i < batch; i++) {
		int st = transfer(ctx, s, 0);
		if (st != OSM_OK)
			return st;
	}
	return OSM_OK;
}

void ipc_bw_teardown(struct osm_ctx *ctx)
{
	struct bw_state *s = ctx->priv;
	if (!s)
		return;
	ipc_party_stop(&s->p);
	free(s->buf);
	free(s->pbuf);
	free(s);
	ctx->priv = NULL;
}
