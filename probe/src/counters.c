/* counters.c - see counters.h. */
#include "counters.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "knob.h"
#include "samples.h"

#if defined(__has_include)
#if __has_include(<linux/perf_event.h>)
#include <linux/perf_event.h>
#define OSM_HAVE_PERF_EVENT 1
#endif
#endif

/* perf_event_open's ABI numbers (stable; from linux/perf_event.h), so the
 * list parses the same on a build without the header. */
enum { T_HW = 0, T_SW = 1, T_CACHE = 3, T_RAW = 4 };
enum { HW_CYCLES = 0, HW_INSTRUCTIONS = 1, HW_CACHE_REFERENCES = 2, HW_CACHE_MISSES = 3,
       HW_BRANCH_MISSES = 5 };
enum { SW_TASK_CLOCK = 1, SW_PAGE_FAULTS = 2, SW_CONTEXT_SWITCHES = 3, SW_CPU_MIGRATIONS = 4,
       SW_PAGE_FAULTS_MIN = 5, SW_PAGE_FAULTS_MAJ = 6 };
/* PERF_TYPE_HW_CACHE config: cache id | op << 8 | result << 16. */
enum { C_L1D = 0, C_LL = 2, C_DTLB = 3, C_OP_READ = 0, C_MISS = 1 };
#define CACHE_EV(id) ((uint64_t)(id) | ((uint64_t)C_OP_READ << 8) | ((uint64_t)C_MISS << 16))

struct known {
	const char *name;
	uint32_t type;
	uint64_t config;
	const char *unit;
	int hw, kernel_only, derived;
};

/* Software first (always available where perf_event_open is), then the
 * hardware events perf stat names the same way. llc-misses and dtlb-misses
 * are the read (load) misses, as perf's LLC-load-misses / dTLB-load-misses. */
static const struct known known[] = {
	{"task-clock", T_SW, SW_TASK_CLOCK, "ns", 0, 0, 0},
	{"page-faults", T_SW, SW_PAGE_FAULTS, "count", 0, 0, 0},
	{"minor-faults", T_SW, SW_PAGE_FAULTS_MIN, "count", 0, 0, 0},
	{"major-faults", T_SW, SW_PAGE_FAULTS_MAJ, "count", 0, 0, 0},
	{"context-switches", T_SW, SW_CONTEXT_SWITCHES, "count", 0, 1, 0},
	{"cpu-migrations", T_SW, SW_CPU_MIGRATIONS, "count", 0, 1, 0},
	{"cycles", T_HW, HW_CYCLES, "count", 1, 0, 0},
	{"instructions", T_HW, HW_INSTRUCTIONS, "count", 1, 0, 0},
	{"ipc", 0, 0, "ratio", 1, 0, 1},
	{"cache-references", T_HW, HW_CACHE_REFERENCES, "count", 1, 0, 0},
	{"cache-misses", T_HW, HW_CACHE_MISSES, "count", 1, 0, 0},
	{"branch-misses", T_HW, HW_BRANCH_MISSES, "count", 1, 0, 0},
	{"l1d-read-misses", T_CACHE, CACHE_EV(C_L1D), "count", 1, 0, 0},
	{"llc-misses", T_CACHE, CACHE_EV(C_LL), "count", 1, 0, 0},
	{"dtlb-misses", T_CACHE, CACHE_EV(C_DTLB), "count", 1, 0, 0},
};
#define N_KNOWN (sizeof(known) / sizeof(known[0]))

const char *osm_counters_names(void)
{
	return "sw, hw, all, task-clock, page-faults, minor-faults, major-faults, context-switches, "
	       "cpu-migrations, cycles, instructions, ipc, cache-references, cache-misses, branch-misses, "
	       "l1d-read-misses, llc-misses, dtlb-misses, r<hex> (a raw PMU event code)";
}

static int add_def(struct osm_counter_spec *spec, const struct osm_counter_def *d, char *err, size_t len)
{
	for (int i = 0; i < spec->n; i++)
		if (!strcmp(spec->def[i].name, d->name))
			return 0; /* named twice: counted once */
	if (spec->n == OSM_MAX_COUNTERS) {
		snprintf(err, len, "--counters: at most %d counters", OSM_MAX_COUNTERS);
		return -1;
	}
	spec->def[spec->n++] = *d;
	return 0;
}

