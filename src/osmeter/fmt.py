"""Ground-floor formatting: numbers scaled for people (fmt_num, human_bytes,
fmt_percent) and plain-text tables (render_table, render_pairs) fitted to the
terminal."""

from __future__ import annotations

import math
import os
import re
import sys
import textwrap
from typing import Mapping, Sequence


def fmt_num(value: float | int | None, digits: int = 4, grouped: bool = True) -> str:
    """`digits` significant digits, never an exponent ('-' for missing/NaN).

    From 10^digits on, a value is rounded to `digits` significant digits and
    its thousands are separated (7616533.2 -> '7,617,000'); under 10^-3 it
    gets the decimals its digits need (0.000123 -> '0.0001230'). Integers are
    shown whole, thousands separated from 10 000 on (fmt_count). `grouped=False`:
    no separators (a CSV cell that a program reads)."""
    if value is None or value != value:  # None or NaN
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return fmt_count(value) if grouped else str(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    value = float(f"{value:.{digits - 1}e}")  # rounded first: 9999.7 -> 10000, 0.99997 -> 1.000
    exponent = int(math.floor(math.log10(abs(value))))
    if exponent >= 15:  # beyond any measured quantity (a petasecond in ns): an exponent, not 20 digits
        return f"{value:.{digits - 1}e}"
    if exponent >= digits:
        return f"{value:,.0f}" if grouped else f"{value:.0f}"
    return f"{value:.{max(0, digits - 1 - exponent)}f}"


def fmt_g(value: float, digits: int = 3) -> str:
    """Python's `g` format (no trailing zeros: 10.0 -> '10'), without its exponent: fmt_num's digits
    from 10^digits on (1234.5 -> '1,234' at 4, '1,230' at 3)."""
    text = f"{value:.{digits}g}"
    return fmt_num(float(value), digits) if "e" in text else text


def fmt_p(p: float | None) -> str:
    """A p-value for people: '0.012', '<0.001' (never an exponent); '-' when unknown."""
    if p is None or p != p:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.2g}"


def fmt_count(n: int | float | None) -> str:
    """A count with thousands separated from 10 000 on: 3704 -> '3704', 12345 -> '12,345'."""
    if n is None or n != n:
        return "-"
    n = int(n)
    return f"{n:,}" if abs(n) >= 10000 else str(n)


