/* lebench_regions.c - LEBench's timed regions next to osmeter's, side by side
 * in one process, interleaved, with variants that switch one difference at a
 * time (issue 30, part 1). Driven by benchmarks/lebench_regions.py, which
 * builds this file with cc, runs it pinned to one CPU and prints the table.
 *
 * LEBench's regions as LinuxPerfStudy/LEBench TEST_DIR/OS_Eval.c has them
 * (read_test, read_warmup, write_test, page_fault_test, forkTest), written
 * anew here from that description (none of its code is copied):
 *   - its one test file, test_file.txt, is created by the first write test
 *     (open O_CREAT|O_WRONLY, no O_TRUNC) and only ever grows: one write() of
 *     4 KiB, then of 40 KiB, 4 000 KiB and 40 000 KiB, each at offset 0, as
 *     its small, mid, big and huge rows start; it is never written back on
 *     purpose;
 *   - write: malloc(size), fill with 'a', open, [clock] write [clock], close,
 *     free; read: malloc(size) untouched, open O_RDONLY, [clock] read
 *     [clock], close, free (after read_warmup: one write of the size, 1 000
 *     reads);
 *   - page fault: open, mmap(size, PROT_READ, MAP_PRIVATE), [clock] read of
 *     byte 0 [clock], munmap, close;
 *   - fork: a fresh 4 KiB MAP_SHARED page for the child's stamp, [clock]
 *     fork [clock in the parent | clock in the child, into that page], the
 *     child kills itself with SIGINT, the parent waits.
 * osmeter's regions as probe/src/bench/file_rw.c, mem_fault.c and
 * task_fork.c have them: its own file, written in 1 MiB (file.*) or 64 KiB
 * (mem.*) writes, opened once and lseek()ed to 0 before each call.
 *
 * Output (stdout): one line per sample, "row<TAB>variant<TAB>ns", then per
 * variant one line "#<TAB>row<TAB>variant<TAB>what" describing it, per
 * variant that filled its buffer with LEBench's -O0 loop one line
 * "fill<TAB>row<TAB>variant<TAB>ns" (the mean time of that fill), and per
 * test file "folios<TAB>file<TAB>first16<TAB>total<TAB>pages": the page
 * cache's folios covering its first 16 pages (fault-around's reach) and the
 * whole file (/proc/self/pagemap and /proc/kpageflags; -1 when not root).
 *
 * Usage: lebench_regions DIR [ROUNDS [PER_ROUND [ROW...]]]   (DIR: where the
 * test files go; rows: write4k write40k write4000k write40000k read4k read40k
 * fault40k fault4000k fault40000k epoll10 epoll1000 fork hugefork; default
 * all). The 4 000 KiB
 * and 40 000 KiB writes take a tenth of PER_ROUND samples (LEBench too runs
 * them BASE_ITER/2 and /4 times, against 10 * BASE_ITER for the small ones). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define KIB 1024
#define MIB (1024 * 1024)

static const char *g_dir;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* ---- test files ------------------------------------------------------- */

enum fill { GROWN, CHUNK_1M, CHUNK_64K, CHUNK_4K };
static const char *fill_name[] = {"grown", "1M", "64K", "4K"};

struct tfile {
	const char *name;
	char path[512];
	size_t size;
	enum fill fill;
	int synced;
	int sxid; /* mode 07755, as LEBench's file gets it (below) */
	int fd;   /* kept open (osmeter's way), O_RDWR */
};

/* One write() of len bytes of 'a' at offset 0 through a fresh descriptor
 * (LEBench's write_test and read_warmup: O_CREAT|O_WRONLY, no O_TRUNC). */
static void write_at0(const char *path, size_t len)
{
	char *b = malloc(len);
	if (!b)
		die("malloc");
	memset(b, 'a', len);
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || write(fd, b, len) != (ssize_t)len)
		die("write_at0");
	close(fd);
	free(b);
}

