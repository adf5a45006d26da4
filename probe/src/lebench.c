/* lebench.c - see lebench.h. One row per figure LEBench prints, in its
 * order. A row whose family is not built yet is listed as pending and
 * left out of the suite; the catalogue check refuses a row whose family
 * exists but whose benchmark or parameters do not. */
#include "lebench.h"

#include "compiler.h"

/* LEBench's file sizes: PAGE_SIZE x 1, 10, 1000, 10000. */
#define SMALL "size=4K"
#define MID "size=40K"
#define BIG "size=4000K"
#define HUGE "size=40000K"
/* file.read, file.write: a buffer malloc'd (and for write filled) before
 * each call and freed after it, the file opened and closed around each call,
 * the file grown as LEBench grows its test file, as LEBench. */
#define MALLOC ",buffer=malloc,open=per_call,fill=lebench"
/* mem.mmap, mem.munmap, mem.page_fault: one call per clock pair. */
#define G1 ",group=1"
/* mem.page_fault: the file grown as LEBench's (its folios). */
#define GROWN ",fill=lebench"

/* LEBench's one test file only grows: one write() at offset 0 of each size
 * as its rows of that size start. */
#define GROWN_FILE "the test file (grown by one write at offset 0 of each smaller LEBench size first, so its " \
	"head is in the small page-cache folios of those writes)"
#define WRITE_REGION "write() of the whole size at offset 0 of " GROWN_FILE ", in the page cache, opened O_WRONLY " \
	"without O_TRUNC (its cached pages are overwritten), from a buffer malloc'd and filled with 'a' just before; " \
	"open, close and free outside the clock"
#define READ_REGION "read() of the whole size from offset 0 of " GROWN_FILE ", in the page cache, into a buffer " \
	"malloc'd just before and never touched (where malloc maps fresh memory, as glibc always does at " \
	"40 000 KiB, the read takes a page fault per page of it); open, close and free outside the clock"
#define RW_NOTE "one call per clock pair, as LEBench; a sample averages a calibrated batch of such timings when " \
	"they are short. The row runs open=per_call and fill=lebench, LEBench's set-up; the defaults are osmeter's " \
	"view: open=once (one descriptor, lseek()ed to 0 before each call: a just-opened file's call costs more) " \
	"and fill=chunks (the file written in 1 MiB writes: large folios, at 40 KiB 1.05-1.4 x cheaper). " \
	"osmeter's file is its own, in the work directory, written back once in setup (LEBench's never is: " \
	"no difference measured)"
#define READ_NOTE RW_NOTE ". file.read with the default buffer=reused reads into one buffer touched in setup " \
	"(osmeter's view: no page faults of a fresh buffer); extra.minflt_per_call counts them"
#define WRITE_NOTE RW_NOTE ". The overwritten pages stay dirty until the kernel's writeback cleans them, as in " \
	"LEBench: a sample that re-dirties clean pages costs more. LEBench creates its file with open(O_CREAT) and no " \
	"mode, so the mode is undefined (07755, setuid and setgid, in the runs here): run as root, every write of " \
	"such a file checks for privileges to drop, about 0.4 us more (benchmarks/lebench_regions.py), an artefact " \
	"of LEBench's program that osmeter does not reproduce (docs/lebench.md)"
#define BIG_WRITE_NOTE WRITE_NOTE ". LEBench fills its buffer with a byte loop built -O0 (3.6 ms at 4 000 KiB, " \
	"memset 0.1 ms): by the time its write reads the buffer, part of it has left the caches, and on the 2-vCPU " \
	"EPYC guest its big write took 2.5 x the same region after memset (benchmarks/lebench_regions.py, " \
	"lebench+O0fill); osmeter fills with memset and does not reproduce that -O0 artefact, as for the cpu row"
#define MMAP_REGION "mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) of the test file, in the page cache; " \
	"munmap and close outside the clock"
#define MUNMAP_REGION "munmap() of a PROT_WRITE, MAP_PRIVATE mapping of the test file whose every byte was " \
	"written first (a private copy of every page to free)"
#define FAULT_REGION "the first read of byte 0 of a fresh PROT_READ, MAP_PRIVATE mapping of " GROWN_FILE \
	", in the page cache (one minor fault; fault-around maps the pages around it, across those folios)"
