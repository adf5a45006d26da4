/* cli_serve.c - `serve` options (cli.h): the peer's address, token and
 * limits, checked whole before the peer starts (docs/peer.md). Options
 * are matched exactly (no abbreviations), each given at most once. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "parse.h"
#include "peer.h"


/* The options with a value first, the flags (no value) from O_QUIET on. */
enum { O_LISTEN, O_TOKEN, O_TOKEN_FILE, O_MAX_SESSIONS, O_SESSION_TIME, O_SESSION_BYTES, O_QUIET, O_VERBOSE, N_OPTS };

static const char *const names[N_OPTS] = {"listen",	  "token",	   "token-file", "max-sessions",
					  "session-time", "session-bytes", "quiet",	 "verbose"};

void osm_cli_serve_usage(FILE *f)
{
	fprintf(f, "usage: osmeter-probe serve [--listen ADDR[:PORT]] [--token T | --token-file F]\n"
		   "                           [--max-sessions N] [--session-time S] [--session-bytes B]\n"
		   "                           [-v | --verbose | --quiet]\n");
}

static int take_token(struct osm_peer_config *cfg, const char *t, const char *from, char *err, size_t errlen)
{
	char why[256];
	size_t len = strlen(t);
	if (osm_peer_token_valid(t, len, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", from, why);
		return -1;
	}
	memcpy(cfg->token, t, len + 1);
	return 0;
}

static int set_value(struct osm_peer_config *cfg, int o, const char *v, char *err, size_t errlen)
{
	char why[300];
	int64_t i;
	int r = 0;
	switch (o) {
	case O_LISTEN:
		r = osm_peer_parse_addr(v, 1, &cfg->addr, &cfg->addr_len, why, sizeof(why));
		break;
	case O_TOKEN:
		return take_token(cfg, v, "--token", err, errlen);
	case O_TOKEN_FILE:
		return osm_peer_token_load(v, cfg->token, err, errlen);
	case O_MAX_SESSIONS:
		r = osm_parse_int(v, 1, 1024, &i, why, sizeof(why));
		cfg->lim.max_sessions = (int)i;
		break;
	case O_SESSION_TIME:
		r = osm_parse_double(v, 0.1, 86400, &cfg->lim.session_s, why, sizeof(why));
		break;
	case O_SESSION_BYTES:
		r = osm_parse_size(v, 1, (int64_t)1 << 50, &i, why, sizeof(why));
		cfg->lim.session_bytes = (uint64_t)i;
		break;
	}
	if (r)
		snprintf(err, errlen, "--%s: %s", names[o], why);
	return r;
}

/* Which option argv[k] is (and its inline "=value"), or -1. */
static int which(const char *a, const char **inline_v)
{
	*inline_v = NULL;
	if (!strcmp(a, "-v"))
		return O_VERBOSE;
	if (strncmp(a, "--", 2))
		return -1;
	for (int o = 0; o < N_OPTS; o++) {
		size_t l = strlen(names[o]);
		if (!strncmp(a + 2, names[o], l) && (a[2 + l] == 0 || a[2 + l] == '=')) {
			*inline_v = a[2 + l] ? a + 3 + l : NULL;
			return o;
		}
	}
	return -1;
}

static int parse_args(int argc, char **argv, const char **val, char *err, size_t errlen)
{
	char sh[OSM_SHOW_LEN];
	for (int k = 0; k < argc; k++) {
		const char *v;
		int o = which(argv[k], &v);
		if (o < 0) {
			snprintf(err, errlen, "serve: unknown argument '%s'; allowed: --listen, --token, --token-file, "
				 "--max-sessions, --session-time, --session-bytes, -v/--verbose, --quiet",
				 osm_shorten(argv[k], sh, sizeof(sh)));
			return -1;
		}
		if (o >= O_QUIET && v) {
			snprintf(err, errlen, "--%s takes no value", names[o]);
			return -1;
		}
		if (o < O_QUIET && !v) {
			if (k + 1 == argc) {
				snprintf(err, errlen, "--%s needs a value", names[o]);
				return -1;
			}
			v = argv[++k];
		}
		if (val[o]) {
			snprintf(err, errlen, "--%s given twice; give it once", names[o]);
			return -1;
		}
		val[o] = o >= O_QUIET ? "" : v;
	}
	if (val[O_TOKEN] && val[O_TOKEN_FILE]) {
		snprintf(err, errlen, "--token and --token-file: give one of them");
		return -1;
	}
	if (val[O_QUIET] && val[O_VERBOSE]) {
		snprintf(err, errlen, "--quiet and --verbose: give one of them");
		return -1;
	}
	return 0;
}

int osm_cli_parse_serve(int argc, char **argv, struct osm_peer_config *cfg, char *err, size_t errlen)
{
	const char *val[N_OPTS] = {0};
	memset(cfg, 0, sizeof(*cfg));
	osm_peer_default_limits(&cfg->lim);
	cfg->ready_fd = -1;
	if (parse_args(argc, argv, val, err, errlen))
		return -1;
	if (!val[O_LISTEN])
		val[O_LISTEN] = "127.0.0.1:7478";
	for (int o = 0; o < O_QUIET; o++)
		if (val[o] && set_value(cfg, o, val[o], err, errlen))
			return -1;
	/* --quiet is the default since -v came: the listening line (it names a
	 * port the kernel chose) and problems only. */
	cfg->log = val[O_VERBOSE] ? OSM_PEER_LOG_SESSIONS : OSM_PEER_LOG_PROBLEMS;
	if (!val[O_TOKEN] && !val[O_TOKEN_FILE] && osm_peer_token_load(NULL, cfg->token, err, errlen))
		return -1;
	if (!cfg->token[0] && !osm_peer_is_loopback((const struct sockaddr *)&cfg->addr)) {
		snprintf(err, errlen, "--listen %s is not a loopback address: a peer other machines can reach needs a "
			 "token (--token T, --token-file F or %s), which its clients give with --param token_file=F "
			 "or %s", val[O_LISTEN], OSM_PEER_TOKEN_ENV, OSM_PEER_TOKEN_ENV);
		return -1;
	}
	return 0;
}
