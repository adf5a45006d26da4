/* peer_serve.c - osm_peer_serve (peer.h): one process that listens, takes
 * hellos and forks a process per session (peer_session.c).
 *
 * The listening process never blocks on a client: the listener and every
 * connection still sending its hello are non-blocking and polled together
 * with a signalfd (SIGINT, SIGTERM, SIGHUP: stop; SIGCHLD: reap). What a
 * client can make it hold is bounded: max_pending connections of one
 * hello buffer each (the oldest goes when a new one comes), max_sessions
 * session processes. A session process does its blocking I/O alone, under
 * its own time and byte limits; the listening process kills one that
 * overstays them by SESSION_GRACE_S. */
#include "peer.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "parse.h"
#include "peer_int.h"
#include "procs.h"

#define SESSION_GRACE_S 2.0   /* a session past its limits by this much is killed */
#define ACCEPT_BURST 64       /* connections accepted per wake-up */
#define ACCEPT_PAUSE_NS 100000000 /* out of descriptors: stop accepting this long */
#define BUSY_WAIT_NS 500000000    /* a whole hello waits this long for a session to end, then "ERR busy" */

struct pending {
	int fd;
	int64_t since;    /* accept time (ns): the oldest goes first */
	size_t len;
	int64_t busy_at;  /* > 0: a whole hello, waiting for a free session ("ERR busy" at this time) */
	size_t line_len;  /* then: its line, and the bytes up to its '\n' */
	size_t used;
	char buf[OSM_PEER_HELLO_MAX];
	char from[OSM_PEER_ADDR_LEN];
};

struct slot {
	pid_t pid;
	int64_t kill_at; /* ns */
};

struct server {
	const struct osm_peer_config *cfg;
	int lfd, sfd;
	struct pending *pend;
	int n_pend;
	struct slot *sess;
	int n_sess;
	unsigned char *source;  /* filled once, shared by every source session (copy on write, never written) */
	int64_t accept_resume;  /* ns; 0: accepting */
	sigset_t old_mask;
	pid_t self;
	char where[OSM_PEER_ADDR_LEN];
};

static int64_t secs_ns(double s)
{
	return (int64_t)(s * 1e9);
}

/* Best effort, never blocks: the client may not read. */
static void answer_err(int fd, const char *why)
{
	char line[OSM_PEER_HELLO_MAX];
	int n = snprintf(line, sizeof(line), "ERR %s\n", why);
	if (n < 0 || n >= (int)sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	ssize_t r = send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)r;
}

static void drop_pending(struct server *sv, int i)
{
	close(sv->pend[i].fd);
	sv->pend[i] = sv->pend[--sv->n_pend];
}

static void refuse(struct server *sv, int i, const char *why)
{
	answer_err(sv->pend[i].fd, why);
	if (sv->cfg->log >= OSM_PEER_LOG_PROBLEMS)
		osm_info("peer: refused %s: ERR %s", sv->pend[i].from, why);
	drop_pending(sv, i);
}

static void drop_oldest(struct server *sv)
{
	int old = 0;
	for (int i = 1; i < sv->n_pend; i++)
		if (sv->pend[i].since < sv->pend[old].since)
			old = i;
	drop_pending(sv, old);
}

/* Accepts what is waiting, up to ACCEPT_BURST. */
static void accept_some(struct server *sv)
{
	for (int k = 0; k < ACCEPT_BURST; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(sv->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* The connection stays in the backlog; try again soon. */
				sv->accept_resume = osm_mono_ns() + ACCEPT_PAUSE_NS;
				if (sv->n_pend)
					drop_oldest(sv);
				return;
			}
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO || errno == EPERM)
				continue;
			return; /* EAGAIN, or nothing more to do now */
		}
		if (sv->n_pend == sv->cfg->lim.max_pending)
			drop_oldest(sv);
		struct pending *p = &sv->pend[sv->n_pend++];
		p->fd = fd;
		p->since = osm_mono_ns();
		p->len = 0;
		p->busy_at = 0;
		osm_peer_format_addr((struct sockaddr *)&ss, p->from, sizeof(p->from));
	}
}

