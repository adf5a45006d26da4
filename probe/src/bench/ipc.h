/* ipc.h - what the parts of the ipc family (ipc.c, ipc_party.c, ipc_lat.c,
 * ipc_bw.c, ipc_lebench.c) share; not for use outside bench/ipc*.c.
 * Method: docs/methods/ipc.md. */
#ifndef OSM_BENCH_IPC_H
#define OSM_BENCH_IPC_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "../bench.h"
#include "../procs.h"

#define IPC_FDS 4

/* What the SIGCHLD handler does, while a partner process runs, so that a
 * probe blocked on a channel that would never report the partner's death
 * wakes up: shut its socket down (a datagram socket gets no EOF when its
 * peer closes), or add IPC_EFD_DEAD to its eventfd. Pipes, FIFOs and
 * stream sockets need nothing: the partner's death closes their other end. */
enum ipc_unblock { IPC_UNBLOCK_NONE, IPC_UNBLOCK_SHUTDOWN, IPC_UNBLOCK_EVENTFD };

/* eventfd values: a counter at or above this is not a wake-up but "the
 * partner died" (probe side) or "stop" (a partner thread's side). */
#define IPC_EFD_MARK ((uint64_t)1 << 40)

/* The probe and its partner: a forked process (mode=process) or a thread
 * (mode=thread), pinned where the placement says, and the descriptors each
 * side keeps. */
struct ipc_party {
	int threads;             /* mode=thread */
	int cpu;                 /* the partner's CPU */
	int mine[IPC_FDS];       /* the probe's descriptors (-1: unused); a partner process closes them */
	int theirs[IPC_FDS];     /* the partner's; the probe closes them once a partner process runs */
	int shared[IPC_FDS];     /* both sides' (eventfds) */
	int (*body)(void *arg);  /* the partner's life; 0 = a clean end */
	void *arg;
	void (*wake)(void *arg); /* optional: stops a partner thread blocked where closing cannot reach */
	enum ipc_unblock unblock;
	int unblock_fd;          /* the probe's descriptor the SIGCHLD handler acts on */
	struct osm_children children;
	pthread_t th;
	int have_thread;
	int signals_set;         /* SIGPIPE and SIGCHLD dispositions saved below */
	struct sigaction old_pipe, old_chld;
};

/* ipc_party.c */
/* Reads `placement`, sets ctx->placement and *cpu, the partner's CPU;
 * OSM_SKIP for cross_cpu on a one-CPU machine. */
int ipc_placement(struct osm_ctx *ctx, int *cpu);
void ipc_party_init(struct ipc_party *p);
/* ipc_placement() into p->cpu, and `mode` when has_mode. */
int ipc_party_configure(struct osm_ctx *ctx, struct ipc_party *p, int has_mode);
/* Ignores SIGPIPE (a write to a dead partner then fails with EPIPE instead
 * of ending the probe) until ipc_party_stop(), installs the SIGCHLD
 * handler (process mode) and starts the partner. */
int ipc_party_start(struct osm_ctx *ctx, struct ipc_party *p);
/* Stops the partner (killed and reaped, or woken and joined), closes every
 * descriptor of the lists and restores the signal dispositions. */
void ipc_party_stop(struct ipc_party *p);
/* An error for a failed transfer: says that the partner process died (and
 * how) when it did, else what failed; err is the errno (0: end of file). */
int ipc_party_fail(struct osm_ctx *ctx, struct ipc_party *p, const char *what, int err);
/* Its two messages: the partner's death (a wait status), a failed call. */
int ipc_died(struct osm_ctx *ctx, pid_t pid, int status, const char *what);
int ipc_fail_errno(struct osm_ctx *ctx, const char *what, int err);
/* SIGPIPE ignored (the old disposition saved) and restored. */
int ipc_sigpipe_ignore(struct osm_ctx *ctx, struct sigaction *old);
void ipc_sigpipe_restore(const struct sigaction *old);
/* Waits up to timeout_ms for fd to be readable, checking every 100 ms that
 * a partner process still lives. 0, or OSM_ERROR with ctx->msg set. */
int ipc_party_wait_readable(struct osm_ctx *ctx, struct ipc_party *p, int fd, int timeout_ms, const char *what);

/* Whole transfers on a pipe, FIFO or stream socket (a datagram socket
 * moves one message per call). 0; 1 at end of file; -1 with errno. */
int ipc_write_all(int fd, const void *buf, size_t len);
int ipc_read_all(int fd, void *buf, size_t len);
/* The socket's SO_SNDBUF, or -1. */
int ipc_sndbuf(int fd);
/* Sends one datagram of size bytes on a and receives it on b (a connected
 * pair): OSM_SKIP with the limit when the kernel refuses that size. */
int ipc_dgram_fits(struct osm_ctx *ctx, int a, int b, char *buf, size_t size);

/* ipc_lat.c: ipc.pipe_lat, ipc.fifo_lat, ipc.unix_lat, ipc.eventfd */
int ipc_pipe_lat_setup(struct osm_ctx *ctx);
int ipc_fifo_lat_setup(struct osm_ctx *ctx);
int ipc_unix_lat_setup(struct osm_ctx *ctx);
int ipc_eventfd_setup(struct osm_ctx *ctx);
int ipc_lat_run(struct osm_ctx *ctx, uint64_t batch);
int ipc_eventfd_run(struct osm_ctx *ctx, uint64_t batch);
void ipc_lat_teardown(struct osm_ctx *ctx);

/* ipc_bw.c: ipc.pipe_bw, ipc.unix_bw */
int ipc_pipe_bw_setup(struct osm_ctx *ctx);
int ipc_unix_bw_setup(struct osm_ctx *ctx);
int ipc_bw_run(struct osm_ctx *ctx, uint64_t batch);
void ipc_bw_teardown(struct osm_ctx *ctx);

/* ipc_lebench.c: ipc.unix_send, ipc.unix_recv (LEBench send/recv) */
int ipc_send_setup(struct osm_ctx *ctx);
int ipc_recv_setup(struct osm_ctx *ctx);
int ipc_sendrecv_run(struct osm_ctx *ctx, uint64_t batch);
void ipc_sendrecv_teardown(struct osm_ctx *ctx);

#endif
