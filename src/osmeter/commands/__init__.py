"""The commands, explicit and in the order `osmeter --help` lists them.

Each module has NAME, add_parser(subparsers) -> parser and
run(args) -> exit code; the logic lives in plain functions beside them.
"""

from __future__ import annotations

from . import export, import_, list_, run, runs, show, sysinfo

COMMANDS = (run, list_, runs, show, export, import_, sysinfo)
