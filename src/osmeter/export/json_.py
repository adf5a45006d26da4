"""JSON export: a versioned envelope with the run and its results."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Sequence

from ..model import BenchResult, RunInfo
from .fields import result_rows

EXPORT_SCHEMA = 1


def run_dict(run: RunInfo) -> dict[str, Any]:
    return asdict(run)


def document(run: RunInfo, results: Sequence[BenchResult]) -> dict[str, Any]:
    return {
        "osmeter_export": EXPORT_SCHEMA,
        "run": run_dict(run),
        "results": result_rows(run, results)[1],
    }


def render(run: RunInfo, results: Sequence[BenchResult]) -> str:
    return json.dumps(document(run, results), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
