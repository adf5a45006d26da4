/* peer_client.c - the client side of peer.h: a remote peer, or the
 * probe's own peer on loopback (a child process on the cleanup stack),
 * sessions and bare connections to it. Every blocking step has a timeout
 * (OSM_PEER_CLIENT_TIMEOUT_S), and every failure says which peer and what. */
#include "peer.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "affinity.h"
#include "cleanup.h"
#include "clock.h"
#include "peer_int.h"
#include "procs.h"

#define STOP_WAIT_MS 5000 /* after SIGTERM, the own peer gets this long before SIGKILL */

static void set_timeouts(int fd, int seconds)
{
	struct timeval tv = {seconds, 0};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* A connected TCP socket, connect() bounded by the send timeout (Linux
 * applies SO_SNDTIMEO to connect), timeouts left set. */
static int dial(const struct osm_peer *p, char *err, size_t errlen)
{
	const struct sockaddr *sa = (const struct sockaddr *)&p->addr;
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "peer %s: socket: %s", p->where, strerror(errno));
		return -1;
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
	return fd;
}

int osm_peer_path_mtu(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int mtu = -1;
	socklen_t ml = sizeof(mtu);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return -1;
	if (ss.ss_family == AF_INET6 && !getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &ml))
		return mtu;
	ml = sizeof(mtu);
	if (!getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &ml)) /* also an IPv4-mapped IPv6 socket */
		return mtu;
	return -1;
}

static int64_t deadline_in(int seconds)
{
	return osm_mono_ns() + (int64_t)seconds * 1000000000;
}

/* 1 when fd is readable (or at EOF, or in error), 0 when the deadline
 * (ns) has passed first. */