#define MAP_GROUP_NOTE "one call per clock pair, as LEBench; a sample averages a calibrated batch of such " \
	"timings when they are short. mem.mmap/mem.munmap with the default group=8 time 8 calls per clock " \
	"pair (osmeter's view, the clock's cost spread)"
#define FAULT_NOTE "one fault per clock pair, right after its mapping's mmap, as LEBench; a sample averages " \
	"a calibrated batch of such timings. The row runs fill=lebench, LEBench's file; the default fill=chunks " \
	"writes it in 64 KiB writes (large folios: fault-around maps one or two, about 1.2 x cheaper from 40 KiB). " \
	"mem.page_fault with the default group=8 times 8 faults of 8 fresh mappings back to back (a fault among " \
	"8: the fault path stays warm, a different quantity)"
#define SEND_REGION(n, k) "syscall(SYS_sendto) of " n " with MSG_DONTWAIT on the client end of a Unix stream " \
	"connection (default buffer sizes) whose server, a child forked for this connection that bound the " \
	"socket's path, listened and accepted, never reads; per connection one untimed send of the same size, " \
	"then " k ", so the unread messages pile up; then a new child and connection (outside the clock)"
#define RECV_REGION(n, k, k1) "syscall(SYS_recvfrom) of " n " with MSG_DONTWAIT on the accepted end of a Unix " \
	"stream connection into which the client, a child forked for this connection, has already sent " k1 \
	" messages of that size; per connection one untimed recv, then " k " timed; then a new listening " \
	"socket, child and connection (outside the clock)"
#define SENDRECV_NOTE "osmeter times the calls of one connection with one clock pair (one call per pair when a " \
	"call takes a microsecond or more), --lebench-exact one call per pair as LEBench, and waits for the " \
	"server's accept before the first timed send; a failed or short call is an error, not a figure. LEBench's " \
	"own runs remove /TEST_DIR/socket instead of the socket they bound, so after the first connection its " \
	"binds and connects fail and it times failing calls (docs/lebench.md)"
#define SELECT_REGION(n) "syscall(SYS_select, maxfd + 1, read set, NULL, NULL, zero timeval) on " n " unconnected " \
	"TCP sockets (socket(AF_INET, SOCK_STREAM, 0), never bound or connected) in the read set; each reports " \
	"ready (a TCP socket in state CLOSE polls as POLLHUP, which select counts as readable) and LEBench checks " \
	"the return is " n "; the sockets are created before the clock and closed after it, for every sample"
#define POLL_REGION(n) "syscall(SYS_poll, pollfds, " n ", 0) on " n " unconnected TCP sockets asked for POLLIN; " \
	"each reports POLLHUP, so is ready, and LEBench checks the return is " n "; the sockets are created " \
	"before the clock and closed after it, for every sample"
#define EPOLL_REGION(n) "epoll_wait(epfd, events, " n ", 0) on a level-triggered epoll set (epoll_create) of " n \
	" unconnected TCP sockets added with EPOLLIN; each reports EPOLLHUP, so is ready, and LEBench checks the " \
	"return is " n "; the set (epoll_create, then per socket socket() and epoll_ctl(ADD)) and the events array " \
	"(malloc) are made before the clock and freed after it, for every sample"
/* poll.*: a new set for every call, as LEBench (make=per_call). */
#define FRESH ",make=per_call"
#define EPOLL_NOTE "one call per clock pair over descriptors made for it, as LEBench; a sample averages a " \
	"calibrated batch of such timings when they are short. poll.* with the default make=once time calls over " \
	"one standing set instead (warm in cache: 1.1-2.5 x cheaper at 1 000)"
#define POLL_NOTE EPOLL_NOTE ". LEBench calls syscall(SYS_select) and syscall(SYS_poll), osmeter the libc " \
	"wrappers (arm64 has neither system call), which on x86-64 glibc enter pselect6 (the same " \
	"core_sys_select, no signal mask) and poll"
#define FORK_REGION "fork() until it returns in the parent; the child stamps the clock and kills itself, " \
	"the parent waits for it outside the clock"
