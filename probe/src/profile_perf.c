/* profile_perf.c - the "sample" back end of profile.h: one perf_event_open
 * sampling event (cycles where the PMU has them, else cpu-clock) on the
 * probe's measuring thread, with kernel and user call chains and
 * CLOCK_MONOTONIC timestamps, read from its ring buffer between timed batches
 * and folded into stacks when the profile ends.
 *
 * The timed region: the event runs from open (after setup()) to finish
 * (before teardown()), and a sample is kept only when its timestamp falls in
 * a timed batch (the intervals osm_profile_enable/disable mark). It is not
 * switched on and off around each batch: with short batches the switching
 * was most of what the profile saw (85 % of file.read's samples were in the
 * IPIs of per-CPU events being enabled).
 *
 * Only the measuring thread: events inherited by the processes a benchmark
 * forks (perf record's per-CPU inherited events) lose most of their samples
 * when the parent forks in a loop (task.fork touched_mib=64: perf record got
 * 84 samples of a 1.5 s run, per-thread 440), so children and threads are
 * not followed (docs/methods/hotspots.md). */
#include "profile_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup_trace.h"
#include "knob.h"
#include "symbols.h"

#if defined(__has_include)
#if __has_include(<linux/perf_event.h>)
#include <linux/perf_event.h>
#define OSM_HAVE_PERF_EVENT 1
#endif
#if __has_include(<linux/bpf.h>)
#include <linux/bpf.h>
#define OSM_HAVE_BPF_H 1
#endif
#endif

/* The exact spans of the BPF programs' JIT-compiled functions, from bpf(2)
 * (jited_ksyms, jited_func_lens): where it answers (CAP_SYS_ADMIN), no
 * [bpf] symbol's span is a guess, and code between two programs (a classic
 * BPF filter, never in kallsyms) is not credited to the one below it. */
#if defined(OSM_HAVE_BPF_H) && defined(__NR_bpf)
static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static int prog_info(int fd, struct bpf_prog_info *info)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(*info);
	a.info.info = (uint64_t)(uintptr_t)info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) ? -1 : 0;
}

/* One program's functions; 0, or -1 when bpf(2) refuses. */
static int prog_spans(struct osm_ksyms *k, int fd)
{
	enum { MAXF = 256 };
	uint64_t addrs[MAXF];
	uint32_t lens[MAXF];
	struct bpf_prog_info info;
	memset(&info, 0, sizeof(info));
	if (prog_info(fd, &info))
		return -1;
	uint32_t nf = info.nr_jited_ksyms < info.nr_jited_func_lens ? info.nr_jited_ksyms : info.nr_jited_func_lens;
	if (!nf)
		return 0;
	nf = nf < MAXF ? nf : MAXF;
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = info.nr_jited_func_lens = nf;
	info.jited_ksyms = (uint64_t)(uintptr_t)addrs;
	info.jited_func_lens = (uint64_t)(uintptr_t)lens;
	if (prog_info(fd, &info))
		return -1;
	for (uint32_t i = 0; i < nf && i < info.nr_jited_ksyms && i < info.nr_jited_func_lens; i++)
		if (addrs[i]) /* 0: addresses hidden from this user */
			osm_ksyms_set_end(k, addrs[i], addrs[i] + lens[i]);
	return 0;
}

int osm_prof_bpf_spans(struct osm_ksyms *k)
{
	union bpf_attr a;
	uint32_t id = 0;
	int n = 0;
	for (int guard = 0; k && guard < 100000; guard++) {
		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a))
			return errno == ENOENT ? n : -1; /* ENOENT: past the last; EPERM: not allowed */
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		int fd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue; /* gone meanwhile */
		int bad = prog_spans(k, fd);
		close(fd);
		if (bad)
			return -1;
		n++;
	}
	return n;
}
#else
int osm_prof_bpf_spans(struct osm_ksyms *k)
{
	(void)k;
	return -1;
}
#endif

#ifdef OSM_HAVE_PERF_EVENT

/* A distinct call chain: words[off] = nr, then nr ips. */
struct chain {
	uint64_t hash, off, count;
};

