/* file_util.c - the directory a file benchmark measures, and writing real
 * data into it (file.h). Method: docs/methods/file.md, "Where the files go". */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../bench.h"
#include "../cleanup.h"
#include "../compiler.h"
#include "../parse.h"
#include "file.h"

#define FILL_CHUNK ((size_t)1 << 20)

/* File systems whose files are on another machine. */
static int is_remote_fs(const char *t)
{
	static const char *const names[] = {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs",
					    "fuse.sshfs", "fuse.glusterfs", "fuse.s3fs", "fuse.rclone", "afs", NULL};
	for (int i = 0; names[i]; i++)
		if (!strcmp(t, names[i]))
			return 1;
	return 0;
}

/* The mount of `path`: the mountinfo line whose major:minor is st_dev (the
 * longest mount point that prefixes the path wins among several). */
struct mount_facts {
	char point[OSM_FILE_PATH], fstype[64], source[OSM_INFO_LEN], options[OSM_INFO_LEN];
};

static int path_under(const char *path, const char *point)
{
	size_t n = strlen(point);
	if (!strcmp(point, "/"))
		return 1;
	return !strncmp(path, point, n) && (path[n] == '/' || path[n] == 0);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

/* One mountinfo line, split in place:
 * "id parent maj:min root point options [optional...] - type source super". */
struct mount_line {
	unsigned maj, min;
	char *point, *opts, *type, *source, *super;
};

static int split_line(char *line, struct mount_line *m)
{
	char *save = NULL, *f[6];
	line[strcspn(line, "\n")] = 0;
	for (int i = 0; i < 6; i++)
		if (!(f[i] = strtok_r(i ? NULL : line, " ", &save)))
			return -1;
	if (sscanf(f[2], "%u:%u", &m->maj, &m->min) != 2)
		return -1;
	char *t;
	while ((t = strtok_r(NULL, " ", &save)) && strcmp(t, "-"))
		; /* the optional fields, up to the separator */
	if (!t || !(m->type = strtok_r(NULL, " ", &save)) || !(m->source = strtok_r(NULL, " ", &save)))
		return -1;
	m->super = strtok_r(NULL, " ", &save);
	m->point = f[4];
	m->opts = f[5];
	unescape(m->point);
	unescape(m->source);
	return 0;
}

/* Every field is read whole (getline: no line is split, however long its
 * escaped mount point). A mount point that does not fit out->point is
 * longer than any path (PATH_MAX), so it prefixes none: never the match.
 * The words kept (type, source, options) are cut in the middle and marked
 * when too long: a type cut so is no name the family compares with. */
static int find_mount(const char *path, dev_t dev, struct mount_facts *out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0, best = 0;
	int found = 0;
	while (getline(&line, &cap, f) > 0) {
		struct mount_line m;
		if (split_line(line, &m) || makedev(m.maj, m.min) != dev)
			continue;
		size_t pl = strlen(m.point);
		if (pl >= sizeof(out->point) || !path_under(path, m.point) || pl < best)
			continue;
		best = pl;
		found = 1;
		memcpy(out->point, m.point, pl + 1);
		osm_cut_middle(out->fstype, sizeof(out->fstype), m.type);
		osm_cut_middle(out->source, sizeof(out->source), m.source);
		char *opts = NULL;
		if (asprintf(&opts, "%s%s%s", m.opts, m.super ? "," : "", m.super ? m.super : "") < 0)
			opts = NULL;
		osm_cut_middle(out->options, sizeof(out->options), opts ? opts : m.opts);
		free(opts);
	}
	free(line);
	fclose(f);
	return found ? 0 : -1;
}

/* The default directory: the probe's work directory unless it is in memory. */
static const char *default_dir(struct osm_ctx *ctx)
{
	const char *w = osm_workdir();
	if (!w) {
		osm_fail(ctx, OSM_ERROR, "cannot make the probe's work directory under $TMPDIR: %s", strerror(errno));
		return NULL;
	}
	struct stat st;
	struct mount_facts *m = malloc(sizeof(*m));
	if (m && stat(w, &st) == 0 && find_mount(w, st.st_dev, m) == 0 &&
	    (!strcmp(m->fstype, "tmpfs") || !strcmp(m->fstype, "ramfs")))
		w = "/var/tmp";
	free(m);
	return w;
}

/* The longest name between slashes in path. */
static size_t longest_name(const char *path)
{
	size_t best = 0;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		best = n > best ? n : best;
		p += n + (p[n] == '/');
	}
	return best;
}

