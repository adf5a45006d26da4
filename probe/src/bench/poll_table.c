/* poll_table.c - the poll family's table: select, poll, epoll (poll.c
 * holds the benchmarks). Method: docs/methods/poll.md. */
#include <stddef.h>
#include <sys/select.h>

#include "../bench.h"
#include "../compiler.h"
#include "poll.h"

static const char *const kinds[] = {"tcp", "socketpair", NULL};
static const char *const makes[] = {"once", "per_call", NULL};

/* ---- the table -------------------------------------------------------- */

#define FDS_PARAM                                                                                         \
	{.name = "fds", .type = OSM_P_ENUM, .choices = kinds, .def = FDS_TCP,                                 \
	 .help = "tcp: unconnected TCP sockets, all ready (POLLHUP; LEBench); socketpair: AF_UNIX stream "    \
		 "socket pair ends, `ready` of them with 1 byte pending"}
#define MAKE_PARAM                                                                                        \
	{.name = "make", .type = OSM_P_ENUM, .choices = makes, .def = 0,                                      \
	 .help = "once: the descriptors are made in setup and every call watches them (a standing set); "    \
		 "per_call: new ones for every call, made and closed outside the clock (LEBench)"}
#define READY_PARAM(hi)                                                                                   \
	{.name = "ready", .type = OSM_P_INT, .def = -1, .min = -1, .max = (hi),                                \
	 .help = "descriptors that are ready on every call, at most nfds; -1: all of them (LEBench); "       \
		 "fds=tcp: all only"}

static const struct osm_param select_params[] = {
	{.name = "nfds", .type = OSM_P_INT, .def = 10, .min = 1, .max = FD_SETSIZE,
	 .help = "descriptors watched (LEBench: 10, big: 1000); at most FD_SETSIZE, and every one must be "
		 "numbered below FD_SETSIZE (the probe's own descriptors come first)"},
	FDS_PARAM,
	READY_PARAM(FD_SETSIZE),
	MAKE_PARAM,
	{0},
};

static const struct osm_param many_params[] = {
	{.name = "nfds", .type = OSM_P_INT, .def = 10, .min = 1, .max = MAX_NFDS,
	 .help = "descriptors watched (LEBench: 10, big: 1000); RLIMIT_NOFILE is raised to its hard limit "
		 "when needed"},
	FDS_PARAM,
	READY_PARAM(MAX_NFDS),
	MAKE_PARAM,
	{0},
};

/* LEBench's two sizes with its descriptors, and 1 000 descriptors of which
 * one is ready: where epoll's ready list and select/poll's scan part. */
#define POLL_SWEEP "nfds=10;nfds=100;nfds=1000;nfds=1000,fds=socketpair,ready=1"

static const struct osm_bench poll_benches[] = {
	{
		.name = "select",
		.desc = "select() with a zero timeout on nfds descriptors in the read set, `ready` of them ready",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = select_params,
		.sweep = POLL_SWEEP,
		.setup = osm_poll_select_setup,
		.run = osm_poll_run,
		.teardown = osm_poll_teardown,
		.check = osm_poll_check,
	},
	{
		.name = "poll",
		.desc = "poll() with a zero timeout on nfds descriptors (POLLIN), `ready` of them ready",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = many_params,
		.sweep = POLL_SWEEP,
		.setup = osm_poll_poll_setup,
		.run = osm_poll_run,
		.teardown = osm_poll_teardown,
		.check = osm_poll_check,
	},
	{
		.name = "epoll",
		.desc = "epoll_wait() with a zero timeout on an epoll set of nfds descriptors (EPOLLIN), `ready` "
			"of them ready",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = many_params,
		.sweep = POLL_SWEEP,
		.setup = osm_poll_epoll_setup,
		.run = osm_poll_run,
		.teardown = osm_poll_teardown,
		.check = osm_poll_check,
	},
};

const struct osm_family osm_family_poll = {
	"poll", "readiness of many descriptors: select(), poll() and epoll_wait() over N of which K are ready "
	"(LEBench select/poll/epoll)",
	poll_benches, ARRAY_SIZE(poll_benches),
};
