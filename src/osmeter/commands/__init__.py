"""The commands, explicit and in the order `osmeter --help` lists them.

Each module has NAME, add_parser(subparsers) -> parser and
run(args) -> exit code; the logic lives in plain functions beside them.
"""

from __future__ import annotations

from . import (compare, export, fleet, hotspots, import_, list_, memlevels, pagecache, plot, report, run, runs, serve,
               show, store_cmd, study, sysinfo)

COMMANDS = (run, list_, runs, show, compare, report, plot, export, import_, sysinfo, serve, study, hotspots, memlevels,
            pagecache, fleet, store_cmd)
