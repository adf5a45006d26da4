/* sysinfo_cgroup.c - the cgroup limits of the run: memory, CPU bandwidth,
 * tasks (pids) and the cpuset, on cgroup v1 and v2. See sysinfo_int.h.
 *
 * Where each hierarchy is comes from /proc/self/mountinfo, never from a
 * guessed path: v1 controllers are mounted one per directory (or several
 * together, "cpu,cpuacct"), v2 at /sys/fs/cgroup on a unified host but at
 * /sys/fs/cgroup/unified on a hybrid one, and a container may mount its own
 * cgroup as a hierarchy's root (mountinfo's root column says which).
 *
 * Trap 1: a hybrid host has v1 controllers beside a v2 tree that holds few
 *   or none of them, so a controller is read from v1 when v1 has it mounted
 *   and the process's v1 line names it; else from v2, where a controller's
 *   files exist only where it is enabled.
 * Trap 2: a parent's limit binds its children: limits are walked from the
 *   process's cgroup up to the hierarchy's visible root and the smallest is
 *   kept. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <string.h>

#define CG_WHY (PATH_LEN * 3) /* a reason naming two paths */

typedef bool (*cg_reader)(const char *dir, double *v);

/* A hierarchy: where it is mounted, and which cgroup is its root there. */
struct cg_mount {
	char point[PATH_LEN];
	char root[PATH_LEN];
	bool v2;
};

/* This process's cgroup in the v1 hierarchy holding `controller`, or (NULL)
 * in the v2 one ("0::/path"). */
static bool cgroup_path(const char *controller, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return false;
	char line[MEDIUM];
	bool cut, found = false;
	while (!found && si_read_line(f, line, sizeof(line), &cut)) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctrls = c1 + 1;
		if (!controller) {
			found = strncmp(line, "0:", 2) == 0 && !*ctrls;
		} else {
			char list[SMALL], *save = NULL;
			si_copy_str(list, sizeof(list), ctrls);
			for (char *w = strtok_r(list, ",", &save); w && !found;
			     w = strtok_r(NULL, ",", &save))
				found = strcmp(w, controller) == 0;
		}
		if (found)
			si_copy_str(out, len, c2 + 1);
	}
	fclose(f);
	return found;
}

static bool has_word(const char *list, const char *word, char sep)
{
	size_t k = strlen(word);
	for (const char *p = list; p && *p; p = strchr(p, sep), p = p ? p + 1 : NULL)
		if (strncmp(p, word, k) == 0 && (p[k] == sep || p[k] == '\0'))
			return true;
	return false;
}

/* The mount of the v1 hierarchy holding `controller` (its super options
 * name it), or of the v2 hierarchy (NULL), from /proc/self/mountinfo:
 * "ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE SUPER". */
static bool cgroup_mount(const char *controller, struct cg_mount *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	char line[MEDIUM];
	bool cut, found = false;
	for (int n = 0; !found && n < 10000 && si_read_line(f, line, sizeof(line), &cut); n++) {
		char *dash = strstr(line, " - ");
		if (cut || !dash)
			continue;
		*dash = '\0';
		char type[NAME_LEN], super[MEDIUM / 2], root[PATH_LEN], point[PATH_LEN];
		if (sscanf(dash + 3, "%63s %*s %2047s", type, super) < 1 ||
		    sscanf(line, "%*s %*s %*s %511s %511s", root, point) != 2)
			continue;
		if (controller ? strcmp(type, "cgroup") != 0 || !has_word(super, controller, ',')
			       : strcmp(type, "cgroup2") != 0)
			continue;
		si_unescape_mount(root);
		si_unescape_mount(point);
		si_copy_str(m->root, sizeof(m->root), root);
		si_copy_str(m->point, sizeof(m->point), point);
		m->v2 = controller == NULL;
		found = true;
	}
	fclose(f);
	return found;
}

/* The process's cgroup below the mount: its path less the mount's root
 * (a container that mounts its own cgroup as the root), else as it is. */
