/* ipc.c - ipc.*: pipes, FIFOs, Unix sockets and eventfds between the probe
 * and a partner process or thread. Method: docs/methods/ipc.md
 *
 * This file: the family's table. Round trips (pipe_lat, fifo_lat,
 * unix_lat, eventfd) are in ipc_lat.c, bandwidth (pipe_bw, unix_bw) in
 * ipc_bw.c, LEBench's send/recv (unix_send, unix_recv) in ipc_lebench.c,
 * the partner and its signals in ipc_party.c. */
#include "ipc.h"

#include "../compiler.h"

static const char *const modes[] = {"process", "thread", NULL};
static const char *const placements[] = {"same_cpu", "cross_cpu", NULL};
static const char *const types[] = {"stream", "dgram", NULL};

#define KIB ((int64_t)1 << 10)
#define MIB ((int64_t)1 << 20)

#define MODE {.name = "mode", .type = OSM_P_ENUM, .choices = modes, .def = 0, \
	      .help = "the partner is a forked process or a thread of the probe"}
#define PLACEMENT {.name = "placement", .type = OSM_P_ENUM, .choices = placements, .def = 0, \
		   .help = "same_cpu: the partner on the probe's CPU; cross_cpu: on another CPU"}
#define TYPE {.name = "type", .type = OSM_P_ENUM, .choices = types, .def = 0, \
	      .help = "socketpair(AF_UNIX, SOCK_STREAM) or SOCK_DGRAM"}
#define LAT_SIZE {.name = "size", .type = OSM_P_SIZE, .def = 1, .min = 1, .max = 1 * MIB, \
		  .help = "bytes each way per round trip (lmbench: 1)"}
#define BW_SIZE {.name = "size", .type = OSM_P_SIZE, .def = 64 * KIB, .min = 1, .max = 16 * MIB, \
		 .help = "bytes per write() and per read() (lmbench: 64 KiB)"}
#define BW_TOTAL {.name = "total", .type = OSM_P_SIZE, .def = 0, .min = 0, .max = 1024 * MIB, \
		  .help = "bytes per timed transfer; 0: lmbench's 10 MiB, or 1024 writes when that is less"}
#define LEB_SIZE {.name = "size", .type = OSM_P_SIZE, .def = 1, .min = 1, .max = 64 * MIB, \
		  .help = "bytes per call (LEBench: 1 and 96000)"}
#define PER_CONN {.name = "per_conn", .type = OSM_P_INT, .def = 0, .min = 0, .max = 1000, \
		  .help = "timed calls per connection; 0: LEBench's 50, or fewer when the socket buffer holds fewer"}

static const struct osm_param lat_params[] = {LAT_SIZE, MODE, PLACEMENT, {0}};
static const struct osm_param unix_lat_params[] = {TYPE, LAT_SIZE, MODE, PLACEMENT, {0}};
static const struct osm_param efd_params[] = {MODE, PLACEMENT, {0}};
static const struct osm_param bw_params[] = {BW_SIZE, BW_TOTAL, MODE, PLACEMENT, {0}};
static const struct osm_param unix_bw_params[] = {TYPE, BW_SIZE, BW_TOTAL, MODE, PLACEMENT, {0}};
static const struct osm_param leb_params[] = {LEB_SIZE, PER_CONN, PLACEMENT, {0}};

static const struct osm_bench ipc_benches[] = {
	{
		.name = "pipe_lat",
		.desc = "round trip of size bytes through two pipes (lmbench lat_pipe), per round trip",
		.unit = OSM_UNIT_NS,
		/* Not quick: ctxsw.pipe_rtt, in it, is this round trip at size=1. */
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = lat_params,
		.setup = ipc_pipe_lat_setup,
		.run = ipc_lat_run,
		.teardown = ipc_lat_teardown,
	},
	{
		.name = "pipe_bw",
		.desc = "pipe bandwidth, partner writes and probe reads (lmbench bw_pipe), by write size",
		.unit = OSM_UNIT_BYTES_PER_S,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = bw_params,
		.sweep = "size=4K;size=64K;size=1M",
		.setup = ipc_pipe_bw_setup,
		.run = ipc_bw_run,
		.teardown = ipc_bw_teardown,
	},
	{
		.name = "unix_lat",
		.desc = "round trip of size bytes over a Unix socket pair (lmbench lat_unix), stream or datagram",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = unix_lat_params,
		.sweep = "type=stream;type=dgram",
		.setup = ipc_unix_lat_setup,
		.run = ipc_lat_run,
		.teardown = ipc_lat_teardown,
	},
	{
		.name = "unix_bw",
		.desc = "Unix socket bandwidth, partner writes and probe reads (lmbench bw_unix), stream or datagram",
		.unit = OSM_UNIT_BYTES_PER_S,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = unix_bw_params,
		.sweep = "type=stream;type=dgram",
		.setup = ipc_unix_bw_setup,
		.run = ipc_bw_run,
		.teardown = ipc_bw_teardown,
	},
	{
		.name = "unix_send",
		.desc = "sendto(MSG_DONTWAIT) on a Unix stream connection nobody reads (LEBench send, big send)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_FULL,
		.params = leb_params,
		.sweep = "size=1;size=96000",
		.setup = ipc_send_setup,
		.run = ipc_sendrecv_run,
		.teardown = ipc_sendrecv_teardown,
	},
	{
		.name = "unix_recv",
		.desc = "recvfrom(MSG_DONTWAIT) of bytes already queued on a Unix stream connection (LEBench recv)",
		.unit = OSM_UNIT_NS,
		.flags = OSM_SELF_TIMED | OSM_SELF_COUNTED,
		.suites = OSM_SUITE_FULL,
		.params = leb_params,
		.sweep = "size=1;size=96000",
		.setup = ipc_recv_setup,
		.run = ipc_sendrecv_run,
		.teardown = ipc_sendrecv_teardown,
	},
	{
		.name = "fifo_lat",
		.desc = "round trip of size bytes through two named FIFOs (lmbench lat_fifo), per round trip",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = lat_params,
		.setup = ipc_fifo_lat_setup,
		.run = ipc_lat_run,
		.teardown = ipc_lat_teardown,
	},
	{
		.name = "eventfd",
		.desc = "round trip of a wake-up through two eventfds, per round trip",
		.unit = OSM_UNIT_NS,
		.suites = OSM_SUITE_STANDARD | OSM_SUITE_FULL,
		.params = efd_params,
		.setup = ipc_eventfd_setup,
		.run = ipc_eventfd_run,
		.teardown = ipc_lat_teardown,
	},
};

const struct osm_family osm_family_ipc = {
	"ipc", "pipes, FIFOs, Unix sockets and eventfds: round trips, bandwidth, LEBench send/recv",
	ipc_benches, ARRAY_SIZE(ipc_benches),
};