static int add_known(struct osm_counter_spec *spec, const struct known *k, char *err, size_t len)
{
	struct osm_counter_def d = {.type = k->type, .config = k->config, .unit = k->unit, .hw = k->hw,
				    .kernel_only = k->kernel_only, .derived = k->derived};
	snprintf(d.name, sizeof(d.name), "%s", k->name);
	return add_def(spec, &d, err, len);
}

static const struct known *find_known(const char *name)
{
	for (size_t i = 0; i < N_KNOWN; i++)
		if (!strcmp(known[i].name, name))
			return &known[i];
	return NULL;
}

int osm_counters_parse(const char *list, struct osm_counter_spec *spec, char *err, size_t len)
{
	char buf[1024];
	memset(spec, 0, sizeof(*spec));
	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf)) {
		snprintf(err, len, "--counters: the list has %zu bytes; at most %zu", strlen(list), sizeof(buf) - 1);
		return -1;
	}
	int any = 0, want_ipc = 0;
	for (char *t = buf, *next; t; t = next) {
		next = strchr(t, ',');
		if (next)
			*next++ = 0;
		if (!*t) {
			snprintf(err, len, "--counters: empty name in '%s'; allowed: %s", list, osm_counters_names());
			return -1;
		}
		any = 1;
		int sw = !strcmp(t, "sw") || !strcmp(t, "all");
		int hw = !strcmp(t, "hw") || !strcmp(t, "all");
		if (sw || hw) {
			for (size_t i = 0; i < N_KNOWN; i++)
				if ((known[i].hw ? hw : sw) && add_known(spec, &known[i], err, len))
					return -1;
			want_ipc |= hw;
			continue;
		}
		const struct known *k = find_known(t);
		if (k) {
			if (add_known(spec, k, err, len))
				return -1;
			want_ipc |= k->derived;
			continue;
		}
		size_t tl = strlen(t), hex = 0;
		while (t[0] == 'r' && hex + 1 < tl && isxdigit((unsigned char)t[hex + 1]))
			hex++;
		if (t[0] == 'r' && hex >= 1 && hex <= 16 && hex + 1 == tl) {
			struct osm_counter_def d = {.type = T_RAW, .config = strtoull(t + 1, NULL, 16),
						    .unit = "count", .hw = 1};
			for (size_t i = 0; i < tl; i++)
				d.name[i] = (char)tolower((unsigned char)t[i]);
			if (add_def(spec, &d, err, len))
				return -1;
			continue;
		}
		snprintf(err, len, "--counters: unknown counter '%s'; allowed: %s", t, osm_counters_names());
		return -1;
	}
	if (!any) {
		snprintf(err, len, "--counters: empty list; allowed: %s", osm_counters_names());
		return -1;
	}
	/* ipc is derived from these two: count them whenever it is asked for. */
	if (want_ipc && (add_known(spec, find_known("cycles"), err, len) ||
			 add_known(spec, find_known("instructions"), err, len)))
		return -1;
	return 0;
}

/* ---- counting --------------------------------------------------------- */

enum ev_status { EV_OK, EV_UNSUPPORTED, EV_NOT_COUNTED };

/* Empty windows counted after open and again before finish: one window's
 * own cost is their mean (counters.h). */
#define CAL_WINDOWS 64

struct ev {
	int fd;           /* -1 when not open */
	int leader;       /* index of its group's leader (itself when it leads) */
	int pos;          /* position in the leader's group read */
	int n_members;    /* leaders: events in the group */
	uint64_t snap, snap_en, snap_run; /* read at the current window's start */
	uint64_t value, enabled, running; /* summed over the counting windows */
	double cost;      /* one empty window's count (osm_counters_window_cost) */
	enum ev_status status;
	char reason[200];
};

