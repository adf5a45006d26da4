/* peer_open.c - opening the peer a benchmark talks to (peer.h): a remote
 * one by its address, or the probe's own on loopback: a child process
 * that runs the server (peer_serve.c), pinned, on the cleanup stack, and
 * stopped by osm_peer_close. Either way a first session (peer_client.c)
 * checks that it answers. It sits above both the server and the client
 * side, so neither knows of the other. It also keeps the remote peers
 * this process could not reach (a dead peer is tried once per run), and
 * tells a peer that is gone from one that only ended a session. */
#include "peer.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "affinity.h"
#include "cleanup.h"
#include "peer_int.h"
#include "procs.h"

#define STOP_WAIT_MS 5000 /* after SIGTERM, the own peer gets this long before SIGKILL */
#define UNREACHABLE_MAX 16 /* remote peers remembered as unreachable (more: the oldest is forgotten) */

/* ---- remote peers that could not be reached ---------------------------- */

static struct unreachable {
	struct sockaddr_storage addr;
	char why[400]; /* the first error */
} unreachable[UNREACHABLE_MAX];
static int n_unreachable, next_unreachable;

static int same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
		return x->sin6_port == y->sin6_port && x->sin6_scope_id == y->sin6_scope_id &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	return 0;
}

static const char *unreachable_why(const struct sockaddr_storage *addr)
{
	for (int i = 0; i < n_unreachable; i++)
		if (same_addr(&unreachable[i].addr, addr))
			return unreachable[i].why;
	return NULL;
}

void osm_peer_mark_unreachable(const struct osm_peer *p, const char *why)
{
	if (p->pid > 0 || unreachable_why(&p->addr))
		return; /* the own peer, or marked already: the first error is the one cited */
	struct unreachable *u = &unreachable[next_unreachable];
	next_unreachable = (next_unreachable + 1) % UNREACHABLE_MAX;
	if (n_unreachable < UNREACHABLE_MAX)
		n_unreachable++;
	u->addr = p->addr;
	snprintf(u->why, sizeof(u->why), "%s", why);
}

int osm_peer_still_answers(const struct osm_peer *p, char *err, size_t errlen)
{
	struct osm_peer q = *p; /* the session must not change the benchmark's peer (its version) */
	int fd = osm_peer_session(&q, "close", "", NULL, 0, err, errlen);
	if (fd >= 0) {
		close(fd); /* EOF: the peer closes its side too */
		return 1;
	}
	if (!q.unreachable)
		return 1;
	osm_peer_mark_unreachable(&q, err);
	return 0;
}

/* ---- the own peer ------------------------------------------------------- */

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
	cfg.log = OSM_PEER_LOG_NONE; /* the benchmark's client side reports */
	osm_peer_loopback_addr(family, &cfg.addr, &cfg.addr_len);
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
	int64_t deadline = osm_peer_deadline_in(OSM_PEER_CLIENT_TIMEOUT_S);
	while (n < sizeof(line) - 1) {
		if (!osm_peer_readable_by(rfd, deadline)) {
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
		const char *first = unreachable_why(&p->addr);
		if (first) {
			p->unreachable = 1;
			snprintf(err, errlen, "peer %s not tried again: it could not be reached earlier in this run "
				 "(%s)", p->where, first);
			return -1;
		}
	} else {
		osm_peer_loopback_addr(family, &p->addr, &p->addr_len);
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
		if (p->unreachable && p->pid <= 0)
			osm_peer_mark_unreachable(p, err);
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
