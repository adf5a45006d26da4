/* net.h - what the parts of the net family share; not for use outside
 * bench/net*.c. Method: docs/methods/net.md
 *
 *   net.c        the table, the common parameters, the peer every
 *                benchmark talks to, socket helpers and error messages
 *   net_rtt.c    net.tcp_rtt
 *   net_dgram.c  the timed datagram round trip with loss accounting
 *                (shared by udp and icmp), net.udp_rtt
 *   net_icmp.c   net.icmp_rtt
 *   net_bw.c     net.tcp_bw
 *   net_conn.c   net.tcp_connect, net.tcp_close */
#ifndef OSM_BENCH_NET_H
#define OSM_BENCH_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "../bench.h"
#include "../peer.h"

/* Every blocking socket call gives up after this long (SO_RCVTIMEO,
 * SO_SNDTIMEO; connect() obeys SO_SNDTIMEO): a peer that vanishes or stops
 * answering becomes an error, never a hang. */
#define NET_IO_TIMEOUT_S 10
/* A datagram (UDP, ICMP) not answered within this is lost: counted, not
 * timed. */
#define NET_LOSS_TIMEOUT_MS 1000

/* The four parameters every net benchmark has (peer, token_file, family,
 * placement), as the first rows of its parameter table. */
extern const char *const net_families[];
extern const char *const net_placements[];
#define NET_PEER_MAX 300
#define NET_COMMON_PARAMS                                                                               \
	{.name = "peer", .type = OSM_P_STR, .def_str = "", .max_len = NET_PEER_MAX,                     \
	 .max_len_why = "HOST:PORT or [V6]:PORT",                                                       \
	 .help = "HOST:PORT or [V6]:PORT of an `osmeter-probe serve`; empty: the probe's own peer on loopback"}, \
	{.name = "token_file", .type = OSM_P_STR, .def_str = "",                                        \
	 .help = "file holding the peer's token; empty: $OSMETER_PEER_TOKEN, if set"},                  \
	{.name = "family", .type = OSM_P_ENUM, .choices = net_families, .def = 0,                       \
	 .help = "IP version: the own peer's loopback (127.0.0.1 or ::1); must match peer="},         \
	{.name = "placement", .type = OSM_P_ENUM, .choices = net_placements, .def = 1,                  \
	 .help = "the own peer on the probe's CPU or another one (a remote peer: recorded as remote)"}

/* The peer a benchmark talks to, and what its error messages say. */
struct net_peer {
	struct osm_peer p;
	int open;
	int remote;             /* peer= given */
	int icmp;               /* ICMP echo: the host's kernel, no peer process */
	int family;             /* AF_INET or AF_INET6 */
	char addr[80];          /* "127.0.0.1:41234", "[::1]:41234" */
	uint64_t done;          /* operations finished so far ... */
	const char *what;       /* ... of this kind: "round trips", "connects" */
};

/* The peer of the common parameters: the own one (pinned by placement;
 * skips when cross_cpu has no second CPU or the family has no loopback
 * here) or a remote one (placement "remote"). Records peer, its version
 * and the placement (info). Returns OSM_OK, or the status with ctx->msg. */
int net_peer_start(struct osm_ctx *ctx, struct net_peer *np, const char *what);
void net_peer_stop(struct net_peer *np);
/* For ICMP, which no peer process answers: the peer= host (port ignored,
 * no token, no contact) or the family's loopback address, in *ss (port 0);
 * np->addr is the host. Records peer and placement (info). */
int net_peer_host(struct osm_ctx *ctx, struct net_peer *np, struct sockaddr_storage *ss, socklen_t *sl);
/* The family's name ("IPv4", "IPv6"). */
const char *net_family_name(int family);

/* A session (osm_peer_session) with timeouts set and the path MTU
 * recorded (extra.path_mtu). Returns the socket, or -1 with ctx->msg set. */
int net_session(struct osm_ctx *ctx, struct net_peer *np, const char *service, const char *args,
		char *answer, size_t anslen);