/* The session process: what it inherited of ours goes, then it runs. */
static void session_child(struct server *sv, int i, const struct osm_peer_hello *h, size_t used)
{
	osm_child_init(sv->self);
	sigset_t set;
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	close(sv->lfd);
	close(sv->sfd);
	for (int k = 0; k < sv->n_pend; k++)
		if (k != i)
			close(sv->pend[k].fd);
	struct pending *p = &sv->pend[i];
	struct osm_peer_handoff s = {
		.fd = p->fd,
		.early = p->buf + used,
		.n_early = p->len - used,
		.hello = *h,
		.lim = &sv->cfg->lim,
		.source = sv->source,
		.log = sv->cfg->log,
	};
	memcpy(s.client, p->from, sizeof(s.client));
	osm_peer_session_run(&s);
}

static int fill_source(struct server *sv)
{
	if (sv->source)
		return 0;
	/* Page-aligned: malloc's mmap puts the data 16 bytes into a page, and the
	 * sender's copy from so placed a buffer cost this 2-vCPU guest 40 % of
	 * net.tcp_bw recv on loopback (1.7 against 2.7 GB/s at 128 KiB writes;
	 * benchmarks/net_vs_sockperf_iperf.py against iperf3 -R). */
	void *mem = NULL;
	if (posix_memalign(&mem, 4096, OSM_PEER_SOURCE_MAX))
		return -1;
	sv->source = mem;
	uint64_t x = 0x9e3779b97f4a7c15ull; /* xorshift: data no link or CPU could compress */
	for (size_t k = 0; k < OSM_PEER_SOURCE_MAX; k += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(sv->source + k, &x, 8);
	}
	return 0;
}

static void reap(struct server *sv)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (int k = 0; k < sv->n_sess; k++) {
			if (sv->sess[k].pid == pid) {
				sv->sess[k] = sv->sess[--sv->n_sess];
				break;
			}
		}
		if (sv->cfg->log >= OSM_PEER_LOG_PROBLEMS && WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL)
			osm_info("peer: session pid %ld died of signal %d", (long)pid, WTERMSIG(st));
	}
}

/* A whole hello arrived in pending i: refuse it, or fork its session. */
static void start_session(struct server *sv, int i, size_t line_len, size_t used)
{
	struct pending *p = &sv->pend[i];
	struct osm_peer_hello h;
	char why[400];
	size_t ll = line_len && p->buf[line_len - 1] == '\r' ? line_len - 1 : line_len;
	if (osm_peer_parse_hello(p->buf, ll, sv->cfg->token, &h, why, sizeof(why))) {
		refuse(sv, i, why);
		return;
	}
	if (sv->n_sess >= sv->cfg->lim.max_sessions)
		reap(sv); /* a session may have ended, its SIGCHLD not read yet */
	if (sv->n_sess >= sv->cfg->lim.max_sessions) {
		/* Full: wait a little for one to end (a client's previous
		 * session may be closing right now), then refuse. */
		if (!p->busy_at) {
			p->busy_at = osm_mono_ns() + BUSY_WAIT_NS;
			p->line_len = line_len;
			p->used = used;
		}
		return;
	}
	if (h.service == OSM_PEER_SOURCE && fill_source(sv)) {
		refuse(sv, i, "out of memory");
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, sizeof(why), "cannot start a session: fork: %s", strerror(errno));
		refuse(sv, i, why);
		return;
	}
	if (pid == 0)
		session_child(sv, i, &h, used);
	sv->sess[sv->n_sess].pid = pid;
	sv->sess[sv->n_sess].kill_at = osm_mono_ns() + secs_ns(sv->cfg->lim.session_s + SESSION_GRACE_S);
	sv->n_sess++; /* its one line (-v, or a problem) comes from the session as it ends */
	drop_pending(sv, i);
}

/* Reads what pending i sent. */
static void read_hello(struct server *sv, int i)
{
	struct pending *p = &sv->pend[i];
	ssize_t r = recv(p->fd, p->buf + p->len, sizeof(p->buf) - p->len, 0);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (r <= 0) {
		/* Closed before its hello (net.tcp_connect), or reset: no answer. */
		drop_pending(sv, i);
		return;
	}
	size_t old = p->len;
	p->len += (size_t)r;
	const char *nl = memchr(p->buf + old, '\n', (size_t)r);
	if (nl)
		start_session(sv, i, (size_t)(nl - p->buf), (size_t)(nl - p->buf) + 1);
	else if (p->len == sizeof(p->buf))
		refuse(sv, i, "hello too long");
}

