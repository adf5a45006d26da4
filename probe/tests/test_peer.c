/* test_peer.c - the peer (peer.h): addresses, the token comparison, the
 * hello's grammar; the client against the probe's own peer on loopback
 * (IPv4 pinned, IPv6), for every service: echo, sink, source, udp, close;
 * a bare connection; the path MTU; the peer gone after osm_peer_close.
 * A remote peer with a token (wrong, missing, right), a listener that
 * never answers (the client's 10 s), and the own peer gone when its probe
 * dies of SIGTERM, SIGINT or SIGKILL. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "affinity.h"
#include "cleanup.h"
#include "peer.h"
#include "peer_int.h"
#include "tap.h"

static void test_addresses(void)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char err[512], buf[OSM_PEER_ADDR_LEN];
	ok(osm_peer_parse_addr("127.0.0.1:7000", 0, &ss, &sl, err, sizeof(err)) == 0, "v4 with port");
	osm_peer_format_addr((struct sockaddr *)&ss, buf, sizeof(buf));
	is_str(buf, "127.0.0.1:7000", "formatted back");
	ok(osm_peer_is_loopback((struct sockaddr *)&ss), "127.0.0.1 is loopback");
	ok(osm_peer_parse_addr("[::1]:9", 0, &ss, &sl, err, sizeof(err)) == 0 && ss.ss_family == AF_INET6,
	   "[::1]:9");
	osm_peer_format_addr((struct sockaddr *)&ss, buf, sizeof(buf));
	is_str(buf, "[::1]:9", "v6 formatted back");
	ok(osm_peer_is_loopback((struct sockaddr *)&ss), "::1 is loopback");
	ok(osm_peer_parse_addr("::ffff:127.0.0.2", 1, &ss, &sl, err, sizeof(err)) == 0 &&
	   osm_peer_is_loopback((struct sockaddr *)&ss) && osm_peer_port((struct sockaddr *)&ss) == 7478,
	   "a bare v4-mapped loopback takes the default port and is loopback");
	ok(osm_peer_parse_addr("10.0.0.2", 1, &ss, &sl, err, sizeof(err)) == 0 &&
	   !osm_peer_is_loopback((struct sockaddr *)&ss), "10.0.0.2 is not loopback");
	ok(osm_peer_parse_addr("localhost:5", 0, &ss, &sl, err, sizeof(err)) == 0 &&
	   osm_peer_is_loopback((struct sockaddr *)&ss), "localhost");
	ok(osm_peer_parse_addr("10.0.0.2", 0, &ss, &sl, err, sizeof(err)) == -1 && strstr(err, "no port"),
	   "a port is needed: %s", err);
	ok(osm_peer_parse_addr("example.org:80", 0, &ss, &sl, err, sizeof(err)) == -1 &&
	   strstr(err, "resolves no host names"), "names refused: %s", err);
	ok(osm_peer_parse_addr("1.2.3.4:70000", 0, &ss, &sl, err, sizeof(err)) == -1 && strstr(err, "0..65535"),
	   "port range: %s", err);
	ok(osm_peer_parse_addr("[::1:5", 0, &ss, &sl, err, sizeof(err)) == -1, "unclosed bracket: %s", err);
	ok(osm_peer_parse_addr(":5", 0, &ss, &sl, err, sizeof(err)) == -1 && strstr(err, "no host"),
	   "no host: %s", err);
}

static void test_tokens(void)
{
	char err[256];
	ok(osm_peer_token_equal("secret", "secret", 6), "equal");
	ok(!osm_peer_token_equal("secret", "secreT", 6), "last byte differs");
	ok(!osm_peer_token_equal("secret", "secre", 5), "shorter");
	ok(!osm_peer_token_equal("secret", "secrets", 7), "longer");
	ok(!osm_peer_token_equal("secret", "", 0), "empty");
	ok(osm_peer_token_valid("a-b_c.9", 7, err, sizeof(err)) == 0, "a good token");
	ok(osm_peer_token_valid("a b", 3, err, sizeof(err)) == -1 && strstr(err, "0x20"), "a space: %s", err);
	ok(osm_peer_token_valid("", 0, err, sizeof(err)) == -1, "empty token refused");
}

static int hello(const char *line, const char *token, struct osm_peer_hello *h, char *why, size_t wl)
{
	return osm_peer_parse_hello(line, strlen(line), token, h, why, wl);
}

static void test_hello(void)
{
	struct osm_peer_hello h;
	char why[400];
	ok(hello("OSMPEER 1 echo", "", &h, why, sizeof(why)) == 0 && h.service == OSM_PEER_ECHO, "echo");
	ok(hello("OSMPEER 1 source size=1000", "", &h, why, sizeof(why)) == 0 && h.size == 1000, "source size");
	ok(hello("OSMPEER 1 source", "", &h, why, sizeof(why)) == 0 && h.size == 131072, "source default size");
	ok(hello("OSMPEER 1 source size=0", "", &h, why, sizeof(why)) == -1 && strstr(why, "size"), "size 0: %s",
	   why);
	ok(hello("OSMPEER 1 source size=16777217", "", &h, why, sizeof(why)) == -1, "size over 16 MiB: %s", why);
	ok(hello("OSMPEER 1 echo size=5", "", &h, why, sizeof(why)) == -1 && strstr(why, "unknown key"),
	   "echo takes no size: %s", why);
	ok(hello("OSMPEER 1 dance", "", &h, why, sizeof(why)) == -1 && strstr(why, "unknown service 'dance'"),
	   "unknown service: %s", why);
	ok(hello("OSMPEER 2 echo", "", &h, why, sizeof(why)) == -1 && strstr(why, "version '2'"), "version: %s",
	   why);
	ok(hello("GET / HTTP/1.1", "", &h, why, sizeof(why)) == -1 && strstr(why, "not an osmeter peer hello"),
	   "HTTP: %s", why);
	ok(hello("OSMPEER 1 echo\x01", "", &h, why, sizeof(why)) == -1 && strstr(why, "printable"),
	   "control byte: %s", why);
	ok(hello("OSMPEER 1 echo", "tok", &h, why, sizeof(why)) == -1 && !strcmp(why, "token"), "missing token");
	ok(hello("OSMPEER 1 dance token=bad", "tok", &h, why, sizeof(why)) == -1 && !strcmp(why, "token"),
	   "wrong token: nothing else is told");
	ok(hello("OSMPEER 1 echo token=tok", "tok", &h, why, sizeof(why)) == 0, "right token");
	ok(hello("OSMPEER 1 echo token=tok token=tok", "tok", &h, why, sizeof(why)) == -1, "token twice");
	ok(hello("OSMPEER 1 echo token=any", "", &h, why, sizeof(why)) == 0, "a token a loopback peer ignores");
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int recv_all(int fd, void *p, size_t n)
{
	char *c = p;
	while (n) {
		ssize_t r = recv(fd, c, n, 0);
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static void test_echo(struct osm_peer *p)
{
	char err[512], ans[256], msg[5000], back[5000];
	int fd = osm_peer_session(p, "echo", "", ans, sizeof(ans), err, sizeof(err));
	ok(fd >= 0, "echo session: %s", fd < 0 ? err : ans);
	if (fd < 0)
		return;
	ok(strstr(ans, "mtu=") != NULL, "the answer gives the peer's MTU: '%s'", ans);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (char)(i * 7);
	int good = 1;
	for (int k = 0; k < 100 && good; k++)
		good = !send_all(fd, msg, 1 + (size_t)k * 49) && !recv_all(fd, back, 1 + (size_t)k * 49) &&
		       !memcmp(msg, back, 1 + (size_t)k * 49);
	ok(good, "100 round trips of 1 to 4852 bytes come back unchanged");
	close(fd);
}

static void test_sink(struct osm_peer *p)
{
	char err[512], line[64] = {0};
	static char data[1 << 20];
	int fd = osm_peer_session(p, "sink", "", NULL, 0, err, sizeof(err));
	ok(fd >= 0, "sink session: %s", fd < 0 ? err : "");
	if (fd < 0)
		return;
	int sent = !send_all(fd, data, sizeof(data)) && !send_all(fd, data, 12345);
	shutdown(fd, SHUT_WR);
	ssize_t n = sent ? recv(fd, line, sizeof(line) - 1, MSG_WAITALL) : -1;
	line[strcspn(line, "\n")] = 0;
	ok(n > 0 && !strcmp(line, "DONE 1060921"), "sink counts what it read: '%s'", line);
	close(fd);
}

static void test_source(struct osm_peer *p)
{
	char err[512];
	static char data[100000];
	int fd = osm_peer_session(p, "source", "size=65536", NULL, 0, err, sizeof(err));
	ok(fd >= 0, "source session: %s", fd < 0 ? err : "");
	if (fd < 0)
		return;
	ok(!recv_all(fd, data, sizeof(data)), "source sends (100000 bytes read)");
	int differ = 0;
	for (size_t i = 1; i < 4096; i++)
		differ += data[i] != data[0];
	ok(differ > 3000, "its data is not one repeated byte");
	close(fd);
	fd = osm_peer_session(p, "source", "size=0", NULL, 0, err, sizeof(err));
	ok(fd < 0 && strstr(err, "refused: ERR size"), "size=0 refused: %s", err);
}

static void test_udp(struct osm_peer *p)
{
	char err[512], ans[256];
	int fd = osm_peer_session(p, "udp", "", ans, sizeof(ans), err, sizeof(err));
	ok(fd >= 0, "udp session: %s", fd < 0 ? err : ans);
	if (fd < 0)
		return;
	int port = -1;
	char cookie_hex[17] = {0};
	const char *u = strstr(ans, "udp_port="), *c = strstr(ans, "cookie=");
	if (u && c) {
		port = atoi(u + 9);
		memcpy(cookie_hex, c + 7, 16);
	}
	ok(port > 0 && strlen(cookie_hex) == 16, "udp_port %d, cookie %s", port, cookie_hex);
	unsigned char dgram[100];
	for (int k = 0; k < 8; k++)
		sscanf(cookie_hex + 2 * k, "%2hhx", &dgram[k]);
	memset(dgram + 8, 'x', sizeof(dgram) - 8);
	struct sockaddr_storage ss = p->addr;
	osm_peer_set_port((struct sockaddr *)&ss, port);
	int us = socket(ss.ss_family, SOCK_DGRAM, 0);
	struct timeval tv = {2, 0};
	setsockopt(us, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int echoed = 0;
	unsigned char back[200];
	for (int k = 0; k < 10; k++) {
		sendto(us, dgram, sizeof(dgram), 0, (struct sockaddr *)&ss, p->addr_len);
		echoed += recv(us, back, sizeof(back), 0) == (ssize_t)sizeof(dgram) && !memcmp(back, dgram, 100);
	}
	ok(echoed == 10, "10 datagrams with the cookie echoed (%d)", echoed);
	dgram[0] ^= 1;
	sendto(us, dgram, sizeof(dgram), 0, (struct sockaddr *)&ss, p->addr_len);
	tv.tv_sec = 0;
	tv.tv_usec = 300000;
	setsockopt(us, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ok(recv(us, back, sizeof(back), 0) < 0, "a datagram without the cookie is dropped");
	close(us);
	close(fd);
}

static void test_close(struct osm_peer *p)
{
	char err[512], c;
	int fd = osm_peer_session(p, "close", "", NULL, 0, err, sizeof(err));
	ok(fd >= 0, "close session: %s", fd < 0 ? err : "");
	if (fd < 0)
		return;
	send(fd, "C", 1, MSG_NOSIGNAL);
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	ok(poll(&pfd, 1, 5000) == 1 && recv(fd, &c, 1, 0) == 0, "after 'C' the peer closes first (EOF)");
	close(fd);
}

static void test_own_peer(int family, int cpu)
{
	struct osm_peer p;
	char err[512];
	const char *fam = family == AF_INET6 ? "IPv6" : "IPv4";
	if (osm_peer_open(&p, NULL, "", family, cpu, err, sizeof(err))) {
		if (family == AF_INET6 && strstr(err, "[::1]")) {
			diag("%s", err);
			skip(1, "no IPv6 loopback here");
			return;
		}
		ok(0, "own %s peer: %s", fam, err);
		return;
	}
	ok(p.pid > 0 && kill(p.pid, 0) == 0, "own %s peer runs as pid %ld: %s", fam, (long)p.pid, p.where);
	is_str(p.version, OSM_VERSION, "its version");
	test_echo(&p);
	test_sink(&p);
	test_source(&p);
	test_udp(&p);
	test_close(&p);
	int fd = osm_peer_connect(&p, err, sizeof(err));
	ok(fd >= 0, "a bare connection: %s", fd < 0 ? err : "");
	int mtu = fd >= 0 ? osm_peer_path_mtu(fd) : -1;
	/* qemu-user does not translate IP_MTU/IPV6_MTU: -1 there. */
	int emulated = getenv("OSM_EMULATED") && !strcmp(getenv("OSM_EMULATED"), "1");
	ok(mtu >= 1280 || (emulated && mtu == -1), "path MTU %d%s", mtu, emulated ? " (emulated)" : "");
	if (fd >= 0)
		close(fd);
	pid_t pid = p.pid;
	osm_peer_close(&p);
	ok(p.pid == 0 && kill(pid, 0) < 0 && errno == ESRCH, "the peer is gone after osm_peer_close");
}

