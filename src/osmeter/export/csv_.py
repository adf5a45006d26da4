"""CSV export: one row per result, the columns of FIELDS, then one per
counter, then one per parameter (`param.size`: fields.param_columns).

Objects (params, extra) are written as canonical JSON; a missing value or
NaN is an empty cell; booleans are true/false; floats keep full precision;
a field with its own CSV spelling (fields.CSV_SPELLING: flags joined with
`;`) is written that way.

A cell a spreadsheet would run as a formula (one starting with `=`, `+`, `-`,
`@`, TAB or CR) gets a leading `'`, unless it is a plain number: `-1.5`
stays a number, `-1+2` and `=HYPERLINK(...)` become text (docs/export.md).

Text is written as it was stored, control characters included, and the CSV
stays valid: a cell holding a comma, a quote, a newline or a CR is quoted
(RFC 4180; Python's csv module leaves a lone CR bare when the line ends in
LF, so rows are written here). On a terminal, osmeter.streams writes every
control character as a backslash escape (`\\x1b`), CSV included; a file or
a pipe (`-o FILE`, `> FILE`) gets the exact value.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from ..lebench import RowNames
from ..model import BenchResult, RunInfo
from .fields import CSV_SPELLING, param_columns, param_value, result_rows


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


_QUOTED = re.compile(r'[,"\r\n]')


def csv_line(cells: Sequence[str]) -> str:
    """One CSV row ending in LF; a cell with a comma, a quote, CR or LF quoted, its quotes doubled."""
    return ",".join('"' + c.replace('"', '""') + '"' if _QUOTED.search(c) else c for c in cells) + "\n"


def render(run: RunInfo, results: Sequence[BenchResult], names: RowNames | None = None) -> str:
    columns, rows = result_rows(run, results, names)
    params = param_columns(results)
    lines = [csv_line([neutral(c) for c in columns + params])]
    for row in rows:
        cells = [cell(CSV_SPELLING[c](row[c]) if c in CSV_SPELLING else row[c]) for c in columns]
        lines.append(csv_line(cells + [cell(param_value(row, c)) for c in params]))
    return "".join(lines)
