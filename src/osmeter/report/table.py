"""Plain-text tables and the number format used in them."""

from __future__ import annotations

import math
import textwrap
from typing import Sequence


def fmt_num(value: float | int | None, digits: int = 4) -> str:
    """`digits` significant digits, no exponent below 10^6; '-' for missing/NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, int):
        return str(value)
    magnitude = abs(value)
    if magnitude == 0:
        return "0"
    if magnitude >= 1e6 or magnitude < 1e-3:
        return f"{value:.{digits - 1}e}"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(magnitude))))
    return f"{value:.{decimals}f}"


def fmt_percent(fraction: float | None) -> str:
    if fraction is None or math.isnan(fraction):
        return "-"
    return f"{100 * fraction:.1f}"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] = ()) -> str:
    """Columns padded to their widest cell; `right[i]` right-aligns column i.

    A header may span lines ("task-clock\nns/op"): the heading gets as many
    lines as its tallest header, shorter ones are blank at the top."""
    split = [h.split("\n") for h in headers]
    height = max((len(h) for h in split), default=1)
    head_lines = [[""] * (height - len(h)) + h for h in split]
    widths = [max(len(part) for part in h) for h in head_lines]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(widths[i]) if i < len(right) and right[i] else c.ljust(widths[i]) for i, c in enumerate(cells)
        ]
        return "  ".join(padded).rstrip()

    out = [line([h[k] for h in head_lines]) for k in range(height)]
    out.append(line(["-" * w for w in widths]))
    out.extend(line(r) for r in rows)
    return "\n".join(out)


def render_pairs(pairs: Sequence[tuple[str, str, str]], width: int = 100) -> str:
    """`key  value` lines; long values wrap under the value column, and a
    non-empty third element is shown on the next line, indented, after '#'."""
    key_width = max((len(k) for k, _, _ in pairs), default=0)
    indent = " " * (key_width + 2)
    out = []
    for key, value, note in pairs:
        body = textwrap.wrap(value, max(20, width - len(indent)), break_on_hyphens=False) or [""]
        out.append(f"{key.ljust(key_width)}  {body[0]}".rstrip())
        out.extend(indent + more for more in body[1:])
        if note:
            out.extend(indent + "# " + line for line in textwrap.wrap(note, max(20, width - len(indent) - 2)))
    return "\n".join(out)