int osm_file_realpath(struct osm_ctx *ctx, const char *key, const char *given, char *out)
{
	char *real = realpath(given, NULL);
	if (!real && errno == ENAMETOOLONG && longest_name(given) > NAME_MAX)
		return osm_fail(ctx, OSM_ERROR, "%s=%s: a name in it has %zu bytes; at most %d (NAME_MAX)", key, given,
				longest_name(given), NAME_MAX);
	if (!real && errno == ENAMETOOLONG)
		return osm_fail(ctx, OSM_ERROR, "%s=%s: its real path is longer than PATH_MAX - 1 (%d bytes); it may "
				"have at most %d bytes (%s)", key, given, PATH_MAX - 1, OSM_FILE_DIR_MAX, OSM_FILE_DIR_WHY);
	if (!real)
		return osm_fail(ctx, OSM_ERROR, "%s=%s: %s", key, given, strerror(errno));
	size_t n = strlen(real);
	if (n > OSM_FILE_DIR_MAX) {
		osm_fail(ctx, OSM_ERROR, "%s=%s is %s, %zu bytes: it may have at most %d bytes (%s)", key, given, real,
			 n, OSM_FILE_DIR_MAX, OSM_FILE_DIR_WHY);
		free(real);
		return OSM_ERROR;
	}
	memcpy(out, real, n + 1);
	free(real);
	return OSM_OK;
}

