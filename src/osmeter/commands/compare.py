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
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import compare as cmp
from .. import outfile, textsafe
from ..errors import RegressionFound, UsageError
from ..hotspots.sources import diff_links
from ..model import BenchResult, RunInfo
from ..records import canonical_params, describe_instance, format_params
from ..report import compare_stats as cs
from ..report import counters as ctr
from ..report import flags as fl
from ..report import names as nm
from ..report.table import fmt_num, render_table
from ..repeats import uncertainty
from ..stats import BOOTSTRAP_RESAMPLES, CI_LEVEL, FloatArray
from ..store import open_store, resolve_location
from ..store.base import Store
from .options import add_json_option, add_store_option

NAME = "compare"
COMPARE_SCHEMA = 1
SUFFIXES = {".html": "html", ".htm": "html", ".svg": "svg", ".png": "png", ".pdf": "pdf"}
HEATMAP_FORMATS = ("html", "svg", "png", "pdf")


def _percent(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (e.g. 5 or 5%)") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be a percentage of at least 0")
    return value


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
            "excludes 1 and the change exceeds the noise threshold."
        ),
    )
    p.add_argument("runs", metavar="RUN", nargs="*", help="two or more run ids (or 'latest'); with --by, any number")
    p.add_argument("--baseline", metavar="RUN", help="the run the others are compared with (default: the first); "
                   "with --by, the column (default: the first)")
    p.add_argument(
        "--threshold",
        metavar="PCT",
        type=_percent,
        default=100 * cmp.DEFAULT_THRESHOLD,
        help=f"noise threshold in %%: smaller changes are never significant (default {100 * cmp.DEFAULT_THRESHOLD:g})",
    )
    p.add_argument(
        "--fail-above",
        metavar="PCT",
        type=_percent,
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
    nm.add_names_option(p)
    from .compare_by import add_options  # --by, --fleet (compare_by imports this module)

    add_options(p)
    add_json_option(p, "the comparison")
    add_store_option(p)
    return p


# --- gathering ----------------------------------------------------------------

Key = tuple[str, str, int]  # bench, canonical params, occurrence (a run may repeat an instance)


def instance_keys(results: Sequence[BenchResult]) -> dict[Key, BenchResult]:
    seen: dict[tuple[str, str], int] = {}
    out: dict[Key, BenchResult] = {}
    for r in results:
        base = (r.bench, canonical_params(r.params))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[(*base, n)] = r
    return out


@dataclass
class Outcome:
    runs: list[RunInfo]  # baseline first
    comparisons: list[cmp.Comparison] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)
    counter_notes: list[str] = field(default_factory=list)  # counters not counted, once per reason
    profile_links: list[dict[str, Any]] = field(default_factory=list)  # osmeter hotspots: profiles in both runs
    _deltas: dict[int, list[ctr.CounterDelta]] = field(default_factory=dict)  # id(comparison) -> deltas

    def add(self, comparison: cmp.Comparison, deltas: list[ctr.CounterDelta]) -> None:
        self.comparisons.append(comparison)
        if deltas:
            self._deltas[id(comparison)] = deltas

    def deltas(self, comparison: cmp.Comparison) -> list[ctr.CounterDelta]:
        """The counters both runs counted for this comparison's instance (empty without --counters)."""
        return self._deltas.get(id(comparison), [])

    @property
    def has_counters(self) -> bool:
        return bool(self._deltas)


def resolve_runs(store: Store, refs: Sequence[str], baseline: str | None) -> list[RunInfo]:
    runs: list[RunInfo] = []
    for ref in refs:
        info = store.run(ref)
        if any(r.id == info.id for r in runs):
            raise UsageError(f"run {info.id} is given twice")
        runs.append(info)
    if baseline is not None:
        base = store.run(baseline)
        runs = [base] + [r for r in runs if r.id != base.id]
    if len(runs) < 2:
        raise UsageError("compare needs at least two different runs")
    return runs


def _label(key: Key) -> str:
    return describe_instance(key[0], json.loads(key[1])) + (f" (#{key[2] + 1})" if key[2] else "")


