/* file_util.c - the directory a file benchmark measures, and writing real
 * data into it (file.h). Method: docs/methods/file.md, "Where the files go". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../bench.h"
#include "../cleanup.h"
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
	char point[OSM_FILE_PATH], fstype[64], source[256], options[OSM_INFO_LEN];
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

static int find_mount(const char *path, dev_t dev, struct mount_facts *out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	char line[4096];
	size_t best = 0;
	int found = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		char point[OSM_FILE_PATH], opts[OSM_INFO_LEN / 2];
		/* id parent maj:min root point options [optional...] - type source super */
		if (sscanf(line, "%*d %*d %u:%u %*s %511s %127s", &maj, &min, point, opts) != 4)
			continue;
		const char *dash = strstr(line, " - ");
		if (!dash)
			continue;
		char type[64], source[256], super[OSM_INFO_LEN / 2];
		super[0] = 0;
		if (sscanf(dash + 3, "%63s %255s %127s", type, source, super) < 2)
			continue;
		unescape(point);
		if (makedev(maj, min) != dev || !path_under(path, point) || strlen(point) < best)
			continue;
		best = strlen(point);
		found = 1;
		snprintf(out->point, sizeof(out->point), "%s", point);
		snprintf(out->fstype, sizeof(out->fstype), "%s", type);
		unescape(source);
		snprintf(out->source, sizeof(out->source), "%s", source);
		snprintf(out->options, sizeof(out->options), "%s%s%s", opts, super[0] ? "," : "", super);
	}
	fclose(f);
	return found ? 0 : -1;
}

/* The default directory: the probe's work directory unless it is in memory. */
static int default_dir(struct osm_ctx *ctx, char *dir, size_t len)
{
	const char *w = osm_workdir();
	if (!w)
		return osm_fail(ctx, OSM_ERROR, "cannot make the probe's work directory under $TMPDIR: %s",
				strerror(errno));
	struct stat st;
	struct mount_facts m;
	if (stat(w, &st) == 0 && find_mount(w, st.st_dev, &m) == 0 &&
	    (!strcmp(m.fstype, "tmpfs") || !strcmp(m.fstype, "ramfs")))
		w = "/var/tmp";
	snprintf(dir, len, "%s", w);
	return OSM_OK;
}

int osm_file_target(struct osm_ctx *ctx, struct osm_file_target *t)
{
	memset(t, 0, sizeof(*t));
	const char *want = osm_param_str(ctx, "dir");
	char given[OSM_FILE_PATH];
	if (want && *want) {
		if (snprintf(given, sizeof(given), "%s", want) >= (int)sizeof(given))
			return osm_fail(ctx, OSM_ERROR, "dir=%.64s...: path too long", want);
	} else if (default_dir(ctx, given, sizeof(given)) != OSM_OK) {
		return OSM_ERROR;
	}
	char *real = realpath(given, NULL);
	if (!real)
		return osm_fail(ctx, OSM_ERROR, "dir=%s: %s", given, strerror(errno));
	snprintf(t->dir, sizeof(t->dir), "%s", real);
	free(real);
	struct stat st;
	if (stat(t->dir, &st))
		return osm_fail(ctx, OSM_ERROR, "dir=%s: %s", t->dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return osm_fail(ctx, OSM_ERROR, "dir=%s: not a directory", t->dir);
	if (access(t->dir, W_OK | X_OK))
		return osm_fail(ctx, OSM_SKIP, "dir=%s: cannot write there (%s): choose a directory you may write",
				t->dir, strerror(errno));
	osm_add_info(ctx, "dir", "%s", t->dir);
	struct mount_facts m;
	if (find_mount(t->dir, st.st_dev, &m) == 0) {
		snprintf(t->fstype, sizeof(t->fstype), "%s", m.fstype);
		osm_add_info(ctx, "fs_type", "%s", m.fstype);
		osm_add_info(ctx, "device", "%s", m.source);
		osm_add_info(ctx, "mount_options", "%s", m.options);
	} else {
		snprintf(t->fstype, sizeof(t->fstype), "unknown");
		osm_add_info(ctx, "fs_type", "unknown (no /proc/self/mountinfo entry)");
	}
	t->in_memory = !strcmp(t->fstype, "tmpfs") || !strcmp(t->fstype, "ramfs");
	t->remote = is_remote_fs(t->fstype);
	osm_add_info(ctx, "remote", "%s", t->remote ? "yes" : "no");
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
