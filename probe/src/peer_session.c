/* peer_session.c - one session of the peer, in its own process (forked by
 * peer_serve.c): the OK answer, then the service, with blocking I/O, until
 * the client is done or a limit is reached. The time limit is an interval
 * timer whose handler writes the log line and ends the process; the byte
 * limit is counted in the loops. The process ends with _exit: it never
 * returns into the probe, never runs the probe's cleanup handlers. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "build_info.h"
#include "clock.h"
#include "log.h"
#include "peer_int.h"

#define BUF_LEN (128 * 1024) /* echo, sink and udp reads; iperf3's default read */

/* Page-aligned, as the source (peer_serve.c), so no figure depends on
 * where the linker puts it: moved by an unrelated change to 32 rather than
 * 64 bytes into a cache line, the kernel's copy into it cost net.tcp_bw
 * send half its rate on a 2-vCPU EPYC guest (2.2 against 4.5 GB/s at 1 MiB
 * writes). */
static _Alignas(4096) unsigned char buf[BUF_LEN];
static char alarm_line[256];
static size_t alarm_len;
/* The ends of a session that went as the client wanted; any other end is a
 * problem, said on stderr even without -v (enum osm_peer_log). */
static const char CLIENT_CLOSED[] = "the client closed";
static const char CLOSED_AS_ASKED[] = "closed first, as the client asked";

struct run {
	const struct osm_peer_handoff *s;
	uint64_t bytes;     /* both ways */
	const char *end;    /* why it ended */
	char why[160];
};

static void on_alarm(int sig)
{
	(void)sig;
	if (alarm_len) {
		ssize_t w = write(STDERR_FILENO, alarm_line, alarm_len);
		(void)w;
	}
	_exit(0);
}

static void arm_timer(const struct osm_peer_handoff *s)
{
	if (s->log >= OSM_PEER_LOG_PROBLEMS) {
		int n = snprintf(alarm_line, sizeof(alarm_line),
				 "osmeter-probe: peer: %s session for %s: time limit (%g s) reached, closed\n",
				 osm_peer_service_name(s->hello.service), s->client, s->lim->session_s);
		alarm_len = n > 0 && n < (int)sizeof(alarm_line) ? (size_t)n : 0;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, 0}};
	it.it_value.tv_sec = (time_t)s->lim->session_s;
	it.it_value.tv_usec = (suseconds_t)((s->lim->session_s - (double)it.it_value.tv_sec) * 1e6);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* recv that retries EINTR; sets r->end on EOF or error. */
static ssize_t recv_some(struct run *r, void *p, size_t n)
{
	for (;;) {
		ssize_t got = recv(r->s->fd, p, n, 0);
		if (got > 0)
			return got;
		if (got < 0 && errno == EINTR)
			continue;
		if (got == 0) {
			r->end = CLIENT_CLOSED;
		} else {
			snprintf(r->why, sizeof(r->why), "recv: %s", strerror(errno));
			r->end = r->why;
		}
		return -1;
	}
}

/* Counts n more bytes; 0 when the session may move them. */
static int take(struct run *r, uint64_t n)
{
	if (r->bytes + n > r->s->lim->session_bytes) {
		snprintf(r->why, sizeof(r->why), "byte limit (%" PRIu64 " bytes) reached", r->s->lim->session_bytes);
		r->end = r->why;
		return -1;
	}
	r->bytes += n;
	return 0;
}

static void send_failed(struct run *r)
{
	if (errno == EPIPE || errno == ECONNRESET) {
		r->end = CLIENT_CLOSED;
		return;
	}
	snprintf(r->why, sizeof(r->why), "send: %s", strerror(errno));
	r->end = r->why;
}

static void run_echo(struct run *r)
{
	const struct osm_peer_handoff *s = r->s;
	if (s->n_early && !take(r, 2 * (uint64_t)s->n_early) && send_all(s->fd, s->early, s->n_early))
		send_failed(r);
	while (!r->end) {
		ssize_t n = recv_some(r, buf, sizeof(buf));
		if (n < 0 || take(r, 2 * (uint64_t)n))
			break;
		if (send_all(s->fd, buf, (size_t)n))
			send_failed(r);
	}
}

static void run_sink(struct run *r)
{
	uint64_t got = r->s->n_early;
	if (take(r, got))
		return;
	for (;;) {
		ssize_t n = recv_some(r, buf, sizeof(buf));
		if (n < 0 || take(r, (uint64_t)n))
			break;
		got += (uint64_t)n;
	}
	if (r->end == CLIENT_CLOSED) {
		char line[64];
		int len = snprintf(line, sizeof(line), "DONE %" PRIu64 "\n", got);
		if (send_all(r->s->fd, line, (size_t)len))
			send_failed(r);
	}
}

static void run_source(struct run *r)
{
	const struct osm_peer_handoff *s = r->s;
	size_t size = (size_t)s->hello.size;
	while (!take(r, size)) {
		if (send_all(s->fd, s->source, size)) {
			send_failed(r);
			return;
		}
	}
}

static void run_close(struct run *r)
{
	unsigned char c;
	if (r->s->n_early)
		c = (unsigned char)r->s->early[0];
	else if (recv_some(r, &c, 1) < 0)
		return; /* EOF: the client closed first */
	r->end = c == 'C' ? CLOSED_AS_ASKED : "closed (a byte other than 'C')";
}

