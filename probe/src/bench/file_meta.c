/* file_meta.c - the metadata rates, lmbench lat_fs style but per operation:
 * file.create, file.unlink, file.stat, file.open_close. Method:
 * docs/methods/file.md, "Metadata: file.create, file.unlink, file.stat,
 * file.open_close".
 *
 * Setup: a new subdirectory of the target's work directory holding `files`
 * names "f0000000".. (create/unlink: hard links to one file of file_bytes
 * bytes of real data; stat/open_close: a file each, empty), after a
 * statvfs check that a file per name would fit. On ext4 the subdirectory
 * gets a block group of its own (FS_TOPDIR_FL on its parent, its inode
 * gap checked; see place()): what a create costs there must not depend
 * on the inodes other programs freed in the last minutes. Every call names its file relative to an open descriptor of
 * that directory (openat, fstatat, unlinkat: the calls glibc's open, stat
 * and unlink make, without the walk of the long work path).
 *
 * file.create (self-timed, one clock pair per file): open(O_CREAT|O_EXCL|
 * O_WRONLY) of a new name, write of file_bytes (when > 0), close; then,
 * untimed, unlink of it, so the directory stays at `files` entries.
 * file.unlink (self-timed): untimed, the same create of a new file; timed,
 * its unlink(). file.stat / file.open_close (self-timed batches: one clock
 * pair around `batch` calls, as the harness would time them): stat(), or
 * open(O_RDONLY)+close(), of the existing files in a shuffled order
 * computed in setup, cycled through. Every benchmark adds extra.ops_per_s:
 * operations per second over all its timed operations (1e9 / their mean
 * ns). Teardown removes every file of the subdirectory, then it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <linux/fs.h>

#include "../bench.h"
#include "../clock.h"
#include "../compiler.h"
#include "file.h"

#define NAME_LEN 24 /* "f%07u" (files <= 1000000) and "n%llu" names, NUL included: they fit */
#define SPARE_INODES 16
#define SPARE_BYTES ((int64_t)1 << 20)
#define GAP_FRESH 16 /* inode slots a fresh group may show before its first free one */
#define PLACES 4     /* directories tried for a group of their own */

struct meta_state {
	struct osm_file_target t;
	char dir[OSM_FILE_PATH]; /* the subdirectory; "" until made */
	int dfd;
	int64_t files, inodes;   /* names wanted, inodes the names hold so far */
	int spread;              /* ext2/3/4 took FS_TOPDIR_FL on the work directory */
	size_t file_bytes;
	char *data;              /* file_bytes of 'a' */
	char *names;             /* files x NAME_LEN */
	uint32_t *order;         /* stat/open_close: a shuffle of 0..files-1 */
	size_t pos;
	unsigned long long next; /* counter of new names (create/unlink) */
	uint64_t ops;
	double ns;
	uint64_t sink;
};

static const char *name_of(const struct meta_state *s, int64_t i)
{
	return s->names + (size_t)i * NAME_LEN;
}

