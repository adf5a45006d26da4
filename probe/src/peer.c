/* peer.c - see peer.h: the peer's defaults, addresses (and a socket's
 * path MTU), tokens and the hello's grammar (docs/peer.md), shared by the
 * server (peer_serve.c, peer_session.c), the client (peer_client.c), the
 * own peer's start (peer_open.c) and the net family. */
#include "peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "parse.h"
#include "peer_int.h"

void osm_peer_default_limits(struct osm_peer_limits *lim)
{
	lim->session_s = 120;
	lim->session_bytes = (uint64_t)64 << 30;
	lim->max_sessions = 32;
	lim->max_pending = 256;
	lim->hello_s = 5;
}

/* ---- addresses ------------------------------------------------------ */

int osm_peer_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	return -1;
}

void osm_peer_set_port(struct sockaddr *sa, int port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)(void *)sa)->sin_port = htons((uint16_t)port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)sa)->sin6_port = htons((uint16_t)port);
}

void osm_peer_format_host(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2] = "?";
	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, host, sizeof(host));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		if (s6->sin6_scope_id) {
			size_t n = strlen(host);
			snprintf(host + n, sizeof(host) - n, "%%%u", (unsigned)s6->sin6_scope_id);
		}
	}
	snprintf(buf, len, "%s", host);
}

void osm_peer_format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	osm_peer_format_host(sa, host, sizeof(host));
	if (sa->sa_family == AF_INET)
		snprintf(buf, len, "%s:%d", host, osm_peer_port(sa));
	else if (sa->sa_family == AF_INET6)
		snprintf(buf, len, "[%s]:%d", host, osm_peer_port(sa));
	else
		snprintf(buf, len, "(address family %d)", sa->sa_family);
}

void osm_peer_loopback_addr(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)(void *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)(void *)ss;
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*s4);
	}
}

int osm_peer_path_mtu(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int mtu = -1;
	socklen_t ml = sizeof(mtu);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return -1;
	if (ss.ss_family == AF_INET6 && !getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &ml))
		return mtu;
	ml = sizeof(mtu);
	if (!getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &ml)) /* also an IPv4-mapped IPv6 socket */
		return mtu;
	return -1;
}

int osm_peer_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr);
		return (a >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return 1;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return 0;
}

/* A numeric host: IPv4, or IPv6 with an optional %scope (an interface
 * name or number). The probe resolves no names: a static binary cannot
 * rely on the system's resolver (NSS), so "localhost" is the one name. */
static int parse_host(const char *host, struct sockaddr_storage *ss, socklen_t *len, char *err, size_t errlen)
{
	char sh[OSM_SHOW_LEN], h[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	memset(ss, 0, sizeof(*ss));
	if (!strcmp(host, "localhost"))
		host = "127.0.0.1";
	struct sockaddr_in *s4 = (void *)ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		*len = sizeof(*s4);
		return 0;
	}
	struct sockaddr_in6 *s6 = (void *)ss;
	if (strlen(host) < sizeof(h)) {
		strcpy(h, host);
		char *pct = strchr(h, '%');
		if (pct)
			*pct++ = 0;
		if (inet_pton(AF_INET6, h, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			*len = sizeof(*s6);
			if (!pct)
				return 0;
			char *end;
			unsigned long idx = strtoul(pct, &end, 10);
			if (!*pct || *end)
				idx = if_nametoindex(pct);
			if (idx && idx <= UINT32_MAX) {
				s6->sin6_scope_id = (uint32_t)idx;
				return 0;
			}
			snprintf(err, errlen, "'%s': no interface '%s' for the IPv6 scope",
				 osm_shorten(host, sh, sizeof(sh)), pct);
			return -1;
		}
	}
	snprintf(err, errlen, "'%s' is not a numeric IPv4 or IPv6 address (the probe resolves no host names; "
		 "give e.g. 192.0.2.7, [2001:db8::7] or localhost)", osm_shorten(host, sh, sizeof(sh)));
	return -1;
}

int osm_peer_parse_addr(const char *s, int allow_no_port, struct sockaddr_storage *ss, socklen_t *len,
			char *err, size_t errlen)
{
	char host[256], sh[OSM_SHOW_LEN];
	const char *port = NULL;
	size_t hl;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':')) {
			snprintf(err, errlen, "'%s': write an IPv6 address as [ADDR] or [ADDR]:PORT",
				 osm_shorten(s, sh, sizeof(sh)));
			return -1;
		}
		hl = (size_t)(close - s - 1);
		s++;
		port = close[1] ? close + 2 : NULL;
	} else {
		const char *colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL; /* a bare IPv6 address */
		hl = colon ? (size_t)(colon - s) : strlen(s);
		port = colon ? colon + 1 : NULL;
	}
	if (hl == 0 || hl >= sizeof(host)) {
		snprintf(err, errlen, "'%s': %s", osm_shorten(s, sh, sizeof(sh)),
			 hl ? "the host is too long" : "no host (give HOST:PORT, e.g. 127.0.0.1:7478)");
		return -1;
	}
	memcpy(host, s, hl);
	host[hl] = 0;
	if (parse_host(host, ss, len, err, errlen))
		return -1;
	int64_t p = OSM_PEER_DEFAULT_PORT;
	if (!port && !allow_no_port) {
		snprintf(err, errlen, "'%s': no port (give HOST:PORT or [V6]:PORT)", osm_shorten(host, sh, sizeof(sh)));
		return -1;
	}
	char why[200];
	if (port && osm_parse_int(port, 0, 65535, &p, why, sizeof(why))) {
		snprintf(err, errlen, "port of '%s': %s", osm_shorten(host, sh, sizeof(sh)), why);
		return -1;
	}
	osm_peer_set_port((struct sockaddr *)ss, (int)p);
	return 0;
}

