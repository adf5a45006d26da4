"""CSV export: one row per result, the columns of FIELDS, then one per counter.

Objects (params, extra) are written as canonical JSON; a missing value or
NaN is an empty cell; booleans are true/false; floats keep full precision.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

from ..model import BenchResult, RunInfo
from .fields import result_rows


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return repr(value) if isinstance(value, float) else str(value)


def render(run: RunInfo, results: Sequence[BenchResult]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names, rows = result_rows(run, results)
    writer.writerow(names)
    for row in rows:
        writer.writerow([cell(row[name]) for name in names])
    return out.getvalue()