struct perf_state {
	int fd;
	void *base;
	size_t data_size; /* bytes of the data area (a power of 2) */
	uint64_t *iv;     /* timed batches: [start, end) CLOCK_MONOTONIC ns pairs, in order */
	size_t n_iv, cap_iv;
	uint64_t iv_start; /* the open batch's start */
	uint64_t outside;  /* samples outside every timed batch (dropped) */
	uint64_t *words;
	size_t n_words, cap_words;
	struct chain *tab;
	size_t tab_cap, tab_n;
	struct osm_ksyms *ks; /* the process's cached table (ks_cached): never freed with the profile */
	uint64_t outside_text; /* samples with a kernel frame no symbol holds */
};

/* kallsyms read once per process (0.15 s a time; run --profile opens 600
 * profiles), again when a profile has a frame outside it (a module or BPF
 * program loaded since). */
static struct osm_ksyms *ks_cached;
static int ks_refreshed;
static char ks_cached_why[256];

static int paranoid(void)
{
	return osm_knob_read_int(OSM_KNOB_PARANOID, 99);
}

static int open_event(const struct osm_profile *p, int cycles, int exclude_kernel)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	if (cycles) {
		a.type = PERF_TYPE_HARDWARE;
		a.config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
	}
	if (cycles) {
		a.freq = 1;
		a.sample_freq = (uint64_t)p->spec.frequency;
	} else {
		/* cpu-clock counts nanoseconds: a fixed period is the frequency
		 * exactly (frequency mode re-estimates the period at each tick,
		 * and a task that sleeps between short batches, such as a fork
		 * waiting for its child, got 2-4 samples a second from it). */
		a.sample_period = 1000000000u / (uint64_t)p->spec.frequency;
	}
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.disabled = 1;
	a.exclude_kernel = exclude_kernel ? 1 : 0;
	a.exclude_hv = 1;
	a.exclude_callchain_kernel = exclude_kernel ? 1 : 0;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *why(int err)
{
	static char buf[400];
	if (err == EACCES || err == EPERM)
		snprintf(buf, sizeof(buf), "perf_event_open is not allowed: perf_event_paranoid is %d; run as root, "
			 "or give CAP_PERFMON, or set kernel.perf_event_paranoid<=2 (user space only) or <=1 (kernel "
			 "stacks too): sysctl -w kernel.perf_event_paranoid=1 (%s)", paranoid(), strerror(err));
	else if (err == ENOSYS)
		snprintf(buf, sizeof(buf), "perf_event_open is not available (a kernel without CONFIG_PERF_EVENTS, "
			 "or blocked by seccomp)");
	else
		snprintf(buf, sizeof(buf), "perf_event_open: %s", strerror(err));
	return buf;
}

/* Kernel symbols, and the BPF programs' exact spans. Root is refused their
 * addresses only at kptr_restrict 2: then it is lowered to 1 (root sees
 * addresses) for the moment of reading, journalled (cleanup_trace.h), and
 * put back at once. */
static struct osm_ksyms *read_ksyms(char *why, size_t len)
{
	struct osm_ksyms *k = osm_ksyms_load(why, len);
	int kptr = osm_knob_read_int(OSM_KNOB_KPTR, -1);
	if (k || geteuid() != 0 || kptr < 2 || !strstr(why, "hides")) {
		osm_prof_bpf_spans(k);
		return k;
	}
	char old[16], err[256];
	snprintf(old, sizeof(old), "%d", kptr);
	if (!osm_tracestate_push("write", OSM_KNOB_KPTR, old, err, sizeof(err))) {
		if (!osm_knob_write(OSM_KNOB_KPTR, "1")) {
			k = osm_ksyms_load(why, len);
			osm_prof_bpf_spans(k); /* bpf(2) hides addresses at 2 too */
		}
		osm_tracestate_undo();
	}
	return k;
}

/* The cached table (read now if there is none, or if `fresh`). */
static struct osm_ksyms *load_ksyms(char *why, size_t len, int fresh)
{
	if (fresh || (!ks_cached && !ks_cached_why[0])) {
		osm_ksyms_free(ks_cached);
		snprintf(ks_cached_why, sizeof(ks_cached_why), "%s", "unreadable");
		ks_cached = read_ksyms(ks_cached_why, sizeof(ks_cached_why));
	}
	snprintf(why, len, "%s", ks_cached ? "" : ks_cached_why);
	return ks_cached;
}