int osm_file_target(struct osm_ctx *ctx, struct osm_file_target *t)
{
	memset(t, 0, sizeof(*t));
	const char *given = osm_param_str(ctx, "dir");
	if ((!given || !*given) && !(given = default_dir(ctx)))
		return OSM_ERROR;
	if (osm_file_realpath(ctx, "dir", given, t->dir) != OSM_OK)
		return OSM_ERROR;
	struct stat st;
	if (stat(t->dir, &st))
		return osm_fail(ctx, OSM_ERROR, "dir=%s: %s", t->dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return osm_fail(ctx, OSM_ERROR, "dir=%s: not a directory", t->dir);
	if (access(t->dir, W_OK | X_OK))
		return osm_fail(ctx, OSM_SKIP, "dir=%s: cannot write there (%s): choose a directory you may write",
				t->dir, strerror(errno));
	osm_add_info(ctx, "dir", "%s", t->dir);
	struct mount_facts *m = malloc(sizeof(*m));
	if (m && find_mount(t->dir, st.st_dev, m) == 0) {
		memcpy(t->fstype, m->fstype, sizeof(t->fstype));
		osm_add_info(ctx, "fs_type", "%s", m->fstype);
		osm_add_info(ctx, "device", "%s", m->source);
		osm_add_info(ctx, "mount_options", "%s", m->options);
	} else {
		snprintf(t->fstype, sizeof(t->fstype), "unknown");
		osm_add_info(ctx, "fs_type", "unknown (no /proc/self/mountinfo entry)");
	}
	free(m);
	t->in_memory = !strcmp(t->fstype, "tmpfs") || !strcmp(t->fstype, "ramfs");
	t->remote = is_remote_fs(t->fstype);
	osm_add_info(ctx, "remote", "%s", t->remote ? "yes" : "no");
	/* t->dir has at most OSM_FILE_DIR_MAX bytes: the work directory fits t->work. */
	if (osm_workdir_in(t->dir, t->work, sizeof(t->work)))
		return osm_fail(ctx, OSM_ERROR, "dir=%s: cannot make a work directory there: %s", t->dir,
				strerror(errno));
	return OSM_OK;
}

int osm_file_path(const struct osm_file_target *t, const char *name, char *path, size_t len)
{
	int n = snprintf(path, len, "%s/%s", t->work, name);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int64_t osm_file_free_bytes(const struct osm_file_target *t)
{
	struct statvfs v;
	if (statvfs(t->work[0] ? t->work : t->dir, &v))
		return -1;
	return (int64_t)v.f_bavail * (int64_t)v.f_frsize;
}

ssize_t osm_file_write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = ENOSPC; /* a write of nothing: no room, says the file system */
			return -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

const char *osm_file_errname(int e)
{
	switch (e) {
	case ENOSPC: return "ENOSPC";
	case EDQUOT: return "EDQUOT";
	case EIO: return "EIO";
	case EFBIG: return "EFBIG";
	case EROFS: return "EROFS";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EMFILE: return "EMFILE";
	case ENOMEM: return "ENOMEM";
	case EEXIST: return "EEXIST";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EAGAIN: return "EAGAIN";
	case EBADF: return "EBADF";
	case ELOOP: return "ELOOP";
	case ENFILE: return "ENFILE";
	case ENOTCONN: return "ENOTCONN";
	case ECONNRESET: return "ECONNRESET";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ESTALE: return "ESTALE";
	case ENXIO: return "ENXIO";
	default: {
		static _Thread_local char buf[24];
		snprintf(buf, sizeof(buf), "errno %d", e);
		return buf;
	}
	}
}

int osm_file_fill(struct osm_ctx *ctx, int fd, int64_t size, const char *what)
{
	char *chunk = malloc(FILL_CHUNK);
	if (!chunk)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	memset(chunk, 'a', FILL_CHUNK);
	int64_t done = 0;
	int st = OSM_OK;
	if (lseek(fd, 0, SEEK_SET) < 0)
		st = osm_fail_errno(ctx, "lseek");
	while (st == OSM_OK && done < size) {
		size_t n = size - done < (int64_t)FILL_CHUNK ? (size_t)(size - done) : FILL_CHUNK;
		ssize_t w = write(fd, chunk, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w > 0) {
			done += w; /* a short write counts: the next one says why it stopped */
			continue;
		}
		int e = w == 0 ? ENOSPC : errno;
		st = osm_fail(ctx, OSM_ERROR, "%s: %s (%s) after %lld of %lld bytes", what, strerror(e),
			      osm_file_errname(e), (long long)done, (long long)size);
	}
	free(chunk);
	return st;
}

int osm_file_fill_lebench(struct osm_ctx *ctx, int fd, int64_t size, const char *what)
{
	static const int64_t steps[] = {4 << 10, 40 << 10, 4000 << 10, 40000 << 10};
	char *buf = malloc((size_t)size);
	if (!buf)
		return osm_fail(ctx, OSM_ERROR, "out of memory for a %lld-byte buffer", (long long)size);
	memset(buf, 'a', (size_t)size);
	int64_t last = 0;
	for (size_t i = 0; i <= ARRAY_SIZE(steps) && last < size; i++) {
		int64_t n = i < ARRAY_SIZE(steps) && steps[i] < size ? steps[i] : size;
		if (lseek(fd, 0, SEEK_SET) < 0 || osm_file_write_all(fd, buf, (size_t)n) < 0) {
			int e = errno;
			free(buf);
			return osm_fail(ctx, OSM_ERROR, "%s: %s (%s) in the write of %lld bytes at offset 0", what,
					strerror(e), osm_file_errname(e), (long long)n);
		}
		last = n;
	}
	free(buf);
	return OSM_OK;
}