/* Hellos waiting for a free session get one, oldest first. */
static void retry_waiting(struct server *sv)
{
	while (sv->n_sess < sv->cfg->lim.max_sessions) {
		int old = -1;
		for (int i = 0; i < sv->n_pend; i++)
			if (sv->pend[i].busy_at && (old < 0 || sv->pend[i].since < sv->pend[old].since))
				old = i;
		if (old < 0)
			return;
		start_session(sv, old, sv->pend[old].line_len, sv->pend[old].used);
	}
}

/* Hello deadlines, busy waits, session overstays; returns the poll
 * timeout (ms). */
static int expire(struct server *sv)
{
	int64_t now = osm_mono_ns(), next = INT64_MAX;
	int64_t hello_ns = secs_ns(sv->cfg->lim.hello_s);
	for (int i = sv->n_pend - 1; i >= 0; i--) {
		int64_t due = sv->pend[i].busy_at ? sv->pend[i].busy_at : sv->pend[i].since + hello_ns;
		if (now >= due)
			refuse(sv, i, sv->pend[i].busy_at ? "busy" : "hello timeout");
		else if (due < next)
			next = due;
	}
	for (int k = 0; k < sv->n_sess; k++) {
		if (now >= sv->sess[k].kill_at) {
			kill(sv->sess[k].pid, SIGKILL); /* reaped at its SIGCHLD */
			sv->sess[k].kill_at = now + 1000000000;
		}
		if (sv->sess[k].kill_at < next)
			next = sv->sess[k].kill_at;
	}
	if (sv->accept_resume) {
		if (now >= sv->accept_resume)
			sv->accept_resume = 0;
		else if (sv->accept_resume < next)
			next = sv->accept_resume;
	}
	if (next == INT64_MAX)
		return -1;
	return (int)((next - now) / 1000000 + 1);
}

/* Returns 1 when a stop signal came. */
static int read_signals(struct server *sv)
{
	struct signalfd_siginfo si;
	int stop = 0;
	while (read(sv->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap(sv);
		else
			stop = 1;
	}
	reap(sv); /* SIGCHLDs coalesce */
	retry_waiting(sv);
	return stop;
}

static int loop(struct server *sv, struct pollfd *pfd)
{
	for (;;) {
		int timeout = expire(sv);
		int n = 0;
		pfd[n++] = (struct pollfd){.fd = sv->sfd, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = sv->accept_resume ? -1 : sv->lfd, .events = POLLIN};
		for (int i = 0; i < sv->n_pend; i++) /* a hello waiting for a session is not read on */
			pfd[n++] = (struct pollfd){.fd = sv->pend[i].busy_at ? -1 : sv->pend[i].fd, .events = POLLIN};
		int r = poll(pfd, (nfds_t)n, timeout);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r <= 0)
			continue;
		if ((pfd[0].revents & POLLIN) && read_signals(sv))
			return 0;
		/* Newest first, so that removing one (the last moves into its
		 * place) leaves the ones still to visit where they were. */
		for (int k = n - 1; k >= 2; k--) {
			int i = k - 2;
			if (pfd[k].revents && i < sv->n_pend && sv->pend[i].fd == pfd[k].fd)
				read_hello(sv, i);
		}
		if (pfd[1].revents & POLLIN)
			accept_some(sv);
	}
}

static int listen_on(struct server *sv, char *err, size_t errlen)
{
	const struct osm_peer_config *cfg = sv->cfg;
	const struct sockaddr *sa = (const struct sockaddr *)&cfg->addr;
	osm_peer_format_addr(sa, sv->where, sizeof(sv->where));
	sv->lfd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (sv->lfd < 0) {
		snprintf(err, errlen, "cannot open a socket for %s: %s", sv->where, strerror(errno));
		return -1;
	}
	int one = 1;
	setsockopt(sv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(sv->lfd, sa, cfg->addr_len) || listen(sv->lfd, 128)) {
		snprintf(err, errlen, "cannot listen on %s: %s%s", sv->where, strerror(errno),
			 errno == EADDRINUSE ? " (another peer there? give another port with --listen ADDR:PORT)" : "");
		return -1;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(sv->lfd, (struct sockaddr *)&ss, &sl) == 0)
		osm_peer_format_addr((struct sockaddr *)&ss, sv->where, sizeof(sv->where));
	if (cfg->ready_fd >= 0) {
		char line[16];
		int n = snprintf(line, sizeof(line), "%d\n", osm_peer_port((struct sockaddr *)&ss));
		ssize_t w = write(cfg->ready_fd, line, (size_t)n);
		(void)w;
		close(cfg->ready_fd);
	} else {
		char bytes[32];
		osm_format_size((int64_t)cfg->lim.session_bytes, bytes, sizeof(bytes));
		osm_info("peer: listening on %s (%s; up to %d sessions of %g s and %s each)", sv->where,
			 cfg->token[0] ? "token required" : "no token: loopback only", cfg->lim.max_sessions,
			 cfg->lim.session_s, bytes);
	}
	return 0;
}