static void make_file(struct tfile *f, const char *name, size_t size, enum fill fill, int synced)
{
	snprintf(f->path, sizeof(f->path), "%s/%s.%s.%zu%s", g_dir, name, fill_name[fill], size / KIB,
		 synced ? ".synced" : "");
	f->name = name;
	f->size = size;
	f->fill = fill;
	f->synced = synced;
	unlink(f->path);
	if (fill == GROWN) {
		/* LEBench's history: each size's first write grows the file. */
		static const size_t steps[] = {4 * KIB, 40 * KIB, 4000 * KIB, 40000 * KIB};
		for (size_t i = 0; i < 4 && steps[i] <= size; i++)
			write_at0(f->path, steps[i]);
	} else {
		size_t chunk = fill == CHUNK_1M ? MIB : fill == CHUNK_64K ? 64 * KIB : 4 * KIB;
		int fd = open(f->path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		char *b = malloc(chunk);
		if (fd < 0 || !b)
			die("make_file");
		memset(b, 'a', chunk);
		for (size_t off = 0; off < size; off += chunk) {
			size_t n = size - off < chunk ? size - off : chunk;
			if (write(fd, b, n) != (ssize_t)n)
				die("fill");
		}
		free(b);
		close(fd);
	}
	f->fd = open(f->path, O_RDWR);
	if (f->fd < 0)
		die("open test file");
	if (synced && fdatasync(f->fd))
		die("fdatasync");
	char *b = malloc(size); /* in the page cache, every page */
	if (!b || pread(f->fd, b, size, 0) != (ssize_t)size)
		die("warm read");
	free(b);
}

/* Folios of the page cache over the file's first `limit` pages. */
static long folios(const struct tfile *f, size_t limit)
{
	size_t n = f->size / PAGE < limit ? f->size / PAGE : limit;
	int pm = open("/proc/self/pagemap", O_RDONLY), kf = open("/proc/kpageflags", O_RDONLY);
	char *m = mmap(NULL, f->size, PROT_READ, MAP_SHARED, f->fd, 0);
	long count = -1;
	if (pm >= 0 && kf >= 0 && m != MAP_FAILED) {
		count = 0;
		for (size_t i = 0; i < n && count >= 0; i++) {
			volatile char c = m[i * PAGE];
			(void)c;
			uint64_t e = 0, fl = 0;
			uintptr_t va = (uintptr_t)m + i * PAGE;
			if (pread(pm, &e, 8, (off_t)(va / PAGE * 8)) != 8 || !(e >> 63) || !(e & ((1ull << 55) - 1))) {
				count = -1;
				break;
			}
			if (pread(kf, &fl, 8, (off_t)((e & ((1ull << 55) - 1)) * 8)) != 8)
				count = -1;
			else if (!(fl & (1ull << 16))) /* not a compound tail: a folio starts here */
				count++;
		}
	}
	if (m != MAP_FAILED)
		munmap(m, f->size);
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	return count;
}

/* ---- variants ---------------------------------------------------------- */

enum op { OP_WRITE, OP_READ, OP_FAULT, OP_EPOLL, OP_FORK, OP_FORK_CHILD };

struct var {
	const char *row, *name, *what;
	enum op op;
	struct tfile *file;
	int open_each;     /* LEBench: open/close around each call; else lseek on the kept fd */
	int touched_mib;   /* fork: written private memory mapped around this variant's samples */
	int leb_child;     /* fork: LEBench's child (fresh MAP_SHARED stamp page, SIGINT) */
	int vmas;          /* fork: extra 4 KiB MAP_SHARED anonymous mappings */
	int slow_fill;     /* write: the buffer filled as LEBench's -O0 loop fills it */
	int epoll_n;       /* epoll: unconnected TCP sockets in the set */
	int leb_make;      /* epoll: LEBench's order (epoll_create, then socket + ctl per socket) */
	int fresh_events;  /* epoll: the events array malloc'd for each call (LEBench) */
	uint64_t fill_ns, fills; /* ... and how long those fills took */
	int on;
};

/* LEBench's fill as its -O0 build runs it: one byte per iteration, the
 * index and the pointer loaded from and stored to the stack each time (about
 * 10 x slower than memset: the buffer's first lines have time to leave the
 * caches before the write reads them). */
#if defined(__clang__)
__attribute__((optnone))
#else
__attribute__((optimize("O0")))
#endif
static void fill_o0(char *buf, int size)
{
	for (int i = 0; i < size; i++)
		buf[i] = 'a';
}

static uint64_t file_sample(struct var *v)
{
	struct tfile *f = v->file;
	char *buf = malloc(f->size);
	if (!buf)
		die("malloc");
	if (v->op == OP_WRITE && v->slow_fill) {
		uint64_t f0 = now_ns();
		fill_o0(buf, (int)f->size);
		v->fill_ns += now_ns() - f0;
		v->fills++;
	} else if (v->op == OP_WRITE) {
		memset(buf, 'a', f->size);
	}
	int fd = f->fd;
	if (v->open_each) {
		fd = open(f->path, v->op == OP_WRITE ? O_CREAT | O_WRONLY : O_RDONLY, 0644);
		if (fd < 0)
			die("open");
	} else if (lseek(fd, 0, SEEK_SET) < 0) {
		die("lseek");
	}
	uint64_t t0 = now_ns();
	ssize_t n = v->op == OP_WRITE ? write(fd, buf, f->size) : read(fd, buf, f->size);
	uint64_t t1 = now_ns();
	if (n != (ssize_t)f->size)
		die("read/write");
	if (v->open_each)
		close(fd);
	free(buf);
	return t1 - t0;
}

static uint64_t fault_sample(struct var *v)
{
	struct tfile *f = v->file;
	int fd = v->open_each ? open(f->path, O_RDONLY) : f->fd;
	if (fd < 0)
		die("open");
	char *m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		die("mmap");
	uint64_t t0 = now_ns();
	char c = *(volatile char *)m;
	uint64_t t1 = now_ns();
	if (c != 'a')
		die("fault: unexpected byte");
	munmap(m, f->size);
	if (v->open_each)
		close(fd);
	return t1 - t0;
}

/* osmeter's child stamps a slot of one standing shared page and _exits;
 * LEBench's stamps a page mapped for this fork and kills itself. */
static uint64_t *g_slot;

static uint64_t fork_sample(struct var *v)
{
	uint64_t *stamp = g_slot;
	if (v->leb_child) {
		stamp = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (stamp == MAP_FAILED)
			die("mmap stamp");
	}
	*g_slot = 0;
	uint64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid == 0) {
		*stamp = now_ns();
		if (v->leb_child)
			kill(getpid(), SIGINT);
		_exit(0);
	}
	uint64_t t1 = now_ns();
	if (pid < 0)
		die("fork");
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	uint64_t tc = *stamp;
	if (v->leb_child)
		munmap(stamp, PAGE);
	return v->op == OP_FORK ? t1 - t0 : tc - t0;
}

