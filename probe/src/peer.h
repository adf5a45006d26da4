/* peer.h - the network peer: `osmeter-probe serve`, and the client side the
 * net family uses to reach it (a peer given by --param peer=HOST:PORT, or
 * the probe's own peer on loopback, started and stopped around a
 * benchmark). Protocol and limits: docs/peer.md.
 *
 * The peer serves only these sessions, one per TCP connection, each opened
 * by a one-line hello and answered by one line:
 *   echo    TCP: every byte received is sent back (round trips)
 *   sink    TCP: bytes are read and dropped; after the client's EOF
 *           (shutdown SHUT_WR) the peer answers the count it read
 *           ("DONE <bytes>\n") and closes (bandwidth, client to peer)
 *   source  TCP: the peer sends chunks of `size` bytes until the client
 *           closes or a session limit is reached (bandwidth, peer to client)
 *   udp     TCP control connection + a UDP socket the peer opens for the
 *           session: datagrams from the client's address that start with
 *           the session cookie are echoed, until the control connection
 *           closes (UDP round trips)
 *   close   TCP: the peer waits for the client's EOF, or for one byte
 *           ('C': then the peer closes first), and closes (teardown)
 * A connection that closes without a hello is accepted and closed
 * (connect benchmarks). Nothing else is ever executed. */
#ifndef OSM_PEER_H
#define OSM_PEER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define OSM_PEER_PROTO 1
#define OSM_PEER_DEFAULT_PORT 7478
#define OSM_PEER_HELLO_MAX 512   /* bytes of a hello or answer line, '\n' included */
#define OSM_PEER_TOKEN_MAX 256   /* bytes of a token */

struct osm_peer_limits {
	double session_s;          /* a session's longest life (s) */
	uint64_t session_bytes;    /* bytes a session may move, both ways */
	int max_sessions;          /* concurrent sessions; beyond: "ERR busy" */
	int max_pending;           /* connections not yet past their hello */
	double hello_s;            /* time to send a whole hello line (s) */
};

struct osm_peer_config {
	struct sockaddr_storage addr; /* where to listen (TCP) */
	socklen_t addr_len;
	char token[OSM_PEER_TOKEN_MAX + 1]; /* "" = none (loopback only) */
	struct osm_peer_limits lim;
	int ready_fd;  /* >= 0: once listening, the bound port is written there as
			* "PORT\n" and the fd closed (a failure before leaves it
			* open); < 0: a "listening on ADDR:PORT" line on stderr */
	int log;       /* what it says on stderr (enum osm_peer_log); a zeroed
			* config (the probe's own peer) says nothing */
};

/* What the peer says on stderr (docs/peer.md, "What the peer says"). */
enum osm_peer_log {
	OSM_PEER_LOG_NONE,     /* nothing: the probe's own peer (its client side reports) */
	OSM_PEER_LOG_PROBLEMS, /* `serve` (and --quiet): the listening line, and what went wrong: a
				* client refused, a session ended by a limit or an error, or killed */
	OSM_PEER_LOG_SESSIONS, /* `serve -v`: also one line per session, as it ends, and one at the stop */
};

#define OSM_PEER_TOKEN_ENV "OSMETER_PEER_TOKEN"

/* A token is 1 to OSM_PEER_TOKEN_MAX printable ASCII bytes without a space
 * (it travels as one word of the hello). 0, or -1 with the reason. */
int osm_peer_token_valid(const char *t, size_t len, char *err, size_t errlen);
/* The token a peer or a client uses: the first line of the file `path`
 * (its line end and trailing blanks cut; a warning when other users may
 * read the file), or with path NULL $OSMETER_PEER_TOKEN, or "" when that
 * is unset or empty. 0, or -1 with the reason (unreadable file, bad token). */
int osm_peer_token_load(const char *path, char token[OSM_PEER_TOKEN_MAX + 1], char *err, size_t errlen);

/* Defaults (docs/peer.md): 120 s, 64 GiB, 32 sessions, 256 pending, 5 s. */
void osm_peer_default_limits(struct osm_peer_limits *lim);

/* Parses "HOST:PORT", "[V6]:PORT", or a bare host with the default port
 * when allow_no_port (a bare IPv6 address too: "::1"). HOST is a numeric
 * IPv4 or IPv6 address (an IPv6 one may carry "%IFNAME" or "%N" as its
 * scope) or "localhost"; no other name is resolved: a static probe cannot
 * count on the system's resolver (NSS). Returns 0, or -1 with the reason
 * in err. */
int osm_peer_parse_addr(const char *s, int allow_no_port, struct sockaddr_storage *ss, socklen_t *len,
			char *err, size_t errlen);
/* 1 when the address is loopback (127/8, ::1, ::ffff:127/104). */
int osm_peer_is_loopback(const struct sockaddr *sa);
/* The family's loopback address (AF_INET6: ::1, else 127.0.0.1), port 0,
 * in *ss (cleared first) and its length in *len. */
