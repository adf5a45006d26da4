/* main.c - osmeter-probe: argv -> list | run | serve | sysinfo | version | init.
 * `init` (or this program run as /init) is init mode (init.h,
 * docs/probe-init.md): PID 1 of a VM, running a plan of the commands
 * dispatch() runs.
 *
 * Exit codes (docs/exit-codes.md):
 *   0  everything ran (some benchmarks may have been skipped, with reasons)
 *   1  at least one benchmark failed (an `error` record says why)
 *   2  bad input: unknown command, option, benchmark, parameter or value;
 *      nothing was run and nothing was written to the output
 *   3  cannot run: the output cannot be written, no usable clock, no work
 *      directory
 *   killed by SIGINT/SIGTERM/...: after cleaning up and writing an `end`
 *      record with status "interrupted", the probe dies of the same signal
 *      (a shell shows 128 + the signal number).
 * `serve` runs the network peer: 0 when SIGINT, SIGTERM or SIGHUP stopped
 * it, 2 bad options (a non-loopback address without a token included), 3
 * when it cannot listen. */
#include <stdio.h>
#include <string.h>

#include "build_info.h"
#include "catalog.h"
#include "cli.h"
#include "clock.h"
#include "emit.h"
#include "init.h"
#include "log.h"
#include "peer.h"
#include "records.h"
#include "run.h"
#include "sysinfo.h"

static int has_flag(int argc, char **argv, const char *flag)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], flag))
			return 1;
	return 0;
}

static int only_flags(int argc, char **argv, const char *const *allowed)
{
	for (int i = 0; i < argc; i++) {
		int ok = 0;
		for (int k = 0; allowed[k]; k++)
			ok |= !strcmp(argv[i], allowed[k]);
		if (!ok) {
			osm_err("unknown argument '%s'", argv[i]);
			return 0;
		}
	}
	return 1;
}

static int cmd_list(int argc, char **argv)
{
	static const char *const allowed[] = {"--json", "--all", NULL};
	if (!only_flags(argc, argv, allowed)) {
		fprintf(stderr, "usage: osmeter-probe list [--json] [--all]\n");
		return OSM_EXIT_USAGE;
	}
	if (has_flag(argc, argv, "--json"))
		osm_catalog_list_json(stdout, has_flag(argc, argv, "--all"));
	else
		osm_catalog_list_text(stdout, has_flag(argc, argv, "--all"));
	return OSM_EXIT_OK;
}

static int cmd_sysinfo(int argc, char **argv)
{
	static const char *const allowed[] = {"--json", NULL};
	if (!only_flags(argc, argv, allowed)) {
		fprintf(stderr, "usage: osmeter-probe sysinfo [--json]\n");
		return OSM_EXIT_USAGE;
	}
	if (has_flag(argc, argv, "--json"))
		osm_write_sysinfo_doc(stdout);
	else
		osm_sysinfo_print_text(stdout);
	return OSM_EXIT_OK;
}

/* The network peer until SIGINT/SIGTERM/SIGHUP (exit 0); bad options
 * exit 2, a peer that cannot listen 3. */
static int cmd_serve(int argc, char **argv)
{
	struct osm_peer_config cfg;
	char err[1024];
	if (osm_cli_parse_serve(argc, argv, &cfg, err, sizeof(err))) {
		osm_err("%s", err);
		osm_cli_serve_usage(stderr);
		return OSM_EXIT_USAGE;
	}
	if (osm_peer_serve(&cfg, err, sizeof(err))) {
		osm_err("%s", err);
		return OSM_EXIT_CANNOT_RUN;
	}
	return OSM_EXIT_OK;
}

/* Every argument must be UTF-8: names, values and paths are echoed in JSON
 * strings, and a byte that is not UTF-8 could only be replaced there
 * (docs/exit-codes.md). */
static int check_utf8(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		long bad = osm_utf8_check(argv[i]);
		if (bad >= 0) {
			osm_err("argument %d is not valid UTF-8 (byte 0x%02x at offset %ld); osmeter-probe takes "
				"UTF-8 arguments only", i, (unsigned char)argv[i][bad], bad);
			return -1;
		}
	}
	return 0;
}

/* The commands: argv[0] the program's name, argv[1] the command. Init
 * mode calls it in each command's child. */
static int dispatch(int argc, char **argv)
{
	char err[512];
	if (osm_catalog_check(err, sizeof(err))) {
		osm_err("internal: catalogue check failed: %s", err);
		return OSM_EXIT_CANNOT_RUN;
	}
	if (argc < 2) {
		osm_cli_usage(stderr);
		return OSM_EXIT_USAGE;
	}
	if (check_utf8(argc, argv))
		return OSM_EXIT_USAGE;
	const char *cmd = argv[1];
	if (!strcmp(cmd, "list"))
		return cmd_list(argc - 2, argv + 2);
	if (!strcmp(cmd, "run") || !strcmp(cmd, "hotspots"))
		return osm_run_command(argc - 1, argv + 1);
	if (!strcmp(cmd, "serve"))
		return cmd_serve(argc - 2, argv + 2);
	if (!strcmp(cmd, "sysinfo"))
		return cmd_sysinfo(argc - 2, argv + 2);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("osmeter-probe %s (schema %d, %s)\n", OSM_VERSION, OSM_SCHEMA_VERSION, OSM_ARCH_NAME);
		return OSM_EXIT_OK;
	}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		osm_cli_usage(stdout);
		return OSM_EXIT_OK;
	}
	if (!strcmp(cmd, "init"))
		return osm_init_main(argc - 1, argv + 1, dispatch);
	osm_err("unknown command '%s'; allowed: list, run, hotspots, serve, sysinfo, version, init, help", cmd);
	osm_cli_usage(stderr);
	return OSM_EXIT_USAGE;
}

/* argv[0]'s last component: "init" when the kernel runs this program as /init. */
static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path ? path : "";
}

/* As /init, init mode at once: PID 1 must never return (each command's
 * child checks the catalogue in dispatch()). */
int main(int argc, char **argv)
{
	if (argc >= 1 && !strcmp(base_name(argv[0]), "init"))
		return osm_init_main(argc, argv, dispatch);
	return dispatch(argc, argv);
}
