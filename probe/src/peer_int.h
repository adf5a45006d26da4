/* peer_int.h - what the peer's files share (internal to the peer module):
 * the hello's grammar, the token check, setting a port, the session
 * process (peer_session.c) the server (peer_serve.c) forks, the client's
 * deadlines (peer_client.c) the own peer's start (peer_open.c) uses too. */
#ifndef OSM_PEER_INT_H
#define OSM_PEER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "peer.h"

#define OSM_PEER_MAGIC "OSMPEER"
#define OSM_PEER_CLIENT_TIMEOUT_S 10          /* every blocking step of the client */
#define OSM_PEER_SOURCE_MIN 1                 /* source: size= bounds (bytes) */
#define OSM_PEER_SOURCE_MAX (16 * 1024 * 1024)
#define OSM_PEER_SOURCE_DEFAULT (128 * 1024)  /* iperf3's default write */
#define OSM_PEER_ADDR_LEN 64                  /* "[ffff:...:ffff%ifname]:65535" */

enum osm_peer_service { OSM_PEER_ECHO, OSM_PEER_SINK, OSM_PEER_SOURCE, OSM_PEER_UDP, OSM_PEER_CLOSE };

/* A hello, parsed and accepted. */
struct osm_peer_hello {
	enum osm_peer_service service;
	int64_t size; /* source: bytes per send() */
};

/* "echo", "sink", ... */
const char *osm_peer_service_name(enum osm_peer_service s);

/* Parses one hello line (its '\n' and an optional '\r' before it already
 * cut off) and checks its token against `token` ("" = none needed).
 * Returns 0, or -1 with the reason for the "ERR " answer in why (client
 * text in it is shortened and made printable). The order of the checks:
 * the magic and version, then the token, then the service and its keys,
 * so a client without the token learns nothing but "token". */
int osm_peer_parse_hello(const char *line, size_t len, const char *token, struct osm_peer_hello *h, char *why,
			 size_t wlen);

/* 1 when the NUL-free byte strings are equal. Time depends on neither
 * string's content nor on where they differ: both are padded to
 * OSM_PEER_TOKEN_MAX bytes and every byte is compared. */
int osm_peer_token_equal(const char *want, const char *got, size_t glen);

void osm_peer_set_port(struct sockaddr *sa, int port);

/* What a session process gets from the server. */
struct osm_peer_handoff {
	int fd;                        /* the connection, past its hello */
	const char *early;             /* bytes the client sent after its hello */
	size_t n_early;
	struct osm_peer_hello hello;
	const struct osm_peer_limits *lim;
	const unsigned char *source;   /* OSM_PEER_SOURCE_MAX bytes of data for `source` */
	int log;                       /* enum osm_peer_log */
	char client[OSM_PEER_ADDR_LEN];
};

/* Runs one session in the forked process and ends it (_exit). */
void osm_peer_session_run(const struct osm_peer_handoff *s) __attribute__((noreturn));

/* The client's deadlines (peer_client.c): CLOCK_MONOTONIC ns `seconds`
 * from now; and whether fd became readable (or at EOF, or in error: 1)
 * before the deadline passed (0). */
int64_t osm_peer_deadline_in(int seconds);
int osm_peer_readable_by(int fd, int64_t deadline);

#endif
