"""osmeter compare --by host|kernel|label [--fleet ID] [RUN...]: the
LEBench-style heatmap of a fleet run, or of any runs: one column per host,
kernel or label, one row per benchmark instance, each cell the change of the
median against the baseline column with its significance, by the same
statistics as the pairwise compare (osmeter.compare_by; docs/compare.md,
"By host, kernel or label"). Then the machine facts that differ between the
columns.

Outputs: a table on stdout (default), JSON (`--json` or `--format json`,
on stdout, or into `-o FILE.json`), and with `-o` the heatmap as an HTML
page (.html), or a figure (.svg, .png, .pdf).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import compare_by as cb
from .. import outfile, textsafe
from ..comparing import raise_regressions
from ..errors import UsageError
from ..gcpause import paused
from ..report import names as nm
from ..report.params import catalog_defaults
from ..report.by_text import document, file_content, render_text
from ..store import open_store, resolve_location

SUFFIXES = {".html": "html", ".htm": "html", ".svg": "svg", ".png": "png", ".pdf": "pdf", ".json": "json"}


def add_options(p: argparse.ArgumentParser) -> None:
    """--by and --fleet on `osmeter compare` (the other options are compare's own)."""
    p.add_argument(
        "--by",
        choices=cb.BY_CHOICES,
        help="one column per host, kernel or label of the runs (a heatmap against the --baseline column; "
        "docs/compare.md)",
    )
    p.add_argument("--fleet", metavar="ID", help="with --by: every run of the fleet run ID ('latest': the newest)")
    p.add_argument(
        "--bootstrap",
        action="store_true",
        help="with --by: make a cell whose two results have one repetition each by the bootstrap of the ratio "
        "from their samples, as 'osmeter compare RUN RUN' does (slower); default: from their two stored "
        "intervals (docs/compare.md)",
    )


def check_args(args: argparse.Namespace) -> None:
    """What --by cannot take, refused before any work."""
    if args.by is None:
        if args.fleet is not None:
            raise UsageError("--fleet selects the runs of a --by comparison: give --by host, kernel or label")
        if args.bootstrap:
            raise UsageError("--bootstrap chooses how compare --by makes its cells; compare RUN RUN always "
                             "bootstraps two single-repetition results: give --by, or leave --bootstrap out")
        return
    if args.stat is not None:
        raise UsageError("--stat (maximum, variance) is compared run against run: osmeter compare RUN RUN --stat; "
                         "--by compares medians")
    if args.format == "json" and args.json:
        raise UsageError("--json and --format json say the same: give one")


def _outputs(args: argparse.Namespace) -> tuple[Path | None, str | None]:
    """The -o file and its format (html, svg, png, pdf, json), checked before any work."""
    if args.output == "-":
        raise UsageError("compare prints its table on stdout: -o takes a file (.html, .svg, .png, .pdf, .json)")
    output = Path(args.output) if args.output else None
    if output is None:
        if args.format not in (None, "json"):
            raise UsageError(f"--format {args.format} is the format of the heatmap file: give it with -o FILE")
        return None, None
    fmt = outfile.choose_format(args.format, args.output, SUFFIXES, "html")
    outfile.check(output)
    return output, fmt


def run(args: argparse.Namespace) -> int:
    """`osmeter compare --by ...` (commands.compare.run hands over when --by is given)."""
    check_args(args)
    threshold = args.threshold / 100
    fail_above = args.fail_above / 100 if args.fail_above is not None else None
    output, fmt = _outputs(args)
    store = open_store(resolve_location(args.store), create=False)
    try:
        with paused():  # 20 000 results and cells for 100 hosts: no cycles among them
            fleet, runs = cb.select_runs(store, args.runs, args.fleet)
            outcome = cb.compare_by(store, runs, args.by, args.baseline, threshold, fleet, bootstrap=args.bootstrap)
            labels = nm.InstanceLabels(nm.row_names(args.names), cb.results_of(store, outcome, runs),
                                       catalog_defaults())  # rows named by their telling parameters
    finally:
        store.close()
    as_json = args.json or (args.format == "json" and output is None)
    if output is not None:
        assert fmt is not None
        outfile.write(output, file_content(outcome, labels, fmt, fail_above))  # a figure: the collector on
    with paused():
        if as_json:
            sys.stdout.write(json.dumps(document(outcome, labels, fail_above), indent=2, allow_nan=False) + "\n")
        else:
            sys.stdout.write(textsafe.terminal(render_text(outcome, labels)))
    if output is not None:
        print(f"wrote {output}", file=sys.stderr)
    if fail_above is not None:
        names = {r.id: col.name for col in outcome.columns for r in col.runs}
        raise_regressions(outcome.comparisons, args.fail_above, lambda c: f"on {names.get(c.run_id, c.run_id)}")
    return 0
