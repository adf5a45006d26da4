/* profile_ftrace.c - the "function" back end of profile.h: the ftrace
 * function tracer in a private tracefs instance (instances/osmeter-<pid>),
 * limited to the probe's measuring process and what it forks
 * (set_ftrace_pid, options/function-fork), switched on around each timed
 * batch and marked with trace_marker lines "osmeter-begin" / "osmeter-end".
 *
 * The function tracer records each function's entry and its caller, not its
 * return: call counts are exact; each task's call stack is rebuilt from the
 * caller edges (an entry whose caller is on the stack pops to it), and the
 * time from one entry to the task's next traced event is given to the stack
 * of the first (self time; the text trace gives microseconds, so a single
 * gap is +-1 us but sums are unbiased). Tracing overhead is in every figure:
 * shares, not absolute times, are what this mode is for
 * (docs/methods/hotspots.md). Every change to tracefs is journalled
 * (cleanup_trace.h) and undone on every exit path. */
#include "profile_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup_trace.h"
#include "knob.h"

#define TRACEFS "/sys/kernel/tracing"
#define MAX_DEPTH 96
#define MAX_TASKS 256
#define FN_LEN 64

struct task {
	int pid;
	int64_t last_ns; /* last event's time, -1: none in this region */
	int depth;
	char stack[MAX_DEPTH][FN_LEN];
	char comm[20];
};

struct ftrace_state {
	char inst[256];
	int on_fd, marker_fd, pipe_fd;
	int self;
	int in_region;
	struct task *tasks;
	int n_tasks;
	char partial[8192]; /* a line cut by the last read */
	size_t n_partial;
};

static int write_file(const char *dir, const char *name, const char *value, char *err, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int ok = fd >= 0 && write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (!ok)
		snprintf(err, len, "cannot write '%s' to %s: %s", value, path, strerror(e));
	errno = e;
	return ok ? 0 : -1;
}

static int file_has(const char *path, const char *word)
{
	char buf[4096];
	if (osm_knob_read_text(path, buf, sizeof(buf)) < 0)
		return 0;
	for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
		if (!strcmp(t, word))
			return 1;
	return 0;
}

/* tracefs at TRACEFS, mounted (and journalled for unmounting) if it is not. */
static int have_tracefs(char *err, size_t len)
{
	struct stat st;
	if (!stat(TRACEFS "/available_tracers", &st))
		return 0;
	if (osm_tracestate_push("umount", TRACEFS, NULL, err, len))
		return -1;
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
		snprintf(err, len, "tracefs is not mounted at %s and cannot be mounted: %s", TRACEFS, strerror(errno));
		return -1;
	}
	return 0;
}

