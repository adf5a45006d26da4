/* poll.h - what the poll family's two files share (poll.c: the
 * benchmarks; poll_table.c: their table); not for use outside bench/poll*.c. */
#ifndef OSM_BENCH_POLL_H
#define OSM_BENCH_POLL_H

#include <stddef.h>
#include <stdint.h>

#include "../bench.h"

enum fd_kind { FDS_TCP, FDS_SOCKETPAIR };

/* poll.poll and poll.epoll: descriptors at most (the kernel's nr_open is
 * 1 048 576 by default; 100 000 sockets already take ~400 MiB of kernel
 * memory). */
#define MAX_NFDS 100000

int osm_poll_select_setup(struct osm_ctx *ctx);
int osm_poll_poll_setup(struct osm_ctx *ctx);
int osm_poll_epoll_setup(struct osm_ctx *ctx);
int osm_poll_run(struct osm_ctx *ctx, uint64_t batch);
void osm_poll_teardown(struct osm_ctx *ctx);
int osm_poll_check(const struct osm_bench *b, const struct osm_pval *pv, char *err, size_t len);

#endif