void osm_peer_loopback_addr(int family, struct sockaddr_storage *ss, socklen_t *len);
/* The host part: "127.0.0.1", "::1", "fe80::1%2" (an IPv6 scope as its
 * number); "?" for another family. */
void osm_peer_format_host(const struct sockaddr *sa, char *buf, size_t len);
/* Host and port: "127.0.0.1:7478", "[::1]:7478"; "(address family N)"
 * for another family. */
void osm_peer_format_addr(const struct sockaddr *sa, char *buf, size_t len);
/* The port (host order), or -1 for a family other than AF_INET(6). */
int osm_peer_port(const struct sockaddr *sa);

/* Runs the peer until SIGINT, SIGTERM or SIGHUP (returns 0) or a fatal
 * error (-1, the reason in err: cannot listen). Refuses a non-loopback
 * address without a token. While it runs, those signals and SIGCHLD are
 * blocked (read through a signalfd) and SIGPIPE is ignored; the mask is
 * restored on return. Session processes are killed and reaped before it
 * returns. */
int osm_peer_serve(const struct osm_peer_config *cfg, char *err, size_t errlen);

/* ---- client side ---------------------------------------------------- */

/* A peer the benchmark talks to: a remote one, or the probe's own on
 * loopback (a child process, killed and reaped on every exit path). */
struct osm_peer {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char token[OSM_PEER_TOKEN_MAX + 1];
	pid_t pid;              /* > 0: our own peer process */
	int cleanup_handle;     /* its cleanup-stack entry, or -1 */
	char version[64];       /* the peer's probe version (from its answer) */
	char where[128];        /* "127.0.0.1:41234 (own peer on CPU 1)" or "10.0.0.2:7478" */
	int unreachable;        /* the last osm_peer_session failed to connect, or got no answer to its
				 * hello (a timeout or the connection closed): not an "ERR ..." refusal */
};

/* Remote peer: spec "HOST:PORT" (osm_peer_parse_addr; no port: 7478),
 * token "" or NULL when it needs none. Own peer: spec NULL or "", family
 * AF_INET (127.0.0.1) or AF_INET6 (::1), a kernel-chosen port, pinned to
 * cpu with its sessions (-1: not pinned, so it keeps the probe's own
 * affinity: the probe's CPU once the probe is pinned). Either way a first
 * session (`close`) checks that the peer answers and takes the token, and
 * sets p->version. Returns 0, or -1 with the reason in err, e.g. "peer
 * 10.0.0.2:7478 did not answer the hello in 10 s", "peer 10.0.0.2:7478
 * refused: ERR token". Every blocking step of the client times out after
 * 10 s. */
int osm_peer_open(struct osm_peer *p, const char *spec, const char *token, int family, int cpu, char *err,
		  size_t errlen);
/* Stops our own peer (SIGTERM, reaped) and forgets it. */
void osm_peer_close(struct osm_peer *p);

/* Remote peers this process could not reach: once a session to a remote
 * peer fails to connect or gets no answer to its hello (p->unreachable),
 * osm_peer_open fails for that address at once, citing that first error,
 * so a dead peer costs one timeout per probe run, not one per benchmark.
 * osm_peer_open marks the peers it cannot reach; this marks one found
 * unreachable later (a session of a benchmark). The own peer is never
 * marked. */
void osm_peer_mark_unreachable(const struct osm_peer *p, const char *why);
/* After a remote peer closed or reset a session unasked: whether it still
 * answers a new session (1; an "ERR ..." refusal counts: it is up), or
 * cannot be reached any more (0, the reason in err, and the peer marked as
 * above). Costs at most one client timeout (10 s). */
int osm_peer_still_answers(const struct osm_peer *p, char *err, size_t errlen);

/* A session: a connected TCP socket past its hello. service is one of
 * "echo", "sink", "source", "udp", "close"; args is "" or "k=v k=v"
 * (source: size=N). On success returns the socket (blocking, no timeouts
 * left on it, Nagle as the kernel's default: the caller sets TCP_NODELAY
 * if it wants it); the answer's key=value words (udp_port=, cookie=,
 * mtu= the peer's view of the path MTU) are copied into answer (may be
 * NULL), the peer's version into p->version. Nothing after the answer
 * line has been read. -1 with the reason in err: the peer's "ERR ..."
 * line, a timeout, or the socket error. */
int osm_peer_session(struct osm_peer *p, const char *service, const char *args, char *answer, size_t anslen,
		     char *err, size_t errlen);
/* A bare TCP connection to the peer (no hello), connect() blocking, at
 * most 10 s (SO_SNDTIMEO, reset to none afterwards); the peer closes it
 * silently when the client closes it. */
int osm_peer_connect(const struct osm_peer *p, char *err, size_t errlen);
/* The path MTU of a connected socket (IP_MTU / IPV6_MTU), or -1. */
int osm_peer_path_mtu(int fd);

#endif
