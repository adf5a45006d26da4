/* ipc_lat.c - round trips between the probe and its partner: ipc.pipe_lat
 * (lmbench lat_pipe), ipc.fifo_lat (lat_fifo), ipc.unix_lat (lat_unix,
 * and the same over a datagram socket pair) and ipc.eventfd. Method:
 * docs/methods/ipc.md.
 *
 * One operation is one round trip: the probe writes `size` bytes (an
 * eventfd: adds 1), the partner, blocked in read(), receives them all and
 * writes `size` bytes back, the probe's read() returns the last of them.
 * run() does `batch` round trips and the harness times the call: the value
 * is ns per round trip, nothing subtracted.
 *
 * Traps avoided: the partner's descriptors and the probe's are disjoint (a
 * partner process closes the probe's, the probe closes the partner's), so
 * a partner that dies ends the probe's read with EOF or its write with
 * EPIPE (SIGPIPE is ignored meanwhile, ipc_party.c); a datagram socket and
 * an eventfd show nothing when the partner dies, so the SIGCHLD handler
 * shuts the probe's socket down or marks its eventfd. FIFOs are opened
 * without blocking (a partner that died before its open cannot hang the
 * probe's open()), and both sides wait for the other's end with poll(). */
#include "ipc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cleanup.h"

#define ANSWER_MS 5000 /* the longest wait for the partner's first answer */

enum lat_kind { K_PIPE, K_FIFO, K_UNIX, K_EVENTFD };

struct lat_state {
	struct ipc_party p;
	enum lat_kind kind;
	size_t size;
	int out, in;    /* the probe's: it writes out, reads in */
	int pin, pout;  /* the partner's */
	char *buf, *pbuf;
	char fifo[2][PATH_MAX]; /* [0] probe -> partner, [1] back; "" when not made */
	atomic_int stop;        /* a partner thread waiting for its FIFO's writer gives up */
};

/* ---- the partner -------------------------------------------------------- */

/* FIFO partner: opens its ends without blocking (the probe holds the read
 * end of the way back already), then waits until the probe's write end is
 * there: a read before would see no writer and return EOF. */