/* ---- tokens ---------------------------------------------------------- */

int osm_peer_token_valid(const char *t, size_t len, char *err, size_t errlen)
{
	if (len == 0 || len > OSM_PEER_TOKEN_MAX) {
		snprintf(err, errlen, "the token has %zu bytes; allowed: 1 to %d", len, OSM_PEER_TOKEN_MAX);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)t[i];
		if (c <= 0x20 || c >= 0x7f) {
			snprintf(err, errlen, "byte %zu of the token is 0x%02x; a token is printable ASCII without "
				 "spaces (0x21-0x7e)", i, c);
			return -1;
		}
	}
	return 0;
}

/* The first line of a token file. */
static int read_token_file(const char *path, char *token, char *err, size_t errlen)
{
	char buf[4097], sh[OSM_SHOW_LEN], why[256];
	osm_shorten(path, sh, sizeof(sh));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "token file %s: %s", sh, fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "token file %s: %s", sh, strerror(errno));
		return -1;
	}
	buf[n] = 0;
	size_t len = strcspn(buf, "\r\n");
	while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	if (osm_peer_token_valid(buf, len, why, sizeof(why))) {
		snprintf(err, errlen, "token file %s: %s", sh, why);
		return -1;
	}
	if (st.st_mode & 077)
		osm_warn("token file %s may be read by other users (mode %03o): chmod 600 it", sh,
			 (unsigned)(st.st_mode & 0777));
	memcpy(token, buf, len);
	token[len] = 0;
	return 0;
}