static void ftrace_open(struct osm_profile *p)
{
	char err[600];
	struct ftrace_state *s = calloc(1, sizeof(*s));
	if (!s || !(s->tasks = calloc(MAX_TASKS, sizeof(*s->tasks)))) {
		free(s);
		osm_prof_unsupported(p, "out of memory");
		return;
	}
	p->impl = s;
	s->on_fd = s->marker_fd = s->pipe_fd = -1;
	s->self = getpid();
	p->kernel = 1;
	p->have_calls = 1;
	snprintf(p->sym_kernel, sizeof(p->sym_kernel), "ftrace");
	if (geteuid() != 0) {
		osm_prof_unsupported(p, "the function tracer needs root (tracefs); use --profile sample");
		return;
	}
	osm_tracestate_recover();
	if (have_tracefs(err, sizeof(err))) {
		osm_prof_unsupported(p, "%s", err);
		osm_tracestate_undo();
		return;
	}
	if (!file_has(TRACEFS "/available_tracers", "function")) {
		osm_prof_unsupported(p, "this kernel has no ftrace function tracer (CONFIG_FUNCTION_TRACER)");
		osm_tracestate_undo();
		return;
	}
	if (file_has(TRACEFS "/available_tracers", "function_graph"))
		osm_prof_note(p, "function_graph is available but this mode uses the function tracer");
	snprintf(s->inst, sizeof(s->inst), TRACEFS "/instances/osmeter-%d", s->self);
	char kb[32];
	snprintf(kb, sizeof(kb), "%d", p->spec.buffer_kb > 0 ? p->spec.buffer_kb : 32768);
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", s->self);
	if (osm_tracestate_push("rmdir", s->inst, NULL, err, sizeof(err)) ||
	    (mkdir(s->inst, 0700) && (snprintf(err, sizeof(err), "cannot create the ftrace instance %s: %s", s->inst,
					       strerror(errno)), 1)) ||
	    write_file(s->inst, "tracing_on", "0", err, sizeof(err)) ||
	    write_file(s->inst, "buffer_size_kb", kb, err, sizeof(err)) ||
	    write_file(s->inst, "set_ftrace_pid", pid, err, sizeof(err)) ||
	    write_file(s->inst, "options/function-fork", "1", err, sizeof(err)) ||
	    write_file(s->inst, "current_tracer", "function", err, sizeof(err))) {
		if (errno == EPERM)
			osm_prof_unsupported(p, "%s: root is refused, so the kernel is locked down (lockdown=integrity "
					     "or confidentiality forbids the function tracer; dmesg says 'Kernel is "
					     "locked down'): use --profile sample", err);
		else
			osm_prof_unsupported(p, "%s", err);
		osm_tracestate_undo();
		return;
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/tracing_on", s->inst);
	s->on_fd = open(path, O_WRONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/trace_marker", s->inst);
	s->marker_fd = open(path, O_WRONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/trace_pipe", s->inst);
	s->pipe_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (s->on_fd < 0 || s->marker_fd < 0 || s->pipe_fd < 0) {
		osm_prof_unsupported(p, "cannot open the ftrace instance's files in %s: %s", s->inst, strerror(errno));
		return;
	}
}

static struct task *task_of(struct ftrace_state *s, int pid, const char *comm)
{
	for (int i = 0; i < s->n_tasks; i++)
		if (s->tasks[i].pid == pid)
			return &s->tasks[i];
	struct task *t = &s->tasks[s->n_tasks < MAX_TASKS ? s->n_tasks++ : pid % MAX_TASKS];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->last_ns = -1;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return t;
}

/* Gives the time since the task's last event to its current stack. */
static void attribute(struct osm_profile *p, struct ftrace_state *s, struct task *t, int64_t now)
{
	if (t->last_ns < 0 || !t->depth || now <= t->last_ns)
		return;
	static char buf[MAX_DEPTH * (FN_LEN + 5) + 64];
	char root[48];
	size_t off = 0;
	if (t->pid == s->self)
		snprintf(root, sizeof(root), "osmeter-probe");
	else
		snprintf(root, sizeof(root), "%s (child)", t->comm);
	osm_prof_frame(buf, sizeof(buf), &off, root, 0);
	for (int i = 0; i < t->depth; i++)
		osm_prof_frame(buf, sizeof(buf), &off, t->stack[i], 1);
	osm_strmap_add(&p->stacks, buf, (uint64_t)(now - t->last_ns));
}

static void push_call(struct task *t, const char *fn, const char *parent)
{
	int i = t->depth - 1;
	while (i >= 0 && strcmp(t->stack[i], parent))
		i--;
	if (i >= 0) {
		t->depth = i + 1;
	} else {
		t->depth = 0;
		snprintf(t->stack[t->depth++], FN_LEN, "%s", parent);
	}
	if (t->depth < MAX_DEPTH)
		snprintf(t->stack[t->depth++], FN_LEN, "%s", fn);
}

/* One line of trace_pipe: "comm-pid [cpu] flags sec.usec: what". */
static void on_line(struct osm_profile *p, struct ftrace_state *s, char *line)
{
	char *br = strstr(line, "] ");
	char *lb = br ? br : NULL;
	while (lb && lb > line && *lb != '[')
		lb--;
	if (!br || lb <= line)
		return;
	char *dash = lb;
	while (dash > line && *dash != '-')
		dash--;
	if (*dash != '-')
		return;
	int pid = atoi(dash + 1);
	char comm[20];
	char *c0 = line;
	while (*c0 == ' ')
		c0++;
	snprintf(comm, sizeof(comm), "%.*s", (int)(dash - c0 > 15 ? 15 : dash - c0), c0);
	char *ts = br + 2, *colon = strstr(ts, ": ");
	if (!colon)
		return;
	ts = colon;
	while (ts > br + 2 && ts[-1] != ' ')
		ts--;
	long long sec = 0, usec = 0;
	if (sscanf(ts, "%lld.%lld", &sec, &usec) != 2)
		return;
	int64_t now = (int64_t)sec * 1000000000 + (int64_t)usec * 1000;
	char *what = colon + 2;
	struct task *t = task_of(s, pid, comm);
	if (!strncmp(what, "tracing_mark_write: ", 20)) {
		if (strstr(what, "osmeter-begin")) {
			s->in_region = 1;
			for (int i = 0; i < s->n_tasks; i++)
				s->tasks[i].last_ns = -1;
			t->last_ns = now;
		} else if (strstr(what, "osmeter-end")) {
			attribute(p, s, t, now);
			s->in_region = 0;
		}
		return;
	}
	if (!s->in_region)
		return;
	char *arrow = strstr(what, " <-");
	if (!arrow)
		return;
	*arrow = 0;
	char *parent = arrow + 3, *nl = strchr(parent, '\n');
	if (nl)
		*nl = 0;
	attribute(p, s, t, now);
	push_call(t, what, parent);
	t->last_ns = now;
	p->samples++;
	char key[FN_LEN + 8];
	snprintf(key, sizeof(key), "%.*s_[k]", FN_LEN - 1, what);
	osm_strmap_add(&p->calls, key, 1);
}

/* Lines of text, the last one possibly cut (kept for the next call). */
static void feed(struct osm_profile *p, struct ftrace_state *s, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (s->n_partial + 1 < sizeof(s->partial))
				s->partial[s->n_partial++] = buf[i];
			continue;
		}
		s->partial[s->n_partial] = 0;
		on_line(p, s, s->partial);
		s->n_partial = 0;
	}
}

static void drain(struct osm_profile *p, struct ftrace_state *s)
{
	char buf[65536];
	ssize_t n;
	while ((n = read(s->pipe_fd, buf, sizeof(buf))) > 0)
		feed(p, s, buf, (size_t)n);
}

int osm_prof_ftrace_feed_text(struct osm_profile *p, const char *text, int self_pid)
{
	struct ftrace_state *s = p->impl;
	if (!s) {
		if (!(s = calloc(1, sizeof(*s))) || !(s->tasks = calloc(MAX_TASKS, sizeof(*s->tasks)))) {
			free(s);
			return -1;
		}
		s->on_fd = s->marker_fd = s->pipe_fd = -1;
		p->impl = s;
		p->have_calls = 1;
	}
	s->self = self_pid;
	feed(p, s, text, strlen(text));
	return 0;
}

static void say(int fd, const char *what)
{
	ssize_t r = write(fd, what, strlen(what));
	(void)r;
}

static void ftrace_enable(struct osm_profile *p)
{
	struct ftrace_state *s = p->impl;
	say(s->on_fd, "1");
	say(s->marker_fd, "osmeter-begin");
}

static void ftrace_disable(struct osm_profile *p)
{
	struct ftrace_state *s = p->impl;
	say(s->marker_fd, "osmeter-end");
	say(s->on_fd, "0");
	drain(p, s);
}

/* Events the ring buffer dropped (per_cpu/cpu*\/stats: "overrun: N"). */
static uint64_t overruns(const struct ftrace_state *s)
{
	uint64_t total = 0;
	for (int cpu = 0; cpu < 4096; cpu++) {
		char path[512], line[128];
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", s->inst, cpu);
		FILE *f = fopen(path, "r");
		if (!f)
			break;
		unsigned long long v;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %llu", &v) == 1)
				total += v;
		fclose(f);
	}
	return total;
}

static void ftrace_finish(struct osm_profile *p)
{
	struct ftrace_state *s = p->impl;
	if (!s || s->pipe_fd < 0)
		return;
	drain(p, s);
	p->lost = overruns(s);
	if (p->lost)
		osm_prof_note(p, "the trace buffer overran: %llu events lost; give a larger --buffer-kb",
			      (unsigned long long)p->lost);
	osm_prof_note(p, "function mode: call counts are exact; times are entry-to-next-event gaps "
		      "with tracing overhead in them (compare shares, not absolute times)");
}

static void ftrace_free(struct osm_profile *p)
{
	struct ftrace_state *s = p->impl;
	if (!s)
		return;
	if (s->on_fd >= 0)
		say(s->on_fd, "0");
	if (s->inst[0] && s->pipe_fd >= 0) {
		char err[200];
		write_file(s->inst, "current_tracer", "nop", err, sizeof(err));
	}
	if (s->on_fd >= 0)
		close(s->on_fd);
	if (s->marker_fd >= 0)
		close(s->marker_fd);
	if (s->pipe_fd >= 0)
		close(s->pipe_fd);
	osm_tracestate_undo();
	free(s->tasks);
	free(s);
	p->impl = NULL;
}

const struct osm_prof_ops osm_prof_ftrace_ops = {
	.open = ftrace_open,
	.enable = ftrace_enable,
	.disable = ftrace_disable,
	.finish = ftrace_finish,
	.free = ftrace_free,
};