def compare_runs(store: Store, runs: Sequence[RunInfo], threshold: float,
                 stats: Sequence[str] | None = None) -> Outcome:
    """Every instance ok in the baseline and in another run, compared; the rest
    listed. `stats` (--stat): the extra statistics for every instance; None:
    cmp.stats_for's default (max and variance for the rt family)."""
    base_run, others = runs[0], runs[1:]
    base_results = store.results(base_run.id)
    other_results = {r.id: store.results(r.id) for r in others}
    base = instance_keys(base_results)
    other_keys = {r.id: instance_keys(other_results[r.id]) for r in others}
    outcome = Outcome(list(runs))
    outcome.counter_notes = counter_notes(runs, [base_results, *other_results.values()])
    reasons: dict[str, list[str]] = {}  # reason -> runs

    def note(key: Key, why: str, run_id: int) -> None:
        reasons.setdefault(f"{_label(key)}: {why}", []).append(str(run_id))

    for key, b in base.items():
        if b.status != "ok" or b.summary is None:
            for r in others:
                if key in other_keys[r.id]:
                    note(key, f"{b.status} in the baseline ({b.reason})", r.id)
            continue
        base_samples = None
        base_medians = None
        for r in others:
            o = other_keys[r.id].get(key)
            if o is None:
                note(key, "not in run", r.id)
                continue
            if o.status != "ok" or o.summary is None:
                note(key, f"{o.status} ({o.reason})", r.id)
                continue
            if o.unit != b.unit:
                note(key, f"measured in {o.unit}, the baseline in {b.unit}", r.id)
                continue
            other_samples = store.samples(r.id, o.seq)
            if base_samples is None:
                base_samples = store.samples(base_run.id, b.seq)
                if base_samples is None:
                    note(key, "the baseline has no stored samples", r.id)
                    break
                base_medians = cmp.baseline_resampled_medians(base_samples)
            if other_samples is None:
                note(key, "no stored samples", r.id)
                continue
            outcome.add(
                cmp.compare_instance(
                    compared_instance(b, base_samples),
                    compared_instance(o, other_samples),
                    run_id=r.id,
                    baseline_id=base_run.id,
                    threshold=threshold,
                    baseline_medians=base_medians,
                    stats=cmp.stats_for(b.bench, stats),
                ),
                ctr.deltas(b, o),
            )
    for r in others:
        for key in other_keys[r.id]:
            if key not in base:
                note(key, "not in the baseline", r.id)
    outcome.not_compared = [f"{why} (run {', '.join(ids)})" for why, ids in reasons.items()]
    compared = {c.run_id for c in outcome.comparisons}
    lonely = [r for r in others if r.id not in compared]
    if lonely:
        names = ", ".join(str(r.id) for r in lonely)
        raise UsageError(
            f"run {names} and the baseline run {base_run.id} have no benchmark in common "
            "(the same benchmark and parameters, ok in both); `osmeter show RUN` lists what each run holds"
        )
    return outcome


def compared_instance(r: BenchResult, samples: FloatArray) -> cmp.Instance:
    """A stored result as compare needs it: its samples, and the uncertainty of
    its repetitions when it has several."""
    assert r.summary is not None
    return cmp.Instance(
        r.bench,
        r.params,
        r.unit,
        r.summary.median,
        samples,
        uncertainty=uncertainty(r.repetitions),
        ci=(r.summary.ci_low, r.summary.ci_high),
        flags=r.flags,
    )


def counter_notes(runs: Sequence[RunInfo], results: Sequence[Sequence[BenchResult]]) -> list[str]:
    """What the counters could not do, once per note, with the runs it concerns."""
    seen: dict[str, list[str]] = {}
    for run, rs in zip(runs, results):
        for note in ctr.notes(rs):
            seen.setdefault(note, []).append(str(run.id))
    every = len(runs)
    return [
        note if len(ids) == every else f"run{'s' if len(ids) > 1 else ''} {', '.join(ids)}: {note}"
        for note, ids in seen.items()
    ]