/* Removes every entry of the subdirectory (whatever made it), then it. */
static void remove_dir(struct meta_state *s)
{
	if (!s->dir[0])
		return;
	DIR *d = opendir(s->dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(s->dir);
	s->dir[0] = 0;
}

static void free_state(struct meta_state *s)
{
	if (s->dfd >= 0)
		close(s->dfd);
	remove_dir(s);
	free(s->data);
	free(s->names);
	free(s->order);
	free(s);
}

void osm_file_meta_teardown(struct osm_ctx *ctx)
{
	if (ctx->priv)
		free_state(ctx->priv);
	ctx->priv = NULL;
}

static double mib(int64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

/* Do `files` files of file_bytes fit (inodes and blocks)? A file system
 * that reports no inode count (f_files == 0: btrfs, some FUSE) is not
 * checked for inodes. */
static int check_room(struct osm_ctx *ctx, const struct meta_state *s)
{
	struct statvfs v;
	if (statvfs(s->t.work, &v))
		return OSM_OK; /* the creates themselves will say what is wrong */
	if (v.f_files > 0 && (int64_t)v.f_favail < s->files + SPARE_INODES)
		return osm_fail(ctx, OSM_SKIP, "dir=%s: %lld files need %lld free inodes, the file system has %llu: "
				"choose fewer files or another dir", s->t.dir, (long long)s->files,
				(long long)(s->files + SPARE_INODES), (unsigned long long)v.f_favail);
	int64_t bsize = v.f_frsize ? (int64_t)v.f_frsize : (int64_t)v.f_bsize;
	int64_t per_file = ((int64_t)s->file_bytes + bsize - 1) / bsize * bsize;
	int64_t need = s->files * per_file + SPARE_BYTES;
	int64_t avail = (int64_t)v.f_bavail * (int64_t)v.f_frsize;
	if (s->file_bytes > 0 && need > avail)
		return osm_fail(ctx, OSM_SKIP, "dir=%s: %lld files of %zu bytes need %.1f MiB, the file system has "
				"%.1f MiB free: choose fewer files, fewer bytes or another dir", s->t.dir,
				(long long)s->files, s->file_bytes, mib(need), mib(avail));
	return OSM_OK;
}

/* openat(O_CREAT|O_EXCL) + write of file_bytes + close; OSM_OK or an error. */
static int create_file(struct osm_ctx *ctx, struct meta_state *s, const char *name)
{
	int fd = openat(s->dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		return osm_fail(ctx, OSM_ERROR, "create %s/%s: %s (%s)", s->dir, name, strerror(e),
				osm_file_errname(e));
	}
	ssize_t w = s->file_bytes ? osm_file_write_all(fd, s->data, s->file_bytes) : 0;
	int e = errno;
	if (close(fd) && w >= 0) {
		w = -1;
		e = errno;
	}
	if (w < 0)
		return osm_fail(ctx, OSM_ERROR, "write %s/%s: %s (%s)", s->dir, name, strerror(e),
				osm_file_errname(e));
	return OSM_OK;
}

/* ext4 (and ext2/3) places a new directory next to its parent unless the
 * parent has FS_TOPDIR_FL (chattr +T): then as a top-level one, in the
 * block group with the fewest directories among those with more free
 * inodes and blocks than average (the Orlov allocator), and the files of
 * that directory take their inodes there. Set on the probe's private work
 * directory (the flag is not inherited), it gives the measured directory
 * a group of its own instead of the one every file under $TMPDIR churns:
 * on ext4 without a journal an inode allocation steps over every inode of
 * its group freed in the last 60 s (360 s while its inode table block is
 * dirty), so a create's time is the number of recent deletes in front of
 * it (docs/methods/file.md, "What moved file.create"). Other file systems
 * refuse the flag (EOPNOTSUPP) and allocate inodes their own way. */
static void spread_from_parent(struct osm_ctx *ctx, struct meta_state *s)
{
	int fd = open(s->t.work, O_RDONLY | O_DIRECTORY | O_CLOEXEC), flags = 0, e = 0;
	if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
		e = errno;
	} else if (!(flags & FS_TOPDIR_FL)) {
		flags |= FS_TOPDIR_FL;
		if (ioctl(fd, FS_IOC_SETFLAGS, &flags))
			e = errno;
	}
	if (fd >= 0)
		close(fd);
	/* inode numbers say where an inode lies in its group on ext2/3/4 only */
	s->spread = !e && !strncmp(s->t.fstype, "ext", 3);
	if (e)
		osm_add_info(ctx, "dir_placement", "next to its parent (FS_TOPDIR_FL: %s)", osm_file_errname(e));
	else
		osm_add_info(ctx, "dir_placement", "%s (FS_TOPDIR_FL on its parent)",
			     s->spread ? "own block group" : "as the file system places it");
}

/* Names s->files entries of the directory for create and unlink: they
 * only make the directory's size, so they are hard links to one file of
 * file_bytes (a new one whenever the file system refuses another link:
 * EMLINK at ext4's 65000), and the run frees a handful of inodes at its
 * end rather than `files` (each freed inode slows the next creates in
 * that group for a minute, above). A file system without hard links gets
 * a file per name. */
static int name_population(struct osm_ctx *ctx, struct meta_state *s)
{
	const char *target = NULL;
	int links = 1;
	for (int64_t i = 0; i < s->files; i++) {
		const char *name = name_of(s, i);
		if (target && links) {
			if (!linkat(s->dfd, target, s->dfd, name, 0))
				continue;
			int e = errno;
			if (e == EPERM || e == EOPNOTSUPP)
				links = 0; /* no hard links here: a file per name */
			else if (e != EMLINK)
				return osm_fail(ctx, OSM_ERROR, "link %s/%s: %s (%s)", s->dir, name, strerror(e),
						osm_file_errname(e));
		}
		int st = create_file(ctx, s, name);
		if (st != OSM_OK)
			return st;
		s->inodes++;
		target = name;
	}
	return OSM_OK;
}

/* The subdirectory and its `files` entries. */
static int populate(struct osm_ctx *ctx, struct meta_state *s, int fresh)
{
	static unsigned seq;
	char name[64]; /* fits by construction: a name of the table (<= 10 bytes), 2 x ('.', 10 digits) */
	spread_from_parent(ctx, s);
	/* The pid in the name: the Orlov allocator starts its search at the
	 * name's hash, so the next process's directory does not start where
	 * this one's did. */
	snprintf(name, sizeof(name), "%s.%u.%u", ctx->bench->name, (unsigned)getpid(), ++seq);
	if (osm_file_path(&s->t, name, s->dir, sizeof(s->dir))) {
		s->dir[0] = 0;
		return osm_fail(ctx, OSM_ERROR, "dir=%s: the work directory's path is too long", s->t.dir);
	}
	if (mkdir(s->dir, 0700)) {
		int e = errno;
		osm_fail(ctx, OSM_ERROR, "mkdir %s: %s (%s)", s->dir, strerror(e), osm_file_errname(e));
		s->dir[0] = 0;
		return OSM_ERROR;
	}
	s->dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dfd < 0)
		return osm_fail(ctx, OSM_ERROR, "open %s: %s", s->dir, strerror(errno));
	s->names = malloc((size_t)s->files * NAME_LEN);
	if (!s->names)
		return osm_fail(ctx, OSM_ERROR, "out of memory for %lld names", (long long)s->files);
	for (int64_t i = 0; i < s->files; i++)
		snprintf(s->names + (size_t)i * NAME_LEN, NAME_LEN, "f%07u", (unsigned)i);
	if (fresh)
		return name_population(ctx, s);
	for (int64_t i = 0; i < s->files; i++) {
		int st = create_file(ctx, s, name_of(s, i));
		if (st != OSM_OK)
			return st;
		s->inodes++;
	}
	return OSM_OK;
}

