"""What every family's figures module takes and gives: a stored run with lazy
access to its samples (RunData), and named figures (NamedFigure). Apart from
the registry in __init__.py, so the family modules import it without going
round through the registry that imports them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.figure import Figure

    from ...model import BenchResult, RunInfo


@dataclass(frozen=True)
class RunData:
    """A stored run with lazy access to raw samples."""

    run: "RunInfo"
    results: "tuple[BenchResult, ...]"
    samples: "Callable[[BenchResult], np.ndarray | None]"

    def ok(self, bench: str) -> "list[BenchResult]":
        """The run's ok results for one benchmark, in run order."""
        return [r for r in self.results if r.bench == bench and r.status == "ok"]


@dataclass(frozen=True)
class NamedFigure:
    name: str  # file stem, e.g. "mem-latency" (unique within a run)
    title: str  # one line, for the report's heading
    figure: "Figure"  # a matplotlib Figure with labelled axes (units) and a legend


FigureFn = Callable[[RunData], "list[NamedFigure]"]