struct osm_counters {
	struct osm_counter_spec spec;
	struct ev ev[OSM_MAX_COUNTERS];
	int order[OSM_MAX_COUNTERS]; /* group leaders, outermost first (task-clock last) */
	int n_groups;
	int kernel;              /* kernel-side counting allowed */
	char kernel_reason[200];
	uint64_t ops, windows;
	double bytes_per_op;     /* bandwidth benchmarks: bytes one operation moves */
	const char *note;        /* what the windows cover besides the timed operation */
	int enabled;             /* the events were enabled */
	int n_cal;               /* empty windows counted so far */
	double cal[OSM_MAX_COUNTERS][2 * CAL_WINDOWS];
};

struct osm_counters *osm_counters_new(const struct osm_counter_spec *spec)
{
	struct osm_counters *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->spec = *spec;
	for (int i = 0; i < OSM_MAX_COUNTERS; i++)
		c->ev[i].fd = -1;
	return c;
}

void osm_counters_describe(struct osm_counters *c, double bytes_per_op, const char *note)
{
	if (bytes_per_op > 0)
		c->bytes_per_op = bytes_per_op;
	if (note)
		c->note = note;
}

double osm_counters_window_cost(double *v, size_t n)
{
	size_t keep = n - n / 16; /* the top sixteenth left out: a rare interrupt */
	double sum = 0;
	osm_sort_doubles(v, n);
	for (size_t k = 0; k < keep; k++)
		sum += v[k];
	return keep ? sum / (double)keep : 0;
}

double osm_counters_net(double counted, uint64_t windows, double window_cost)
{
	double net = counted - (double)windows * window_cost;
	return net > 0 ? net : 0;
}

/* Members of the group led by event i (the leader included). */
#define FOR_MEMBERS(c, i, m) \
	for (struct ev *m = (c)->ev; m < (c)->ev + (c)->spec.n; m++) \
		if (m->fd >= 0 && m->leader == (i))

#ifdef OSM_HAVE_PERF_EVENT
static int paranoid(void)
{
	return osm_knob_read_int(OSM_KNOB_PARANOID, 99);
}

/* Where each group sits in the windows' reads: the hardware groups
 * outermost, then the software events, task-clock innermost, so the
 * reads of the other groups fall outside its window. */
static int rank(const struct osm_counter_def *d)
{
	if (d->hw)
		return 0;
	return d->type == T_SW && d->config == SW_TASK_CLOCK ? 2 : 1;
}

static int perf_open(const struct osm_counter_def *d, int exclude_kernel, int group_fd)
{
	/* Disabled until all are open; inherited by the children and threads
	 * started while open. task-clock is always alone: read as one event,
	 * which costs less than a group read. */
	struct perf_event_attr a = {.size = sizeof(a), .type = d->type, .config = d->config, .disabled = 1,
				    .inherit = 1, .exclude_kernel = exclude_kernel ? 1 : 0, .exclude_hv = 1,
				    .read_format = (rank(d) == 2 ? 0 : PERF_FORMAT_GROUP) |
						   PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING};
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static void why_not(struct ev *e, const struct osm_counter_def *d, int err)
{
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL)
		snprintf(e->reason, sizeof(e->reason), "%s; perf_event_open: %s",
			 d->hw ? "this CPU's performance monitoring unit does not count it, or there is none "
				 "(virtual machines often have none)" : "this kernel does not count it",
			 strerror(err));
	else if (err == EACCES || err == EPERM)
		snprintf(e->reason, sizeof(e->reason), "not allowed: perf_event_paranoid is %d "
			 "(needs CAP_PERFMON, root, or a lower perf_event_paranoid): %s", paranoid(), strerror(err));
	else if (err == ENOSYS)
		snprintf(e->reason, sizeof(e->reason), "perf_event_open is not available (kernel without "
			 "CONFIG_PERF_EVENTS, or blocked by seccomp): %s", strerror(err));
	else
		snprintf(e->reason, sizeof(e->reason), "perf_event_open: %s", strerror(err));
}

/* Opens event i, joining the group led by `leader` (or leading its own when
 * leader < 0 or the join is refused). */
