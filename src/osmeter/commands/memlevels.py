"""osmeter mem-levels: the cache levels a run's mem.latency curve shows.

Reads a stored run's `mem.latency` results, finds the plateaus of each curve
(osmeter.memlevels), and states where they agree or disagree with the cache
sizes sysfs reported for that machine. The curve itself comes from
`osmeter run mem.latency --sweep` (or the standard suite); the figure from
`osmeter plot RUN`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import textsafe
from ..memlevels import analyse_results, render_text
from ..store import open_store, resolve_location
from .options import add_json_option, add_store_option

NAME = "mem-levels"
MEMLEVELS_SCHEMA = 1


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="cache levels detected from a run's mem.latency curve, against sysfs",
        description="Detect cache levels (size boundary, latency in ns and cycles) and main-memory latency "
        "from a stored run's mem.latency curve, and compare them with the sysfs cache sizes.",
    )
    p.add_argument("run", metavar="RUN", help="a run id (see `osmeter runs`), label, latest or latest~N")
    add_store_option(p)
    add_json_option(p, "the curves and levels")
    return p


def mem_levels(store: Any, ref: str, as_json: bool) -> str:
    """The levels of a stored run, as text or as a versioned JSON document."""
    info = store.run(ref)
    analyses = analyse_results(store.results(info.id), info.machine)
    if as_json:
        doc = {"schema": MEMLEVELS_SCHEMA, "run": info.id, "curves": [a.as_dict() for a in analyses]}
        return textsafe.json_text(json.dumps(doc, indent=2)) + "\n"
    return textsafe.terminal(f"run {info.id}\n" + render_text(analyses))


def run(args: argparse.Namespace) -> int:
    store = open_store(resolve_location(args.store), create=False)
    try:
        sys.stdout.write(mem_levels(store, args.run, args.json))
    finally:
        store.close()
    return 0