static void rel_path(const struct cg_mount *m, const char *cgpath, char *out, size_t len)
{
	size_t k = strlen(m->root);
	if (strcmp(m->root, "/") != 0 && strncmp(cgpath, m->root, k) == 0 &&
	    (cgpath[k] == '/' || cgpath[k] == '\0'))
		cgpath += k;
	si_copy_str(out, len, cgpath[0] == '/' ? cgpath : "/");
}

/* The directories of the process's cgroup and of each parent up to the
 * mount's root, nearest first. */
struct cg_iter {
	const struct cg_mount *m;
	char rel[PATH_LEN];
	bool done;
};

static void cg_iter_init(struct cg_iter *it, const struct cg_mount *m, const char *cgpath)
{
	it->m = m;
	it->done = false;
	rel_path(m, cgpath, it->rel, sizeof(it->rel));
}

static bool cg_next(struct cg_iter *it, char *dir, size_t len)
{
	while (!it->done) {
		bool ok = si_pathf(dir, len, "%s%s", it->m->point, strcmp(it->rel, "/") == 0 ? "" : it->rel);
		char *slash = strrchr(it->rel, '/');
		if (!slash || strcmp(it->rel, "/") == 0)
			it->done = true;
		else if (slash == it->rel)
			it->rel[1] = '\0';
		else
			*slash = '\0';
		if (ok)
			return true;
	}
	return false;
}

/* The smallest value rd reads over the process's cgroup and its parents. */
static bool cgroup_walk(const struct cg_mount *m, const char *cgpath, cg_reader rd, double *out)
{
	struct cg_iter it;
	char dir[PATH_LEN];
	bool found = false;
	cg_iter_init(&it, m, cgpath);
	while (cg_next(&it, dir, sizeof(dir))) {
		double v;
		if (rd(dir, &v) && (!found || v < *out)) {
			*out = v;
			found = true;
		}
	}
	return found;
}

/* The hierarchy that holds `controller` for this process, and the
 * process's cgroup in it; why not in `why`. */
static bool cgroup_of(const char *controller, struct cg_mount *m, char *cg, size_t len,
		      char *why, size_t wlen)
{
	if (cgroup_mount(controller, m) && cgroup_path(controller, cg, len))
		return true;
	if (cgroup_mount(NULL, m) && cgroup_path(NULL, cg, len))
		return true;
	snprintf(why, wlen, "no cgroup hierarchy with the %s controller is mounted (/proc/self/mountinfo)",
		 controller);
	return false;
}

struct cg_limit {
	const char *controller;
	cg_reader v1, v2;
	const char *file_v1, *file_v2; /* for the reason */
};

/* The smallest limit over the process's cgroup and its parents; the reason
 * in `why` when there is none. */
static bool cgroup_limit(const struct cg_limit *l, double *out, char *why, size_t wlen)
{
	struct cg_mount m;
	char cg[PATH_LEN];
	if (!cgroup_of(l->controller, &m, cg, sizeof(cg), why, wlen))
		return false;
	if (cgroup_walk(&m, cg, m.v2 ? l->v2 : l->v1, out))
		return true;
	/* Not the cgroup's path: it may change from run to run (a session's
	 * cgroup) and compare would list it as a difference. */
	snprintf(why, wlen, "none set: %s is unlimited or absent in this process's cgroup and its parents "
		 "(cgroup %s at %s)", m.v2 ? l->file_v2 : l->file_v1, m.v2 ? "v2" : "v1", m.point);
	return false;
}

static bool cg_mem_v1(const char *dir, double *v)
{
	char path[PATH_LEN];
	long long x;
	/* "unlimited" is PAGE_COUNTER_MAX pages, about 2^63. */
	if (!si_pathf(path, sizeof(path), "%s/memory.limit_in_bytes", dir) || !si_read_int(path, &x) ||
	    x <= 0 || x >= (1LL << 62))
		return false;
	*v = (double)x;
	return true;
}

/* memory.max, pids.max: a number, or "max" for none. */
static bool cg_max_file(const char *dir, const char *name, double *v)
{
	char path[PATH_LEN], buf[SMALL];
	long long x;
	if (!si_pathf(path, sizeof(path), "%s/%s", dir, name) ||
	    !si_read_file_trim(path, buf, sizeof(buf)) || !si_parse_ll(buf, &x) || x < 0)
		return false;
	*v = (double)x;
	return true;
}