static void open_one(struct osm_counters *c, int i, int leader)
{
	struct ev *e = &c->ev[i];
	const struct osm_counter_def *d = &c->spec.def[i];
	if (d->kernel_only && !c->kernel) {
		e->status = EV_UNSUPPORTED;
		snprintf(e->reason, sizeof(e->reason), "the kernel raises it only in kernel mode, and "
			 "kernel-side counting is not allowed here (perf_event_paranoid is %d; see kernel_reason)",
			 paranoid());
		return;
	}
	int fd = leader >= 0 ? perf_open(d, !c->kernel, c->ev[leader].fd) : -1;
	if (fd >= 0) {
		e->leader = leader;
		e->pos = c->ev[leader].n_members++;
	} else {
		fd = perf_open(d, !c->kernel, -1);
		if (fd < 0) {
			e->status = EV_UNSUPPORTED;
			why_not(e, d, errno);
			return;
		}
		e->leader = i;
		e->pos = 0;
		e->n_members = 1;
	}
	e->fd = fd;
	e->status = EV_OK;
}

/* Every member of group i stops counting, for `why` (errno appended). */
static void group_failed(struct osm_counters *c, int i, const char *why)
{
	int err = errno;
	FOR_MEMBERS(c, i, m) {
		if (m->status != EV_OK)
			continue;
		m->status = EV_NOT_COUNTED;
		snprintf(m->reason, sizeof(m->reason), "%s: %s", why, strerror(err));
	}
}

/* The group read of leader i into buf: nr, time enabled, time running,
 * then one value per member. 0, or -1 with the group marked not counted. */
static int read_group(struct osm_counters *c, int i, uint64_t *buf)
{
	const struct ev *e = &c->ev[i];
	ssize_t want = (ssize_t)((3 + (size_t)e->n_members) * sizeof(uint64_t));
	if (rank(&c->spec.def[i]) == 2 && read(e->fd, buf + 1, 3 * sizeof(uint64_t)) == 3 * sizeof(uint64_t)) {
		uint64_t v = buf[1]; /* one event's read: value, enabled, running */
		buf[0] = 1, buf[1] = buf[2], buf[2] = buf[3], buf[3] = v;
		return 0;
	}
	if (rank(&c->spec.def[i]) != 2 && read(e->fd, buf, (size_t)want) == want && buf[0] == (uint64_t)e->n_members)
		return 0;
	group_failed(c, i, "reading the counter failed");
	return -1;
}

static void order_and_enable(struct osm_counters *c)
{
	c->n_groups = 0;
	for (int r = 0; r <= 2; r++)
		for (int i = 0; i < c->spec.n; i++)
			if (c->ev[i].fd >= 0 && c->ev[i].leader == i && rank(&c->spec.def[i]) == r)
				c->order[c->n_groups++] = i;
	for (int k = 0; k < c->n_groups; k++) {
		if (!ioctl(c->ev[c->order[k]].fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP))
			c->enabled = 1;
		else
			group_failed(c, c->order[k], "enabling the counter failed (PERF_EVENT_IOC_ENABLE)");
	}
}

void osm_counters_begin(struct osm_counters *c)
{
	uint64_t buf[3 + OSM_MAX_COUNTERS];
	for (int k = 0; k < c->n_groups; k++) {
		int i = c->order[k];
		if (c->ev[i].status != EV_OK || read_group(c, i, buf))
			continue;
		FOR_MEMBERS(c, i, m) {
			m->snap = buf[3 + m->pos];
			m->snap_en = buf[1];
			m->snap_run = buf[2];
		}
	}
}

#define since(now, then) ((now) > (then) ? (now) - (then) : 0)

/* Ends the window osm_counters_begin() opened: each count since then is added
 * to the totals, or kept as empty window number `cal` (cal >= 0). */
static void window_end(struct osm_counters *c, int cal)
{
	uint64_t buf[3 + OSM_MAX_COUNTERS];
	for (int k = c->n_groups - 1; k >= 0; k--) {
		int i = c->order[k];
		if (c->ev[i].status != EV_OK || read_group(c, i, buf))
			continue;
		FOR_MEMBERS(c, i, m) {
			uint64_t v = since(buf[3 + m->pos], m->snap);
			if (cal >= 0) {
				c->cal[m - c->ev][cal] = (double)v;
				continue;
			}
			m->value += v;
			m->enabled += since(buf[1], m->snap_en);
			m->running += since(buf[2], m->snap_run);
		}
	}
}

