"""JSON export: a versioned envelope with the run and its results."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Sequence

from ..lebench import RowNames
from ..model import BenchResult, RunInfo
from .fields import result_rows

EXPORT_SCHEMA = 1


def run_dict(run: RunInfo) -> dict[str, Any]:
    return asdict(run)


def document(run: RunInfo, results: Sequence[BenchResult], names: RowNames | None = None) -> dict[str, Any]:
    return {
        "osmeter_export": EXPORT_SCHEMA,
        "run": run_dict(run),
        "results": result_rows(run, results, names)[1],
    }


def render(run: RunInfo, results: Sequence[BenchResult], names: RowNames | None = None) -> str:
    return json.dumps(document(run, results, names), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
