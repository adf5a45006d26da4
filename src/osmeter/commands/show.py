"""osmeter show: one stored run, its statistics and warnings.

Stored text (labels, parameters, machine values, error messages) is shown
without escape sequences, controls or bidi overrides (osmeter.textsafe); with
--json those characters are \\u escapes, so the data stays exact. A long label
or flag is cut with a marker (`…(+2950 chars)`); --json has it whole."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from .. import textsafe
from ..export import EXPORTERS
from ..report import names as nm
from ..fmt import terminal_width
from ..report.params import catalog_defaults, every_param, telling_params
from ..report.text import render_run
from ..store import open_store, resolve_location
from ..store.refs import RUN_HELP
from ..store.base import Store
from ..warnings import run_warnings
from .options import add_json_option, add_store_option

NAME = "show"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="show one stored run", description="Show one stored run with its statistics.")
    p.add_argument("run", metavar="RUN", help=f"{RUN_HELP} (see `osmeter runs`)")
    nm.add_names_option(p)
    add_wide_option(p)
    add_store_option(p)
    add_json_option(p, "the run (the JSON export format)")
    return p


MIN_WIDTH = 60  # a narrower terminal still gets 60-character lines
DEFAULT_WIDTH = 100  # what a pipe or a file gets without $COLUMNS


def table_width() -> int:
    """$COLUMNS when set, else the terminal's width when stdout is one, else DEFAULT_WIDTH (files and
    pipes get the same text); never under MIN_WIDTH."""
    return max(MIN_WIDTH, terminal_width() or DEFAULT_WIDTH)


def add_wide_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--wide", action="store_true",
                   help="every column (lebench_kbest, CV, outliers, unit) and every parameter, defaults "
                   "included, one line per result however wide (default: the parameters that vary or differ "
                   "from the default, folded to the terminal's width, $COLUMNS or 100)")


def render_stored_run(store: Store, ref: str, as_json: bool, names: str = "osmeter", wide: bool = False) -> str:
    """A stored run as the summary table (counters below it) with warnings, or as the JSON export.

    `names`: "osmeter" or "lebench" (rows labelled and ordered as LEBench's table); `wide`: every
    column and parameter, no folding (--wide)."""
    info = store.run(ref)
    results = store.results(info.id)
    row_names = nm.row_names(names)
    if as_json:
        return EXPORTERS["json"](info, results, names=row_names)  # escapes what a terminal would obey
    rows = nm.table_rows(row_names, [info])
    # what was stored may hold anything: cleaned before the table is laid out, and once more whole
    info, results = textsafe.scrub(info), [textsafe.scrub(r) for r in results]
    if info.label:  # a long label is cut in the heading (textsafe.clip); --json has it whole
        info = dataclasses.replace(info, label=textsafe.clip(info.label))
    params_of = every_param if wide else telling_params(results, catalog_defaults())
    return textsafe.terminal(render_run(info, results, run_warnings(info, results, params_of), table_width(), row_names, rows,
                                        params_of, wide))


def run(args: argparse.Namespace) -> int:
    store = open_store(resolve_location(args.store), create=False)
    try:
        sys.stdout.write(render_stored_run(store, args.run, args.json, args.names, args.wide))
    finally:
        store.close()
    return 0