/* "OK VERSION [extra] mtu=N\n" */
static int answer_ok(const struct osm_peer_handoff *s, const char *extra)
{
	char line[OSM_PEER_HELLO_MAX];
	int mtu = osm_peer_path_mtu(s->fd);
	const char *version = OSM_VERSION[0] ? OSM_VERSION : "unknown"; /* a build without project() */
	int n = snprintf(line, sizeof(line), "OK %s%s%s mtu=%d\n", version, extra[0] ? " " : "", extra, mtu);
	return send_all(s->fd, line, (size_t)n);
}

static void cookie_bytes(unsigned char c[8])
{
	if (getrandom(c, 8, GRND_NONBLOCK) == 8)
		return;
	/* No entropy yet (early boot): the cookie only sorts out stray
	 * datagrams, it is no secret. */
	uint64_t x = (uint64_t)osm_mono_ns() ^ ((uint64_t)getpid() << 32);
	memcpy(c, &x, 8);
}

static int same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr, sizeof(struct in6_addr));
	return 0;
}

/* Echoes the datagrams waiting on u that come from the client's host and
 * carry the cookie; the rest are dropped. */
static void udp_drain(struct run *r, int u, const struct sockaddr_storage *client, const unsigned char cookie[8])
{
	for (int k = 0; k < 64 && !r->end; k++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(u, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		if (n < 8 || !same_host(&from, client) || memcmp(buf, cookie, 8))
			continue;
		if (take(r, 2 * (uint64_t)n))
			return;
		ssize_t w = sendto(u, buf, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
		(void)w; /* a full send queue drops the echo, as a network would */
	}
}

/* The UDP socket on the address the control connection reached. */
static int udp_open(struct run *r, struct sockaddr_storage *client, int *port)
{
	struct sockaddr_storage local;
	socklen_t ll = sizeof(local), cl = sizeof(*client);
	int u = -1;
	if (!getsockname(r->s->fd, (struct sockaddr *)&local, &ll) &&
	    !getpeername(r->s->fd, (struct sockaddr *)client, &cl)) {
		osm_peer_set_port((struct sockaddr *)&local, 0);
		u = socket(local.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (u >= 0 && (bind(u, (struct sockaddr *)&local, ll) ||
			       getsockname(u, (struct sockaddr *)&local, &ll))) {
			close(u);
			u = -1;
		}
	}
	if (u < 0) {
		snprintf(r->why, sizeof(r->why), "cannot open the UDP socket: %s", strerror(errno));
		r->end = r->why;
		return -1;
	}
	*port = osm_peer_port((struct sockaddr *)&local);
	return u;
}

static void run_udp(struct run *r)
{
	struct sockaddr_storage client;
	unsigned char cookie[8];
	char extra[96];
	int port, u = udp_open(r, &client, &port);
	if (u < 0) {
		char line[OSM_PEER_HELLO_MAX];
		int n = snprintf(line, sizeof(line), "ERR %s\n", r->why);
		send_all(r->s->fd, line, (size_t)n);
		return;
	}
	cookie_bytes(cookie);
	int n = snprintf(extra, sizeof(extra), "udp_port=%d cookie=", port);
	for (int k = 0; k < 8; k++)
		n += snprintf(extra + n, sizeof(extra) - (size_t)n, "%02x", cookie[k]);
	if (answer_ok(r->s, extra)) {
		send_failed(r);
		close(u);
		return;
	}
	struct pollfd pfd[2] = {{.fd = r->s->fd, .events = POLLIN}, {.fd = u, .events = POLLIN}};
	while (!r->end) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(r->why, sizeof(r->why), "poll: %s", strerror(errno));
			r->end = r->why;
			break;
		}
		if (pfd[1].revents)
			udp_drain(r, u, &client, cookie);
		if (pfd[0].revents && !r->end) {
			ssize_t got = recv_some(r, buf, sizeof(buf)); /* the control connection carries nothing */
			if (got > 0)
				take(r, (uint64_t)got);
		}
	}
	close(u);
}

void osm_peer_session_run(const struct osm_peer_handoff *s)
{
	struct run r = {.s = s};
	int64_t t0 = osm_mono_ns();
	int one = 1;
	fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) & ~O_NONBLOCK);
	if (s->hello.service == OSM_PEER_ECHO || s->hello.service == OSM_PEER_UDP)
		setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	arm_timer(s);
	if (s->hello.service == OSM_PEER_UDP)
		run_udp(&r);
	else if (answer_ok(s, ""))
		send_failed(&r);
	else if (s->hello.service == OSM_PEER_ECHO)
		run_echo(&r);
	else if (s->hello.service == OSM_PEER_SINK)
		run_sink(&r);
	else if (s->hello.service == OSM_PEER_SOURCE)
		run_source(&r);
	else
		run_close(&r);
	const char *end = r.end ? r.end : CLIENT_CLOSED;
	int as_wanted = end == CLIENT_CLOSED || end == CLOSED_AS_ASKED;
	if (s->log >= (as_wanted ? OSM_PEER_LOG_SESSIONS : OSM_PEER_LOG_PROBLEMS))
		osm_info("peer: %s session for %s ended after %.3f s, %" PRIu64 " bytes: %s",
			 osm_peer_service_name(s->hello.service), s->client, (double)(osm_mono_ns() - t0) / 1e9,
			 r.bytes, end);
	close(s->fd);
	_exit(0);
}
