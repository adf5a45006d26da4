/* net.c - net.*: TCP and UDP round trips, TCP bandwidth, connect and
 * teardown, ICMP echo; on loopback against the probe's own peer or against
 * a remote `osmeter-probe serve`. Method: docs/methods/net.md
 *
 * This file: the family's table, the parameters every net benchmark has
 * (peer, token_file, family, placement), the peer they talk to, and the
 * socket helpers and error messages they share. The benchmarks are in
 * net_rtt.c, net_dgram.c, net_icmp.c, net_bw.c and net_conn.c.
 *
 * Traps avoided (all benchmarks): every socket has SO_RCVTIMEO and
 * SO_SNDTIMEO (NET_IO_TIMEOUT_S) and every send() MSG_NOSIGNAL, so a peer
 * that dies or stops answering is an error naming the peer and how far the
 * benchmark got, never a hang and never a SIGPIPE that would end the run;
 * the own peer is a child of the probe (osm_peer_open: killed and reaped on
 * every exit path); an address family the peer= address contradicts is an
 * error, not a silent switch. */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../affinity.h"
#include "../bench.h"
#include "../compiler.h"
#include "../peer.h"

const char *const net_families[] = {"ipv4", "ipv6", NULL};
const char *const net_placements[] = {"same_cpu", "cross_cpu", NULL};

const char *net_family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

/* The token: token_file's first line, else $OSMETER_PEER_TOKEN, else ""
 * (osm_peer_token_load: the same rules as `serve --token-file`). */
static int read_token(struct osm_ctx *ctx, char tok[OSM_PEER_TOKEN_MAX + 1])
{
	const char *path = osm_param_str(ctx, "token_file");
	char err[512];
	if (osm_peer_token_load(path && *path ? path : NULL, tok, err, sizeof(err)))
		return osm_fail(ctx, OSM_ERROR, "%s%s", path && *path ? "token_file: " : "", err);
	return OSM_OK;
}

/* Whether this machine has the family's loopback address (a container
 * may have no ::1). 0, or -1 with the reason in why. */
