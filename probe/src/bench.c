/* bench.c - the helpers bench.h offers benchmarks. They live with the
 * contract, below the harness and the catalogue, so a benchmark depends on
 * nothing above bench.h (docs/probe-layout.md). */
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "profile.h"
#include "parse.h"

/* The value of a parameter the benchmark declared; asking for one it did
 * not declare is a bug in the benchmark, caught at its first run. */
const struct osm_pval *osm_pval_of(const struct osm_bench *b, const struct osm_pval *params, const char *name)
{
	for (int i = 0; b->params && b->params[i].name; i++)
		if (!strcmp(b->params[i].name, name))
			return &params[i];
	fprintf(stderr, "osmeter-probe: internal error: %s has no parameter %s\n", b->name, name);
	abort();
}

int64_t osm_param_int(const struct osm_ctx *ctx, const char *name)
{
	return osm_pval_of(ctx->bench, ctx->params, name)->i;
}

const char *osm_param_str(const struct osm_ctx *ctx, const char *name)
{
	return osm_pval_of(ctx->bench, ctx->params, name)->s;
}

/* fmt formatted into buf (len bytes); when it does not fit, formatted whole
 * into memory and cut in its middle (osm_cut_middle). Without memory for
 * that, the end is cut and marked so. ap2 is a copy of ap. */
static void format_whole(char *buf, size_t len, const char *fmt, va_list ap, va_list ap2)
{
	int n = vsnprintf(buf, len, fmt, ap);
	if (n < 0 || (size_t)n < len)
		return;
	char *all = malloc((size_t)n + 1);
	if (all) {
		vsnprintf(all, (size_t)n + 1, fmt, ap2);
		osm_cut_middle(buf, len, all);
		free(all);
		return;
	}
	static const char oom[] = " [... cut here: no memory for the whole message]";
	if (len > sizeof(oom))
		memcpy(buf + len - sizeof(oom), oom, sizeof(oom));
}

int osm_fail(struct osm_ctx *ctx, enum osm_status st, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	format_whole(ctx->msg, sizeof(ctx->msg), fmt, ap, ap2);
	va_end(ap2);
	va_end(ap);
	return st;
}

int osm_fail_errno(struct osm_ctx *ctx, const char *what)
{
	return osm_fail(ctx, OSM_ERROR, "%s: %s", what, strerror(errno));
}

int osm_skip_one_cpu(struct osm_ctx *ctx, const char *setting, const char *instead)
{
	return osm_fail(ctx, OSM_SKIP, "%s needs a second CPU, but the probe may use only CPU %d here "
			"(online and in its affinity mask): allow it another CPU%s%s",
			setting, ctx->cpu, instead ? ", or give " : "", instead ? instead : "");
}

void osm_add_extra(struct osm_ctx *ctx, const char *key, double value)
{
	for (int i = 0; i < ctx->n_extra; i++) {
		if (!strcmp(ctx->extra[i].key, key)) {
			ctx->extra[i].value = value;
			return;
		}
	}
	if (ctx->n_extra >= OSM_MAX_EXTRA) {
		/* Never drop a figure silently: a benchmark with more extras than
		 * OSM_MAX_EXTRA is a bug, caught at its first run. */
		fprintf(stderr, "osmeter-probe: internal error: %s adds extra '%s' beyond the limit of %d\n",
			ctx->bench ? ctx->bench->name : "?", key, OSM_MAX_EXTRA);
		abort();
	}
	ctx->extra[ctx->n_extra].key = key;
	ctx->extra[ctx->n_extra].value = value;
	ctx->n_extra++;
}

void osm_add_info(struct osm_ctx *ctx, const char *key, const char *fmt, ...)
{
	int i = 0;
	while (i < ctx->n_info && strcmp(ctx->info[i].key, key))
		i++;
	if (i == ctx->n_info) {
		if (ctx->n_info >= OSM_MAX_INFO) {
			fprintf(stderr, "osmeter-probe: internal error: %s adds info '%s' beyond the limit of %d\n",
				ctx->bench ? ctx->bench->name : "?", key, OSM_MAX_INFO);
			abort();
		}
		ctx->n_info++;
	}
	ctx->info[i].key = key;
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	format_whole(ctx->info[i].value, OSM_INFO_LEN, fmt, ap, ap2);
	va_end(ap2);
	va_end(ap);
}

/* The profile's switching outside the counters' window, as the harness's;
 * errno as the benchmark left it (it may read it after the window). */
void osm_count_begin(struct osm_ctx *ctx)
{
	int e = errno;
	if (ctx->profile && ctx->counting)
		osm_profile_enable(ctx->profile);
	if (ctx->counters && ctx->counting)
		osm_counters_begin(ctx->counters);
	errno = e;
}

void osm_count_end(struct osm_ctx *ctx, uint64_t ops)
{
	int e = errno;
	if (ctx->counters && ctx->counting)
		osm_counters_end(ctx->counters, ops * (ctx->ops_per_unit ? ctx->ops_per_unit : 1));
	if (ctx->profile && ctx->counting)
		osm_profile_disable(ctx->profile, ops * (ctx->ops_per_unit ? ctx->ops_per_unit : 1));
	errno = e;
}

void osm_count_note(struct osm_ctx *ctx, const char *note)
{
	if (ctx->counters)
		osm_counters_describe(ctx->counters, 0, note);
}
