"""osmeter compare: what changed between runs, with significance.

Every benchmark instance (benchmark + parameters) that is ok in the baseline
and in another run gets the ratio of medians with a 95 % bootstrap interval
(osmeter.compare; docs/compare.md). Output: a terminal table sorted by
change (worst first), `--json`, and with `-o` an HTML heatmap
(benchmarks × runs, LEBench style) or the same heatmap as SVG/PNG/PDF.
Where both runs counted a performance counter (`osmeter run --counters`) for
an instance, its two values per operation and their ratio are shown under
the time comparison, so a change can be explained (docs/compare.md).
A verdict on an instance either run flagged (precision-unmet, unstable ...)
carries the flags as its caveat, in every output, with a legend; `--names
lebench` labels and orders the instances as LEBench's table.
`--fail-above PCT` exits with EXIT_REGRESSION when a significant change for
the worse exceeds PCT, after everything else was printed and written.
For the rt family (or every instance with `--stat max,variance`) the
maximum and the variance are compared too, each with its own test
(osmeter.compare, "Maximum and variance" in docs/compare.md): indented rows
in the table, `stats` in the JSON, their own heatmaps in the HTML page and
columns in the heatmap figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import compare as cmp
from .. import noise, outfile, textsafe
from ..argtypes import percentage
from ..comparing import compare_runs, raise_regressions, resolve_runs
from ..errors import UsageError
from ..explain import explain
from ..gcpause import paused
from ..hotspots.sources import diff_links
from ..report import names as nm
from ..report.params import catalog_defaults
from ..report import explain_text as ex
from ..report.compare_text import document, heatmap_file, render_text
from ..store import open_store, resolve_location
from .options import add_json_option, add_store_option

NAME = "compare"
SUFFIXES = {".html": "html", ".htm": "html", ".svg": "svg", ".png": "png", ".pdf": "pdf"}
HEATMAP_FORMATS = ("html", "svg", "png", "pdf")


def stat_list(text: str) -> tuple[str, ...]:
    """argparse type for --stat: max, variance or both (comma-separated), or none."""
    words = [w.strip() for w in text.split(",")]
    if words == ["none"]:
        return ()
    bad = [w for w in words if w not in cmp.EXTRA_STATS]
    if bad or not words:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected {', '.join(cmp.EXTRA_STATS)} (comma-separated) or none"
        )
    return tuple(dict.fromkeys(words))


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="compare runs: ratio of medians with significance",
        description=(
            "Compare stored runs against a baseline: for every benchmark and parameter set in both, the ratio "
            "of medians with a 95 % bootstrap confidence interval. A change is significant when the interval "
            "excludes 1 and the change exceeds the noise threshold. With a stored `osmeter noise` result of "
            "the baseline's machine, a significant change smaller than what that machine resolves is marked "
            "'below this machine's noise' (docs/compare.md)."
        ),
    )
    p.add_argument("runs", metavar="RUN", nargs="*",
                   help="two or more runs, each a run id, label, latest or latest~N; with --by, any number")
    p.add_argument("--baseline", metavar="RUN", help="the run the others are compared with (a run id, label, latest or "
                   "latest~N; default: the first); with --by, the column (default: the first)")
    p.add_argument(
        "--threshold",
        metavar="PCT",
        type=percentage,
        default=100 * cmp.DEFAULT_THRESHOLD,
        help=f"noise threshold in %%: smaller changes are never significant (default {100 * cmp.DEFAULT_THRESHOLD:g})",
    )
    p.add_argument(
        "--fail-above",
        metavar="PCT",
        type=percentage,
        help="exit with status 10 when a significant change for the worse exceeds PCT %% (for CI pipelines)",
    )
    p.add_argument(
        "--stat",
        type=stat_list,
        metavar="LIST",
        help="also compare the maximum and/or the variance (max, variance, or none), each with its own test "
        "(docs/compare.md); default: both for rt.* benchmarks, none for the others",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the heatmap: .html page, or .svg/.png/.pdf figure")
    p.add_argument(
        "--format",
        choices=(*HEATMAP_FORMATS, "json"),
        help="the heatmap file's format (default: from FILE's suffix); needs -o; json: as --json",
    )
    p.add_argument(
        "--explain", action="store_true",
        help="for each significant change (two runs): the change in ns per op, the counter deltas, the functions "
        "whose time changed (profiles of `run --profile`), and the differing machine facts that plausibly explain "
        "it (docs/compare.md, 'Explained comparisons'); with -o the page's heatmap cells open their explanation",
    )
    nm.add_names_option(p)
    from .compare_by import add_options  # --by, --fleet (compare_by imports this module)

    add_options(p)
    add_json_option(p, "the comparison")
    add_store_option(p)
    return p


def run(args: argparse.Namespace) -> int:
    if args.explain and (args.by is not None or args.fleet is not None):
        raise UsageError("--explain explains two runs; it does not go with --by or --fleet")
    if args.by is not None or args.fleet is not None or args.bootstrap:  # the heatmap by host, kernel or label
        from .compare_by import run as run_by

        return run_by(args)
    if args.format == "json":  # JSON on stdout, as --json
        if args.output:
            raise UsageError("--format json prints the comparison on stdout, as --json; -o takes the heatmap file")
        args.json, args.format = True, None
    threshold = args.threshold / 100
    fail_above = args.fail_above / 100 if args.fail_above is not None else None
    output = Path(args.output) if args.output else None
    if args.output == "-":
        raise UsageError("compare prints its table on stdout: -o takes a file for the heatmap (.html, .svg, .png, .pdf)")
    if output is None and args.format:
        raise UsageError(f"--format {args.format} is the format of the heatmap file: give it with -o FILE")
    fmt = outfile.choose_format(args.format, args.output, SUFFIXES, "html")
    if output is not None:
        outfile.check(output)
    if args.explain and len(args.runs) + (args.baseline is not None) - (args.baseline in args.runs) != 2:
        raise UsageError("--explain explains the changes between two runs: give exactly two (A B, A the baseline)")
    store = open_store(resolve_location(args.store), create=False)
    try:
        with paused():  # the runs' results and their comparisons: many objects, no cycles (gcpause)
            runs = resolve_runs(store, args.runs, args.baseline)
            outcome = compare_runs(store, runs, threshold, args.stat)
            noise.apply(outcome, store, threshold)  # the caveat of a change below this machine's noise, if known
            outcome.profile_links = diff_links(store, runs)
            explained = explain(store, outcome, threshold) if args.explain else None
            # the LEBench rows the runs recorded (for every output's lebench_row) and --names lebench
            labels = nm.InstanceLabels(nm.row_names(args.names), [x for r in runs for x in outcome.read[r.id]],
                                       catalog_defaults())  # tables name instances by their telling parameters
    finally:
        store.close()
    if output is not None:
        assert fmt is not None
        outfile.write(output, heatmap_file(outcome, threshold, fmt, labels, explained))
    if args.json:
        doc = document(outcome, threshold, fail_above, labels)
        if explained is not None:
            doc["explain"] = ex.document(explained)
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    elif explained is not None:
        sys.stdout.write(textsafe.terminal(ex.render_text(explained)))
    else:
        sys.stdout.write(textsafe.terminal(render_text(outcome, threshold, labels)))
    if output is not None:
        print(f"wrote {output}", file=sys.stderr)
    if fail_above is not None:
        raise_regressions(outcome.comparisons, args.fail_above, lambda c: f"in run {c.run_id}")
    return 0
