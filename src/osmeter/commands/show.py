"""osmeter show: one stored run, its statistics and warnings."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..export import EXPORTERS
from ..report.text import render_run
from ..store import open_store, resolve_location
from ..store.base import Store
from ..warnings import run_warnings
from .options import add_json_option, add_store_option

NAME = "show"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="show one stored run", description="Show one stored run with its statistics.")
    p.add_argument("run", metavar="RUN", help="a run id (see `osmeter runs`) or 'latest'")
    add_store_option(p)
    add_json_option(p, "the run (the JSON export format)")
    return p


def render_stored_run(store: Store, ref: str, as_json: bool) -> str:
    """A stored run as the summary table with warnings, or as the JSON export."""
    info = store.run(ref)
    results = store.results(info.id)
    if as_json:
        return EXPORTERS["json"](info, results)
    return render_run(info, results, run_warnings(info, results))


def run(args: argparse.Namespace) -> int:
    store = open_store(resolve_location(args.store), create=False)
    try:
        sys.stdout.write(render_stored_run(store, args.run, args.json))
    finally:
        store.close()
    return 0