static int loopback_usable(int family, char *why, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	osm_peer_loopback_addr(family, &ss, &sl);
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = fd >= 0 ? bind(fd, (struct sockaddr *)&ss, sl) : -1;
	if (r)
		snprintf(why, len, "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	return r ? -1 : 0;
}

/* peer= parsed (osm_peer_parse_addr), its port given (need_port: not
 * for ICMP, which has none), its family that of family=. 0, or -1 with
 * the reason in err. */
static int check_peer(const char *spec, int family, int need_port, struct sockaddr_storage *ss, socklen_t *sl,
		      char *err, size_t len)
{
	char why[512];
	if (osm_peer_parse_addr(spec, 1, ss, sl, why, sizeof(why))) {
		snprintf(err, len, "peer=%s: %s", spec, why);
		return -1;
	}
	if (need_port && osm_peer_port((const struct sockaddr *)ss) == 0) {
		snprintf(err, len, "peer=%s: port 0; give the port the peer listens on (`serve` default: %d)", spec,
			 OSM_PEER_DEFAULT_PORT);
		return -1;
	}
	if (ss->ss_family != family) {
		snprintf(err, len, "peer=%s is an %s address but family=%s: give family=%s", spec,
			 net_family_name(ss->ss_family), net_families[family == AF_INET6],
			 net_families[ss->ss_family == AF_INET6]);
		return -1;
	}
	return 0;
}

static int check_common(const struct osm_bench *b, const struct osm_pval *pv, int need_port, char *err,
			size_t len)
{
	const char *spec = osm_pval_of(b, pv, "peer")->s;
	int family = osm_pval_of(b, pv, "family")->i == 1 ? AF_INET6 : AF_INET;
	struct sockaddr_storage ss;
	socklen_t sl;
	return spec && *spec ? check_peer(spec, family, need_port, &ss, &sl, err, len) : 0;
}

/* bench.h's check: peer= and family= before anything runs (token_file is
 * read when the benchmark runs: a file that may appear later). */
static int net_check(const struct osm_bench *b, const struct osm_pval *pv, char *err, size_t len)
{
	return check_common(b, pv, 1, err, len);
}

static int net_icmp_check(const struct osm_bench *b, const struct osm_pval *pv, char *err, size_t len)
{
	return check_common(b, pv, 0, err, len);
}

/* peer= checked again (an instance made otherwise than by `run`). */
static int parse_remote(struct osm_ctx *ctx, const struct net_peer *np, const char *spec, int need_port,
			struct sockaddr_storage *ss, socklen_t *sl)
{
	if (check_peer(spec, np->family, need_port, ss, sl, ctx->msg, sizeof(ctx->msg)))
		return OSM_ERROR;
	return OSM_OK;
}

static int start_remote(struct osm_ctx *ctx, struct net_peer *np, const char *spec)
{
	char err[512], tok[OSM_PEER_TOKEN_MAX + 1];
	struct sockaddr_storage ss;
	socklen_t sl;
	ctx->placement = "remote";
	np->remote = 1;
	int st = parse_remote(ctx, np, spec, 1, &ss, &sl);
	if (st != OSM_OK)
		return st;
	st = read_token(ctx, tok);
	if (st != OSM_OK)
		return st;
	if (osm_peer_open(&np->p, spec, tok, np->family, -1, err, sizeof(err))) {
		if (!strncmp(err, "peer", 4)) /* it names the peer already */
			return osm_fail(ctx, OSM_ERROR, "%s", err);
		return osm_fail(ctx, OSM_ERROR, "peer=%s: %s", spec, err);
	}
	np->open = 1;
	if (np->p.addr.ss_family != np->family) /* a name that resolved otherwise the second time */
		return osm_fail(ctx, OSM_ERROR, "peer=%s resolved to an %s address, family=%s", spec,
				net_family_name(np->p.addr.ss_family), net_families[np->family == AF_INET6]);
	return OSM_OK;
}

static int start_own(struct osm_ctx *ctx, struct net_peer *np)
{
	char err[512];
	int cross = osm_param_int(ctx, "placement") == 1;
	int cpu = cross ? osm_other_cpu(ctx->cpu) : ctx->cpu;
	ctx->placement = cross ? "cross_cpu" : "same_cpu";
	if (cpu < 0)
		return osm_skip_one_cpu(ctx, "placement=cross_cpu", "--param placement=same_cpu");
	if (loopback_usable(np->family, err, sizeof(err)))
		return osm_fail(ctx, OSM_SKIP, "family=%s: no %s loopback address here (%s: %s)",
				net_families[np->family == AF_INET6], net_family_name(np->family),
				np->family == AF_INET6 ? "::1" : "127.0.0.1", err);
	if (osm_peer_open(&np->p, NULL, "", np->family, cpu, err, sizeof(err)))
		return osm_fail(ctx, OSM_ERROR, "cannot start the probe's own peer: %s", err);
	np->open = 1;
	return OSM_OK;
}

int net_peer_start(struct osm_ctx *ctx, struct net_peer *np, const char *what)
{
	memset(np, 0, sizeof(*np));
	np->p.pid = 0;
	np->p.cleanup_handle = -1;
	np->what = what;
	np->family = osm_param_int(ctx, "family") == 1 ? AF_INET6 : AF_INET;
	const char *spec = osm_param_str(ctx, "peer");
	int st = spec && *spec ? start_remote(ctx, np, spec) : start_own(ctx, np);
	osm_add_info(ctx, "placement", "%s", ctx->placement ? ctx->placement : "?");
	if (st != OSM_OK)
		return st;
	osm_peer_format_addr((const struct sockaddr *)&np->p.addr, np->addr, sizeof(np->addr));
	osm_add_info(ctx, "peer", "%s", np->p.where[0] ? np->p.where : np->addr);
	if (np->p.version[0])
		osm_add_info(ctx, "peer_version", "%s", np->p.version);
	osm_count_note(ctx, "the peer (a process started in setup, or another host) is not counted: the "
		       "probe's side of each operation only");
	return OSM_OK;
}

int net_peer_host(struct osm_ctx *ctx, struct net_peer *np, struct sockaddr_storage *ss, socklen_t *sl)
{
	memset(np, 0, sizeof(*np));
	np->what = "echoes";
	np->icmp = 1;
	np->family = osm_param_int(ctx, "family") == 1 ? AF_INET6 : AF_INET;
	const char *spec = osm_param_str(ctx, "peer");
	memset(ss, 0, sizeof(*ss));
	if (spec && *spec) {
		ctx->placement = "remote";
		np->remote = 1;
		int st = parse_remote(ctx, np, spec, 0, ss, sl);
		osm_add_info(ctx, "placement", "remote");
		if (st != OSM_OK)
			return st;
	} else {
		ctx->placement = "same_cpu"; /* the kernel answers on the CPU that sent */
		osm_add_info(ctx, "placement", "same_cpu (loopback: this kernel answers on the sending CPU)");
		char err[256];
		if (loopback_usable(np->family, err, sizeof(err)))
			return osm_fail(ctx, OSM_SKIP, "family=%s: no %s loopback address here (%s)",
					net_families[np->family == AF_INET6], net_family_name(np->family), err);
		osm_peer_loopback_addr(np->family, ss, sl);
	}
	osm_peer_format_host((const struct sockaddr *)ss, np->addr, sizeof(np->addr));
	osm_add_info(ctx, "peer", "%s (%s)", np->addr, np->remote ? "the peer's host" : "loopback, no peer process");
	return OSM_OK;
}

void net_peer_stop(struct net_peer *np)
{
	if (np->open)
		osm_peer_close(&np->p);
	np->open = 0;
}

int net_timeouts(int fd, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -1;
	return 0;
}

void net_note_mtu(struct osm_ctx *ctx, int fd)
{
	int mtu = osm_peer_path_mtu(fd);
	if (mtu > 0)
		osm_add_extra(ctx, "path_mtu", mtu);
}

/* The peer turns a session away with "ERR busy" while it has its limit of
 * sessions; the ones a benchmark just closed may not have ended yet. */
#define BUSY_RETRIES 200
#define BUSY_WAIT_NS 5000000L

int net_session(struct osm_ctx *ctx, struct net_peer *np, const char *service, const char *args,
		char *answer, size_t anslen)
{
	char err[512];
	int fd = -1;
	for (int tries = 0; fd < 0; tries++) {
		err[0] = 0;
		fd = osm_peer_session(&np->p, service, args, answer, anslen, err, sizeof(err));
		if (fd >= 0 || !strstr(err, "busy") || tries >= BUSY_RETRIES)
			break;
		struct timespec ts = {0, BUSY_WAIT_NS};
		nanosleep(&ts, NULL);
	}
	if (fd < 0) {
		if (np->remote && np->p.unreachable) /* the rest of its benchmarks fail at once */
			osm_peer_mark_unreachable(&np->p, err);
		osm_fail(ctx, OSM_ERROR, "%s session with peer %s after %llu %s: %s", service, np->addr,
			 (unsigned long long)np->done, np->what, err[0] ? err : "failed");
		return -1;
	}
	if (net_timeouts(fd, NET_IO_TIMEOUT_S * 1000)) {
		osm_fail_errno(ctx, "setsockopt SO_RCVTIMEO/SO_SNDTIMEO");
		close(fd);
		return -1;
	}
	if (np->p.version[0])
		osm_add_info(ctx, "peer_version", "%s", np->p.version);
	net_note_mtu(ctx, fd);
	return fd;
}

ssize_t net_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t left = len;
	while (left) {
		ssize_t w = send(fd, p, left, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w;
		p += w;
		left -= (size_t)w;
	}
	return (ssize_t)len;
}

ssize_t net_recv_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;
	while (got < len) {
		ssize_t r = recv(fd, p + got, len - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* An ICMP error the kernel reported on the socket (or a route's verdict
 * before anything was sent), in words; NULL for another errno. */
static const char *unreachable_words(int e)
{
	switch (e) {
	case EHOSTUNREACH:
		return "host unreachable (an ICMP host unreachable came back, a route says unreachable, or no "
		       "neighbour answered ARP/ND)";
	case ENETUNREACH:
		return "network unreachable (an ICMP network unreachable came back, or no route)";
	case EHOSTDOWN:
		return "host down";
	case EACCES:
	case EPERM:
		return "prohibited (an ICMP administratively prohibited came back, a prohibit route, or a firewall)";
	case ENOPROTOOPT:
		return "protocol unreachable (an ICMP protocol unreachable came back)";
	}
	return NULL;
}

/* Why a remote peer closed or reset a session (an EOF or a reset looks
 * the same either way): a peer ends a session at its limits (docs/peer.md)
 * by closing it and goes on serving, while a peer that was killed or
 * stopped, or whose host went down, no longer answers. A new session
 * tells which; one that cannot be made marks the peer unreachable, so the
 * run's other benchmarks against it fail at once. */
static void why_ended(const struct net_peer *np, char *out, size_t len)
{
	char err[400];
	out[0] = 0;
	if (!np->remote || np->icmp)
		return;
	if (osm_peer_still_answers(&np->p, err, sizeof(err)))
		snprintf(out, len, "; the peer may have ended the session at its limits: it still answers (serve "
			 "--session-time / --session-bytes: its log says so)");
	else
		snprintf(out, len, ", and the peer no longer answers (%s): it was stopped or killed, or its host "
			 "or the network went down", err);
}

int net_io_fail(struct osm_ctx *ctx, const struct net_peer *np, ssize_t r, const char *call)
{
	unsigned long long n = (unsigned long long)np->done;
	int e = errno;
	char why[600];
	if (r == 0) {
		why_ended(np, why, sizeof(why));
		return osm_fail(ctx, OSM_ERROR, "peer %s closed the connection after %llu %s%s", np->addr, n,
				np->what, why);
	}
	if (e == EAGAIN || e == EWOULDBLOCK || e == EINPROGRESS)
		return osm_fail(ctx, OSM_ERROR, "peer %s did not answer within %d s (%s) after %llu %s", np->addr,
				NET_IO_TIMEOUT_S, call, n, np->what);
	if (e == ECONNRESET || e == EPIPE) {
		why_ended(np, why, sizeof(why));
		return osm_fail(ctx, OSM_ERROR, "peer %s reset the connection (%s: %s) after %llu %s%s", np->addr,
				call, strerror(e), n, np->what, why);
	}
	const char *w = unreachable_words(e);
	int st;
	if (w)
		st = osm_fail(ctx, OSM_ERROR, "peer %s: %s (%s: %s) after %llu %s", np->addr, w, call, strerror(e), n,
			      np->what);
	else if (e == ECONNREFUSED && np->icmp) /* ICMP has no port: a destination unreachable (port) */
		return osm_fail(ctx, OSM_ERROR, "peer %s: an ICMP destination unreachable (port unreachable) came "
				"back (%s: %s) after %llu %s", np->addr, call, strerror(e), n, np->what);
	else if (e == ECONNREFUSED)
		st = osm_fail(ctx, OSM_ERROR, "peer %s refused (%s: nothing listens there) after %llu %s", np->addr,
			      call, n, np->what);
	else
		return osm_fail(ctx, OSM_ERROR, "%s with peer %s: %s (after %llu %s)", call, np->addr, strerror(e),
				n, np->what);
	if (np->remote && !np->icmp) /* the run's other benchmarks against it fail at once */
		osm_peer_mark_unreachable(&np->p, ctx->msg);
	return st;
}

/* ---- the table -------------------------------------------------------- */

static const char *const directions[] = {"send", "recv", NULL};
static const char *const sides[] = {"active", "passive", NULL};
static const char *const icmp_methods[] = {"auto", "ping", "raw", NULL};

static const struct osm_param tcp_rtt_params[] = {
	NET_COMMON_PARAMS,
	{.name = "size", .type = OSM_P_SIZE, .def = 1, .min = 1, .max = 1 << 20,
	 .help = "bytes sent and echoed back per round trip"},
	{0},
};

static const struct osm_param udp_rtt_params[] = {
	NET_COMMON_PARAMS,
	{.name = "size", .type = OSM_P_SIZE, .def = 16, .min = 8, .max = 65507,
	 .help = "UDP payload bytes per datagram (8-byte session cookie included; IPv4 allows 65507)"},
	{0},
};

static const struct osm_param bw_params[] = {
	NET_COMMON_PARAMS,
	{.name = "direction", .type = OSM_P_ENUM, .choices = directions, .def = 0,
	 .help = "send: the probe streams to the peer's sink; recv: the peer's source streams to the probe"},
	{.name = "write_size", .type = OSM_P_SIZE, .def = 128 << 10, .min = 1 << 10, .max = 16 << 20,
	 .help = "bytes per send() (send) or recv() and per chunk of the peer's source (recv)"},
	{.name = "duration", .type = OSM_P_INT, .def = 100, .min = 10, .max = 60000,
	 .help = "milliseconds of measured streaming per sample (each sample: its own connection)"},
	{0},
};

static const struct osm_param connect_params[] = {
	NET_COMMON_PARAMS,
	{0},
};

static const struct osm_param close_params[] = {
	NET_COMMON_PARAMS,
	{.name = "side", .type = OSM_P_ENUM, .choices = sides, .def = 0,
	 .help = "active: the probe closes first; passive: the peer closes first"},
	{0},
};

static const struct osm_param icmp_params[] = {
	NET_COMMON_PARAMS,
	{.name = "size", .type = OSM_P_INT, .def = 56, .min = 0, .max = 65507,
	 .help = "ICMP echo payload bytes (ping's -s; 56 as ping)"},
	{.name = "method", .type = OSM_P_ENUM, .choices = icmp_methods, .def = 0,
	 .help = "auto: a ping socket if net.ipv4.ping_group_range allows, else a raw socket as root"},
	{0},
};

static const struct osm_bench net_benches[] = {
	{
		.name = "tcp_rtt",
		.desc = "TCP round trip of `size` bytes to the peer's echo (TCP_NODELAY), per round trip",
		.unit = OSM_UNIT_NS,
		.flags = OSM_NEEDS_FREE_CPU, /* placement=cross_cpu, the default */
		.suites = OSM_SUITES_ALL,
		.params = tcp_rtt_params,
		.sweep_full = "size=1;size=64;size=1024;size=16384;size=65536;size=1M",
		.setup = net_tcp_rtt_setup,
		.run = net_tcp_rtt_run,
		.teardown = net_tcp_rtt_teardown,
		.check = net_check,
	},
	{
		.name = "udp_rtt",
		.desc = "UDP round trip of a `size`-byte datagram to the peer's echo, per answered round trip",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED | OSM_NEEDS_FREE_CPU,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = udp_rtt_params,
		.sweep = "size=16;size=1472;size=65507",
		.sweep_full = "size=16;size=64;size=512;size=1472;size=8192;size=65507",
		.setup = net_udp_rtt_setup,
		.run = net_udp_rtt_run,
		.teardown = net_udp_rtt_teardown,
		.check = net_check,
	},
	{
		.name = "tcp_bw",
		.desc = "TCP goodput of one stream to (send) or from (recv) the peer, steady state, bytes/s",
		.unit = OSM_UNIT_BYTES_PER_S,
		.flags = OSM_SELF_TIMED | OSM_ONE_BY_ONE | OSM_SELF_COUNTED | OSM_NEEDS_FREE_CPU,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = bw_params,
		.sweep = "direction=send;direction=recv",
		.sweep_full = "direction=send,write_size=16K;direction=send,write_size=128K;direction=send,write_size=1M;"
			      "direction=recv,write_size=16K;direction=recv,write_size=128K;direction=recv,write_size=1M",
		.setup = net_bw_setup,
		.run = net_bw_run,
		.teardown = net_bw_teardown,
		.check = net_check,
	},
	{
		.name = "tcp_connect",
		.desc = "TCP connect() to the peer until established (the close, a RST, untimed), per connect",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED | OSM_NEEDS_FREE_CPU,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = connect_params,
		.setup = net_connect_setup,
		.run = net_connect_run,
		.teardown = net_conn_teardown,
		.check = net_check,
	},
	{
		.name = "tcp_close",
		.desc = "TCP teardown: active, own FIN until the peer's FIN; passive, asking the peer to close until EOF + close()",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED | OSM_NEEDS_FREE_CPU,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = close_params,
		.sweep = "side=active;side=passive",
		.setup = net_close_setup,
		.run = net_close_run,
		.teardown = net_conn_teardown,
		.check = net_check,
	},
	{
		.name = "icmp_rtt",
		.desc = "ICMP echo round trip to the peer's host (loopback without peer=), per answered echo",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = icmp_params,
		.sweep_full = "size=56;size=1472;size=65507",
		.setup = net_icmp_setup,
		.run = net_icmp_run,
		.teardown = net_icmp_teardown,
		.check = net_icmp_check,
	},
};

const struct osm_family osm_family_net = {
	"net", "TCP/UDP round trips, TCP bandwidth, connect and teardown, ICMP echo; loopback or a remote peer",
	net_benches, ARRAY_SIZE(net_benches),
};
