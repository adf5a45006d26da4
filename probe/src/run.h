/* run.h - the `run` and `hotspots` commands: options, pinning, the clock,
 * every instance measured and recorded in order, the end record. */
#ifndef OSM_RUN_H
#define OSM_RUN_H

/* argv from "run" or "hotspots" (argv[0]) on. Returns the exit code
 * (enum osm_exit, cli.h): bad input is reported before anything is
 * written; a run that could not write its output is OSM_EXIT_CANNOT_RUN. */
int osm_run_command(int argc, char **argv);

#endif