static void perf_open(struct osm_profile *p)
{
	struct perf_state *s = calloc(1, sizeof(*s));
	if (!s) {
		osm_prof_unsupported(p, "out of memory");
		return;
	}
	p->impl = s;
	s->fd = -1;
	s->ks = load_ksyms(p->sym_reason, sizeof(p->sym_reason), 0);
	snprintf(p->sym_kernel, sizeof(p->sym_kernel), "%s",
		 s->ks ? "kallsyms" : strstr(p->sym_reason, "hides") ? "hidden" : "unavailable");
	/* The event: cycles when asked or (auto) when the PMU has it. */
	int fd = -1, err = 0, tried_cycles = p->spec.event != OSM_PROF_CPU_CLOCK;
	for (int excl = 0; excl < 2 && fd < 0; excl++) {
		if (tried_cycles) {
			fd = open_event(p, 1, excl);
			err = errno;
			if (fd >= 0) {
				p->event_name = "cycles";
			} else if (p->spec.event == OSM_PROF_CYCLES && err != EACCES && err != EPERM) {
				osm_prof_unsupported(p, "cycles cannot be sampled here: no hardware performance "
					 "monitoring unit counts them (virtual machines often have none): %s; "
					 "use --event cpu-clock", strerror(err));
				return;
			}
		}
		if (fd < 0 && p->spec.event != OSM_PROF_CYCLES) {
			fd = open_event(p, 0, excl);
			err = errno;
			p->event_name = "cpu-clock";
		}
		if (fd >= 0) {
			p->kernel = !excl;
			if (excl)
				snprintf(p->kernel_reason, sizeof(p->kernel_reason),
					 "kernel stacks are not allowed: perf_event_paranoid is %d; they need root, "
					 "CAP_PERFMON or kernel.perf_event_paranoid<=1 (sysctl -w "
					 "kernel.perf_event_paranoid=1); user-space stacks only", paranoid());
		} else if (err != EACCES && err != EPERM) {
			break;
		}
	}
	if (fd < 0) {
		osm_prof_unsupported(p, "%s", why(err));
		return;
	}
	if (!strcmp(p->event_name, "cpu-clock") && p->spec.event == OSM_PROF_AUTO)
		osm_prof_note(p, "cycles cannot be sampled here (no hardware PMU): sampled cpu-clock instead");
	s->fd = fd;
	/* The ring buffer: 16 MiB, or as much as the locked-memory limit
	 * (perf_event_mlock_kb for an unprivileged user) allows. */
	long page = sysconf(_SC_PAGESIZE);
	for (size_t pages = 4096; pages >= 8 && !s->base; pages /= 2) {
		void *b = mmap(NULL, (pages + 1) * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (b != MAP_FAILED) {
			s->base = b;
			s->data_size = pages * (size_t)page;
		}
	}
	if (!s->base) {
		osm_prof_unsupported(p, "cannot map the sampling buffer: %s (perf_event_mlock_kb is too small for "
				     "this user: raise it, or run as root)", strerror(errno));
		return;
	}
	/* Running from now on; samples outside the timed batches are dropped
	 * when read (the file's comment says why not switched per batch). */
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

static void perf_enable(struct osm_profile *p)
{
	struct perf_state *s = p->impl;
	s->iv_start = osm_prof_now_ns();
}

/* Whether t falls in a timed batch. */
static int in_batches(const struct perf_state *s, uint64_t t)
{
	size_t lo = 0, hi = s->n_iv; /* pairs */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->iv[2 * mid + 1] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n_iv && s->iv[2 * lo] <= t;
}

static uint64_t hash_words(const uint64_t *w, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 1099511628211ull;
	return h;
}

static int tab_grow(struct perf_state *s)
{
	size_t cap = s->tab_cap ? s->tab_cap * 2 : 4096;
	struct chain *t = calloc(cap, sizeof(*t));
	if (!t)
		return -1;
	for (size_t i = 0; i < s->tab_cap; i++) {
		if (!s->tab[i].count)
			continue;
		size_t k = s->tab[i].hash & (cap - 1);
		while (t[k].count)
			k = (k + 1) & (cap - 1);
		t[k] = s->tab[i];
	}
	free(s->tab);
	s->tab = t;
	s->tab_cap = cap;
	return 0;
}

/* Adds one sample's chain (nr, ips) to the table. */
static void add_chain(struct osm_profile *p, struct perf_state *s, const uint64_t *ips, uint64_t nr)
{
	size_t need = (size_t)nr + 1;
	if (s->n_words + need > s->cap_words) {
		size_t cap = s->cap_words ? s->cap_words * 2 : 1 << 16;
		while (cap < s->n_words + need)
			cap *= 2;
		uint64_t *w = realloc(s->words, cap * sizeof(*w));
		if (!w) {
			p->lost++;
			return;
		}
		s->words = w;
		s->cap_words = cap;
	}
	uint64_t *w = s->words + s->n_words;
	w[0] = nr;
	memcpy(w + 1, ips, (size_t)nr * sizeof(*ips));
	if ((s->tab_n + 1) * 2 > s->tab_cap && tab_grow(s)) {
		p->lost++;
		return;
	}
	uint64_t h = hash_words(w, need);
	size_t k = h & (s->tab_cap - 1);
	while (s->tab[k].count &&
	       (s->tab[k].hash != h || s->words[s->tab[k].off] != nr ||
		memcmp(s->words + s->tab[k].off, w, need * sizeof(*w))))
		k = (k + 1) & (s->tab_cap - 1);
	if (!s->tab[k].count) {
		s->tab[k] = (struct chain){h, s->n_words, 0};
		s->n_words += need;
		s->tab_n++;
	}
	s->tab[k].count++;
	p->samples++;
}

static void on_record(struct osm_profile *p, struct perf_state *s, const struct perf_event_header *h)
{
	const unsigned char *b = (const unsigned char *)(h + 1);
	if (h->type == PERF_RECORD_SAMPLE && h->size >= sizeof(*h) + 24) {
		uint64_t nr, t;
		memcpy(&t, b + 8, 8);
		memcpy(&nr, b + 16, 8);
		if (sizeof(*h) + 24 + nr * 8 > h->size)
			return;
		if (!in_batches(s, t)) {
			s->outside++;
			return;
		}
		uint64_t ips[PERF_MAX_STACK_DEPTH + 8];
		if (nr > sizeof(ips) / sizeof(ips[0]))
			nr = sizeof(ips) / sizeof(ips[0]);
		memcpy(ips, b + 24, nr * 8);
		add_chain(p, s, ips, nr);
	} else if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16) {
		uint64_t lost;
		memcpy(&lost, b + 8, 8);
		p->lost += lost;
	}
}

/* Reads every record in the ring buffer. */
static void drain(struct osm_profile *p, struct perf_state *s)
{
	struct perf_event_mmap_page *mp = s->base;
	unsigned char *data = (unsigned char *)s->base + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;
	static unsigned char rec[65536 + 8];
	while (tail + sizeof(struct perf_event_header) <= head) {
		size_t off = (size_t)(tail & (s->data_size - 1));
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(off + i) & (s->data_size - 1)];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(off + i) & (s->data_size - 1)];
		on_record(p, s, (const struct perf_event_header *)(void *)rec);
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static void perf_disable(struct osm_profile *p)
{
	struct perf_state *s = p->impl;
	uint64_t end = osm_prof_now_ns();
	if (s->n_iv == s->cap_iv) {
		size_t cap = s->cap_iv ? s->cap_iv * 2 : 4096;
		uint64_t *iv = realloc(s->iv, 2 * cap * sizeof(*iv));
		if (!iv) {
			osm_prof_note(p, "out of memory for the timed batches: later batches are not profiled");
			return;
		}
		s->iv = iv;
		s->cap_iv = cap;
	}
	s->iv[2 * s->n_iv] = s->iv_start;
	s->iv[2 * s->n_iv + 1] = end;
	s->n_iv++;
	/* Emptied between batches once a quarter full, so a long run does
	 * not overflow them; reading is never inside a timed batch. */
	struct perf_event_mmap_page *mp = s->base;
	if (__atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE) - mp->data_tail > s->data_size / 4)
		drain(p, s);
}