static void new_name(struct meta_state *s, char *name)
{
	snprintf(name, NAME_LEN, "n%llu", ++s->next);
}

/* The inode slots the allocator stepped over for a new file in the
 * directory: its inode number less the directory's and its population's
 * (ext4 numbers a group's inodes in order: in a group of its own the
 * directory, the population and the new file are consecutive, gap 0). */
static int inode_gap(struct osm_ctx *ctx, struct meta_state *s, int64_t *gap)
{
	char name[NAME_LEN];
	struct stat d, f;
	new_name(s, name);
	int st = create_file(ctx, s, name);
	if (st == OSM_OK && (fstat(s->dfd, &d) || fstatat(s->dfd, name, &f, 0)))
		st = osm_fail(ctx, OSM_ERROR, "stat %s/%s: %s", s->dir, name, strerror(errno));
	if (st == OSM_OK)
		*gap = (int64_t)f.st_ino - (int64_t)d.st_ino - 1 - s->inodes;
	unlinkat(s->dfd, name, 0);
	return st;
}

/* The directory, populated; for create and unlink on a file system that
 * took FS_TOPDIR_FL, checked to have a block group of its own: a gap over
 * GAP_FRESH means the group holds other inodes, used or freed in the last
 * minutes (an earlier directory's group that the allocator chose again),
 * and a new directory is made, at most PLACES times. extra.inode_gap is
 * the measured directory's. */
static int place(struct osm_ctx *ctx, struct meta_state *s, int fresh)
{
	int st = populate(ctx, s, fresh);
	for (int tries = 1; st == OSM_OK && fresh && s->spread; tries++) {
		int64_t gap = 0;
		st = inode_gap(ctx, s, &gap);
		if (st != OSM_OK)
			break;
		osm_add_extra(ctx, "inode_gap", (double)gap);
		osm_add_extra(ctx, "dir_tries", tries);
		if ((gap >= 0 && gap <= GAP_FRESH) || tries == PLACES)
			break;
		close(s->dfd);
		s->dfd = -1;
		remove_dir(s);
		free(s->names);
		s->names = NULL;
		s->inodes = 0;
		st = populate(ctx, s, fresh);
	}
	return st;
}

/* A shuffle of 0..files-1 (xorshift64, fixed seed: the same order every run). */
static int shuffle(struct osm_ctx *ctx, struct meta_state *s)
{
	s->order = malloc((size_t)s->files * sizeof(*s->order));
	if (!s->order)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	for (int64_t i = 0; i < s->files; i++)
		s->order[i] = (uint32_t)i;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int64_t i = s->files - 1; i > 0; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int64_t j = (int64_t)(x % (uint64_t)(i + 1));
		uint32_t t = s->order[i];
		s->order[i] = s->order[j];
		s->order[j] = t;
	}
	return OSM_OK;
}

