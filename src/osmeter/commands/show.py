"""osmeter show: one stored run, its statistics and warnings.

Stored text (labels, parameters, machine values, error messages) is shown
without escape sequences, controls or bidi overrides (osmeter.textsafe); with
--json those characters are \\u escapes, so the data stays exact. A long label
or flag is cut with a marker (`…(+2950 chars)`); --json has it whole."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import Any

from .. import textsafe
from ..export import EXPORTERS
from ..report import names as nm
from ..report.text import COUNTER_WIDTH, render_run
from ..store import open_store, resolve_location
from ..store.base import Store
from ..warnings import run_warnings
from .options import add_json_option, add_store_option

NAME = "show"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="show one stored run", description="Show one stored run with its statistics.")
    p.add_argument("run", metavar="RUN", help="a run id (see `osmeter runs`) or 'latest'")
    nm.add_names_option(p)
    add_store_option(p)
    add_json_option(p, "the run (the JSON export format)")
    return p


MIN_WIDTH = 80  # a terminal narrower than this still gets 80-character tables


def table_width() -> int:
    """The terminal's width when stdout is one, else COUNTER_WIDTH (files and pipes get the same text)."""
    try:
        if sys.stdout.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(sys.stdout.fileno()).columns)
    except (OSError, ValueError):
        pass
    return COUNTER_WIDTH


def render_stored_run(store: Store, ref: str, as_json: bool, names: str = "osmeter") -> str:
    """A stored run as the summary table (counters below it) with warnings, or as the JSON export.

    `names`: "osmeter" or "lebench" (rows labelled and ordered as LEBench's table)."""
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
    return textsafe.terminal(render_run(info, results, run_warnings(info, results), table_width(), row_names, rows))


def run(args: argparse.Namespace) -> int:
    store = open_store(resolve_location(args.store), create=False)
    try:
        sys.stdout.write(render_stored_run(store, args.run, args.json, args.names))
    finally:
        store.close()
    return 0