/* One chain as a folded stack: the process; user frames root first; kernel
 * frames root first. */
static void fold(struct osm_profile *p, struct perf_state *s, struct osm_usyms *us, const uint64_t *w,
		 uint64_t count)
{
	static char buf[65536];
	char name[512];
	size_t off = 0;
	uint64_t nr = w[0];
	const uint64_t *ips = w + 1;
	int outside = 0;
	osm_prof_frame(buf, sizeof(buf), &off, "osmeter-probe", 0);
	/* The two contexts' ranges in ips (leaf first in each). */
	int64_t ks = -1, ke = -1, usr = -1, ue = -1, *end = NULL;
	for (uint64_t i = 0; i < nr; i++) {
		if (ips[i] >= PERF_CONTEXT_MAX) {
			if (end)
				*end = (int64_t)i;
			end = NULL;
			if (ips[i] == PERF_CONTEXT_KERNEL) {
				ks = (int64_t)i + 1;
				end = &ke;
			} else if (ips[i] == PERF_CONTEXT_USER) {
				usr = (int64_t)i + 1;
				end = &ue;
			}
		}
	}
	if (end)
		*end = (int64_t)nr;
	for (int64_t i = ue - 1; usr >= 0 && i >= usr; i--) {
		osm_usyms_name(us, ips[i], name, sizeof(name));
		osm_prof_frame(buf, sizeof(buf), &off, name, 0);
	}
	for (int64_t i = ke - 1; ks >= 0 && i >= ks; i--) {
		osm_ksyms_name(s->ks, ips[i], name, sizeof(name));
		outside |= s->ks && !strcmp(name, OSM_KSYM_OUTSIDE);
		osm_prof_frame(buf, sizeof(buf), &off, name, 1);
	}
	if (outside)
		s->outside_text += count;
	if (osm_strmap_add(&p->stacks, buf, count))
		p->lost += count;
}

