"""osmeter report: one self-contained HTML (or Markdown) report of one or more runs.

Everything that can be wrong is checked before the work starts: the runs
exist, the --expect file parses and its units fit the measurements, the
output file can be written. The format comes from --format, else from the
suffix of `-o FILE` (.html, .md, .txt; another is refused), else html. The
file is written by the rules of osmeter.outfile: a regular file next to its
final name and renamed into place (a failure never leaves half a report),
its mode kept; a symlink followed; a device or FIFO written in place.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from .. import outfile
from ..errors import UsageError
from ..gcpause import paused
from ..report import names as nm
from ..report.expect import read_expect
from ..report.fleet import INLINE_RUNS
from ..report.formats import DEFAULT_FORMAT, REFUSED, RENDERERS, SUFFIXES, draws_figures, render
from ..store import open_store, resolve_location
from ..store.refs import RUN_HELP
from .options import add_store_option

NAME = "report"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="write an HTML or Markdown report of stored runs",
        description="Write one self-contained report (machine, results, warnings, figures) of one or more runs.",
    )
    p.add_argument("runs", metavar="RUN", nargs="*", help=f"runs, each {RUN_HELP} (default: latest); one section each")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    p.add_argument("--format", choices=sorted(RENDERERS), help="html, md or txt (default: from FILE's suffix: .html, .md, .txt; html on stdout)")
    p.add_argument(
        "--expect",
        metavar="FILE.yaml",
        help="predictions to show next to the measurements (docs/report.md)",
    )
    p.add_argument("--fleet", metavar="ID", help="the report of a fleet run (osmeter fleet run; 'latest': the newest): "
                   "its hosts, their comparison by host and every run (docs/report.md)")
    p.add_argument("--run-figures", action="store_true",
                   help="with --fleet, in HTML: draw every run's own figures too (several seconds a run; by "
                   "default a fleet report's runs have their tables, and `osmeter report RUN` draws a run's figures)")
    p.add_argument("--all-runs", action="store_true",
                   help=f"with --fleet: every run's section, also in a fleet run of more than "
                   f"{INLINE_RUNS} runs (whose report otherwise leaves them out: `osmeter report RUN` writes one)")
    p.add_argument("--wide", action="store_true",
                   help="every parameter of every result, defaults included, and the text report's every column "
                   "on one line (default: the parameters that vary or differ from the default)")
    nm.add_names_option(p)
    add_store_option(p)
    return p


def choose_format(fmt: str | None, output: str | None) -> str:
    chosen = outfile.choose_format(fmt, output, SUFFIXES, DEFAULT_FORMAT, REFUSED)
    assert chosen is not None
    return chosen


def _progress(line: str) -> None:
    print(f"report: {line}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    fmt = choose_format(args.format, args.output)
    if args.fleet is not None and args.runs:
        raise UsageError("report --fleet ID reports every run of the fleet run: give run ids or --fleet, not both")
    if args.run_figures and args.fleet is None:
        raise UsageError("--run-figures goes with --fleet (a report of runs draws their figures in HTML anyway)")
    if args.all_runs and args.fleet is None:
        raise UsageError("--all-runs goes with --fleet (a report of runs has every run's section anyway)")
    if args.run_figures and fmt != "html":
        raise UsageError(f"--run-figures: figures are drawn in HTML only, and this report is {fmt}")
    output = Path(args.output) if args.output and args.output != "-" else None
    # A malformed --expect file or an unwritable output fails before any work.
    predictions = read_expect(Path(args.expect)) if args.expect else []
    if output is not None:
        outfile.check(output)
    store = open_store(resolve_location(args.store), create=False)
    # a fleet run's report without figures builds tens of thousands of objects and no cycles;
    # matplotlib's figures make cycles by the thousand: the collector stays on for them
    try:
        with nullcontext() if draws_figures(fmt, args.fleet, args.run_figures) else paused():
            text = render(store, args.runs or ["latest"], fmt, predictions, args.expect or "", args.names,
                          args.fleet, run_figures=args.run_figures, progress=_progress, all_runs=args.all_runs,
                          wide=args.wide)
    finally:
        store.close()
    if output is not None:
        outfile.write(output, text)
        print(f"wrote {output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