static int fifo_partner_open(struct lat_state *s)
{
	s->pin = open(s->fifo[0], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	s->pout = open(s->fifo[1], O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (s->pin < 0 || s->pout < 0)
		return -1;
	struct pollfd pf = {.fd = s->pin, .events = POLLIN};
	while (!atomic_load(&s->stop)) {
		int r = poll(&pf, 1, 100);
		if (r > 0)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
	}
	if (fcntl(s->pin, F_SETFL, 0) || fcntl(s->pout, F_SETFL, 0))
		return -1;
	return 0;
}

static int echo_body(void *arg)
{
	struct lat_state *s = arg;
	int rc = 0;
	if (s->kind == K_FIFO && fifo_partner_open(s))
		rc = 1;
	while (!rc && !atomic_load(&s->stop)) {
		int r = ipc_read_all(s->pin, s->pbuf, s->size);
		if (r) {
			rc = r < 0; /* end of file: the probe closed its end */
			break;
		}
		if (ipc_write_all(s->pout, s->pbuf, s->size))
			break;
	}
	if (s->kind == K_FIFO) { /* opened here: a partner thread closes its own */
		if (s->pin >= 0)
			close(s->pin);
		if (s->pout >= 0)
			close(s->pout);
		s->pin = s->pout = -1;
	}
	return rc;
}

static int efd_body(void *arg)
{
	struct lat_state *s = arg;
	for (;;) {
		uint64_t v;
		if (read(s->pin, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (v >= IPC_EFD_MARK)
			return 0; /* stop */
		v = 1;
		if (write(s->pout, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return 1;
	}
}

static void lat_wake(void *arg)
{
	struct lat_state *s = arg;
	atomic_store(&s->stop, 1);
	if (s->kind == K_EVENTFD) {
		uint64_t v = IPC_EFD_MARK;
		ssize_t r = write(s->pin, &v, sizeof(v));
		(void)r;
	}
}

/* ---- set-up ------------------------------------------------------------- */

static int lat_alloc(struct osm_ctx *ctx, enum lat_kind kind, struct lat_state **out)
{
	struct lat_state *s = calloc(1, sizeof(*s));
	*out = s;
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	ipc_party_init(&s->p);
	s->kind = kind;
	s->out = s->in = s->pin = s->pout = -1;
	s->size = kind == K_EVENTFD ? sizeof(uint64_t) : (size_t)osm_param_int(ctx, "size");
	s->p.body = kind == K_EVENTFD ? efd_body : echo_body;
	s->p.arg = s;
	s->p.wake = lat_wake;
	s->buf = malloc(s->size);
	s->pbuf = malloc(s->size);
	if (!s->buf || !s->pbuf)
		return osm_fail(ctx, OSM_ERROR, "out of memory for %zu-byte buffers", s->size);
	memset(s->buf, 'a', s->size); /* resident before anything is timed */
	memset(s->pbuf, 'b', s->size);
	return ipc_party_configure(ctx, &s->p, 1);
}

/* The first round trip, with a bounded wait for the answer: the partner
 * runs and holds its ends. */
static int lat_first_trip(struct osm_ctx *ctx, struct lat_state *s)
{
	if (ipc_write_all(s->out, s->buf, s->size))
		return ipc_party_fail(ctx, &s->p, "the first write to the partner", errno);
	int st = ipc_party_wait_readable(ctx, &s->p, s->in, ANSWER_MS, "waiting for its first answer");
	if (st != OSM_OK)
		return st;
	int r = ipc_read_all(s->in, s->buf, s->size);
	if (r)
		return ipc_party_fail(ctx, &s->p, "the first read from the partner", r < 0 ? errno : 0);
	return OSM_OK;
}

/* Starts the partner, then the first round trip; on failure tears down. */
static int lat_go(struct osm_ctx *ctx, struct lat_state *s, int st)
{
	osm_count_note(ctx, "the partner (started in setup) is not counted: the probe's side of each round "
		       "trip only");
	if (st == OSM_OK)
		st = ipc_party_start(ctx, &s->p);
	if (st == OSM_OK && s->kind == K_FIFO) {
		/* The way out opens once the partner has opened it to read. */
		for (int ms = 0; st == OSM_OK && s->out < 0; ms++) {
			s->out = open(s->fifo[0], O_WRONLY | O_NONBLOCK | O_CLOEXEC);
			if (s->out >= 0)
				break;
			if (errno != ENXIO)
				st = osm_fail_errno(ctx, "open of the FIFO to the partner");
			else if (ms >= ANSWER_MS)
				st = ipc_party_fail(ctx, &s->p, "the partner never opened its FIFO", ETIMEDOUT);
			else
				nanosleep(&(struct timespec){0, 1000000}, NULL);
		}
		s->p.mine[1] = s->out;
		if (st == OSM_OK && (fcntl(s->out, F_SETFL, 0) || fcntl(s->in, F_SETFL, 0)))
			st = osm_fail_errno(ctx, "fcntl");
	}
	if (st == OSM_OK)
		st = lat_first_trip(ctx, s);
	if (st != OSM_OK)
		ipc_lat_teardown(ctx);
	return st;
}

int ipc_pipe_lat_setup(struct osm_ctx *ctx)
{
	struct lat_state *s;
	int st = lat_alloc(ctx, K_PIPE, &s);
	if (!s)
		return st;
	int fwd[2], back[2];
	if (st == OSM_OK && pipe2(fwd, O_CLOEXEC))
		st = osm_fail_errno(ctx, "pipe");
	if (st == OSM_OK && pipe2(back, O_CLOEXEC)) {
		st = osm_fail_errno(ctx, "pipe");
		close(fwd[0]);
		close(fwd[1]);
	}
	if (st == OSM_OK) {
		s->p.mine[0] = s->out = fwd[1];
		s->p.mine[1] = s->in = back[0];
		s->p.theirs[0] = s->pin = fwd[0];
		s->p.theirs[1] = s->pout = back[1];
	}
	return lat_go(ctx, s, st);
}

int ipc_fifo_lat_setup(struct osm_ctx *ctx)
{
	struct lat_state *s;
	int st = lat_alloc(ctx, K_FIFO, &s);
	if (!s)
		return st;
	static const char *const names[2] = {"ipc-fifo-to-partner", "ipc-fifo-to-probe"};
	for (int i = 0; i < 2 && st == OSM_OK; i++) {
		if (osm_workfile(names[i], s->fifo[i], sizeof(s->fifo[i]))) {
			s->fifo[i][0] = 0;
			st = osm_fail(ctx, OSM_ERROR, "no work directory for the FIFOs (TMPDIR not writable?)");
		} else {
			unlink(s->fifo[i]); /* a previous instance's */
			if (mkfifo(s->fifo[i], 0600)) {
				st = osm_fail(ctx, OSM_ERROR, "mkfifo %s: %s", s->fifo[i], strerror(errno));
				s->fifo[i][0] = 0;
			}
		}
	}
	/* The way back is opened before the partner starts, so the
	 * partner's open of its write end finds a reader and never blocks. */
	if (st == OSM_OK && (s->in = open(s->fifo[1], O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		st = osm_fail(ctx, OSM_ERROR, "open %s: %s", s->fifo[1], strerror(errno));
	s->p.mine[0] = s->in;
	return lat_go(ctx, s, st);
}

int ipc_unix_lat_setup(struct osm_ctx *ctx)
{
	struct lat_state *s;
	int st = lat_alloc(ctx, K_UNIX, &s);
	if (!s)
		return st;
	int dgram = st == OSM_OK && osm_param_int(ctx, "type") == 1;
	int sv[2];
	if (st == OSM_OK && socketpair(AF_UNIX, (dgram ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0, sv))
		st = osm_fail_errno(ctx, "socketpair");
	if (st == OSM_OK) {
		s->p.mine[0] = s->out = s->in = sv[0];
		s->p.theirs[0] = s->pin = s->pout = sv[1];
		if (dgram) {
			s->p.unblock = IPC_UNBLOCK_SHUTDOWN;
			s->p.unblock_fd = sv[0];
			st = ipc_dgram_fits(ctx, sv[0], sv[1], s->buf, s->size);
		}
	}
	return lat_go(ctx, s, st);
}

int ipc_eventfd_setup(struct osm_ctx *ctx)
{
	struct lat_state *s;
	int st = lat_alloc(ctx, K_EVENTFD, &s);
	if (!s)
		return st;
	if (st == OSM_OK) {
		s->out = s->pin = eventfd(0, EFD_CLOEXEC);
		s->in = s->pout = eventfd(0, EFD_CLOEXEC);
		s->p.shared[0] = s->out;
		s->p.shared[1] = s->in;
		if (s->out < 0 || s->in < 0)
			st = osm_fail_errno(ctx, "eventfd");
		s->p.unblock = IPC_UNBLOCK_EVENTFD;
		s->p.unblock_fd = s->in;
		uint64_t one = 1;
		memcpy(s->buf, &one, sizeof(one));
	}
	return lat_go(ctx, s, st);
}

/* ---- the timed loops ---------------------------------------------------- */

int ipc_lat_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct lat_state *s = ctx->priv;
	for (uint64_t i = 0; i < batch; i++) {
		if (ipc_write_all(s->out, s->buf, s->size))
			return ipc_party_fail(ctx, &s->p, "write to the partner", errno);
		int r = ipc_read_all(s->in, s->buf, s->size);
		if (r)
			return ipc_party_fail(ctx, &s->p, "read from the partner", r < 0 ? errno : 0);
	}
	return OSM_OK;
}

int ipc_eventfd_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct lat_state *s = ctx->priv;
	const uint64_t one = 1;
	for (uint64_t i = 0; i < batch; i++) {
		uint64_t v;
		if (write(s->out, &one, sizeof(one)) != (ssize_t)sizeof(one))
			return ipc_party_fail(ctx, &s->p, "eventfd write", errno);
		if (read(s->in, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return ipc_party_fail(ctx, &s->p, "eventfd read", errno);
		if (v != 1)
			return ipc_party_fail(ctx, &s->p, "eventfd read: no answer", 0);
	}
	return OSM_OK;
}

void ipc_lat_teardown(struct osm_ctx *ctx)
{
	struct lat_state *s = ctx->priv;
	if (!s)
		return;
	ipc_party_stop(&s->p);
	for (int i = 0; i < 2; i++)
		if (s->fifo[i][0])
			unlink(s->fifo[i]);
	free(s->buf);
	free(s->pbuf);
	free(s);
	ctx->priv = NULL;
}
