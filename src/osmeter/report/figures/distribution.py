"""The distribution of each benchmark's raw samples: one figure per benchmark.

One instance: a histogram with the median and lebench_kbest marked. Several
instances (a parameter sweep): one violin per parameter set, or box plots
when there are too many for violins, labelled by the parameters that differ
(byte counts in KiB/MiB/GiB). The value axis spans the samples' robust
range (plots.robust_range), logarithmic when that spans more than
plots.WIDE_SPREAD×.

A benchmark measured at three or more values of a numeric parameter also
gets the cost against that parameter (sweep.py), before its distribution.
"""

from __future__ import annotations

from .. import plots
from .base import NamedFigure, RunData
from .labels import SIZE_PARAMS, figure_params, split_params
from .sweep import sweep_figures

__all__ = ["SIZE_PARAMS", "benchmarks", "distribution_figure", "distribution_figures", "figure_params",
           "split_params"]


def benchmarks(data: RunData) -> list[str]:
    """The benchmarks with at least one ok result, in run order."""
    seen: list[str] = []
    for r in data.results:
        if r.status == "ok" and r.bench not in seen:
            seen.append(r.bench)
    return seen


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
    """Each benchmark's figures (`bench`: one's): its parameter sweeps' cost
    against the parameter (sweep.py), then the distribution of its samples."""
    out: list[NamedFigure] = []
    for name in [bench] if bench is not None else benchmarks(data):
        out += sweep_figures(data, name)
        dist = distribution_figure(data, name)
        if dist is not None:
            out.append(dist)
    return out