int osm_file_meta_setup(struct osm_ctx *ctx)
{
	struct meta_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	s->dfd = -1;
	s->files = osm_param_int(ctx, "files");
	const char *name = ctx->bench->name;
	int fresh = !strcmp(name, "create") || !strcmp(name, "unlink");
	s->file_bytes = fresh ? (size_t)osm_param_int(ctx, "file_bytes") : 0;
	int st = osm_file_target(ctx, &s->t);
	if (st == OSM_OK)
		st = check_room(ctx, s);
	if (st == OSM_OK && s->file_bytes) {
		s->data = malloc(s->file_bytes);
		if (!s->data)
			st = osm_fail(ctx, OSM_ERROR, "out of memory");
		else
			memset(s->data, 'a', s->file_bytes);
	}
	if (st == OSM_OK)
		st = place(ctx, s, fresh);
	if (st == OSM_OK && !fresh)
		st = shuffle(ctx, s);
	if (st != OSM_OK) {
		free_state(s);
		return st;
	}
	osm_add_extra(ctx, "files", (double)s->files);
	osm_add_extra(ctx, "population_inodes", (double)s->inodes);
	ctx->priv = s;
	return OSM_OK;
}

/* After a self-timed batch: the batch's time, and the running rate. */
static int done(struct osm_ctx *ctx, struct meta_state *s, uint64_t batch, double ns)
{
	s->ops += batch;
	s->ns += ns;
	ctx->self_ns = ns;
	osm_add_extra(ctx, "ops_per_s", s->ns > 0 ? 1e9 * (double)s->ops / s->ns : 0);
	return OSM_OK;
}

static int remove_file(struct osm_ctx *ctx, struct meta_state *s, const char *name)
{
	if (!unlinkat(s->dfd, name, 0))
		return OSM_OK;
	int e = errno;
	return osm_fail(ctx, OSM_ERROR, "unlink %s/%s: %s (%s)", s->dir, name, strerror(e), osm_file_errname(e));
}

int osm_file_create_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct meta_state *s = ctx->priv;
	double ns = 0;
	char name[NAME_LEN];
	for (uint64_t b = 0; b < batch; b++) {
		new_name(s, name);
		osm_count_begin(ctx);
		uint64_t t0 = osm_clock_start();
		int st = create_file(ctx, s, name);
		uint64_t t1 = osm_clock_stop();
		osm_count_end(ctx, st == OSM_OK);
		if (st != OSM_OK) {
			unlinkat(s->dfd, name, 0); /* a partly written file */
			return st;
		}
		ns += osm_ticks_to_ns(t1 - t0);
		st = remove_file(ctx, s, name);
		if (st != OSM_OK)
			return st;
	}
	return done(ctx, s, batch, ns);
}

int osm_file_unlink_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct meta_state *s = ctx->priv;
	double ns = 0;
	char name[NAME_LEN];
	for (uint64_t b = 0; b < batch; b++) {
		new_name(s, name);
		int st = create_file(ctx, s, name);
		if (st != OSM_OK) {
			unlinkat(s->dfd, name, 0);
			return st;
		}
		osm_count_begin(ctx);
		uint64_t t0 = osm_clock_start();
		int rc = unlinkat(s->dfd, name, 0);
		uint64_t t1 = osm_clock_stop();
		int e = errno;
		osm_count_end(ctx, rc == 0);
		if (rc)
			return osm_fail(ctx, OSM_ERROR, "unlink %s/%s: %s (%s)", s->dir, name, strerror(e),
					osm_file_errname(e));
		ns += osm_ticks_to_ns(t1 - t0);
	}
	return done(ctx, s, batch, ns);
}

/* The next existing file of the shuffled order. */
static const char *next_file(struct meta_state *s)
{
	const char *n = name_of(s, s->order[s->pos]);
	if (++s->pos == (size_t)s->files)
		s->pos = 0;
	return n;
}

int osm_file_stat_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct meta_state *s = ctx->priv;
	struct stat st;
	uint64_t sum = 0;
	uint64_t t0 = osm_clock_start();
	for (uint64_t b = 0; b < batch; b++) {
		const char *name = next_file(s);
		if (fstatat(s->dfd, name, &st, 0)) {
			int e = errno;
			return osm_fail(ctx, OSM_ERROR, "stat %s/%s: %s (%s)", s->dir, name, strerror(e),
					osm_file_errname(e));
		}
		sum += (uint64_t)st.st_ino;
	}
	uint64_t t1 = osm_clock_stop();
	s->sink += sum;
	OSM_KEEP(s->sink);
	return done(ctx, s, batch, osm_ticks_to_ns(t1 - t0));
}

int osm_file_open_close_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct meta_state *s = ctx->priv;
	uint64_t t0 = osm_clock_start();
	for (uint64_t b = 0; b < batch; b++) {
		const char *name = next_file(s);
		int fd = openat(s->dfd, name, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || close(fd)) {
			int e = errno;
			return osm_fail(ctx, OSM_ERROR, "%s %s/%s: %s (%s)", fd < 0 ? "open" : "close", s->dir, name,
					strerror(e), osm_file_errname(e));
		}
	}
	uint64_t t1 = osm_clock_stop();
	return done(ctx, s, batch, osm_ticks_to_ns(t1 - t0));
}
