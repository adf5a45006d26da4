/* file_contention.c - PLACEHOLDER until its benchmarks land (issue 11): skips. */
#include "../bench.h"
#include "file.h"

int osm_file_contention_setup(struct osm_ctx *ctx)
{
	return osm_fail(ctx, OSM_SKIP, "not implemented yet");
}

int osm_file_contention_run(struct osm_ctx *ctx, uint64_t batch)
{
	(void)batch;
	return osm_fail(ctx, OSM_ERROR, "not implemented yet");
}

void osm_file_contention_teardown(struct osm_ctx *ctx)
{
	(void)ctx;
}
