"""The distribution of each benchmark's raw samples: one figure per benchmark.

One instance: a histogram with the median and lebench_kbest marked. Several
instances (a parameter sweep): one violin per parameter set, or box plots
when there are too many for violins, labelled by the parameters that differ
(byte counts in KiB/MiB/GiB). The value axis turns logarithmic when
the samples span more than plots.WIDE_SPREAD×.
"""

from __future__ import annotations

from typing import Any, Mapping

from ...records import format_params
from .. import plots
from ...fmt import human_bytes
from .base import NamedFigure, RunData

# Parameters that are byte counts (the catalogue's type "size"): shown in
# KiB/MiB/GiB in figure labels, where 62 raw counts would be unreadable.
SIZE_PARAMS = ("size",)


def figure_params(params: Mapping[str, Any]) -> str:
    """Parameters for a figure label: `size=1 MiB, thp=0` (byte counts in
    binary units, 0 kept as it is: it means "auto"), sorted by key."""
    parts = []
    for k in sorted(params):
        v = params[k]
        if (k in SIZE_PARAMS or k.endswith("_bytes")) and isinstance(v, int) and not isinstance(v, bool) and v:
            parts.append(f"{k}={human_bytes(v)}")
        else:
            parts.append(format_params({k: v}))
    return ", ".join(parts)


def benchmarks(data: RunData) -> list[str]:
    """The benchmarks with at least one ok result, in run order."""
    seen: list[str] = []
    for r in data.results:
        if r.status == "ok" and r.bench not in seen:
            seen.append(r.bench)
    return seen


def split_params(params: list[dict]) -> tuple[dict, list[dict]]:
    """The parameters every instance shares, and what is left of each instance's."""
    if not params:
        return {}, []
    shared = {k: v for k, v in params[0].items() if all(k in p and p[k] == v for p in params[1:])}
    if len(params) == 1:
        shared = {}
    return shared, [{k: v for k, v in p.items() if k not in shared} for p in params]


def distribution_figure(data: RunData, bench: str) -> NamedFigure | None:
    """The figure for one benchmark, or None when no sample of it is stored.

    Each instance is labelled by the parameters that differ between the
    instances; the ones they share go in the title."""
    results, samples, medians, kbests, units = [], [], [], [], set()
    for r in data.ok(bench):
        values = data.samples(r)
        if values is None or values.size == 0 or r.summary is None:
            continue
        results.append(r)
        samples.append(values)
        medians.append(r.summary.median)
        kbests.append(r.summary.lebench_kbest)
        units.add(r.unit)
    if not samples:
        return None
    unit = units.pop() if len(units) == 1 else None
    n = len(samples)
    shared, own = split_params([dict(r.params) for r in results])
    labels = [figure_params(p) or "(defaults)" for p in own]
    where = f" ({figure_params(shared)})" if shared else ""
    title = f"{bench}{where}: distribution of {sum(s.size for s in samples)} samples" + (
        f" over {n} parameter sets" if n > 1 else ""
    )
    fig = plots.distribution_figure(title.replace(": ", "\n", 1), unit, labels, samples, medians, kbests)
    return NamedFigure(f"dist-{bench}", title, fig)


def distribution_figures(data: RunData, bench: str | None = None) -> list[NamedFigure]:
    names = [bench] if bench is not None else benchmarks(data)
    return [f for f in (distribution_figure(data, name) for name in names) if f is not None]