/* CAL_WINDOWS empty windows, nothing between their start and end. */
static void calibrate(struct osm_counters *c)
{
	for (int w = 0; w < CAL_WINDOWS && c->n_cal < 2 * CAL_WINDOWS; w++) {
		osm_counters_begin(c);
		window_end(c, c->n_cal++);
	}
}

void osm_counters_open(struct osm_counters *c)
{
	/* Kernel-side counting: try it; paranoid >= 2 without CAP_PERFMON
	 * refuses it, and user-side counting is what remains. */
	c->kernel = 1;
	struct osm_counter_def probe_def = {.name = "task-clock", .type = T_SW, .config = SW_TASK_CLOCK};
	int fd = perf_open(&probe_def, 0, -1);
	if (fd >= 0) {
		close(fd);
	} else if (errno == EACCES || errno == EPERM) {
		c->kernel = 0;
		snprintf(c->kernel_reason, sizeof(c->kernel_reason),
			 "perf_event_paranoid is %d: counting in the kernel needs CAP_PERFMON, root, "
			 "or perf_event_paranoid <= 1; user-space events only", paranoid());
	}
	/* Groups (why: counters.h): task-clock alone, the other software events
	 * in one, cycles and instructions in one, any other event alone. */
	int sw_leader = -1, ipc_leader = -1;
	for (int i = 0; i < c->spec.n; i++) {
		const struct osm_counter_def *d = &c->spec.def[i];
		if (d->derived)
			continue;
		int is_ipc_pair = d->type == T_HW && (d->config == HW_CYCLES || d->config == HW_INSTRUCTIONS);
		int leader = rank(d) == 2 ? -1 : !d->hw ? sw_leader : is_ipc_pair ? ipc_leader : -1;
		open_one(c, i, leader);
		if (c->ev[i].status != EV_OK || c->ev[i].leader != i)
			continue;
		if (rank(d) == 1 && sw_leader < 0)
			sw_leader = i;
		if (is_ipc_pair && ipc_leader < 0)
			ipc_leader = i;
	}
	order_and_enable(c);
	calibrate(c);
}

void osm_counters_end(struct osm_counters *c, uint64_t ops)
{
	if (!ops)
		return; /* a window that ended no operation is dropped */
	window_end(c, -1);
	c->ops += ops;
	c->windows++;
}

void osm_counters_finish(struct osm_counters *c)
{
	calibrate(c);
	for (int i = 0; i < c->spec.n; i++) {
		c->ev[i].cost = osm_counters_window_cost(c->cal[i], (size_t)c->n_cal);
		if (c->ev[i].fd >= 0 && c->ev[i].leader != i) /* members before their leader */
			close(c->ev[i].fd);
	}
	for (int i = 0; i < c->spec.n; i++) {
		if (c->ev[i].fd >= 0 && c->ev[i].leader == i)
			close(c->ev[i].fd);
		c->ev[i].fd = -1;
	}
}
#else
void osm_counters_open(struct osm_counters *c)
{
	c->kernel = 0;
	snprintf(c->kernel_reason, sizeof(c->kernel_reason), "built without linux/perf_event.h");
	for (int i = 0; i < c->spec.n; i++) {
		c->ev[i].status = EV_UNSUPPORTED;
		snprintf(c->ev[i].reason, sizeof(c->ev[i].reason), "this probe was built without linux/perf_event.h");
	}
}

void osm_counters_begin(struct osm_counters *c) { (void)c; }
void osm_counters_end(struct osm_counters *c, uint64_t ops)
{
	c->ops += ops;
	c->windows += ops > 0;
}
void osm_counters_finish(struct osm_counters *c) { (void)c; }
#endif

static int find_index(const struct osm_counters *c, const char *name)
{
	for (int i = 0; i < c->spec.n; i++)
		if (!strcmp(c->spec.def[i].name, name))
			return i;
	return -1;
}

/* A counted event's total less its windows' own cost, scaled up when it was
 * multiplexed (counting for only part of the time it was enabled); *raw:
 * the same without the windows' cost taken off. */