/* Stop: no new connection, no half-read hello, no session left. */
static void shut_down(struct server *sv)
{
	if (sv->lfd >= 0)
		close(sv->lfd);
	while (sv->n_pend)
		drop_pending(sv, sv->n_pend - 1);
	for (int k = 0; k < sv->n_sess; k++)
		kill(sv->sess[k].pid, SIGKILL);
	for (int k = 0; k < sv->n_sess; k++)
		while (waitpid(sv->sess[k].pid, NULL, 0) < 0 && errno == EINTR)
			;
	sv->n_sess = 0;
	if (sv->sfd >= 0)
		close(sv->sfd);
	sigprocmask(SIG_SETMASK, &sv->old_mask, NULL);
	free(sv->source);
	free(sv->pend);
	free(sv->sess);
}

static int check_config(const struct osm_peer_config *cfg, char *err, size_t errlen)
{
	const struct osm_peer_limits *l = &cfg->lim;
	char where[OSM_PEER_ADDR_LEN];
	osm_peer_format_addr((const struct sockaddr *)&cfg->addr, where, sizeof(where));
	if (!cfg->token[0] && !osm_peer_is_loopback((const struct sockaddr *)&cfg->addr)) {
		snprintf(err, errlen, "%s is not a loopback address: a peer reachable from other machines needs a "
			 "token (--token T, --token-file F or OSMETER_PEER_TOKEN), which every client must give",
			 where);
		return -1;
	}
	if (l->max_sessions < 1 || l->max_sessions > OSM_MAX_CHILDREN || l->max_pending < 1 ||
	    l->max_pending > 65536 || !(l->session_s > 0) || !(l->hello_s > 0) || !l->session_bytes) {
		snprintf(err, errlen, "limits out of range: sessions %d (1..%d), pending %d (1..65536), "
			 "session %g s, hello %g s, %llu bytes (all > 0)", l->max_sessions, OSM_MAX_CHILDREN,
			 l->max_pending, l->session_s, l->hello_s, (unsigned long long)l->session_bytes);
		return -1;
	}
	return 0;
}

int osm_peer_serve(const struct osm_peer_config *cfg, char *err, size_t errlen)
{
	struct server sv = {.cfg = cfg, .lfd = -1, .sfd = -1, .self = getpid()};
	if (check_config(cfg, err, errlen))
		return -1;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &sv.old_mask);
	signal(SIGPIPE, SIG_IGN);
	sv.pend = calloc((size_t)cfg->lim.max_pending, sizeof(*sv.pend));
	sv.sess = calloc((size_t)cfg->lim.max_sessions, sizeof(*sv.sess));
	struct pollfd *pfd = calloc((size_t)cfg->lim.max_pending + 2, sizeof(*pfd));
	sv.sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	int rc = -1;
	if (!sv.pend || !sv.sess || !pfd)
		snprintf(err, errlen, "out of memory");
	else if (sv.sfd < 0)
		snprintf(err, errlen, "signalfd: %s", strerror(errno));
	else if (!listen_on(&sv, err, errlen)) {
		rc = loop(&sv, pfd);
		if (rc)
			snprintf(err, errlen, "poll: %s", strerror(errno));
		else if (cfg->ready_fd < 0 && cfg->log >= OSM_PEER_LOG_SESSIONS)
			osm_info("peer: stopped (%s)", sv.where);
	}
	free(pfd);
	shut_down(&sv);
	return rc;
}