#define FORK_CHILD_REGION "from just before fork() in the parent to the child's first clock read"
#define FORK_NOTE "the parent is the probe, a small statically linked process; LEBench forks its own, " \
	"dynamically linked one, whose loader and libc mappings the fork copies too: 1.1-1.25 x the fork of a static " \
	"parent, side by side (benchmarks/lebench_regions.py --static). Its written memory counts as well " \
	"(task.fork touched_mib=N): 0.4 MiB at its fork test with BASE_ITER 1000, more at its default, whose sample " \
	"arrays stay in its heap"
#define BIG_FORK_NOTE "the same timed region; fork of 6 000 or 12 000 mappings varies widely (a CV of 30 % and " \
	"more), and LEBench's k-best, its first run of 5 samples within 5 % of 5 000, sits in the low tail: compare " \
	"it with osmeter's k-best of --lebench-exact, and medians with medians"
#define BATCH_NOTE "osmeter times a calibrated batch of calls per clock pair, so the clock read that " \
	"LEBench's every sample contains is spread over the batch; --lebench-exact times one call per pair"

const struct osm_lebench_row osm_lebench_rows[] = {
	{"ref", "cpu.timer_overhead", "source=monotonic",
	 "two clock_gettime(CLOCK_MONOTONIC) calls back to back: their difference",
	 "osmeter reads the clock batch + 1 times back to back and divides the span by batch (the same "
	 "read period, averaged); --lebench-exact takes two reads, as LEBench",
	 1, 1000000},
	{"cpu", "cpu.fdiv_chain", NULL,
	 "500 000 dependent double divisions x = x / 3232.32 from x = 9903290.789798798, the whole loop",
	 "LEBench is built with -O0, so each of its divisions also stores x to the stack and loads it back, "
	 "a store-to-load forwarding added to the dependent chain; osmeter's chain stays in a register",
	 1, 100},
	{"getpid", "syscall.null", NULL, "syscall(SYS_getpid) between two clock_gettime(CLOCK_MONOTONIC) calls",
	 BATCH_NOTE, 1, 1000000},
	{"context switch", "ctxsw.pipe_rtt", NULL,
	 "1 000 round trips of 1 byte through two pipes between a parent and its child, both pinned to "
	 "CPU 0 at nice -20, divided by 1 000: one round trip (two switches, two 1-byte writes, two reads)",
	 "both parties are pinned to the probe's CPU, not CPU 0, and nice -20 is not applied; osmeter "
	 "calibrates the round trips per clock pair, --lebench-exact times 1 000 as LEBench. LEBench's CSV "
	 "spells the row 'context siwtch'",
	 1000, 100000},
	{"send", "ipc.unix_send", "size=1,per_conn=50", SEND_REGION("1 byte", "50 timed"), SENDRECV_NOTE, 1,
	 100000},
	{"recv", "ipc.unix_recv", "size=1,per_conn=50", RECV_REGION("1 byte", "50", "51"), SENDRECV_NOTE, 1, 100000},
	{"big send", "ipc.unix_send", "size=96000,per_conn=1", SEND_REGION("96 000 bytes", "1 timed"), SENDRECV_NOTE,
	 1, 10000},
	{"big recv", "ipc.unix_recv", "size=96000,per_conn=1", RECV_REGION("96 000 bytes", "1", "2"), SENDRECV_NOTE, 1,
	 10000},
	{"fork", "task.fork", NULL, FORK_REGION, FORK_NOTE, 1, 20000},
	{"fork Child", "task.fork_child", NULL, FORK_CHILD_REGION, FORK_NOTE, 1, 20000},
	{"thr create", "task.thread_create", NULL,
	 "pthread_create() until it returns in the creating thread; the join is outside the clock", NULL, 1,
	 50000},
	{"thr create Child", "task.thread_child", NULL,
	 "from just before pthread_create() to the new thread's first clock read", NULL, 1, 50000},
	{"big fork", "task.fork", "vmas=6000",
	 FORK_REGION ", the parent holding 6 000 extra untouched 4 KiB MAP_SHARED anonymous mappings", BIG_FORK_NOTE, 1,
	 5000},
	{"big fork Child", "task.fork_child", "vmas=6000",
	 FORK_CHILD_REGION ", the parent holding 6 000 extra untouched 4 KiB MAP_SHARED anonymous mappings",
	 BIG_FORK_NOTE, 1, 5000},
	{"huge fork", "task.fork", "vmas=12000",
	 FORK_REGION ", the parent holding 12 000 extra untouched 4 KiB MAP_SHARED anonymous mappings", BIG_FORK_NOTE, 1,
	 5000},
	{"huge fork Child", "task.fork_child", "vmas=12000",
	 FORK_CHILD_REGION ", the parent holding 12 000 extra untouched 4 KiB MAP_SHARED anonymous mappings",
	 BIG_FORK_NOTE, 1, 5000},

	{"small write", "file.write", SMALL MALLOC, WRITE_REGION, WRITE_NOTE, 1, 100000},
	{"small read", "file.read", SMALL MALLOC, READ_REGION, READ_NOTE, 1, 100000},
	{"small mmap", "mem.mmap", SMALL G1, MMAP_REGION, MAP_GROUP_NOTE, 1, 100000},
	{"small munmap", "mem.munmap", SMALL G1, MUNMAP_REGION, MAP_GROUP_NOTE, 1, 100000},
	{"small page fault", "mem.page_fault", SMALL G1 GROWN, FAULT_REGION, FAULT_NOTE, 1, 50000},
	{"mid write", "file.write", MID MALLOC, WRITE_REGION, WRITE_NOTE, 1, 100000},
	{"mid read", "file.read", MID MALLOC, READ_REGION, READ_NOTE, 1, 100000},
	{"mid mmap", "mem.mmap", MID G1, MMAP_REGION, MAP_GROUP_NOTE, 1, 100000},
	{"mid munmap", "mem.munmap", MID G1, MUNMAP_REGION, MAP_GROUP_NOTE, 1, 100000},
	{"mid page fault", "mem.page_fault", MID G1 GROWN, FAULT_REGION, FAULT_NOTE, 1, 50000},
	{"big write", "file.write", BIG MALLOC, WRITE_REGION, BIG_WRITE_NOTE, 1, 5000},
	{"big read", "file.read", BIG MALLOC, READ_REGION, READ_NOTE, 1, 10000},
	{"big mmap", "mem.mmap", BIG G1, MMAP_REGION, MAP_GROUP_NOTE, 1, 100000},
	{"big munmap", "mem.munmap", BIG G1, MUNMAP_REGION, MAP_GROUP_NOTE, 1, 2500},
	{"big page fault", "mem.page_fault", BIG G1 GROWN, FAULT_REGION, FAULT_NOTE, 1, 50000},
	{"huge write", "file.write", HUGE MALLOC, WRITE_REGION, WRITE_NOTE, 1, 2500},
	{"huge read", "file.read", HUGE MALLOC, READ_REGION, READ_NOTE, 1, 10000},
	{"huge mmap", "mem.mmap", HUGE G1, MMAP_REGION, MAP_GROUP_NOTE, 1, 100000},
	{"huge munmap", "mem.munmap", HUGE G1, MUNMAP_REGION, MAP_GROUP_NOTE, 1, 2500},
	{"huge page fault", "mem.page_fault", HUGE G1 GROWN, FAULT_REGION, FAULT_NOTE, 1, 50000},

	{"select", "poll.select", "nfds=10" FRESH, SELECT_REGION("10"), POLL_NOTE, 1, 100000},
	{"poll", "poll.poll", "nfds=10" FRESH, POLL_REGION("10"), POLL_NOTE, 1, 100000},
	{"epoll", "poll.epoll", "nfds=10" FRESH, EPOLL_REGION("10"), EPOLL_NOTE, 1, 100000},
	{"select big", "poll.select", "nfds=1000" FRESH, SELECT_REGION("1 000"), POLL_NOTE, 1, 10000},
	{"poll big", "poll.poll", "nfds=1000" FRESH, POLL_REGION("1 000"), POLL_NOTE, 1, 10000},
	{"epoll big", "poll.epoll", "nfds=1000" FRESH, EPOLL_REGION("1 000"), EPOLL_NOTE, 1, 10000},
};
const size_t osm_n_lebench_rows = ARRAY_SIZE(osm_lebench_rows);