/* epoll_wait(0 timeout) over a fresh set of unconnected TCP sockets (each
 * ready: EPOLLHUP), made and closed outside the clock. LEBench makes the set
 * as epoll_create(n), then per socket socket() + epoll_ctl(ADD), and mallocs
 * the events array per call; osmeter (poll.c, make=per_call) makes every
 * socket, then epoll_create1 and the n epoll_ctl calls, into a standing
 * array. */
static struct epoll_event g_events[1000];

static uint64_t epoll_sample(struct var *v)
{
	int n = v->epoll_n, fds[1000], epfd;
	if (v->leb_make) {
		epfd = epoll_create(n);
		for (int i = 0; i < n; i++) {
			fds[i] = socket(AF_INET, SOCK_STREAM, 0);
			struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
			if (fds[i] < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, fds[i], &ev))
				die("socket/epoll_ctl");
		}
	} else {
		for (int i = 0; i < n; i++)
			if ((fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
				die("socket");
		epfd = epoll_create1(EPOLL_CLOEXEC);
		for (int i = 0; i < n; i++) {
			struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
			if (epoll_ctl(epfd, EPOLL_CTL_ADD, fds[i], &ev))
				die("epoll_ctl");
		}
	}
	if (epfd < 0)
		die("epoll_create");
	struct epoll_event *events = v->fresh_events ? malloc((size_t)n * sizeof(*events)) : g_events;
	if (!events)
		die("malloc");
	uint64_t t0 = now_ns();
	int got = epoll_wait(epfd, events, n, 0);
	uint64_t t1 = now_ns();
	if (got != n)
		die("epoll_wait: not every socket ready");
	if (v->fresh_events)
		free(events);
	close(epfd);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return t1 - t0;
}

/* Memory a fork variant holds while its samples run. */
struct held {
	char *mem;
	size_t len;
	void **vma;
	int n_vma;
};

static void hold(struct var *v, struct held *h)
{
	memset(h, 0, sizeof(*h));
	if (v->touched_mib) {
		h->len = (size_t)v->touched_mib * MIB;
		h->mem = mmap(NULL, h->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (h->mem == MAP_FAILED)
			die("mmap touched");
		for (size_t i = 0; i < h->len; i += PAGE)
			h->mem[i] = 1;
	}
	if (v->vmas) {
		h->vma = malloc(sizeof(void *) * (size_t)v->vmas);
		if (!h->vma)
			die("malloc");
		for (h->n_vma = 0; h->n_vma < v->vmas; h->n_vma++) {
			h->vma[h->n_vma] = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
			if (h->vma[h->n_vma] == MAP_FAILED)
				die("mmap vmas");
		}
	}
}

static void release(struct held *h)
{
	if (h->mem)
		munmap(h->mem, h->len);
	for (int i = 0; i < h->n_vma; i++)
		munmap(h->vma[i], PAGE);
	free(h->vma);
}

static uint64_t sample(struct var *v)
{
	switch (v->op) {
	case OP_WRITE:
	case OP_READ:
		return file_sample(v);
	case OP_FAULT:
		return fault_sample(v);
	case OP_EPOLL:
		return epoll_sample(v);
	default:
		return fork_sample(v);
	}
}

/* ---- the table of variants ---------------------------------------------- */

#define MAXF 32
static struct tfile g_files[MAXF];
static int g_nfiles;

static struct tfile *file_for(const char *name, size_t size, enum fill fill, int synced)
{
	for (int i = 0; i < g_nfiles; i++)
		if (g_files[i].size == size && g_files[i].fill == fill && g_files[i].synced == synced &&
		    !strcmp(g_files[i].name, name))
			return &g_files[i];
	if (g_nfiles == MAXF)
		die("too many files");
	struct tfile *f = &g_files[g_nfiles++];
	make_file(f, name, size, fill, synced);
	return f;
}

/* LEBench creates its file with open(O_CREAT | O_WRONLY) and no mode
 * argument, so the mode is whatever the register held: 07755 in our builds
 * (setuid, setgid, sticky; ls shows -rwsr-sr-t). A file with set-id bits is
 * never marked S_NOSEC, so every write() asks whether privileges must be
 * dropped (the security.capability xattr looked up). The same grown file,
 * given that mode. */
static struct tfile *sxid_file(size_t size)
{
	struct tfile *f = file_for("rwsxid", size, GROWN, 0);
	if (!f->sxid && fchmod(f->fd, 07755))
		die("fchmod");
	f->sxid = 1;
	return f;
}

#define MAXV 64
static struct var g_vars[MAXV];
static int g_nvars;

static void add(const char *row, const char *name, const char *what, enum op op, struct tfile *f, int open_each)
{
	if (g_nvars == MAXV)
		die("too many variants");
	g_vars[g_nvars++] = (struct var){row, name, what, op, f, open_each, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
}

/* The file rows: LEBench's region, osmeter's, and one difference at a time. */
static void add_rw(const char *row, enum op op, size_t size)
{
	const char *nm = "rw"; /* the read and write rows share their files, as LEBench's do */
	struct tfile *leb = file_for(nm, size, GROWN, 0), *osm = file_for(nm, size, CHUNK_1M, 1);
	if (op == OP_READ) /* LEBench's read_warmup: one write of the size through a fresh descriptor */
		write_at0(leb->path, size);
	add(row, "lebench", "LEBench: its grown file (never synced), open/close around each call", op, leb, 1);
	add(row, "osmeter", "osmeter: its file (1 MiB writes, fdatasync'd), lseek to 0 before each call", op, osm, 0);
	add(row, "leb+lseek", "LEBench's file, lseek instead of open/close", op, leb, 0);
	add(row, "osm+open", "osmeter's file, open/close instead of lseek", op, osm, 1);
	add(row, "osm+grownfile", "osmeter's way on a file grown as LEBench's (4K, 40K, ... writes), synced", op,
	    file_for(nm, size, GROWN, 1), 0);
	add(row, "osm+4Kfile", "osmeter's way on a file written in 4 KiB writes, synced", op,
	    file_for(nm, size, CHUNK_4K, 1), 0);
	add(row, "osm+unsynced", "osmeter's way on its file never written back", op, file_for(nm, size, CHUNK_1M, 0), 0);
	add(row, "lebench+mode", "LEBench's region on its file with the mode LEBench's open gives it (07755)", op,
	    sxid_file(size), 1);
	add(row, "leb+mode+lseek", "the same, lseek instead of open/close", op, sxid_file(size), 0);
	if (op == OP_WRITE) {
		add(row, "lebench+O0fill", "LEBench's region, its buffer filled by its -O0 byte loop (not memset)", op,
		    leb, 1);
		g_vars[g_nvars - 1].slow_fill = 1;
		add(row, "osm+O0fill", "osmeter's way, the buffer filled by LEBench's -O0 byte loop", op, osm, 0);
		g_vars[g_nvars - 1].slow_fill = 1;
	}
}

static void add_fault(const char *row, size_t size)
{
	struct tfile *leb = file_for("map", size, GROWN, 0), *osm = file_for("map", size, CHUNK_64K, 0);
	add(row, "lebench", "LEBench: its grown file, open/mmap per fault", OP_FAULT, leb, 1);
	add(row, "osmeter", "osmeter: its file (64 KiB writes), mmap on the kept fd", OP_FAULT, osm, 0);
	add(row, "leb+keptfd", "LEBench's file, mmap on a kept fd", OP_FAULT, leb, 0);
	add(row, "osm+grownfile", "osmeter's way on a file grown as LEBench's", OP_FAULT, file_for("map", size, GROWN, 1), 0);
	add(row, "osm+4Kfile", "osmeter's way on a file written in 4 KiB writes", OP_FAULT,
	    file_for("map", size, CHUNK_4K, 0), 0);
	add(row, "osm+1Mfile", "osmeter's way on a file written in 1 MiB writes", OP_FAULT,
	    file_for("map", size, CHUNK_1M, 0), 0);
}

static void add_fork(const char *row, enum op op, int vmas)
{
	static const int mib[] = {0, 3, 16};
	static const char *names[] = {"touched=0", "touched=3", "touched=16"};
	static const char *whats[] = {"osmeter: the parent's own memory only",
				      "the parent holds 3 MiB of written private memory more",
				      "the parent holds 16 MiB of written private memory more"};
	for (int i = 0; i < 3; i++) {
		add(row, names[i], whats[i], op, NULL, 0);
		g_vars[g_nvars - 1].touched_mib = mib[i];
		g_vars[g_nvars - 1].vmas = vmas;
	}
	add(row, "leb-child", "LEBench's child: a stamp page mapped per fork, SIGINT (touched=0)", op, NULL, 0);
	g_vars[g_nvars - 1].leb_child = 1;
	g_vars[g_nvars - 1].vmas = vmas;
}

static void add_epoll(const char *row, int n)
{
	static const struct {
		const char *name, *what;
		int leb_make, fresh_events;
	} vs[] = {
		{"lebench", "LEBench: epoll_create, then socket + epoll_ctl per socket; events malloc'd per call", 1, 1},
		{"osmeter", "osmeter: every socket, then epoll_create1 and the epoll_ctl calls; a standing events array",
		 0, 0},
		{"leb+standing", "LEBench's order, a standing events array", 1, 0},
		{"osm+malloc", "osmeter's order, the events array malloc'd per call", 0, 1},
	};
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		add(row, vs[i].name, vs[i].what, OP_EPOLL, NULL, 0);
		g_vars[g_nvars - 1].epoll_n = n;
		g_vars[g_nvars - 1].leb_make = vs[i].leb_make;
		g_vars[g_nvars - 1].fresh_events = vs[i].fresh_events;
	}
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The rows, in the order they run: the name on the command line, LEBench's
 * row, and what makes its variants (n: bytes, sockets or extra mappings). */
enum row_kind { ROW_RW, ROW_FAULT, ROW_EPOLL, ROW_FORK };
static const struct row {
	const char *key, *row;
	enum row_kind kind;
	enum op op;
	size_t n;
} g_rows[] = {
	{"write4k", "small write", ROW_RW, OP_WRITE, 4 * KIB},
	{"read4k", "small read", ROW_RW, OP_READ, 4 * KIB},
	{"write40k", "mid write", ROW_RW, OP_WRITE, 40 * KIB},
	{"write4000k", "big write", ROW_RW, OP_WRITE, 4000 * KIB},
	{"write40000k", "huge write", ROW_RW, OP_WRITE, 40000 * KIB},
	{"read40k", "mid read", ROW_RW, OP_READ, 40 * KIB},
	{"fault40k", "mid page fault", ROW_FAULT, OP_FAULT, 40 * KIB},
	{"fault4000k", "big page fault", ROW_FAULT, OP_FAULT, 4000 * KIB},
	{"fault40000k", "huge page fault", ROW_FAULT, OP_FAULT, 40000 * KIB},
	{"epoll10", "epoll", ROW_EPOLL, OP_EPOLL, 10},
	{"epoll1000", "epoll big", ROW_EPOLL, OP_EPOLL, 1000},
	{"fork", "fork", ROW_FORK, OP_FORK, 0},
	{"hugefork", "huge fork Child", ROW_FORK, OP_FORK_CHILD, 12000},
};

/* Every ROW argument names a row (exit 2 naming the rows otherwise). */
static void check_rows(int argc, char **argv)
{
	for (int i = 4; i < argc; i++) {
		size_t k = 0;
		while (k < ARRAY_LEN(g_rows) && strcmp(argv[i], g_rows[k].key))
			k++;
		if (k < ARRAY_LEN(g_rows))
			continue;
		fprintf(stderr, "%s: no row %s; rows:", argv[0], argv[i]);
		for (k = 0; k < ARRAY_LEN(g_rows); k++)
			fprintf(stderr, " %s", g_rows[k].key);
		fprintf(stderr, "\n");
		exit(2);
	}
}

static int wanted(int argc, char **argv, const char *row)
{
	if (argc <= 4)
		return 1;
	for (int i = 4; i < argc; i++)
		if (!strcmp(argv[i], row))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [ROUNDS [PER_ROUND [ROW...]]]\n", argv[0]);
		return 2;
	}
	check_rows(argc, argv);
	g_dir = argv[1];
	int rounds = argc > 2 ? atoi(argv[2]) : 10, per = argc > 3 ? atoi(argv[3]) : 200;
	struct rlimit nofile; /* 1 000 sockets beside the test files */
	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < 2048 && nofile.rlim_max >= 2048) {
		nofile.rlim_cur = 2048;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	g_slot = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_slot == MAP_FAILED)
		die("mmap slot");
	for (size_t i = 0; i < ARRAY_LEN(g_rows); i++) {
		const struct row *r = &g_rows[i];
		if (!wanted(argc, argv, r->key))
			continue;
		switch (r->kind) {
		case ROW_RW: add_rw(r->row, r->op, r->n); break;
		case ROW_FAULT: add_fault(r->row, r->n); break;
		case ROW_EPOLL: add_epoll(r->row, (int)r->n); break;
		case ROW_FORK: add_fork(r->row, r->op, (int)r->n); break;
		}
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < g_nvars; i++) {
			struct var *v = &g_vars[i];
			struct held h;
			int big = v->file && v->file->size >= 4000 * KIB;
			int n = v->op >= OP_FORK ? (per + 3) / 4 : big ? (per + 9) / 10 : per;
			hold(v, &h);
			for (int k = 0; k < n; k++)
				printf("%s\t%s\t%llu\n", v->row, v->name, (unsigned long long)sample(v));
			release(&h);
		}
	for (int i = 0; i < g_nvars; i++)
		printf("#\t%s\t%s\t%s\n", g_vars[i].row, g_vars[i].name, g_vars[i].what);
	for (int i = 0; i < g_nvars; i++)
		if (g_vars[i].fills)
			printf("fill\t%s\t%s\t%.0f\n", g_vars[i].row, g_vars[i].name,
			       (double)g_vars[i].fill_ns / (double)g_vars[i].fills);
	for (int i = 0; i < g_nfiles; i++) {
		struct tfile *f = &g_files[i];
		printf("folios\t%s\t%ld\t%ld\t%zu\n", strrchr(f->path, '/') + 1, folios(f, 16), folios(f, (size_t)-1),
		       f->size / PAGE);
		close(f->fd);
		unlink(f->path);
	}
	return 0;
}