/* SO_RCVTIMEO and SO_SNDTIMEO of ms. Returns 0 or -1 with errno. */
int net_timeouts(int fd, int ms);
/* extra.path_mtu from a connected socket (nothing when unknown). */
void net_note_mtu(struct osm_ctx *ctx, int fd);

/* Writes all of buf (len > 0; blocking, MSG_NOSIGNAL). Returns len, or
 * what the last send() returned (0 or -1 with errno) for net_io_fail. */
ssize_t net_send_all(int fd, const void *buf, size_t len);
/* Reads exactly len bytes. Returns len, or the last recv()'s result. */
ssize_t net_recv_all(int fd, void *buf, size_t len);
/* The error of a failed socket call on the peer's connection, in words the
 * user can act on: r == 0 "peer A closed the connection after N round
 * trips", EAGAIN "peer A did not answer within 10 s ...", ECONNRESET,
 * ECONNREFUSED (for ICMP: a port unreachable), the ICMP errors and route
 * verdicts (host/network unreachable, prohibited), else the call and
 * strerror. Returns OSM_ERROR. */
int net_io_fail(struct osm_ctx *ctx, const struct net_peer *np, ssize_t r, const char *call);

/* ---- the datagram round trip (net_dgram.c), shared by udp and icmp ---- */

struct net_dgram {
	int fd;                 /* connected datagram socket */
	unsigned char *tx, *rx;
	size_t tx_len;          /* bytes sent per round trip */
	size_t rx_cap;
	uint64_t seq;           /* next sequence number */
	uint64_t lost, stale, attempts;
	unsigned run_lost;      /* losses in a row */
	/* Fills tx for sequence seq; returns the bytes to send. */
	size_t (*fill)(struct net_dgram *d, uint64_t seq);
	/* 1 when rx[0..n) is the answer to seq, 0 when it is some other
	 * datagram (a late answer, another process's ICMP): ignored. */
	int (*match)(const struct net_dgram *d, size_t n, uint64_t seq);
	void *user;
	const char *loss_hint;  /* appended to the too-many-losses error, or NULL */
	int (*peer_gone)(struct osm_ctx *ctx, struct net_dgram *d); /* after a loss: OSM_OK or an error */
};

/* Self-timed: `batch` answered round trips, each timed by its own clock
 * pair (send to matching answer); a round trip with no answer within
 * NET_LOSS_TIMEOUT_MS is counted in d->lost and retried, never timed.
 * Too many losses (5 in a row, or over 1 % of at least 500 attempts) are an
 * error with the counts. ctx->self_ns is the answered round trips' time. */
int net_dgram_run(struct osm_ctx *ctx, struct net_peer *np, struct net_dgram *d, uint64_t batch);
/* Teardown: extra.lost, extra.loss_fraction and extra.stale (once round
 * trips were tried), the socket closed, the buffers freed. */
void net_dgram_end(struct osm_ctx *ctx, struct net_dgram *d);

/* The benchmarks, by file. */
int net_tcp_rtt_setup(struct osm_ctx *ctx);
int net_tcp_rtt_run(struct osm_ctx *ctx, uint64_t batch);
void net_tcp_rtt_teardown(struct osm_ctx *ctx);
int net_udp_rtt_setup(struct osm_ctx *ctx);
int net_udp_rtt_run(struct osm_ctx *ctx, uint64_t batch);
void net_udp_rtt_teardown(struct osm_ctx *ctx);
int net_icmp_setup(struct osm_ctx *ctx);
int net_icmp_run(struct osm_ctx *ctx, uint64_t batch);
void net_icmp_teardown(struct osm_ctx *ctx);
int net_bw_setup(struct osm_ctx *ctx);
int net_bw_run(struct osm_ctx *ctx, uint64_t batch);
void net_bw_teardown(struct osm_ctx *ctx);
int net_connect_setup(struct osm_ctx *ctx);
int net_connect_run(struct osm_ctx *ctx, uint64_t batch);
int net_close_setup(struct osm_ctx *ctx);
int net_close_run(struct osm_ctx *ctx, uint64_t batch);
void net_conn_teardown(struct osm_ctx *ctx);

#endif
