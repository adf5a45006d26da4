"""The pairwise comparison for people and programs: the terminal table
(worst first, flags as caveats, counters and max/variance rows indented
under their instance), the JSON document (`compare --json`) and the heatmap
file (HTML page or SVG/PNG/PDF figure). docs/compare.md.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import compare as cmp
from .. import textsafe
from .. import counters as ctr
from ..comparing import Outcome
from ..differences import run_differences
from ..records import describe_instance
from ..stats import BOOTSTRAP_RESAMPLES, CI_LEVEL
from . import compare_stats as cs
from . import flags as fl
from . import names as nm
from .compare_table import changes_table
from .tables import simple, to_text

COMPARE_SCHEMA = 1

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
    return "\n".join([line, *noise_lines(outcome), *cs.summary_lines(outcome.comparisons, threshold)])


def noise_lines(outcome: Outcome) -> list[str]:
    """What the machine's noise result (osmeter noise) did, when one applied: nothing without one."""
    if outcome.noise is None:
        return []
    below = sum(1 for c in outcome.comparisons if c.significant and c.noise)
    return [f"{below} significant change{'s' if below != 1 else ''} below this machine's noise: smaller than what "
            f"noise run {outcome.noise['run']} resolved for the instance",
            "  (osmeter noise; docs/compare.md, \"What this machine can resolve\")"]


def render_text(outcome: Outcome, threshold: float, labels: nm.InstanceLabels | None = None) -> str:
    labels = labels or nm.InstanceLabels(None)
    runs = outcome.runs
    base = runs[0]
    parts = [
        f"baseline: run {base.id}{' ' + repr(textsafe.clip(base.label)) if base.label else ''}; compared: "
        + ", ".join(f"run {r.id}{' ' + repr(textsafe.clip(r.label)) if r.label else ''}" for r in runs[1:])
    ]
    diffs = run_differences(runs)
    if diffs:
        if len(runs) <= 6:
            rows = [[d.key, *d.values] for d in diffs]
            parts.append("what differs:\n" + to_text(simple(["", *(f"run {r.id}" for r in runs)], rows)))
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
    parts.append(to_text(changes_table(ordered_comparisons(outcome, labels), labels, outcome.deltas)))
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
    ordered = ordered_comparisons(outcome, labels)
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
            for c in ordered
        ],
        "stat_methods": {name: cmp.STAT_METHODS[name] for name in cmp.EXTRA_STATS
                         if any(c.stat(name) for c in outcome.comparisons)},
        "flag_legend": {name: text for name, text in fl.legend(caveat_flags(outcome.comparisons))},
        "counter_notes": outcome.counter_notes,
        "differences": [
            {"key": d.key, "values": {str(r.id): v for r, v in zip(runs, d.values)}} for d in run_differences(runs)
        ],
        "not_compared": outcome.not_compared,
    }
    if outcome.noise is not None:  # osmeter noise's result applied: keys only then (docs/compare.md)
        doc["noise"] = {**outcome.noise, "significant_below": sum(1 for c in significant if c.noise)}
        for entry, c in zip(doc["comparisons"], ordered):
            entry["noise_caveat"] = c.noise
    if fail_above is not None:
        doc["fail_above"] = fail_above
        doc["regressions_above"] = len(cmp.regressions_above(outcome.comparisons, fail_above))
    return doc


def heatmap_file(outcome: Outcome, threshold: float, fmt: str,
                 labels: nm.InstanceLabels | None = None, explained: Any = None) -> str | bytes:
    """The heatmap as an HTML page (str, fmt html) or as a figure's bytes (svg/png/pdf; a
    suffix such as `.svg` is accepted as well)."""
    labels = labels or nm.InstanceLabels(None)
    runs = outcome.runs
    fmt = fmt.lstrip(".")
    if fmt in ("html", "htm"):
        from ..report.html_compare import render_comparison

        diffs = run_differences(runs)
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
            **_explained_html(explained),
        )
    from ..report.compare_figure import heatmap_bytes

    return heatmap_bytes(runs, outcome.comparisons, fmt, labels)


def _explained_html(explained: Any) -> dict[str, Any]:
    """compare --explain's section of the page, and the heatmap's links to it."""
    if explained is None:
        return {}
    from .explain_text import anchor, section_html

    wanted = {anchor(e.comparison) for e in explained.explanations}
    return {"explanations": section_html(explained),
            "link_of": lambda c: anchor(c) if anchor(c) in wanted else None}