# Units people read, scaled (DESIGN.md: ns/us/ms, MB/s/GB/s): each unit's
# steps, largest first. Rates are decimal, as fio and iperf3 print them.
MICRO = "\u00b5"  # the micro sign of "us"; a terminal whose encoding lacks it gets 'u' (streams)
_STEPS: dict[str, tuple[tuple[float, str], ...]] = {
    "ns": ((1e9, "s"), (1e6, "ms"), (1e3, MICRO + "s"), (1.0, "ns")),
    "bytes_per_s": ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")),
    "bits_per_s": ((1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s")),
    "bytes": ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")),
}


class Scale:
    """One unit step: values are divided by `factor` and followed by `suffix`."""

    __slots__ = ("factor", "suffix")

    def __init__(self, factor: float, suffix: str) -> None:
        self.factor = factor
        self.suffix = suffix

    def number(self, value: float | None, digits: int = 4) -> str:
        """The value in this step, without its suffix ('-' for missing)."""
        if value is None or value != value:
            return "-"
        return fmt_num(float(value) / self.factor, digits)

    def __call__(self, value: float | None, digits: int = 4) -> str:
        """The value in this step with its suffix: '2.654 ms' ('-' for missing)."""
        text = self.number(value, digits)
        return text if text == "-" or not self.suffix else f"{text} {self.suffix}"

    def __repr__(self) -> str:
        return f"Scale({self.factor:g}, {self.suffix!r})"


def scale_of(value: float | None, unit: str | None) -> Scale:
    """The step that shows `value` of `unit` with 1 to 3 digits before the
    point (the largest step not above it); the unit itself for a unit
    without steps, a missing or a zero value (the smallest step)."""
    steps = _STEPS.get(unit or "")
    if steps is None:
        return Scale(1.0, unit or "")
    if value is None or value != value or value == 0 or math.isinf(value):
        return Scale(steps[-1][0], steps[-1][1])
    magnitude = abs(value)
    for factor, suffix in steps:
        # 999.96 ns rounds to '1000 ns' at 4 digits: it goes up a step instead
        if magnitude >= factor * 0.99995:
            return Scale(factor, suffix)
    return Scale(steps[-1][0], steps[-1][1])


def fmt_quantity(value: float | None, unit: str | None, digits: int = 4) -> str:
    """A value of `unit` scaled for people: (2654000, 'ns') -> '2.654 ms',
    (1.294e11, 'bytes_per_s') -> '129.4 GB/s'; '-' for missing."""
    return scale_of(value, unit)(value, digits)


def fmt_interval(low: float | None, high: float | None, unit: str | None, ref: float | None = None,
                 sep: str = " .. ") -> str:
    """An interval in the step of `ref` (its median; the interval's own high
    end without one), the suffix once: '2.143 .. 3.064 ms'."""
    scale = scale_of(ref if ref is not None and ref == ref else high, unit)
    text = f"{scale.number(low)}{sep}{scale.number(high)}"
    return f"{text} {scale.suffix}" if scale.suffix else text


def unit_label(unit: str | None) -> str:
    """How a raw unit reads where a number stands without it (an axis): 'bytes_per_s' -> 'B/s'."""
    steps = _STEPS.get(unit or "")
    return steps[-1][1] if steps else (unit or "")


_BINARY = (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10))


def human_bytes(n: float) -> str:
    """A byte count in binary units: 4096 -> '4 KiB', 1572864 -> '1536 KiB',
    25276514304 -> '23.54 GiB'; under 1 KiB, '512 B'. A whole number of a
    unit (under 100000 of it) is shown so: 4096000 -> '4000 KiB', as LEBench
    names it; otherwise the largest unit, at most 4 significant digits."""
    for unit, shift in _BINARY:
        v = n / (1 << shift)
        if abs(v) >= 1 and v == int(v) and abs(v) < 100000:
            return f"{v:.0f} {unit}"
    for unit, shift in _BINARY:
        if abs(n) >= 1 << shift:
            v = n / (1 << shift)
            return f"{v:.4g} {unit}" if v < 1000 else f"{v:.0f} {unit}"
    return f"{n:.0f} B" if n == int(n) else f"{n:.4g} B"


def fmt_percent(fraction: float | None) -> str:
    if fraction is None or math.isnan(fraction):
        return "-"
    return f"{100 * fraction:.1f}"


def terminal_width() -> int | None:
    """The width a text table should fit: $COLUMNS when set, else the
    terminal's when stdout is one; None (no limit) when the output goes to a
    pipe or a file, so each row stays one greppable line."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns
    except (AttributeError, ValueError, OSError):
        pass
    return None


MISSING = "-"  # every text table's cell for a value that is missing, unknown or none


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Sequence[bool] = (),
    width: int | None = None,
    wrap: Sequence[int] = (),
    floors: Mapping[int, int] | None = None,
) -> str:
    """Columns padded to their widest cell; `right[i]` right-aligns column i.

    Callers show a missing, unknown or empty value as MISSING ('-'), the
    one convention of the text tables; a blank cell is layout (the row
    continues the one above) or an annotation with nothing to say. A header may span lines ("task-clock\nns/op"): the heading gets
    as many lines as its tallest header, shorter ones are blank at the top.

    With `width`, the columns listed in `wrap` are narrowed (in that order,
    never under WRAP_MIN characters nor under `floors[i]`, a column's longest
    word, which is then never cut) until every line fits in `width`, and
    their cells wrap onto more lines at spaces; a newline in a cell always
    starts a new line. Without `width` every row is one line: a cell's
    newlines show as '; '."""
    split = [h.split("\n") for h in headers]
    height = max((len(h) for h in split), default=1)
    head_lines = [[""] * (height - len(h)) + h for h in split]
    if width is None:
        rows = [[c.replace("\n", "; ") for c in row] for row in rows]
    widths = [max(len(part) for part in h) for h in head_lines]
    for row in rows:  # a table of 100 hosts' columns has 20 000 cells: one line each is the quick case
        for i, cell in enumerate(row):
            n = max(len(part) for part in cell.split("\n")) if "\n" in cell else len(cell)
            if n > widths[i]:
                widths[i] = n
    if width is not None:
        _narrow(widths, head_lines, wrap, width, floors or {})
    pads = [str.rjust if i < len(right) and right[i] else str.ljust for i in range(len(widths))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join([pad(c, w) for pad, c, w in zip(pads, cells, widths)]).rstrip()

    out = [line([h[k] for h in head_lines]) for k in range(height)]
    out.append(line(["-" * w for w in widths]))
    for row in rows:
        if not wrap and not any("\n" in c for c in row):
            out.append(line(row))
            continue
        parts = [_cell_lines(c, widths[i], WRAP_HANG) if i in wrap else c.split("\n") for i, c in enumerate(row)]
        tall = max((len(p) for p in parts), default=1)
        out.extend(line([p[k] if k < len(p) else "" for p in parts]) for k in range(tall))
    return "\n".join(out)


WRAP_MIN = 16  # characters: a wrapped column is never narrower (nor narrower than its header)
WRAP_HANG = "  "  # a folded cell's continuation lines: indented, so they read as its own


def _narrow(widths: list[int], head_lines: Sequence[Sequence[str]], wrap: Sequence[int], width: int,
            floors: Mapping[int, int]) -> None:
    """Narrow the `wrap` columns, in that order, each down to its floor, until
    the table fits in `width` (or every one is at its floor)."""
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    for i in wrap:
        if excess <= 0:
            return
        floor = max(WRAP_MIN, floors.get(i, 0), *(len(h) for h in head_lines[i]))
        step = min(excess, max(0, widths[i] - floor))
        widths[i] -= step
        excess -= step


_PIECE = re.compile(r"[^ |]*\|?|[^ ]+")


def _cell_lines(cell: str, width: int, hang: str = "") -> list[str]:
    """A cell's lines at `width` characters: its own newlines kept, each part
    wrapped at spaces or after a '|' ("{a|b|c}"), its continuation lines
    starting with `hang`; a word still longer than the column is cut."""
    lines: list[str] = []
    for part in cell.split("\n"):
        current = ""
        for word in part.split(" "):
            pieces = [m for m in _PIECE.findall(word) if m] or [""]
            for k, piece in enumerate(pieces):
                joined = current + ("" if k or not current else " ") + piece
                if len(joined) <= width or not current:
                    current = joined
                else:
                    lines.append(current)
                    current = hang + piece
                while len(current) > width:
                    lines.append(current[:width])
                    current = hang + current[width:]
        lines.append(current.rstrip())
    return lines


def fold(text: str, width: int | None) -> str:
    """Prose fitted to `width`: each longer line wrapped at spaces, its continuation lines indented
    two more than it (a word longer than the width stays whole); None: as it is."""
    if width is None:
        return text
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")))
        out.extend(textwrap.wrap(line, width, initial_indent="", subsequent_indent=indent + "  ",
                                 break_long_words=False, break_on_hyphens=False) or [line])
    return "\n".join(out)


def render_pairs(pairs: Sequence[tuple[str, str, str]], width: int = 100) -> str:
    """`key  value` lines; long values wrap under the value column (a newline
    in a value starts a new line there, and then a line wrapped from it is
    indented; an empty value shows as '-'), and a
    non-empty third element is shown on the next line, indented, after '#'."""
    key_width = max((len(k) for k, _, _ in pairs), default=0)
    indent = " " * (key_width + 2)
    out = []
    for key, value, note in pairs:
        body = _cell_lines(value if value.strip() else MISSING, max(20, width - len(indent)),
                           "  " if "\n" in value else "")
        out.append(f"{key.ljust(key_width)}  {body[0]}".rstrip())
        out.extend(indent + more for more in body[1:])
        if note:
            out.extend(indent + "# " + line for line in textwrap.wrap(note, max(20, width - len(indent) - 2)))
    return "\n".join(out)
