/* test_cleanup.c - work directories: osm_workdir_in() makes
 * PARENT/osmeter-probe.<pid>.XXXXXX once per parent, and the undo stack
 * removes it with everything in it (files, a subdirectory of files, many
 * entries: more than one getdents64 buffer), leaving the parent and its
 * other entries alone; the default work directory likewise. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "tap.h"

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static int touch(const char *dir, const char *name)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_CREAT | O_WRONLY | O_EXCL, 0644);
	if (fd < 0)
		return -1;
	int ok = write(fd, "x", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

int main(void)
{
	char parent[] = "/tmp/osm-test-cleanup.XXXXXX";
	if (!mkdtemp(parent)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return done_testing();
	}
	ok(touch(parent, "keep") == 0, "a file of the parent's own");

	char work[512], again[512], prefix[128];
	ok(osm_workdir_in(parent, work, sizeof(work)) == 0, "work directory made in %s", parent);
	snprintf(prefix, sizeof(prefix), "%s/osmeter-probe.%ld.", parent, (long)getpid());
	ok(!strncmp(work, prefix, strlen(prefix)) && strlen(work) == strlen(prefix) + 6,
	   "named PARENT/osmeter-probe.<pid>.XXXXXX: %s", work);
	char slashed[600];
	snprintf(slashed, sizeof(slashed), "%s/", parent);
	ok(osm_workdir_in(slashed, again, sizeof(again)) == 0 && !strcmp(work, again),
	   "the same parent (trailing slash) gives the same directory");
	char tiny[8];
	ok(osm_workdir_in(parent, tiny, sizeof(tiny)) == -1 && errno == ENAMETOOLONG, "a short buffer is refused");

	/* A parent of almost PATH_MAX bytes (the file family's dir= takes up
	 * to PATH_MAX - 1 - 128): its work directory is made, whole, and
	 * removed with the others (it used to be refused past 511 bytes). */
	char deep[PATH_MAX], deep_work[PATH_MAX];
	size_t dl = (size_t)snprintf(deep, sizeof(deep), "%s", parent);
	while (dl + 201 <= PATH_MAX - 1 - 128) {
		deep[dl++] = '/';
		memset(deep + dl, 'd', 200);
		dl += 200;
		deep[dl] = 0;
		mkdir(deep, 0700);
	}
	ok(osm_workdir_in(deep, deep_work, sizeof(deep_work)) == 0 && exists(deep_work) &&
		   !strncmp(deep_work, deep, dl) && strlen(deep_work) == dl + strlen(prefix) - strlen(parent) + 6,
	   "a work directory in a %zu-byte parent", dl);

	int made = 0;
	for (int i = 0; i < 600; i++) { /* names long enough to need several getdents64 calls */
		char name[64];
		snprintf(name, sizeof(name), "file-with-a-rather-long-name-%04d", i);
		made += touch(work, name) == 0;
	}
	char sub[600];
	snprintf(sub, sizeof(sub), "%s/meta", work);
	ok(mkdir(sub, 0755) == 0 && touch(sub, "a") == 0 && touch(sub, "b") == 0, "a subdirectory with files");
	is_int(made, 600, "600 files made");
	is_int(entries(work), 601, "the work directory holds them");

	const char *dflt = osm_workdir();
	ok(dflt != NULL && exists(dflt), "the default work directory exists");
	char dcopy[512];
	snprintf(dcopy, sizeof(dcopy), "%s", dflt ? dflt : "");
	ok(touch(dcopy, "stray") == 0, "a file not registered with osm_workfile in it");

	osm_cleanup_run_all();
	ok(!exists(work), "the work directory is gone");
	ok(!exists(dcopy), "the default work directory is gone with its unregistered file");
	ok(!exists(deep_work), "the one in the long parent is gone");
	ok(exists(parent), "the parent stays");
	while (dl > strlen(parent)) { /* the long parent's directories */
		rmdir(deep);
		while (deep[--dl] != '/')
			;
		deep[dl] = 0;
	}
	is_int(entries(parent), 1, "with its own file only");

	char keep[600];
	snprintf(keep, sizeof(keep), "%s/keep", parent);
	unlink(keep);
	rmdir(parent);
	return done_testing();
}