static double net_total(const struct osm_counters *c, const struct ev *e, double *raw)
{
	double scale = e->running < e->enabled ? (double)e->enabled / (double)e->running : 1.0;
	if (raw)
		*raw = (double)e->value * scale;
	return osm_counters_net((double)e->value, c->windows, e->cost) * scale;
}

/* Status and reason of event i when it has no figure; NULL when it has. */
static const char *no_figure(const struct osm_counters *c, int i, const char **reason)
{
	const struct ev *e = &c->ev[i];
	if (c->spec.def[i].derived) { /* ipc: both counted, and cycles not 0 */
		int cy = find_index(c, "cycles"), in = find_index(c, "instructions");
		if (cy >= 0 && in >= 0 && !no_figure(c, cy, reason) && !no_figure(c, in, reason) &&
		    net_total(c, &c->ev[cy], NULL) > 0)
			return NULL;
		*reason = "needs both cycles and instructions, and one of them is not counted here";
		return "unsupported";
	}
	*reason = e->reason;
	if (e->status == EV_UNSUPPORTED)
		return "unsupported";
	if (e->status == EV_NOT_COUNTED)
		return "not_counted";
	if (c->ops == 0 || e->enabled == 0) {
		*reason = c->enabled || c->ops == 0 ? "no operation was counted"
						    : "enabling the counters failed (PERF_EVENT_IOC_ENABLE)";
		return "not_counted";
	}
	if (e->running == 0) {
		*reason = "the PMU never had room for it (too many hardware events at once)";
		return "not_counted";
	}
	return NULL;
}

int osm_counters_get(const struct osm_counters *c, const char *name, double *per_op, double *window_cost)
{
	int i = find_index(c, name);
	const char *reason;
	if (i < 0 || c->spec.def[i].derived || no_figure(c, i, &reason))
		return -1;
	if (per_op)
		*per_op = net_total(c, &c->ev[i], NULL) / (double)c->ops;
	if (window_cost)
		*window_cost = c->ev[i].cost;
	return 0;
}

static void write_one(struct osm_json *j, const struct osm_counters *c, int i)
{
	const struct osm_counter_def *d = &c->spec.def[i];
	const struct ev *e = &c->ev[i];
	const char *reason = NULL, *status = no_figure(c, i, &reason);
	double value = NAN, total = NAN, raw = NAN, cost = NAN, running = NAN; /* NaN: null */
	if (!status && d->derived) {
		const struct ev *cy = &c->ev[find_index(c, "cycles")], *in = &c->ev[find_index(c, "instructions")];
		value = net_total(c, in, NULL) / net_total(c, cy, NULL);
		running = (double)cy->running / (double)cy->enabled;
	} else if (!status) {
		total = net_total(c, e, &raw);
		value = total / (double)c->ops;
		cost = e->cost;
		running = (double)e->running / (double)e->enabled;
	}
	osm_json_obj_begin(j, NULL);
	osm_json_str(j, "name", d->name);
	osm_json_str(j, "status", status ? status : "ok");
	osm_json_str(j, "unit", d->unit);
	osm_json_num(j, "value", value);
	osm_json_num(j, "total", total);
	osm_json_num(j, "counted", raw);
	osm_json_num(j, "window_cost", cost);
	osm_json_num(j, "running", running);
	osm_json_str(j, "reason", status ? reason : NULL);
	osm_json_obj_end(j);
}

void osm_counters_write(struct osm_json *j, const struct osm_counters *c)
{
	osm_json_int(j, "ops", (int64_t)c->ops);
	osm_json_int(j, "windows", (int64_t)c->windows);
	osm_json_num(j, "bytes_per_op", c->bytes_per_op > 0 ? c->bytes_per_op : NAN);
	osm_json_str(j, "note", c->note);
	osm_json_bool(j, "kernel", c->kernel);
	osm_json_str(j, "kernel_reason", c->kernel ? NULL : c->kernel_reason);
	osm_json_bool(j, "inherit", 1);
	osm_json_arr_begin(j, "counters");
	for (int i = 0; i < c->spec.n; i++)
		write_one(j, c, i);
	osm_json_arr_end(j);
}

void osm_counters_free(struct osm_counters *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->spec.n; i++)
		if (c->ev[i].fd >= 0)
			close(c->ev[i].fd);
	free(c);
}
