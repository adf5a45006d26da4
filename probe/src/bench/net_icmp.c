/* net_icmp.c - net.icmp_rtt: ICMP echo round trips (ping) to the peer's
 * host, or to the family's loopback address without peer=. Method:
 * docs/methods/net.md
 *
 * The echo is answered by the target host's kernel, not by a peer process,
 * so no peer is contacted (peer= only names the host; no token is needed).
 * Sockets, in the order method=auto tries them:
 *  - a ping socket (SOCK_DGRAM, IPPROTO_ICMP or IPPROTO_ICMPV6): allowed
 *    when the probe's group is in net.ipv4.ping_group_range (which also
 *    governs ICMPv6); the kernel sets the echo identifier and checksum and
 *    delivers only this socket's replies;
 *  - a raw socket (SOCK_RAW), which needs root (CAP_NET_RAW): the probe
 *    sets its own identifier and the IPv4 checksum (the kernel computes
 *    ICMPv6's), filters echo replies (ICMP_FILTER, ICMP6_FILTER) from the
 *    connected host, and skips the IPv4 header of what it receives;
 *  - else a skip naming the sysctl and root.
 * Every request carries the sequence number in the ICMP header and in the
 * first min(8, size) payload bytes; a reply must repeat both, its type must
 * be echo reply and its length 8 + size. The timing and the loss
 * accounting are net_dgram_run's: a reply not seen within 1 s is lost,
 * counted, not timed. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../bench.h"
#include "net.h"

#define ICMP_HDR 8
#define ICMP4_ECHO 8
#define ICMP4_ECHOREPLY 0
#define RAW_ICMP_FILTER 1 /* <linux/icmp.h> ICMP_FILTER: a bitmask of types to drop */

enum { M_AUTO, M_PING, M_RAW };

struct icmp_state {
	struct net_peer np;
	struct net_dgram d;
	int raw, v6;
	uint16_t id;   /* raw sockets: ours; ping sockets: the kernel's */
	size_t size;   /* payload bytes */
};

static uint16_t inet_checksum(const unsigned char *p, size_t n)
{
	uint32_t sum = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static size_t seq_bytes(size_t size)
{
	return size < 8 ? size : 8;
}

static size_t icmp_fill(struct net_dgram *d, uint64_t seq)
{
	struct icmp_state *s = d->user;
	unsigned char *t = d->tx;
	t[0] = s->v6 ? ICMP6_ECHO_REQUEST : ICMP4_ECHO;
	t[1] = 0;
	t[2] = t[3] = 0;
	t[4] = (unsigned char)(s->id >> 8);
	t[5] = (unsigned char)s->id;
	t[6] = (unsigned char)(seq >> 8);
	t[7] = (unsigned char)seq;
	for (size_t i = 0; i < seq_bytes(s->size); i++)
		t[ICMP_HDR + i] = (unsigned char)(seq >> (8 * i));
	if (s->raw && !s->v6) {
		uint16_t c = inet_checksum(t, d->tx_len);
		t[2] = (unsigned char)(c >> 8);
		t[3] = (unsigned char)c;
	}
	return d->tx_len;
}

static int icmp_match(const struct net_dgram *d, size_t n, uint64_t seq)
{
	(void)seq; /* icmp_fill put it in tx, which the reply must repeat */
	const struct icmp_state *s = d->user;
	const unsigned char *p = d->rx;
	if (s->raw && !s->v6) { /* a raw IPv4 socket sees the IP header */
		size_t ihl = n ? (size_t)(p[0] & 0x0f) * 4 : 0;
		if (ihl < 20 || ihl > n)
			return 0;
		p += ihl;
		n -= ihl;
	}
	if (n != d->tx_len || p[0] != (s->v6 ? ICMP6_ECHO_REPLY : ICMP4_ECHOREPLY) || p[1] != 0)
		return 0;
	if (s->raw && memcmp(p + 4, d->tx + 4, 2))
		return 0; /* another process's echo */
	return !memcmp(p + 6, d->tx + 6, 2) && !memcmp(p + ICMP_HDR, d->tx + ICMP_HDR, seq_bytes(s->size));
}

/* net.ipv4.ping_group_range as "LOW HIGH", or "unreadable". */
static void group_range(char *buf, size_t len)
{
	snprintf(buf, len, "unreadable");
	int fd = open("/proc/sys/net/ipv4/ping_group_range", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		snprintf(buf, len, "unreadable");
		return;
	}
	buf[n] = 0;
	for (char *c = buf; *c; c++)
		if (*c == '\t' || *c == '\n')
			*c = *(c + 1) ? ' ' : 0;
}

/* Only echo replies reach a raw socket (others: another ping's requests,
 * unreachables); the id and the host are checked on top. */
static int raw_filter(int fd, int v6)
{
	if (v6) {
		struct icmp6_filter f;
		ICMP6_FILTER_SETBLOCKALL(&f);
		ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f);
		return setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f));
	}
	uint32_t drop = ~(UINT32_C(1) << ICMP4_ECHOREPLY);
	return setsockopt(fd, SOL_RAW, RAW_ICMP_FILTER, &drop, sizeof(drop));
}

