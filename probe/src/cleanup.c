/* cleanup.c - see cleanup.h. */
#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "status.h"

#define MAX_ACTIONS 64
#define MAX_FILES 64
#define PATH_LEN PATH_MAX /* any path the system takes: a work directory in a long dir= */
#define MAX_TREES 8 /* work directories (osm_workdir_in) */
#define TREE_DEPTH 2 /* directory levels below a work directory that are emptied */

struct action {
	osm_undo_fn fn;
	void *arg;
	int live;
};

static struct action actions[MAX_ACTIONS];
static volatile sig_atomic_t n_actions;
static volatile sig_atomic_t cleaning;
static int out_fd = -1;
static volatile sig_atomic_t counts[3];

static char workdir[PATH_LEN];
static char files[MAX_FILES][PATH_LEN];
static volatile sig_atomic_t n_files;
static int workdir_handle = -1;
static char trees[MAX_TREES][PATH_LEN];
static volatile sig_atomic_t n_trees;

int osm_cleanup_push(osm_undo_fn fn, void *arg)
{
	for (int i = 0; i < MAX_ACTIONS; i++) {
		if (!actions[i].live) {
			actions[i].fn = fn;
			actions[i].arg = arg;
			actions[i].live = 1;
			if (i >= n_actions)
				n_actions = i + 1;
			return i;
		}
	}
	return -1;
}

void osm_cleanup_pop(int handle, int run)
{
	if (handle < 0 || handle >= MAX_ACTIONS || !actions[handle].live)
		return;
	actions[handle].live = 0;
	if (run)
		actions[handle].fn(actions[handle].arg);
}

void osm_cleanup_run_all(void)
{
	for (int i = n_actions - 1; i >= 0; i--) {
		if (actions[i].live) {
			actions[i].live = 0;
			actions[i].fn(actions[i].arg);
		}
	}
	n_actions = 0;
}

static void kill_child(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;
	int saved = errno;
	if (kill(pid, SIGKILL) == 0 || errno != ESRCH)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	errno = saved;
}

int osm_cleanup_track_child(pid_t pid)
{
	return osm_cleanup_push(kill_child, (void *)(intptr_t)pid);
}

/* getdents64's record (the libc's struct dirent may differ). */
struct dent64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Removes everything in the open directory `fd`, `depth` levels of
 * subdirectories deep. Async-signal-safe: getdents64, unlinkat, openat,
 * lseek and close only. A pass that removed something is followed by
 * another from the start (entries removed while reading may hide others). */
static void empty_dir(int fd, int depth)
{
	char buf[4096] __attribute__((aligned(8)));
	for (int pass = 0; pass < 64; pass++) {
		int removed = 0;
		long n;
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				const struct dent64 *d = (const void *)(buf + off);
				off += d->reclen;
				const char *nm = d->name;
				if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2])))
					continue;
				if (unlinkat(fd, nm, 0) == 0) {
					removed++;
					continue;
				}
				if (errno != EISDIR && errno != EPERM)
					continue;
				if (depth > 0) {
					int sub = openat(fd, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
					if (sub >= 0) {
						empty_dir(sub, depth - 1);
						close(sub);
					}
				}
				if (unlinkat(fd, nm, AT_REMOVEDIR) == 0)
					removed++;
			}
		}
		if (!removed || lseek(fd, 0, SEEK_SET) < 0)
			return;
	}
}

/* Empties and removes a directory (async-signal-safe). */
static void remove_tree(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		empty_dir(fd, TREE_DEPTH);
		close(fd);
	}
	rmdir(dir);
}

static void remove_workdir(void *arg)
{
	(void)arg;
	int saved = errno;
	for (int i = n_files - 1; i >= 0; i--)
		unlink(files[i]);
	n_files = 0;
	if (workdir[0])
		remove_tree(workdir);
	workdir[0] = 0;
	errno = saved;
}

static void remove_trees(void *arg)
{
	(void)arg;
	int saved = errno;
	for (int i = n_trees - 1; i >= 0; i--)
		remove_tree(trees[i]);
	n_trees = 0;
	errno = saved;
}

/* "DIR/osmeter-probe.<pid>.XXXXXX", made; 0 or -1 with errno. */
static int make_workdir(const char *parent, char *out, size_t len)
{
	int n = snprintf(out, len, "%s%sosmeter-probe.%ld.XXXXXX", parent,
			 parent[0] && parent[strlen(parent) - 1] == '/' ? "" : "/", (long)getpid());
	if (n < 0 || (size_t)n >= len) {
		out[0] = 0;
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!mkdtemp(out)) {
		out[0] = 0;
		return -1;
	}
	return 0;
}