int osm_peer_token_load(const char *path, char token[OSM_PEER_TOKEN_MAX + 1], char *err, size_t errlen)
{
	char why[256];
	token[0] = 0;
	if (path)
		return read_token_file(path, token, err, errlen);
	const char *env = getenv(OSM_PEER_TOKEN_ENV);
	if (!env || !env[0])
		return 0;
	if (osm_peer_token_valid(env, strlen(env), why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", OSM_PEER_TOKEN_ENV, why);
		return -1;
	}
	memcpy(token, env, strlen(env) + 1);
	return 0;
}

int osm_peer_token_equal(const char *want, const char *got, size_t glen)
{
	unsigned char a[OSM_PEER_TOKEN_MAX] = {0}, b[OSM_PEER_TOKEN_MAX] = {0};
	size_t wlen = strlen(want);
	/* Only the lengths decide what is copied; the comparison below reads
	 * every byte of both buffers whatever they hold. */
	memcpy(a, want, wlen < sizeof(a) ? wlen : sizeof(a));
	memcpy(b, got, glen < sizeof(b) ? glen : sizeof(b));
	volatile unsigned diff = (unsigned)(wlen != glen) | (unsigned)(glen > sizeof(b));
	for (size_t i = 0; i < sizeof(a); i++)
		diff |= (unsigned)(a[i] ^ b[i]);
	return diff == 0;
}

/* ---- the hello ------------------------------------------------------- */

static const char *const service_names[] = {"echo", "sink", "source", "udp", "close"};
#define N_SERVICES (sizeof(service_names) / sizeof(service_names[0]))

const char *osm_peer_service_name(enum osm_peer_service s)
{
	return (unsigned)s < N_SERVICES ? service_names[s] : "?";
}

#define MAX_WORDS 16

struct words {
	char buf[OSM_PEER_HELLO_MAX + 1];
	char *w[MAX_WORDS];
	int n;
};

/* Splits at spaces; -1 when there are too many words. */
static int split(const char *line, size_t len, struct words *ws)
{
	memcpy(ws->buf, line, len);
	ws->buf[len] = 0;
	ws->n = 0;
	for (char *p = ws->buf; *p;) {
		while (*p == ' ')
			*p++ = 0;
		if (!*p)
			break;
		if (ws->n == MAX_WORDS)
			return -1;
		ws->w[ws->n++] = p;
		while (*p && *p != ' ')
			p++;
	}
	return 0;
}

static int check_token(const struct words *ws, const char *token)
{
	const char *got = NULL;
	int given = 0;
	for (int i = 3; i < ws->n; i++) {
		if (!strncmp(ws->w[i], "token=", 6)) {
			got = ws->w[i] + 6;
			given++;
		}
	}
	if (!token[0])
		return given <= 1 ? 0 : -1;
	if (given != 1)
		return -1;
	return osm_peer_token_equal(token, got, strlen(got)) ? 0 : -1;
}

/* The k=v words after the service, but token. */
static int parse_keys(const struct words *ws, struct osm_peer_hello *h, char *why, size_t wlen)
{
	char sh[OSM_SHOW_LEN];
	int have_size = 0;
	const char *svc = service_names[h->service];
	for (int i = 3; i < ws->n; i++) {
		const char *w = ws->w[i], *eq = strchr(w, '=');
		if (!eq || eq == w) {
			snprintf(why, wlen, "'%s' is not KEY=VALUE", osm_shorten(w, sh, sizeof(sh)));
			return -1;
		}
		if (!strncmp(w, "token=", 6))
			continue;
		if (h->service != OSM_PEER_SOURCE || strncmp(w, "size=", 5)) {
			snprintf(why, wlen, "unknown key '%.*s' for %s; allowed: %s", (int)(eq - w < 32 ? eq - w : 32), w,
				 svc, h->service == OSM_PEER_SOURCE ? "size, token" : "token");
			return -1;
		}
		char e[200];
		if (have_size++ ||
		    osm_parse_int(eq + 1, OSM_PEER_SOURCE_MIN, OSM_PEER_SOURCE_MAX, &h->size, e, sizeof(e))) {
			snprintf(why, wlen, "size: %s", have_size > 1 ? "given twice" : e);
			return -1;
		}
	}
	return 0;
}

int osm_peer_parse_hello(const char *line, size_t len, const char *token, struct osm_peer_hello *h, char *why,
			 size_t wlen)
{
	char sh[OSM_SHOW_LEN];
	struct words ws;
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e) {
			snprintf(why, wlen, "the hello is not printable ASCII (byte %zu is 0x%02x)", i,
				 (unsigned char)line[i]);
			return -1;
		}
	}
	if (len > OSM_PEER_HELLO_MAX || split(line, len, &ws)) {
		snprintf(why, wlen, "the hello has more than %d words", MAX_WORDS);
		return -1;
	}
	if (ws.n < 1 || strcmp(ws.w[0], OSM_PEER_MAGIC)) {
		snprintf(why, wlen, "not an osmeter peer hello; expected '%s %d SERVICE [token=T] [KEY=VALUE ...]'",
			 OSM_PEER_MAGIC, OSM_PEER_PROTO);
		return -1;
	}
	if (ws.n < 2 || strcmp(ws.w[1], "1")) {
		snprintf(why, wlen, "protocol version '%s' not supported; this peer speaks %d",
			 ws.n < 2 ? "" : osm_shorten(ws.w[1], sh, sizeof(sh)), OSM_PEER_PROTO);
		return -1;
	}
	if (check_token(&ws, token)) {
		snprintf(why, wlen, "token");
		return -1;
	}
	h->size = OSM_PEER_SOURCE_DEFAULT;
	for (size_t i = 0; ws.n >= 3 && i < N_SERVICES; i++) {
		if (!strcmp(ws.w[2], service_names[i])) {
			h->service = (enum osm_peer_service)i;
			return parse_keys(&ws, h, why, wlen);
		}
	}
	snprintf(why, wlen, "unknown service '%s'; allowed: echo, sink, source, udp, close",
		 ws.n < 3 ? "" : osm_shorten(ws.w[2], sh, sizeof(sh)));
	return -1;
}