/* A ping or raw socket as `method` asks; OSM_SKIP with what would allow one. */
static int open_socket(struct osm_ctx *ctx, struct icmp_state *s, int method)
{
	int fam = s->v6 ? AF_INET6 : AF_INET, proto = s->v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	const char *pname = s->v6 ? "IPPROTO_ICMPV6" : "IPPROTO_ICMP";
	int ping_err = 0, raw_err = 0;
	if (method != M_RAW) {
		s->d.fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, proto);
		if (s->d.fd >= 0) {
			osm_add_info(ctx, "icmp_method", "ping socket (SOCK_DGRAM, %s)", pname);
			return OSM_OK;
		}
		ping_err = errno;
	}
	if (method != M_PING) {
		s->d.fd = socket(fam, SOCK_RAW | SOCK_CLOEXEC, proto);
		if (s->d.fd >= 0) {
			s->raw = 1;
			s->id = (uint16_t)(getpid() ^ time(NULL));
			osm_add_info(ctx, "icmp_method", "raw socket (SOCK_RAW, %s; root)", pname);
			if (raw_filter(s->d.fd, s->v6))
				return osm_fail_errno(ctx, "setsockopt ICMP_FILTER on the raw socket");
			return OSM_OK;
		}
		raw_err = errno;
	}
	char range[64];
	group_range(range, sizeof(range));
	char ping_why[512] = "", raw_why[256] = "";
	if (method != M_RAW)
		snprintf(ping_why, sizeof(ping_why),
			 "a ping socket needs the probe's group (gid %u) in net.ipv4.ping_group_range (now \"%s\"; "
			 "e.g. sysctl -w net.ipv4.ping_group_range=\"0 2147483647\"): %s",
			 (unsigned)getgid(), range, strerror(ping_err));
	if (method != M_PING)
		snprintf(raw_why, sizeof(raw_why), "a raw socket needs root (CAP_NET_RAW): %s", strerror(raw_err));
	return osm_fail(ctx, OSM_SKIP, "no ICMP socket: %s%s%s", ping_why, ping_why[0] && raw_why[0] ? "; " : "",
			raw_why);
}

void net_icmp_teardown(struct osm_ctx *ctx)
{
	struct icmp_state *s = ctx->priv;
	if (!s)
		return;
	net_dgram_end(ctx, &s->d);
	free(s);
	ctx->priv = NULL;
}

int net_icmp_setup(struct osm_ctx *ctx)
{
	struct icmp_state *s = calloc(1, sizeof(*s));
	if (!s)
		return osm_fail(ctx, OSM_ERROR, "out of memory");
	ctx->priv = s;
	s->d.fd = -1;
	s->d.user = s;
	s->size = (size_t)osm_param_int(ctx, "size");
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	int st = net_peer_host(ctx, &s->np, &ss, &sl);
	s->v6 = s->np.family == AF_INET6;
	if (st == OSM_OK)
		st = open_socket(ctx, s, (int)osm_param_int(ctx, "method"));
	if (st == OSM_OK && connect(s->d.fd, (struct sockaddr *)&ss, sl))
		st = osm_fail(ctx, OSM_ERROR, "connect the ICMP socket to %s: %s", s->np.addr, strerror(errno));
	if (st == OSM_OK && net_timeouts(s->d.fd, NET_LOSS_TIMEOUT_MS))
		st = osm_fail_errno(ctx, "setsockopt SO_RCVTIMEO");
	if (st == OSM_OK) {
		net_note_mtu(ctx, s->d.fd);
		s->d.tx_len = ICMP_HDR + s->size;
		s->d.rx_cap = 65536 + 60; /* the largest reply, and an IPv4 header */
		s->d.tx = calloc(1, s->d.tx_len);
		s->d.rx = malloc(s->d.rx_cap);
		if (!s->d.tx || !s->d.rx)
			st = osm_fail(ctx, OSM_ERROR, "out of memory");
	}
	if (st != OSM_OK) {
		net_icmp_teardown(ctx);
		return st;
	}
	for (size_t i = 0; i < s->size; i++)
		s->d.tx[ICMP_HDR + i] = (unsigned char)(i * 7 + 1);
	s->d.fill = icmp_fill;
	s->d.match = icmp_match;
	s->d.loss_hint = s->v6 ? " (does the host ignore echoes: net.ipv6.icmp.echo_ignore_all? a firewall?)"
			       : " (does the host ignore echoes: net.ipv4.icmp_echo_ignore_all? a firewall?)";
	osm_add_info(ctx, "peer_version", "none: the host's kernel answers ICMP echo");
	return OSM_OK;
}

int net_icmp_run(struct osm_ctx *ctx, uint64_t batch)
{
	struct icmp_state *s = ctx->priv;
	return net_dgram_run(ctx, &s->np, &s->d, batch);
}