static void test_errors(void)
{
	struct osm_peer p;
	char err[512];
	ok(osm_peer_open(&p, "127.0.0.1:1", "", 0, -1, err, sizeof(err)) == -1 && strstr(err, "127.0.0.1:1"),
	   "no peer there: %s", err);
	ok(osm_peer_open(&p, "127.0.0.1:0", "", 0, -1, err, sizeof(err)) == -1 && strstr(err, "port 0"),
	   "port 0: %s", err);
	ok(osm_peer_open(&p, NULL, "bad token", AF_INET, -1, err, sizeof(err)) == -1 && strstr(err, "token"),
	   "a token with a space: %s", err);
}

/* A peer with a token, as `serve` runs it, in a child; its port. */
static pid_t serve_with_token(const char *token, int *port)
{
	int fds[2];
	*port = 0;
	if (pipe(fds))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		struct osm_peer_config cfg;
		char err[512];
		memset(&cfg, 0, sizeof(cfg));
		osm_peer_default_limits(&cfg.lim);
		osm_peer_parse_addr("127.0.0.1:0", 0, &cfg.addr, &cfg.addr_len, err, sizeof(err));
		snprintf(cfg.token, sizeof(cfg.token), "%s", token);
		cfg.ready_fd = fds[1];
		cfg.log = OSM_PEER_LOG_NONE;
		_exit(osm_peer_serve(&cfg, err, sizeof(err)) ? 1 : 0);
	}
	close(fds[1]);
	char line[16] = {0};
	if (read(fds[0], line, sizeof(line) - 1) > 0)
		*port = atoi(line);
	close(fds[0]);
	return pid;
}

