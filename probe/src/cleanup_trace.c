/* tracestate.c - see cleanup_trace.h. */
#include "cleanup_trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "knob.h"

#define MAX_UNDO 16
#define VAL_LEN 64

struct undo {
	char kind[8];
	char path[PATH_MAX];
	char value[VAL_LEN];
};

static struct undo undos[MAX_UNDO];
static volatile int n_undo;
static char journal[PATH_MAX];
static int handle = -1;

/* Async-signal-safe: open, write, close, rmdir, umount2. */
static void undo_one(const struct undo *u)
{
	if (!strcmp(u->kind, "write")) {
		int fd = open(u->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t r = write(fd, u->value, strlen(u->value));
			(void)r;
			close(fd);
		}
	} else if (!strcmp(u->kind, "rmdir")) {
		rmdir(u->path);
	} else if (!strcmp(u->kind, "umount")) {
		umount2(u->path, 0);
	}
}

void osm_tracestate_undo(void)
{
	int saved = errno;
	while (n_undo > 0) {
		n_undo = n_undo - 1;
		undo_one(&undos[n_undo]);
	}
	if (journal[0])
		unlink(journal);
	journal[0] = 0;
	errno = saved;
}

static void undo_cb(void *arg)
{
	(void)arg;
	osm_tracestate_undo();
}

static int valid_token(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (!n || n >= max)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')
			return 0;
	return 1;
}

int osm_tracestate_push(const char *kind, const char *path, const char *value, char *err, size_t len)
{
	if (n_undo >= MAX_UNDO) {
		snprintf(err, len, "internal: more than %d tracing changes", MAX_UNDO);
		return -1;
	}
	if (!valid_token(path, PATH_MAX) || (value && !valid_token(value, VAL_LEN))) {
		snprintf(err, len, "internal: cannot journal '%s'", path);
		return -1;
	}
	if (!journal[0]) {
		if (mkdir(OSM_TRACESTATE_DIR, 0700) && errno != EEXIST) {
			snprintf(err, len, "cannot create %s for the journal of tracing changes: %s",
				 OSM_TRACESTATE_DIR, strerror(errno));
			return -1;
		}
		snprintf(journal, sizeof(journal), "%s/trace-%ld", OSM_TRACESTATE_DIR, (long)getpid());
		if (handle < 0)
			handle = osm_cleanup_push(undo_cb, NULL);
	}
	int fd = open(journal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, len, "cannot write the journal %s: %s", journal, strerror(errno));
		return -1;
	}
	char line[PATH_MAX + VAL_LEN + 16];
	int n = snprintf(line, sizeof(line), "%s %s%s%s\n", kind, path, value ? " " : "", value ? value : "");
	int ok = n > 0 && write(fd, line, (size_t)n) == n && fsync(fd) == 0;
	close(fd);
	if (!ok) {
		snprintf(err, len, "cannot write the journal %s: %s", journal, strerror(errno));
		return -1;
	}
	struct undo *u = &undos[n_undo];
	snprintf(u->kind, sizeof(u->kind), "%s", kind);
	snprintf(u->path, sizeof(u->path), "%s", path);
	snprintf(u->value, sizeof(u->value), "%s", value ? value : "");
	n_undo = n_undo + 1; /* published last: a signal sees it whole */
	return 0;
}

/* Whether pid is a running osmeter-probe (a reused pid is not). */
static int probe_alive(long pid)
{
	char p[64], cmd[256];
	snprintf(p, sizeof(p), "/proc/%ld/cmdline", pid);
	return osm_knob_read_text(p, cmd, sizeof(cmd)) >= 0 && strstr(cmd, "osmeter-probe") != NULL;
}

static int replay(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	struct undo list[MAX_UNDO];
	int n = 0;
	char line[PATH_MAX + VAL_LEN + 16];
	while (n < MAX_UNDO && fgets(line, sizeof(line), f)) {
		char *save = NULL, *kind = strtok_r(line, " \n", &save), *path = strtok_r(NULL, " \n", &save);
		char *value = strtok_r(NULL, " \n", &save);
		if (!kind || !path || strlen(kind) >= sizeof(list[n].kind) || strlen(path) >= PATH_MAX)
			continue;
		snprintf(list[n].kind, sizeof(list[n].kind), "%s", kind);
		snprintf(list[n].path, sizeof(list[n].path), "%s", path);
		snprintf(list[n].value, sizeof(list[n].value), "%s", value ? value : "");
		n++;
	}
	fclose(f);
	for (int i = n - 1; i >= 0; i--) {
		undo_one(&list[i]);
		fprintf(stderr, "osmeter-probe: restored what a killed probe (%s) had changed: %s %s%s%s\n", file,
			list[i].kind, list[i].path, list[i].value[0] ? " " : "", list[i].value);
	}
	unlink(file);
	return n;
}

int osm_tracestate_recover(void)
{
	DIR *d = opendir(OSM_TRACESTATE_DIR);
	if (!d)
		return 0;
	int done = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, "trace-", 6))
			continue;
		long pid = strtol(e->d_name + 6, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid() || probe_alive(pid))
			continue;
		char file[PATH_MAX];
		snprintf(file, sizeof(file), "%s/%s", OSM_TRACESTATE_DIR, e->d_name);
		if (replay(file) >= 0)
			done++;
	}
	closedir(d);
	return done;
}
