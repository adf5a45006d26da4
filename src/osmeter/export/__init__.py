"""Exporters: pure functions from a run and its results to text, one registry."""

from __future__ import annotations

from typing import Protocol, Sequence

from ..lebench import RowNames
from ..model import BenchResult, RunInfo
from . import csv_, json_


class Renderer(Protocol):
    """render(run, results, names=None) -> text; `names` (--names lebench) labels and orders the rows."""

    def __call__(self, run: RunInfo, results: Sequence[BenchResult], names: RowNames | None = None) -> str: ...


EXPORTERS: dict[str, Renderer] = {
    "json": json_.render,
    "csv": csv_.render,
}
