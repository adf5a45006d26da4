"""Exporters: pure functions from a run and its results to text, one registry."""

from __future__ import annotations

from typing import Callable, Sequence

from ..model import BenchResult, RunInfo
from . import csv_, json_

Renderer = Callable[[RunInfo, Sequence[BenchResult]], str]

EXPORTERS: dict[str, Renderer] = {
    "json": json_.render,
    "csv": csv_.render,
}
