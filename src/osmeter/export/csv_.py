"""CSV export: one row per result, the columns of FIELDS, then one per counter.

Objects (params, extra) are written as canonical JSON; a missing value or
NaN is an empty cell; booleans are true/false; floats keep full precision;
a field with its own CSV spelling (fields.CSV_SPELLING: flags joined with
`;`) is written that way.

A cell a spreadsheet would run as a formula (one starting with `=`, `+`, `-`,
`@`, TAB or CR) gets a leading `'`, unless it is a plain number: `-1.5`
stays a number, `-1+2` and `=HYPERLINK(...)` become text (docs/export.md).
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any, Sequence

from ..lebench import RowNames
from ..model import BenchResult, RunInfo
from .fields import CSV_SPELLING, result_rows


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan)")


def neutral(text: str) -> str:
    """`text`, with a leading `'` when a spreadsheet would take it for a formula."""
    if text.startswith(FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def _spelled(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return repr(value) if isinstance(value, float) else str(value)


def cell(value: Any) -> str:
    return neutral(_spelled(value))


def render(run: RunInfo, results: Sequence[BenchResult], names: RowNames | None = None) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns, rows = result_rows(run, results, names)
    writer.writerow([neutral(c) for c in columns])
    for row in rows:
        writer.writerow([cell(CSV_SPELLING[c](row[c]) if c in CSV_SPELLING else row[c]) for c in columns])
    return out.getvalue()
