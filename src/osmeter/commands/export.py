"""osmeter export: one run as JSON or CSV, to stdout or a file.

The format comes from --format, else from the suffix of `-o FILE` (.json,
.csv; another is refused), else json. The file is written by the rules of
osmeter.outfile: a regular file atomically with its mode kept, a symlink
followed, a device or FIFO in place.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import outfile
from ..export import EXPORTERS, json_
from ..report import names as nm
from ..store import open_store, resolve_location
from ..store.refs import RUN_HELP
from .options import add_store_option

NAME = "export"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="export a run as JSON or CSV", description="Export one run's results.")
    p.add_argument("run", metavar="RUN", help=f"{RUN_HELP} (see `osmeter runs`)")
    p.add_argument(
        "--format",
        choices=sorted(EXPORTERS),
        help="output format (default: from FILE's suffix, .json or .csv; json on stdout)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout (- is stdout)")
    nm.add_names_option(p)
    add_store_option(p)
    return p


SUFFIXES = {".json": "json", ".csv": "csv"}
DEFAULT_FORMAT = "json"


def run(args: argparse.Namespace) -> int:
    fmt = outfile.choose_format(args.format, args.output, SUFFIXES, DEFAULT_FORMAT)
    assert fmt is not None
    output = Path(args.output) if args.output and args.output != "-" else None
    if output is not None:
        outfile.check(output)
    store = open_store(resolve_location(args.store), create=False)
    try:
        info = store.run(args.run)
        results = store.results(info.id)
        if fmt == "json":  # CSV has one row per result: profiles are JSON only (docs/export.md)
            text = json_.render(info, results, names=nm.row_names(args.names), profiles=store.profiles(info.id))
        else:
            text = EXPORTERS[fmt](info, results, names=nm.row_names(args.names))
    finally:
        store.close()
    if output is not None:
        outfile.write(output, text)
    else:
        sys.stdout.write(text)
    return 0