static void perf_finish(struct osm_profile *p)
{
	struct perf_state *s = p->impl;
	if (!s || !s->base)
		return;
	ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
	drain(p, s);
	p->left_out = s->outside;
	if (s->outside)
		osm_prof_note(p, "%llu samples outside the timed batches (warm-up, calibration, the harness between "
			      "batches) were left out", (unsigned long long)s->outside);
	struct osm_usyms *us = osm_usyms_load();
	uint64_t lost = p->lost; /* the ring buffer's; fold adds the stacks that did not fit */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < s->tab_cap; i++) {
			if (!s->tab[i].count)
				continue;
			fold(p, s, us, s->words + s->tab[i].off, s->tab[i].count);
		}
		if (pass || !s->outside_text || !s->ks || ks_refreshed++)
			break; /* read again at most once a process: seccomp's filters are never in it */
		osm_strmap_free(&p->stacks); /* read kallsyms again, name again */
		memset(&p->stacks, 0, sizeof(p->stacks));
		s->outside_text = 0;
		p->lost = lost;
		s->ks = load_ksyms(p->sym_reason, sizeof(p->sym_reason), 1);
	}
	osm_usyms_free(us);
	osm_prof_note_outside(p, s->outside_text);
}

static void perf_free(struct osm_profile *p)
{
	struct perf_state *s = p->impl;
	if (!s)
		return;
	if (s->base)
		munmap(s->base, s->data_size + (size_t)sysconf(_SC_PAGESIZE));
	if (s->fd >= 0)
		close(s->fd);
	free(s->words); /* s->ks is the process's cache */
	free(s->iv);
	free(s->tab);
	free(s);
	p->impl = NULL;
}

#else /* no linux/perf_event.h */

static void perf_open(struct osm_profile *p)
{
	osm_prof_unsupported(p, "this probe was built without linux/perf_event.h: no sampling");
}
static void perf_enable(struct osm_profile *p) { (void)p; }
static void perf_disable(struct osm_profile *p) { (void)p; }
static void perf_finish(struct osm_profile *p) { (void)p; }
static void perf_free(struct osm_profile *p) { (void)p; }

#endif

const struct osm_prof_ops osm_prof_perf_ops = {
	.open = perf_open,
	.enable = perf_enable,
	.disable = perf_disable,
	.finish = perf_finish,
	.free = perf_free,
};