int osm_workdir_in(const char *parent, char *path, size_t len)
{
	static int handle = -1;
	for (int i = 0; i < n_trees; i++) {
		size_t pl = strlen(parent);
		while (pl > 1 && parent[pl - 1] == '/')
			pl--;
		const char *slash = strrchr(trees[i], '/');
		if (slash && (size_t)(slash - trees[i]) == pl && !strncmp(trees[i], parent, pl)) {
			if (snprintf(path, len, "%s", trees[i]) >= (int)len) {
				errno = ENAMETOOLONG;
				return -1;
			}
			return 0;
		}
	}
	if (n_trees >= MAX_TREES) {
		errno = EMFILE;
		return -1;
	}
	if (handle < 0 && (handle = osm_cleanup_push(remove_trees, NULL)) < 0) {
		errno = ENOMEM;
		return -1;
	}
	char made[PATH_LEN];
	if (make_workdir(parent, made, sizeof(made)))
		return -1;
	if (snprintf(path, len, "%s", made) >= (int)len) {
		rmdir(made);
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(trees[n_trees], made, sizeof(made));
	n_trees = n_trees + 1; /* published after the name: a signal sees it whole */
	return 0;
}

const char *osm_workdir(void)
{
	if (workdir[0])
		return workdir;
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (make_workdir(tmp, workdir, sizeof(workdir)))
		return NULL;
	workdir_handle = osm_cleanup_push(remove_workdir, NULL);
	return workdir;
}

int osm_workfile(const char *name, char *path, size_t len)
{
	const char *dir = osm_workdir();
	if (!dir || n_files >= MAX_FILES)
		return -1;
	if (snprintf(files[n_files], PATH_LEN, "%s/%s", dir, name) >= PATH_LEN)
		return -1;
	if (snprintf(path, len, "%s", files[n_files]) >= (int)len)
		return -1;
	for (int i = 0; i < n_files; i++)
		if (!strcmp(files[i], files[n_files]))
			return 0; /* already registered */
	n_files++;
	return 0;
}

void osm_cleanup_count(int status)
{
	if (status >= 0 && status < 3)
		counts[status]++;
}

void osm_cleanup_get_counts(int c[3])
{
	for (int i = 0; i < 3; i++)
		c[i] = counts[i];
}

/* Days from civil (Howard Hinnant's algorithm), inverted: signal-safe gmtime. */
void osm_utc_now(char *buf)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t s = ts.tv_sec, days = s / 86400, rem = s % 86400;
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
	int64_t m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	int64_t f[6] = {y, m, d, rem / 3600, rem % 3600 / 60, rem % 60};
	const int w[6] = {4, 2, 2, 2, 2, 2};
	const char sepc[6] = {'-', '-', 'T', ':', ':', 'Z'};
	char *p = buf;
	for (int i = 0; i < 6; i++) {
		for (int k = w[i] - 1; k >= 0; k--) {
			p[k] = (char)('0' + f[i] % 10);
			f[i] /= 10;
		}
		p += w[i];
		*p++ = sepc[i];
	}
	*p = 0;
}

/* Signal-safe append helpers for the end record. */
static char *put(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static char *put_int(char *p, long v)
{
	char tmp[24];
	int n = 0;
	if (v < 0) {
		*p++ = '-';
		v = -v;
	}
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static const char *signame(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	case SIGQUIT: return "SIGQUIT";
	case SIGPIPE: return "SIGPIPE";
	default: return "signal";
	}
}

static void on_signal(int sig)
{
	if (cleaning)
		return;
	cleaning = 1;
	osm_cleanup_run_all();
	if (out_fd >= 0 && sig != SIGPIPE) {
		char buf[256], ts[32];
		char *p = buf;
		osm_utc_now(ts);
		p = put(p, "{\"type\":\"end\",\"status\":\"interrupted\",\"signal\":\"");
		p = put(p, signame(sig));
		p = put(p, "\",\"end_time\":\"");
		p = put(p, ts);
		p = put(p, "\",\"counts\":{\"ok\":");
		p = put_int(p, counts[OSM_OK]);
		p = put(p, ",\"skip\":");
		p = put_int(p, counts[OSM_SKIP]);
		p = put(p, ",\"error\":");
		p = put_int(p, counts[OSM_ERROR]);
		p = put(p, "}}\n");
		ssize_t r = write(out_fd, buf, (size_t)(p - buf));
		(void)r;
	}
	signal(sig, SIG_DFL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);
	_exit(128 + sig); /* not reached */
}

void osm_cleanup_set_out_fd(int fd)
{
	out_fd = fd;
}

void osm_cleanup_install_signals(int fd)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	out_fd = fd;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask); /* no other handler runs inside this one */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
