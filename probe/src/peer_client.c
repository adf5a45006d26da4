/* peer_client.c - the client side of peer.h: sessions and bare
 * connections to a peer opened by peer_open.c (a remote one, or the
 * probe's own). Every blocking step has a timeout
 * (OSM_PEER_CLIENT_TIMEOUT_S), and every failure says which peer and what. */
#include "peer.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "peer_int.h"

static void set_timeouts(int fd, int seconds)
{
	struct timeval tv = {seconds, 0};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* A connected TCP socket, connect() bounded by the send timeout (Linux
 * applies SO_SNDTIMEO to connect), timeouts left set; or with err -1 (the
 * connection failed) or -2 (no socket here). */
static int dial(const struct osm_peer *p, char *err, size_t errlen)
{
	const struct sockaddr *sa = (const struct sockaddr *)&p->addr;
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "peer %s: socket: %s", p->where, strerror(errno));
		return -2; /* not the peer's doing */
	}
	set_timeouts(fd, OSM_PEER_CLIENT_TIMEOUT_S);
	int r;
	while ((r = connect(fd, sa, p->addr_len)) < 0 && errno == EINTR)
		;
	if (r < 0) {
		if (errno == EINPROGRESS || errno == EAGAIN || errno == ETIMEDOUT)
			snprintf(err, errlen, "peer %s did not accept a connection in %d s", p->where,
				 OSM_PEER_CLIENT_TIMEOUT_S);
		else
			snprintf(err, errlen, "cannot connect to peer %s: %s", p->where, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int osm_peer_connect(const struct osm_peer *p, char *err, size_t errlen)
{
	int fd = dial(p, err, errlen);
	if (fd >= 0)
		set_timeouts(fd, 0);
	return fd < 0 ? -1 : fd;
}

int64_t osm_peer_deadline_in(int seconds)
{
	return osm_mono_ns() + (int64_t)seconds * 1000000000;
}

int osm_peer_readable_by(int fd, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - osm_mono_ns();
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int r = left > 0 ? poll(&pfd, 1, (int)(left / 1000000 + 1)) : 0;
		if (r >= 0 || errno != EINTR)
			return r != 0;
	}
}

/* One line of the peer's answer, read byte by byte so that nothing after
 * it (a source's data) is taken; within the deadline. 0, or with err -1
 * (no answer: a timeout, the connection closed) or -2 (too long). */
static int read_answer(const struct osm_peer *p, int fd, char *line, size_t len, char *err, size_t errlen)
{
	int64_t deadline = osm_peer_deadline_in(OSM_PEER_CLIENT_TIMEOUT_S);
	size_t n = 0;
	for (;;) {
		if (!osm_peer_readable_by(fd, deadline)) {
			snprintf(err, errlen, "peer %s did not answer the hello in %d s", p->where,
				 OSM_PEER_CLIENT_TIMEOUT_S);
			return -1;
		}
		ssize_t got = recv(fd, line + n, 1, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			snprintf(err, errlen, "peer %s closed the connection without answering the hello%s%s", p->where,
				 got < 0 ? ": " : "", got < 0 ? strerror(errno) : "");
			return -1;
		}
		if (line[n] == '\n') {
			line[n] = 0;
			return 0;
		}
		if (++n == len - 1) {
			snprintf(err, errlen, "peer %s: its answer is longer than %zu bytes: not an osmeter peer",
				 p->where, len - 1);
			return -2; /* an answer, if not a peer's */
		}
	}
}

/* dst: src's first n bytes (at most len - 1) with every byte that is not
 * printable ASCII as '?': nothing a peer sends reaches a terminal or a
 * record as a control sequence. */
static void printable(char *dst, size_t len, const char *src, size_t n)
{
	size_t k = 0;
	for (; k < n && k + 1 < len && src[k]; k++)
		dst[k] = src[k] >= 0x20 && src[k] < 0x7f ? src[k] : '?';
	dst[k] = 0;
}

/* "OK VERSION rest": the version into p, rest into answer; both, and an
 * "ERR reason" line, printable ASCII only (printable()). */
static int take_answer(struct osm_peer *p, const char *line, char *answer, size_t anslen, char *err,
		       size_t errlen)
{
	char sh[OSM_PEER_HELLO_MAX];
	if (!strncmp(line, "ERR ", 4)) {
		printable(sh, sizeof(sh), line, strlen(line));
		snprintf(err, errlen, "peer %s refused: %s", p->where, sh);
		return -1;
	}
	const char *v = line + 3, *sp = strchr(v, ' ');
	size_t vl = sp ? (size_t)(sp - v) : strlen(v);
	if (strncmp(line, "OK ", 3) || !vl || vl >= sizeof(p->version)) {
		printable(sh, 65, line, 64);
		snprintf(err, errlen, "peer %s answered '%s', not an osmeter peer's OK or ERR", p->where, sh);
		return -1;
	}
	printable(p->version, sizeof(p->version), v, vl);
	if (answer && anslen)
		printable(answer, anslen, sp ? sp + 1 : "", OSM_PEER_HELLO_MAX);
	return 0;
}

int osm_peer_session(struct osm_peer *p, const char *service, const char *args, char *answer, size_t anslen,
		     char *err, size_t errlen)
{
	char hello[OSM_PEER_HELLO_MAX + 1], line[OSM_PEER_HELLO_MAX + 1];
	int n = snprintf(hello, sizeof(hello), "%s %d %s%s%s%s%s\n", OSM_PEER_MAGIC, OSM_PEER_PROTO, service,
			 p->token[0] ? " token=" : "", p->token, args && args[0] ? " " : "", args ? args : "");
	p->unreachable = 0;
	if (n < 0 || n > OSM_PEER_HELLO_MAX) {
		snprintf(err, errlen, "the hello for %s would have more than %d bytes", service, OSM_PEER_HELLO_MAX);
		return -1;
	}
	int fd = dial(p, err, errlen);
	if (fd < 0) {
		p->unreachable = fd == -1;
		return -1;
	}
	ssize_t w;
	while ((w = send(fd, hello, (size_t)n, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (w != n) {
		snprintf(err, errlen, "peer %s: cannot send the hello: %s", p->where,
			 w < 0 ? strerror(errno) : "short write");
		p->unreachable = 1;
		close(fd);
		return -1;
	}
	int r = read_answer(p, fd, line, sizeof(line), err, errlen);
	if (r) {
		p->unreachable = r == -1;
		close(fd);
		return -1;
	}
	p->unreachable = 0;
	if (take_answer(p, line, answer, anslen, err, errlen)) {
		close(fd);
		return -1;
	}
	set_timeouts(fd, 0);
	return fd;
}
