/* profile_int.h - inside the profiler (profile*): the profile's state, a
 * back end's operations, and the helpers both back ends use.
 *
 * Calls run one way: profile.c (profile.h's entry points) picks a back end
 * once, when the profile is made, and drives it through its operations;
 * the back ends, profile_perf.c ("sample") and profile_ftrace.c
 * ("function"), use profile_common.c (the string table, notes, frame
 * names, the clock); profile.c uses it too. Nothing calls up into profile.c. */
#ifndef OSM_PROFILE_INT_H
#define OSM_PROFILE_INT_H

#include "profile.h"

/* A string -> weight table (the folded stacks; the call counts). */
struct osm_strmap {
	char **keys;
	uint64_t *vals;
	size_t cap, n;
};

#define OSM_PROF_NOTES 6

struct osm_profile;

/* A back end (fio's ioengine_ops): open after setup(), enable/disable
 * around each timed batch, finish before teardown(), free at the end
 * (also of a profile never opened). Each keeps its state in p->impl. */
struct osm_prof_ops {
	void (*open)(struct osm_profile *p);
	void (*enable)(struct osm_profile *p);
	void (*disable)(struct osm_profile *p);
	void (*finish)(struct osm_profile *p);
	void (*free)(struct osm_profile *p);
};
extern const struct osm_prof_ops osm_prof_perf_ops;   /* mode "sample": profile_perf.c */
extern const struct osm_prof_ops osm_prof_ftrace_ops; /* mode "function": profile_ftrace.c */

struct osm_profile {
	struct osm_profile_spec spec;
	const char *status;      /* "ok", "unsupported", "empty" */
	char reason[600];
	const char *event_name;  /* "cpu-clock", "cycles", "ftrace:function" */
	const char *weight_unit; /* "samples", "ns" */
	int kernel;              /* kernel stacks recorded */
	char kernel_reason[300];
	char sym_kernel[16];     /* "kallsyms", "hidden", "unavailable" */
	char sym_reason[400];
	uint64_t samples, lost, ops, batches;
	uint64_t left_out;       /* samples outside every timed batch, dropped (sample mode) */
	double start_ns, end_ns, enabled_ns, t_enable;
	int active;              /* enabled now */
	struct osm_strmap stacks;
	struct osm_strmap calls;
	int have_calls;
	char notes[OSM_PROF_NOTES][300];
	int n_notes;
	const struct osm_prof_ops *backend; /* that of spec.mode */
	void *impl;                         /* its state */
};

/* ---- profile_common.c ---- */

int osm_strmap_add(struct osm_strmap *m, const char *key, uint64_t w); /* 0, -1: out of memory */
void osm_strmap_free(struct osm_strmap *m);

/* CLOCK_MONOTONIC in ns: the timed batches' marks (and perf's sample times, use_clockid). */
uint64_t osm_prof_now_ns(void);
void osm_prof_note(struct osm_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void osm_prof_unsupported(struct osm_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A frame name made safe for the folded format (';' and newlines become ':'
 * and ' '), with "_[k]" appended for kernel frames, appended to buf at *off. */
void osm_prof_frame(char *buf, size_t len, size_t *off, const char *name, int kernel);
/* A note on the samples with a kernel frame no symbol holds (symbols.h's
 * OSM_KSYM_OUTSIDE), naming what they likely are: nothing when there are none. */
void osm_prof_note_outside(struct osm_profile *p, uint64_t outside_text);

/* ---- profile_perf.c ---- */

struct osm_ksyms;
/* Gives each BPF program's JIT-compiled functions in k their exact span
 * (bpf(2): root): the programs read, or -1 where bpf(2) refuses. */
int osm_prof_bpf_spans(struct osm_ksyms *k);

/* ---- profile_ftrace.c ---- */

/* Unit tests: parses trace_pipe text as if read from the instance, the
 * measuring process being self_pid. 0, or -1: out of memory. */
int osm_prof_ftrace_feed_text(struct osm_profile *p, const char *text, int self_pid);

#endif