# --- output ---------------------------------------------------------------------

TABLE_HEADERS = ("benchmark", "params", "run", "baseline", "median", "unit", "ratio", "95% CI", "change", "verdict")
_RIGHT = (False, False, True, True, True, False, True, True, True, False)


def verdict_text(c: cmp.Comparison) -> str:
    """`slower [precision-unmet, unstable]`: the verdict with the flags that qualify it."""
    return f"{c.verdict} [{c.caveat}]" if c.caveat else c.verdict


def caveat_flags(comparisons: Sequence[cmp.Comparison]) -> list[str]:
    """The flags that qualify some verdict, in the legend's order."""
    return fl.ordered(f for c in comparisons for f in c.caveat.split(", ") if f)


def ordered_comparisons(outcome: Outcome, labels: nm.InstanceLabels) -> list[cmp.Comparison]:
    """Worst first; under --names lebench in LEBench's table order (then the run's order)."""
    if labels.names is None:
        return cmp.sort_by_change(outcome.comparisons)
    return labels.sort(outcome.comparisons, lambda c: (c.bench, c.params))


def summary_line(outcome: Outcome, threshold: float) -> str:
    """`3 compared, 1 significant (1 slower, 0 faster; 1 with a caveat)` and what significant means."""
    sig = [c for c in outcome.comparisons if c.significant]
    worse = sum(1 for c in sig if c.worse > 0)
    caveats = sum(1 for c in sig if c.caveat)
    by_reps = sum(1 for c in outcome.comparisons if c.method == "repetitions")
    if by_reps == len(outcome.comparisons):
        method = "; every interval from the runs' repetitions"
    elif by_reps:
        method = f"; {by_reps} intervals from the runs' repetitions, the others from each run's samples (bootstrap)"
    else:
        method = ""
    line = (
        f"{len(outcome.comparisons)} compared, {len(sig)} significant ({worse} slower, {len(sig) - worse} faster; "
        f"{caveats} with a caveat){method}; "
        f"significant = 95% interval of the ratio excludes 1 and |change| > {100 * threshold:g}% "
        "(--threshold); for a rate (bytes_per_s) a rise is faster"
    )
    return "\n".join([line, *cs.summary_lines(outcome.comparisons, threshold)])


