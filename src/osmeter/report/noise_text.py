"""`osmeter noise`'s output for people: what the runs were, a verdict per
family, the instances this machine resolves worst (scaled units, within
100 columns) and the false alarms (docs/compare.md, "What this machine
can resolve: osmeter noise")."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .. import noise
from ..fmt import scale_of
from .tables import simple, to_text
from .text import wrap_list, wrap_pieces

WORST = 12  # instances in the table of the worst
WIDTH = 100
FALSE_ALARMS_SHOWN = 20


def _runs_line(doc: Mapping[str, Any]) -> str:
    ids = ", ".join(str(r["id"]) for r in doc["runs"])
    suite = f" of suite {doc['suite']}" if doc.get("suite") else ""
    return (f"noise: {len(doc['runs'])} runs{suite} (runs {ids}), {len(doc['instances'])} instances, "
            f"{doc['comparisons']} comparisons of identical runs, {doc['false_alarms']} called significant "
            f"(threshold {100 * doc['threshold']:g}%)")


def within_line(doc: Mapping[str, Any]) -> str | None:
    """`instances whose run medians agree within 2%: 37%, 5%: 64%, 10%: 82%` (None: no spread
    known, or a result stored before the shares were)."""
    shares = doc.get("within") or {}
    parts = [f"{100 * float(w):g}%: {100 * v:.0f}%" for w, v in shares.items() if v is not None]
    return "instances whose run medians agree within " + ", ".join(parts) if parts else None


def verdict_lines(verdict: str) -> list[str]:
    """A family's verdict within WIDTH columns, wrapped between its `; ` pieces (continuations indented)."""
    lines = wrap_pieces(verdict.split("; "), WIDTH)
    return [lines[0].lstrip(), *lines[1:]]


def worst_table(instances: Sequence[Mapping[str, Any]], count: int = WORST) -> str:
    """The instances that resolve the largest change (then the widest spread), worst first."""
    def badness(x: Mapping[str, Any]) -> tuple[float, float]:
        return (x["resolves"] if x["resolves"] is not None else float("inf"),
                x["spread"] if x["spread"] is not None else 0.0)

    rows = []
    for x in sorted(instances, key=badness, reverse=True)[:count]:
        rows.append([x["name"], scale_of(x["median"], x["unit"])(x["median"]), noise.percent(x["spread"]),
                     noise.percent(x["rsd"]), noise.percent(x["resolves"]), str(len(x["false_alarms"]))])
    table = simple(["instance", "median", "spread", "rsd", "resolves", "false alarms"], rows,
                   (False, True, True, True, True, True))
    return to_text(table, width=WIDTH, wrap=(0,))


def false_alarm_lines(doc: Mapping[str, Any]) -> list[str]:
    found = [(x["name"], a) for x in doc["instances"] for a in x["false_alarms"]]
    if not found:
        return []
    lines = ["false alarms (compare called identical runs different):"]
    for name, a in found[:FALSE_ALARMS_SHOWN]:
        change = "n/a" if a["change"] is None else f"{100 * a['change']:+.1f}%"
        lines.append(f"  {name}: run {a['run']} against run {a['baseline']} {change}")
    if len(found) > FALSE_ALARMS_SHOWN:
        lines.append(f"  ... and {len(found) - FALSE_ALARMS_SHOWN} more (--json FILE lists them all)")
    return lines


def render_text(doc: Mapping[str, Any]) -> str:
    parts = [wrap_list(_runs_line(doc), WIDTH)]
    if not doc["instances"]:
        parts.append("no instance was ok in two runs: nothing to tell")
        return "\n\n".join(parts) + "\n"
    within = within_line(doc)
    parts.append("\n".join(([within] if within else []) + [v for f in doc["families"]
                                                            for v in verdict_lines(f["verdict"])]))
    parts.append("worst instances:\n" + worst_table(doc["instances"]))
    alarms = false_alarm_lines(doc)
    if alarms:
        parts.append("\n".join(alarms))
    parts.append(
        "spread: largest / smallest median of the runs - 1; rsd: robust relative SD of the log medians\n"
        "(1.4826 x MAD); resolves: the smallest change, up or down, compare called significant in every\n"
        "comparison of two of these runs (its threshold and intervals); a family's verdict gives the change\n"
        f"that {100 * noise.SHARE:.0f}% of its instances resolve. compare adds the caveat 'below this "
        f"machine's noise\n(noise run {doc['run']}: +x%)' to a significant change smaller than that, for runs "
        "of this machine\n(docs/compare.md, \"What this machine can resolve\")"
    )
    return "\n\n".join(parts) + "\n"