static int readable_by(int fd, int64_t deadline)
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
 * it (a source's data) is taken; within the deadline. 0, or -1 with err. */
static int read_answer(const struct osm_peer *p, int fd, char *line, size_t len, char *err, size_t errlen)
{
	int64_t deadline = deadline_in(OSM_PEER_CLIENT_TIMEOUT_S);
	size_t n = 0;
	for (;;) {
		if (!readable_by(fd, deadline)) {
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
			return -1;
		}
	}
}

/* "OK VERSION rest": the version into p, rest into answer. */
static int take_answer(struct osm_peer *p, const char *line, char *answer, size_t anslen, char *err,
		       size_t errlen)
{
	char sh[OSM_PEER_HELLO_MAX];
	if (!strncmp(line, "ERR ", 4)) {
		snprintf(err, errlen, "peer %s refused: %s", p->where, line);
		return -1;
	}
	const char *v = line + 3, *sp = strchr(v, ' ');
	size_t vl = sp ? (size_t)(sp - v) : strlen(v);
	if (strncmp(line, "OK ", 3) || !vl || vl >= sizeof(p->version)) {
		size_t k = 0;
		for (; line[k] && k < 64; k++)
			sh[k] = line[k] >= 0x20 && line[k] < 0x7f ? line[k] : '?';
		sh[k] = 0;
		snprintf(err, errlen, "peer %s answered '%s', not an osmeter peer's OK or ERR", p->where, sh);
		return -1;
	}
	memcpy(p->version, v, vl);
	p->version[vl] = 0;
	if (answer && anslen)
		snprintf(answer, anslen, "%s", sp ? sp + 1 : "");
	return 0;
}

int osm_peer_session(struct osm_peer *p, const char *service, const char *args, char *answer, size_t anslen,
		     char *err, size_t errlen)
{
	char hello[OSM_PEER_HELLO_MAX + 1], line[OSM_PEER_HELLO_MAX + 1];
	int n = snprintf(hello, sizeof(hello), "%s %d %s%s%s%s%s\n", OSM_PEER_MAGIC, OSM_PEER_PROTO, service,
			 p->token[0] ? " token=" : "", p->token, args && args[0] ? " " : "", args ? args : "");
	if (n < 0 || n > OSM_PEER_HELLO_MAX) {
		snprintf(err, errlen, "the hello for %s would have more than %d bytes", service, OSM_PEER_HELLO_MAX);
		return -1;
	}
	int fd = dial(p, err, errlen);
	if (fd < 0)
		return -1;
	ssize_t w;
	while ((w = send(fd, hello, (size_t)n, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (w != n) {
		snprintf(err, errlen, "peer %s: cannot send the hello: %s", p->where,
			 w < 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	if (read_answer(p, fd, line, sizeof(line), err, errlen) ||
	    take_answer(p, line, answer, anslen, err, errlen)) {
		close(fd);
		return -1;
	}
	set_timeouts(fd, 0);
	return fd;
}

/* ---- our own peer ---------------------------------------------------- */

/* In the own peer's process: nothing of the probe's but stderr stays open. */
static void close_inherited(int keep)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
#ifdef SYS_close_range
	if ((keep == 3 || !syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u)) &&
	    !syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u))
		return;
#endif
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (long)rl.rlim_cur : 65536;
	for (long fd = 3; fd < max; fd++)
		if (fd != keep)
			close((int)fd);
}

static void own_peer_child(pid_t parent, int wfd, int family, int cpu)
{
	char e[400];
	osm_child_init(parent);
	close_inherited(wfd);
	if (cpu >= 0 && osm_pin_self(cpu)) {
		dprintf(wfd, "E cannot pin the peer to CPU %d: %s\n", cpu, strerror(errno));
		_exit(1);
	}
	struct osm_peer_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	osm_peer_default_limits(&cfg.lim);
	cfg.ready_fd = wfd;
	cfg.quiet = 1;
	struct sockaddr_in *s4 = (void *)&cfg.addr;
	struct sockaddr_in6 *s6 = (void *)&cfg.addr;
	if (family == AF_INET6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		cfg.addr_len = sizeof(*s6);
	} else {
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		cfg.addr_len = sizeof(*s4);
	}
	if (osm_peer_serve(&cfg, e, sizeof(e))) {
		dprintf(wfd, "E %s\n", e);
		_exit(1);
	}
	_exit(0);
}

/* The "PORT\n" (or "E reason\n") the own peer writes when it is ready. */
static int wait_ready(struct osm_peer *p, int rfd, char *err, size_t errlen)
{
	char line[512];
	size_t n = 0;
	int64_t deadline = deadline_in(OSM_PEER_CLIENT_TIMEOUT_S);
	while (n < sizeof(line) - 1) {
		if (!readable_by(rfd, deadline)) {
			snprintf(err, errlen, "own peer did not report its port in %d s", OSM_PEER_CLIENT_TIMEOUT_S);
			return -1;
		}
		ssize_t got = read(rfd, line + n, sizeof(line) - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	line[n] = 0;
	line[strcspn(line, "\n")] = 0;
	int port = atoi(line);
	if (line[0] == 'E' && line[1] == ' ') {
		snprintf(err, errlen, "own peer: %s", line + 2);
		return -1;
	}
	if (port <= 0 || port > 65535) {
		snprintf(err, errlen, "own peer exited before it was ready");
		return -1;
	}
	osm_peer_set_port((struct sockaddr *)&p->addr, port);
	return 0;
}

static void stop_own(struct osm_peer *p)
{
	if (p->pid <= 0)
		return;
	/* Off the cleanup stack first: should the probe die from here on, the
	 * peer dies with it (PR_SET_PDEATHSIG), and a reaped pid is never killed. */
	osm_cleanup_pop(p->cleanup_handle, 0);
	p->cleanup_handle = -1;
	kill(p->pid, SIGTERM);
	for (int ms = 0;; ms++) {
		pid_t r = waitpid(p->pid, NULL, ms < STOP_WAIT_MS ? WNOHANG : 0);
		if (r == p->pid || (r < 0 && errno != EINTR))
			break;
		if (ms == STOP_WAIT_MS - 1)
			kill(p->pid, SIGKILL);
		if (r == 0)
			usleep(1000);
	}
	p->pid = 0;
}

static int start_own(struct osm_peer *p, int family, int cpu, char *err, size_t errlen)
{
	int fds[2];
	if (family != AF_INET && family != AF_INET6) {
		snprintf(err, errlen, "own peer: address family %d; allowed: AF_INET, AF_INET6", family);
		return -1;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		snprintf(err, errlen, "own peer: pipe: %s", strerror(errno));
		return -1;
	}
	pid_t parent = getpid(), pid = fork();
	if (pid == 0)
		own_peer_child(parent, fds[1], family, cpu);
	close(fds[1]);
	if (pid < 0) {
		snprintf(err, errlen, "own peer: fork: %s", strerror(errno));
		close(fds[0]);
		return -1;
	}
	p->pid = pid;
	p->cleanup_handle = osm_cleanup_track_child(pid);
	int r = -1;
	if (p->cleanup_handle < 0)
		snprintf(err, errlen, "own peer: the cleanup stack is full");
	else
		r = wait_ready(p, fds[0], err, errlen);
	close(fds[0]);
	if (r) {
		stop_own(p);
		return -1;
	}
	return 0;
}

int osm_peer_open(struct osm_peer *p, const char *spec, const char *token, int family, int cpu, char *err,
		  size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->cleanup_handle = -1;
	char why[300], addr[OSM_PEER_ADDR_LEN];
	if (token && token[0]) {
		if (osm_peer_token_valid(token, strlen(token), why, sizeof(why))) {
			snprintf(err, errlen, "token: %s", why);
			return -1;
		}
		snprintf(p->token, sizeof(p->token), "%s", token);
	}
	if (spec && spec[0]) {
		if (osm_peer_parse_addr(spec, 1, &p->addr, &p->addr_len, why, sizeof(why))) {
			snprintf(err, errlen, "peer=%s", why);
			return -1;
		}
		if (osm_peer_port((struct sockaddr *)&p->addr) == 0) {
			snprintf(err, errlen, "peer=%s: port 0; give the port the peer listens on", spec);
			return -1;
		}
		osm_peer_format_addr((struct sockaddr *)&p->addr, p->where, sizeof(p->where));
	} else {
		p->addr.ss_family = (sa_family_t)family;
		if (family == AF_INET6) {
			((struct sockaddr_in6 *)(void *)&p->addr)->sin6_addr = in6addr_loopback;
			p->addr_len = sizeof(struct sockaddr_in6);
		} else {
			((struct sockaddr_in *)(void *)&p->addr)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			p->addr_len = sizeof(struct sockaddr_in);
		}
		if (start_own(p, family, cpu, err, errlen))
			return -1;
		osm_peer_format_addr((struct sockaddr *)&p->addr, addr, sizeof(addr));
		if (cpu >= 0)
			snprintf(p->where, sizeof(p->where), "%s (own peer on CPU %d)", addr, cpu);
		else
			snprintf(p->where, sizeof(p->where), "%s (own peer, not pinned)", addr);
	}
	/* Does it answer, and as an osmeter peer that takes our token? */
	int fd = osm_peer_session(p, "close", "", NULL, 0, err, errlen);
	if (fd < 0) {
		stop_own(p);
		return -1;
	}
	close(fd);
	return 0;
}

void osm_peer_close(struct osm_peer *p)
{
	stop_own(p);
	p->cleanup_handle = -1;
}
