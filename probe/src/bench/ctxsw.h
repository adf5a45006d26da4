/* ctxsw.h - what the parts of the ctxsw family (ctxsw.c, ctxsw_ring.c)
 * share; not for use outside bench/ctxsw*.c. */
#ifndef OSM_BENCH_CTXSW_H
#define OSM_BENCH_CTXSW_H

#include <stdint.h>

#include "../bench.h"

#define MAX_RING 64 /* ring members, the probe included */

/* ctxsw_ring.c: ctxsw.pipe (lmbench's ring) and ctxsw.pipe_rtt (LEBench). */
int ctxsw_ring_setup(struct osm_ctx *ctx);
int ctxsw_rtt_setup(struct osm_ctx *ctx);
int ctxsw_ring_run(struct osm_ctx *ctx, uint64_t batch);
void ctxsw_ring_teardown(struct osm_ctx *ctx);

#endif
