"""osmeter list: the probe's catalogue of benchmarks."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import benchinfo
from ..catalog import Benchmark, Param, probe_catalog
from ..methoddocs import MethodDocs
from ..probe import locate_probe
from ..fmt import render_table, terminal_width
from .options import add_json_option

NAME = "list"
HEADERS = ("name", "unit", "suites", "params (default [range])", "description")
# Fitted to a terminal: the description with each parameter on a line under it.
NARROW_HEADERS = ("name", "unit", "suites", "description;\nparams (default [range])")
DETAIL_WIDTH = 100  # the detail view's width when neither a terminal nor $COLUMNS gives one


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="list the benchmarks",
        description="List the benchmarks the probe knows. On a terminal (or with $COLUMNS set) the table "
        "fits its width: long cells wrap and each parameter gets its own line; piped or with --wide, one "
        "line per benchmark. With NAMEs, each benchmark named in detail: what it measures and its method "
        "(from docs/methods), its parameters (type, default, range or choices, help), unit, suites, the "
        "instances the standard suite runs, its LEBench rows and its docs section; fitted to the terminal "
        "($COLUMNS, else 100 columns when piped), unwrapped with --wide.",
    )
    p.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="a benchmark (file.read; a hidden test benchmark too) or an fnmatch pattern ('file.*', 'net.*'); "
        "one that matches nothing is an error (exit 2) naming its close matches",
    )
    p.add_argument("--wide", action="store_true", help="one line per benchmark (with NAMEs: nothing wrapped)")
    add_json_option(p, "the probe's catalogue document (with NAMEs: their entries, LEBench rows and docs sections)")
    return p


def format_param(p: Param) -> str:
    if p.type == "enum" and p.choices:
        allowed = " {" + "|".join(p.choices) + "}"
    elif p.min is not None or p.max is not None:
        low = "" if p.min is None else str(p.min)
        high = "" if p.max is None else str(p.max)
        allowed = f" [{low}..{high}]"
    else:
        allowed = ""
    default = json.dumps(p.default) if isinstance(p.default, str) and p.type == "string" else str(p.default)
    return f"{p.name}={default}{allowed}"


def benchmark_row(b: Benchmark) -> list[str]:
    return [
        b.name,
        b.unit,
        ",".join(b.suites) or "-",
        ", ".join(format_param(p) for p in b.params) or "-",
        description(b),
    ]


def description(b: Benchmark) -> str:
    return b.description + (f" (needs {', '.join(b.requires)})" if b.requires else "")


def render_list(benchmarks: "list[Benchmark] | tuple[Benchmark, ...]", width: int | None) -> str:
    """The catalogue as a table: one line per benchmark, or fitted to `width`."""
    if width is None:
        return render_table(HEADERS, [benchmark_row(b) for b in benchmarks])
    rows = [
        [b.name, b.unit, ", ".join(b.suites), "\n".join([description(b), *(format_param(p) for p in b.params)])]
        for b in benchmarks
    ]
    return render_table(NARROW_HEADERS, rows, width=width, wrap=(2, 3))


def run_details(args: argparse.Namespace) -> int:
    catalog, doc = probe_catalog(locate_probe(), hidden=True)
    chosen = benchinfo.select(catalog.benchmarks, args.names)  # UsageError before anything is printed
    ds = benchinfo.details(catalog, chosen, MethodDocs())
    if args.json:
        sys.stdout.write(json.dumps(benchinfo.to_json(ds, doc), indent=2) + "\n")
    else:
        width = None if args.wide else terminal_width() or DETAIL_WIDTH
        sys.stdout.write(benchinfo.render(ds, width) + "\n")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.names:
        return run_details(args)
    catalog, doc = probe_catalog(locate_probe())
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(render_list(catalog.benchmarks, None if args.wide else terminal_width()) + "\n")
    return 0