/* A remote peer (spec HOST:PORT): the token checked by the first session,
 * the peer's refusal named; SIGTERM stops the peer with status 0. */
static void test_remote(void)
{
	struct osm_peer p;
	char err[512], spec[64];
	int port;
	pid_t pid = serve_with_token("t0ken", &port);
	ok(pid > 0 && port > 0, "a peer with a token on port %d", port);
	if (port <= 0)
		return;
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", port);
	ok(osm_peer_open(&p, spec, "t0kem", 0, -1, err, sizeof(err)) == -1 && strstr(err, "refused: ERR token") &&
	   strstr(err, spec), "a wrong token: %s", err);
	ok(osm_peer_open(&p, spec, NULL, 0, -1, err, sizeof(err)) == -1 && strstr(err, "refused: ERR token"),
	   "no token: %s", err);
	ok(osm_peer_open(&p, spec, "t0ken", 0, -1, err, sizeof(err)) == 0 && p.pid == 0, "the right token: %s",
	   p.where);
	is_str(p.version, OSM_VERSION, "the remote peer's version");
	int fd = osm_peer_session(&p, "echo", "", NULL, 0, err, sizeof(err));
	ok(fd >= 0, "a session with the token: %s", fd < 0 ? err : "");
	if (fd >= 0)
		close(fd);
	osm_peer_close(&p);
	int st = -1;
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGTERM: the peer returns 0 (status %#x)", st);
}

/* A listener that takes connections and never answers: the client gives
 * up after its 10 s and says so. Those 10 s run only with the slow tests
 * (OSMETER_TEST_SLOW=1, as in CI), like the Python suite's slow marks. */
static void test_silent_listener(void)
{
	const char *slow = getenv("OSMETER_TEST_SLOW");
	if (!slow || strcmp(slow, "1")) {
		skip(2, "the 10 s hello timeout: set OSMETER_TEST_SLOW=1 (CI does)");
		return;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(l, (struct sockaddr *)&sa, sl) || listen(l, 4) || getsockname(l, (struct sockaddr *)&sa, &sl)) {
		ok(0, "listener: %s", strerror(errno));
		return;
	}
	char spec[64], err[512];
	struct osm_peer p;
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", ntohs(sa.sin_port));
	time_t t0 = time(NULL);
	ok(osm_peer_open(&p, spec, "", 0, -1, err, sizeof(err)) == -1 &&
	   strstr(err, "did not answer the hello in 10 s"), "silent listener: %s", err);
	ok(time(NULL) - t0 >= 9 && time(NULL) - t0 <= 20, "after about 10 s (%ld s)", (long)(time(NULL) - t0));
	close(l);
}

/* The own peer dies on every exit path of the probe that started it: a
 * signal its cleanup stack handles (SIGTERM, SIGINT), or SIGKILL (then
 * PR_SET_PDEATHSIG). This process is the subreaper, so the orphaned peer
 * comes back here to be reaped and its end can be seen. */
static void test_dies_with_its_probe(int sig)
{
	int fds[2];
	if (pipe(fds)) {
		ok(0, "pipe");
		return;
	}
	pid_t probe = fork();
	if (probe == 0) {
		close(fds[0]);
		osm_cleanup_install_signals(-1);
		struct osm_peer p;
		char err[512];
		if (osm_peer_open(&p, NULL, "", AF_INET, -1, err, sizeof(err)))
			_exit(1);
		ssize_t w = write(fds[1], &p.pid, sizeof(p.pid));
		(void)w;
		for (;;)
			pause();
	}
	close(fds[1]);
	pid_t peer = 0;
	ssize_t r = read(fds[0], &peer, sizeof(peer));
	close(fds[0]);
	ok(r == (ssize_t)sizeof(peer) && peer > 0, "a probe with its own peer (pid %ld)", (long)peer);
	kill(probe, sig);
	int st = 0;
	waitpid(probe, &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == sig, "the probe died of signal %d", sig);
	if (peer <= 0)
		return;
	int gone = 0;
	for (int ms = 0; ms < 5000 && !gone; ms += 10) {
		gone = waitpid(peer, NULL, WNOHANG) == peer || (kill(peer, 0) < 0 && errno == ESRCH);
		if (!gone)
			usleep(10000);
	}
	ok(gone, "its peer is gone after the probe's signal %d", sig);
	if (!gone) {
		kill(peer, SIGKILL);
		waitpid(peer, NULL, 0);
	}
}

int main(void)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	test_addresses();
	test_tokens();
	test_hello();
	int cpus[2];
	int n = osm_allowed_cpus(cpus, 2);
	test_own_peer(AF_INET, n > 1 ? cpus[1] : cpus[0]);
	test_own_peer(AF_INET6, -1);
	test_errors();
	test_remote();
	test_silent_listener();
	test_dies_with_its_probe(SIGTERM);
	test_dies_with_its_probe(SIGINT);
	test_dies_with_its_probe(SIGKILL);
	osm_cleanup_run_all();
	return done_testing();
}
