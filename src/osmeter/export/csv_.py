"""CSV export: one row per result, the columns of FIELDS.

Objects (params, extra) are written as canonical JSON; a missing value or
NaN is an empty cell; booleans are true/false; floats keep full precision.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

from ..model import BenchResult, RunInfo
from .fields import FIELD_NAMES, result_row


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
    writer.writerow(FIELD_NAMES)
    for r in results:
        row = result_row(run, r)
        writer.writerow([cell(row[name]) for name in FIELD_NAMES])
    return out.getvalue()
