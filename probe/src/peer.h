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
	int ready_fd;  /* >= 0: the bound port is written there as "PORT\n", then closed */
	int quiet;     /* 1: no log line per session on stderr */
};

/* Defaults (docs/peer.md): 120 s, 64 GiB, 32 sessions, 256 pending, 5 s. */
void osm_peer_default_limits(struct osm_peer_limits *lim);

/* Parses "HOST:PORT", "[V6]:PORT", or a bare host with the default port
 * when allow_no_port. Numeric addresses and names (getaddrinfo). Returns 0,
 * or -1 with the reason in err. */
int osm_peer_parse_addr(const char *s, int allow_no_port, struct sockaddr_storage *ss, socklen_t *len,
			char *err, size_t errlen);
/* 1 when the address is loopback (127/8, ::1, ::ffff:127/104). */
int osm_peer_is_loopback(const struct sockaddr *sa);

/* Runs the peer until SIGINT or SIGTERM (returns 0) or a fatal error
 * (-1, the reason in err). Refuses a non-loopback address without a token. */
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
	char where[128];        /* "127.0.0.1:41234 (own peer, cross_cpu)" or "HOST:PORT" */
};

/* Remote peer: spec "HOST:PORT" (token may be ""). Own peer: spec NULL or
 * "", family AF_INET or AF_INET6, pinned to cpu (-1: not pinned). Returns
 * 0, or -1 with the reason in err. */
int osm_peer_open(struct osm_peer *p, const char *spec, const char *token, int family, int cpu, char *err,
		  size_t errlen);
/* Stops our own peer (SIGTERM, reaped) and forgets it. */
void osm_peer_close(struct osm_peer *p);

/* A session: a connected TCP socket past its hello. service is one of
 * "echo", "sink", "source", "udp", "close"; args is "" or "k=v k=v"
 * (source: size=N). On success returns the socket; the answer's key=value
 * words (udp_port=, cookie=) are copied into answer. -1 with the reason in
 * err: the peer's "ERR ..." line, a timeout, or the socket error. */
int osm_peer_session(struct osm_peer *p, const char *service, const char *args, char *answer, size_t anslen,
		     char *err, size_t errlen);
/* A bare TCP connection to the peer (no hello), connect() blocking. */
int osm_peer_connect(const struct osm_peer *p, char *err, size_t errlen);
/* The path MTU of a connected socket (IP_MTU / IPV6_MTU), or -1. */
int osm_peer_path_mtu(int fd);

#endif
