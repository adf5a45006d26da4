"""Family figures: one module per benchmark family, one explicit registry.

A figure function takes one stored run (`RunData`) and returns the figures it
can draw from it, or an empty list when the run holds no data for them.
`osmeter plot` writes them as files; `osmeter report` inlines them as SVG.
A new family adds its module here and one line to FIGURES; nothing else
changes. Figure functions never do I/O beyond `RunData.samples`.

Style for figure functions: build figures with `report.plots.figure()` (no
pyplot state; the shared style), label both axes with their units, give a
legend, and return [] when the run has no data for them. `family_figures()`
calls every registered function and turns an exception into a
FigureFailure the report shows, so one broken figure never sinks a report.
The per-benchmark distribution figures are not a family: they live in
`distribution.py` and the report and `osmeter plot` add them after these.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import FigureFn, NamedFigure, RunData
from . import file, mem, net, rt, task

__all__ = ["FIGURES", "FigureFailure", "FigureFn", "NamedFigure", "RunData", "family_figures"]

# family -> figure function. Explicit and ordered: families register here.
FIGURES: dict[str, FigureFn] = {
    "task": task.figures,
    "mem": mem.figures,
    "file": file.figures,
    "net": net.figures,
    "rt": rt.figures,
}


@dataclass(frozen=True)
class FigureFailure:
    family: str
    message: str  # the exception, for the report and stderr


def family_figures(data: RunData, families: "list[str] | None" = None) -> "tuple[list[NamedFigure], list[FigureFailure]]":
    """Every family figure the run has data for (`families`: only those).

    A figure function that raises does not sink the report: the failure is
    returned, and the report shows it where the figure would have been.
    """
    figures: list[NamedFigure] = []
    failures: list[FigureFailure] = []
    for family, fn in FIGURES.items():
        if families is not None and family not in families:
            continue
        try:
            figures.extend(fn(data))
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            failures.append(FigureFailure(family, f"{type(e).__name__}: {e}"))
    return figures, failures