def render_text(outcome: Outcome, threshold: float, labels: nm.InstanceLabels | None = None) -> str:
    labels = labels or nm.InstanceLabels(None)
    runs = outcome.runs
    base = runs[0]
    parts = [
        f"baseline: run {base.id}{' ' + repr(base.label) if base.label else ''}; compared: "
        + ", ".join(f"run {r.id}{' ' + repr(r.label) if r.label else ''}" for r in runs[1:])
    ]
    diffs = cmp.run_differences(runs)
    if diffs:
        if len(runs) <= 6:
            rows = [[d.key, *d.values] for d in diffs]
            parts.append("what differs:\n" + render_table(["", *(f"run {r.id}" for r in runs)], rows))
        else:
            lines = []
            for d in diffs:
                groups: dict[str, list[str]] = {}
                for r, v in zip(runs, d.values):
                    groups.setdefault(v, []).append(str(r.id))
                lines.append(f"  {d.key}: " + "; ".join(f"{v} (runs {', '.join(ids)})" for v, ids in groups.items()))
            parts.append("what differs:\n" + "\n".join(lines))
    else:
        parts.append("what differs: nothing in the machine descriptions, suites or options")
    lead = labels.names is not None
    rows = []
    for c in ordered_comparisons(outcome, labels):
        ci = "-" if math.isnan(c.ci_low) else f"{c.ci_low:.3f}..{c.ci_high:.3f}"
        rows.append(
            ([labels.shown(c.bench, c.params) or ""] if lead else [])
            + [
                c.bench,
                format_params(c.params),
                str(c.run_id),
                fmt_num(c.baseline_median),
                fmt_num(c.median),
                c.unit or "",
                "-" if math.isnan(c.ratio) else f"{c.ratio:.3f}",
                ci,
                "-" if math.isnan(c.ratio) else f"{100 * c.change:+.1f}%",
                verdict_text(c),
            ]
        )
        rows.extend(([""] if lead else []) + row for row in cs.stat_rows(c))
        rows.extend(([""] if lead else []) + row for row in counter_rows(outcome.deltas(c)))
    headers = (("LEBench row",) if lead else ()) + TABLE_HEADERS
    right = ((False,) if lead else ()) + _RIGHT
    parts.append(render_table(headers, rows, right))
    notes = []
    if any(c.stats for c in outcome.comparisons):
        notes.append(
            "indented max / variance rows: the maximum or the variance (unit squared) of the baseline and the run, "
            "their ratio, the test's p-value in the CI column, and whether it rose or fell significantly"
        )
    if outcome.has_counters:
        notes.append(
            "indented rows: performance counters per operation counted in both runs (baseline, run, ratio, change; "
            "~ multiplexed, scaled); task-clock is CPU time per operation, not latency"
        )
    legend = fl.legend_lines(
        caveat_flags(outcome.comparisons),
        title="[...] after a verdict: flags of either run's figure, which the verdict cannot vouch for",
    )
    if legend:
        notes.append("\n".join(legend))
    if notes:
        parts.append("\n".join(notes))
    parts.append(summary_line(outcome, threshold))
    if outcome.counter_notes:
        parts.append("counters:\n" + "\n".join(f"  {n}" for n in outcome.counter_notes))
    if outcome.profile_links:
        parts.append("hotspots (profiled in the baseline and a run; docs/methods/hotspots.md):\n" + "\n".join(
            f"  {describe_instance(x['bench'], x['params'])}: {x['command']}" for x in outcome.profile_links))
    if outcome.not_compared:
        shown = outcome.not_compared[:20]
        more = len(outcome.not_compared) - len(shown)
        parts.append("not compared:\n" + "\n".join(f"  {n}" for n in shown) + (f"\n  ... and {more} more" if more else ""))
    return "\n\n".join(parts) + "\n"


def counter_rows(deltas: Sequence[ctr.CounterDelta]) -> list[list[str]]:
    """The counters of one comparison as indented rows under it, in the table's columns."""
    return [
        [
            f"  {d.name}",
            "",
            "",
            ("~" if d.multiplexed else "") + fmt_num(d.baseline),
            ("~" if d.multiplexed else "") + fmt_num(d.value),
            ctr.unit_label(d.unit),
            ctr.ratio_text(d),
            "",
            ctr.change_text(d),
            "",
        ]
        for d in deltas
    ]


def counters_json(deltas: Sequence[ctr.CounterDelta]) -> list[dict[str, Any]]:
    return [
        {
            "name": d.name,
            "unit": d.unit,
            "baseline": d.baseline,
            "value": d.value,
            "ratio": cmp.nan_to_none(d.ratio),
            "change": cmp.nan_to_none(d.change),
            "multiplexed": d.multiplexed,
        }
        for d in deltas
    ]


