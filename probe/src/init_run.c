/* init_run.c - one command of init mode's plan (init_int.h): a forked
 * child runs the probe's dispatch in-process (no exec: under qemu-user an
 * exec of a foreign binary may fail); PID 1 frames its stdout and stderr
 * as they come, reaps every child (orphans too) and ends with X. */
#include "init_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* How long output may stay open after the command's child ended (a
 * process it left behind holding the pipe) before init closes it. */
#define GRACE_S 2.0

struct stream {
	int fd;             /* read end; -1 once closed */
	char full, piece;   /* 'O' 'o' or 'E' 'e' */
	size_t len;
	char buf[OSM_INIT_PIECE];
};

static struct stream streams[2];

/* SIGCHLD is blocked but while init waits in ppoll: it wakes init when a
 * child ends, and nothing else does (no timer: a benchmark runs beside an
 * idle PID 1). */
static sigset_t wait_mask;

static void on_child(int sig)
{
	(void)sig;
}

static void catch_children(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	sigdelset(&wait_mask, SIGCHLD);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void close_from(int lowfd)
{
#ifdef SYS_close_range
	if (!syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0u))
		return;
#endif
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = lowfd; fd < max; fd++)
		close(fd);
}

/* The child: stdout and stderr on the pipes, stdin /dev/null, nothing
 * else open; the dispatch's return is its exit code. */
static OSM_NORETURN void child(int out, int err, int argc, char **argv, osm_dispatch_fn dispatch)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	if (dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(OSM_EXIT_CANNOT_RUN);
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul >= 0 && nul != 0)
		dup2(nul, 0);
	close_from(3);
	int rc = dispatch(argc, argv);
	fflush(NULL);
	_exit(rc);
}

/* Frames what s holds: each whole line, then a piece when the buffer is
 * full without a newline; at EOF (eof) the rest as a line. */
static int frame_stream(struct osm_chan *c, int cmd, struct stream *s, int eof)
{
	size_t start = 0;
	for (;;) {
		char *nl = memchr(s->buf + start, '\n', s->len - start);
		if (!nl)
			break;
		if (osm_chan_send(c, s->full, cmd, s->buf + start, (size_t)(nl - (s->buf + start))))
			return -1;
		start = (size_t)(nl - s->buf) + 1;
	}
	s->len -= start;
	memmove(s->buf, s->buf + start, s->len);
	if (s->len == sizeof(s->buf) || (eof && s->len)) {
		if (osm_chan_send(c, eof ? s->full : s->piece, cmd, s->buf, s->len))
			return -1;
		s->len = 0;
	}
	return 0;
}

static void stream_close(struct stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Reads what the pipe has; at EOF (or a read error) frames the rest and closes. */
static int stream_read(struct osm_chan *c, int cmd, struct stream *s)
{
	ssize_t r = read(s->fd, s->buf + s->len, sizeof(s->buf) - s->len);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r > 0) {
		s->len += (size_t)r;
		return frame_stream(c, cmd, s, 0);
	}
	stream_close(s);
	return frame_stream(c, cmd, s, 1);
}

/* Reaps every child that has ended (block: wait for one at least, until
 * `pid` or none is left). Returns 1 when `pid` was reaped. */
static int reap(pid_t pid, int *status, int block)
{
	for (;;) {
		int st;
		pid_t got = waitpid(-1, &st, block ? 0 : WNOHANG);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return 0;
		if (got == pid) {
			*status = st;
			return 1;
		}
		/* An orphan PID 1 inherited: reaped silently. */
	}
}

/* Frames both pipes until they close (or GRACE_S after the child ended),
 * then waits for the child. */
static int pump(struct osm_chan *c, int cmd, pid_t pid, int *status)
{
	int done = 0;
	double deadline = 0;
	while (streams[0].fd >= 0 || streams[1].fd >= 0) {
		struct pollfd p[2];
		int n = 0, which[2];
		for (int k = 0; k < 2; k++)
			if (streams[k].fd >= 0) {
				p[n] = (struct pollfd){.fd = streams[k].fd, .events = POLLIN};
				which[n++] = k;
			}
		struct timespec left = {0, 0};
		if (done) {
			double s = deadline - now_s();
			if (s > 0) {
				left.tv_sec = (time_t)s;
				left.tv_nsec = (long)((s - (double)left.tv_sec) * 1e9);
			}
		}
		int r = ppoll(p, (nfds_t)n, done ? &left : NULL, &wait_mask);
		for (int i = 0; r > 0 && i < n; i++)
			if (p[i].revents && stream_read(c, cmd, &streams[which[i]]))
				return -1;
		if (!done && reap(pid, status, 0)) {
			done = 1;
			deadline = now_s() + GRACE_S;
		}
		if (done && now_s() > deadline && (streams[0].fd >= 0 || streams[1].fd >= 0)) {
			for (int k = 0; k < 2; k++)
				if (streams[k].fd >= 0) {
					stream_close(&streams[k]);
					if (frame_stream(c, cmd, &streams[k], 1))
						return -1;
				}
			if (osm_chan_sendf(c, 'L', 0, "command %d: its output stayed open %.0f s after it ended "
					   "(a process it left behind); closed", cmd, GRACE_S))
				return -1;
		}
	}
	if (!done && !reap(pid, status, 1)) {
		*status = OSM_EXIT_CANNOT_RUN << 8; /* lost: cannot happen, PID 1 reaps its own children */
		return osm_chan_sendf(c, 'L', 0, "command %d: its process was not found to reap", cmd);
	}
	return 0;
}

static int start_failed(struct osm_chan *c, int index, const char *what, int *status)
{
	osm_init_progress("command %d: %s failed: %s", index, what, strerror(errno));
	*status = OSM_EXIT_CANNOT_RUN << 8;
	if (osm_chan_sendf(c, 'L', 0, "command %d: %s failed: %s", index, what, strerror(errno)))
		return -1;
	return osm_chan_sendf(c, 'X', index, "exit %d", OSM_EXIT_CANNOT_RUN);
}

int osm_init_run_command(struct osm_chan *c, int index, int argc, char **argv, osm_dispatch_fn dispatch,
			 int *status, char *err, size_t errlen)
{
	int po[2], pe[2];
	*status = OSM_EXIT_CANNOT_RUN << 8;
	if (pipe2(po, O_CLOEXEC))
		return start_failed(c, index, "pipe", status);
	if (pipe2(pe, O_CLOEXEC)) {
		close(po[0]);
		close(po[1]);
		return start_failed(c, index, "pipe", status);
	}
	catch_children();
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		child(po[1], pe[1], argc, argv, dispatch);
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return start_failed(c, index, "fork", status);
	}
	streams[0].fd = po[0];
	streams[0].full = 'O';
	streams[0].piece = 'o';
	streams[1].fd = pe[0];
	streams[1].full = 'E';
	streams[1].piece = 'e';
	streams[0].len = streams[1].len = 0;
	int rc = pump(c, index, pid, status);
	for (int k = 0; k < 2; k++)
		stream_close(&streams[k]);
	if (rc || (WIFSIGNALED(*status) ? osm_chan_sendf(c, 'X', index, "signal %d", WTERMSIG(*status))
					  : osm_chan_sendf(c, 'X', index, "exit %d", WEXITSTATUS(*status)))) {
		snprintf(err, errlen, "the channel broke during command %d", index);
		return -1;
	}
	return 0;
}