static bool cg_mem_v2(const char *dir, double *v) { return cg_max_file(dir, "memory.max", v); }
static bool cg_pids(const char *dir, double *v) { return cg_max_file(dir, "pids.max", v); }

static bool cg_cpu_v1(const char *dir, double *v)
{
	char path[PATH_LEN];
	long long quota, period;
	if (!si_pathf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir) || !si_read_int(path, &quota) ||
	    quota <= 0 || /* -1 = unlimited */
	    !si_pathf(path, sizeof(path), "%s/cpu.cfs_period_us", dir) || !si_read_int(path, &period) ||
	    period <= 0)
		return false;
	*v = (double)quota / (double)period;
	return true;
}

static bool cg_cpu_v2(const char *dir, double *v)
{
	char path[PATH_LEN], buf[SMALL];
	long long quota, period;
	if (!si_pathf(path, sizeof(path), "%s/cpu.max", dir) || !si_read_file_trim(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%lld %lld", &quota, &period) != 2 || quota <= 0 || period <= 0)
		return false; /* "max 100000" = unlimited */
	*v = (double)quota / (double)period;
	return true;
}

/* A limit's field: its value (an integer, or a number for a CPU share), or null with why. */
static void w_limit(struct osm_json *j, const char *key, const struct cg_limit *l, int integer)
{
	double v;
	char why[CG_WHY];
	if (!cgroup_limit(l, &v, why, sizeof(why)))
		si_null(j, key, why);
	else if (integer)
		osm_json_int(j, key, (long long)v);
	else
		osm_json_num(j, key, v);
}

void si_w_cgroup_memory_limit(struct osm_json *j, const char *key)
{
	static const struct cg_limit l = {"memory", cg_mem_v1, cg_mem_v2, "memory.limit_in_bytes", "memory.max"};
	w_limit(j, key, &l, 1);
}

void si_w_cgroup_cpu_limit(struct osm_json *j, const char *key)
{
	static const struct cg_limit l = {"cpu", cg_cpu_v1, cg_cpu_v2, "cpu.cfs_quota_us", "cpu.max"};
	w_limit(j, key, &l, 0);
}

void si_w_cgroup_pids_limit(struct osm_json *j, const char *key)
{
	static const struct cg_limit l = {"pids", cg_pids, cg_pids, "pids.max", "pids.max"};
	w_limit(j, key, &l, 1);
}

/* The CPUs of the process's cpuset: the nearest cgroup, going up, that has
 * the file (v2 has it only where the controller is enabled). */
static bool cpuset_cpus(const struct cg_mount *m, const char *cg, char *out, size_t len)
{
	static const char *const v1[] = {"cpuset.effective_cpus", "cpuset.cpus", NULL};
	static const char *const v2[] = {"cpuset.cpus.effective", NULL};
	struct cg_iter it;
	char dir[PATH_LEN], path[PATH_LEN];
	cg_iter_init(&it, m, cg);
	while (cg_next(&it, dir, sizeof(dir)))
		for (const char *const *name = m->v2 ? v2 : v1; *name; name++)
			if (si_pathf(path, sizeof(path), "%s/%s", dir, *name) &&
			    si_read_file_trim(path, out, len))
				return true;
	return false;
}

void si_w_cgroup_cpuset_cpus(struct osm_json *j, const char *key)
{
	struct cg_mount m;
	char cg[PATH_LEN], why[CG_WHY], cpus[MEDIUM];
	if (!cgroup_of("cpuset", &m, cg, sizeof(cg), why, sizeof(why))) {
		si_null(j, key, why);
	} else if (cpuset_cpus(&m, cg, cpus, sizeof(cpus))) {
		osm_json_str(j, key, cpus);
	} else {
		snprintf(why, sizeof(why), "no %s in this process's cgroup or a parent (cgroup %s at %s)",
			 m.v2 ? "cpuset.cpus.effective" : "cpuset.effective_cpus or cpuset.cpus",
			 m.v2 ? "v2" : "v1", m.point);
		si_null(j, key, why);
	}
}