def document(outcome: Outcome, threshold: float, fail_above: float | None,
             labels: nm.InstanceLabels | None = None) -> dict[str, Any]:
    labels = labels or nm.InstanceLabels(None)
    runs = outcome.runs
    significant = [c for c in outcome.comparisons if c.significant]
    doc: dict[str, Any] = {
        "osmeter_compare": COMPARE_SCHEMA,
        "baseline": runs[0].id,
        "runs": [{"id": r.id, "label": r.label} for r in runs],
        "method": cmp.METHOD,
        "level": CI_LEVEL,
        "resamples": BOOTSTRAP_RESAMPLES,
        "threshold": threshold,
        "significant": len(significant),
        "significant_with_caveat": sum(1 for c in significant if c.caveat),
        "hotspots": outcome.profile_links,
        "comparisons": [
            {
                "bench": c.bench,
                "params": dict(c.params),
                "lebench_row": labels.row(c.bench, c.params),
                "unit": c.unit,
                "run_id": c.run_id,
                "baseline_median": c.baseline_median,
                "median": c.median,
                "ratio": cmp.nan_to_none(c.ratio),
                "ci_low": cmp.nan_to_none(c.ci_low),
                "ci_high": cmp.nan_to_none(c.ci_high),
                "change": cmp.nan_to_none(c.change),
                "worse": cmp.nan_to_none(c.worse),
                "significant": c.significant,
                "verdict": c.verdict,
                "method": c.method,
                "flags": list(c.flags),
                "caveat": c.caveat,
                "counters": counters_json(outcome.deltas(c)),
                "stats": cs.stats_json(c),
            }
            for c in ordered_comparisons(outcome, labels)
        ],
        "stat_methods": {name: cmp.STAT_METHODS[name] for name in cmp.EXTRA_STATS
                         if any(c.stat(name) for c in outcome.comparisons)},
        "flag_legend": {name: text for name, text in fl.legend(caveat_flags(outcome.comparisons))},
        "counter_notes": outcome.counter_notes,
        "differences": [
            {"key": d.key, "values": {str(r.id): v for r, v in zip(runs, d.values)}} for d in cmp.run_differences(runs)
        ],
        "not_compared": outcome.not_compared,
    }
    if fail_above is not None:
        doc["fail_above"] = fail_above
        doc["regressions_above"] = len(cmp.regressions_above(outcome.comparisons, fail_above))
    return doc


def heatmap_file(outcome: Outcome, threshold: float, fmt: str,
                 labels: nm.InstanceLabels | None = None) -> str | bytes:
    """The heatmap as an HTML page (str, fmt html) or as a figure's bytes (svg/png/pdf; a
    suffix such as `.svg` is accepted as well)."""
    labels = labels or nm.InstanceLabels(None)
    runs = outcome.runs
    fmt = fmt.lstrip(".")
    if fmt in ("html", "htm"):
        from ..report.html_compare import render_comparison

        diffs = cmp.run_differences(runs)
        return render_comparison(
            runs,
            outcome.comparisons,
            diffs,
            threshold,
            cmp.METHOD,
            outcome.not_compared,
            counters=outcome.deltas,
            counter_notes=outcome.counter_notes,
            labels=labels,
        )
    from ..report.compare_figure import heatmap_bytes

    return heatmap_bytes(runs, outcome.comparisons, fmt, labels)


def run(args: argparse.Namespace) -> int:
    if args.by is not None or args.fleet is not None:  # the heatmap by host, kernel or label: compare_by
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
    store = open_store(resolve_location(args.store), create=False)
    try:
        runs = resolve_runs(store, args.runs, args.baseline)
        outcome = compare_runs(store, runs, threshold, args.stat)
        outcome.profile_links = diff_links(store, runs)
        # the LEBench rows the runs recorded (for every output's lebench_row) and --names lebench
        labels = nm.InstanceLabels(nm.row_names(args.names), [x for r in runs for x in store.results(r.id)])
    finally:
        store.close()
    if output is not None:
        assert fmt is not None
        outfile.write(output, heatmap_file(outcome, threshold, fmt, labels))
    if args.json:
        doc = document(outcome, threshold, fail_above, labels)
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    else:
        sys.stdout.write(textsafe.terminal(render_text(outcome, threshold, labels)))
    if output is not None:
        print(f"wrote {output}", file=sys.stderr)
    if fail_above is not None:
        raise_regressions(outcome.comparisons, args.fail_above, lambda c: f"in run {c.run_id}")
    return 0


def raise_regressions(comparisons: Sequence[cmp.Comparison], limit_pct: float,
                      where: Callable[[cmp.Comparison], str]) -> None:
    """--fail-above: RegressionFound naming the five worst significant changes for the worse beyond the limit."""
    bad = sorted(cmp.regressions_above(comparisons, limit_pct / 100), key=lambda c: -c.worse)
    if bad:
        worst = ", ".join(f"{describe_instance(c.bench, c.params)} {where(c)} {100 * c.change:+.1f}%"
                          for c in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise RegressionFound(f"{len(bad)} significant regression(s) above {limit_pct:g}%: {worst}{more}")
