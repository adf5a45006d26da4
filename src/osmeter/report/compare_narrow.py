"""The comparison page's heatmap when it has one column (two runs): a
single coloured column under a rotated header sat alone in a page's width of
blank. Here each row reads left to right instead: the instance (left
aligned), both runs' medians in their unit's step (`2.654 ms`), the change
cell (coloured and hoverable as the heatmap's), and the ratio drawn as a bar
from 1× with its 95 % interval as a whisker, on a log scale from 0.5× to 2×
(where the colours saturate), so the changes can be read down the page.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from ..compare import Comparison
from ..fmt import fmt_quantity
from ..model import RunInfo
from . import plots
from .escaping import esc

BAR_PX = 240  # the bar's track; 1x in the middle, 0.5x and 2x at the ends
LIMIT = plots.HEAT_LIMIT  # |log2 ratio| at the ends of the track

# The instance column: left aligned, next to its numbers, and wrapped at spaces
# when the page is too narrow for the longest (the heatmap's never wraps).
LABEL_STYLE = "text-align:left;white-space:normal"
NarrowRow = tuple[str, str, "Comparison | None"]  # name shown, its hover ('' for none), the comparison


def _x(ratio: float) -> float:
    """Where `ratio` sits on the track, in px (clamped to its ends)."""
    if not ratio > 0:
        return 0.0
    return BAR_PX / 2 * (1 + max(-1.0, min(1.0, math.log2(ratio) / LIMIT)))


def bar_html(c: Comparison | None) -> str:
    """The ratio as a bar from the middle (1x) and its interval as a whisker."""
    if c is None or not math.isfinite(c.ratio):
        return '<td class="bar"></td>'
    colour = plots.heat_colour(c.worse) if c.significant else plots.GREY
    mid, end = _x(1.0), _x(c.ratio)
    lo, hi = end, end
    if math.isfinite(c.ci_low) and math.isfinite(c.ci_high):
        lo, hi = sorted((_x(c.ci_low), _x(c.ci_high)))
    title = f"ratio {c.ratio:.4f}, 95 % CI {c.ci_low:.4f} .. {c.ci_high:.4f}"
    return (f'<td class="bar" title="{esc(title)}"><div style="position:relative;width:{BAR_PX}px;height:16px">'
            f'<div style="position:absolute;left:{mid:.0f}px;top:0;bottom:0;border-left:1px solid #9a9a9a"></div>'
            f'<div style="position:absolute;top:3px;height:10px;left:{min(mid, end):.1f}px;'
            f'width:{max(abs(end - mid), 1.5):.1f}px;background:{colour}"></div>'
            f'<div style="position:absolute;top:7px;height:2px;left:{lo:.1f}px;width:{max(hi - lo, 1.0):.1f}px;'
            'background:#333"></div></div></td>')


def narrow_heatmap_html(rows: Sequence[NarrowRow], run: RunInfo, run_label: str,
                        cell_html: Callable[["Comparison | None"], str]) -> str:
    """The one-column heatmap as a table: instance, baseline median, `run`'s
    median, the change cell (`cell_html`: the heatmap's), the ratio's bar."""
    baseline = next((c.baseline_id for _, _, c in rows if c is not None), None)
    head = (f'<th class="bench" style="text-align:left">instance</th>'
            f'<th class="num">baseline{f" #{baseline}" if baseline is not None else ""}</th>'
            f'<th class="num" title="run {run.id}">{esc(run_label)}</th><th>change %</th>'
            f'<th title="the ratio of the medians (run / baseline) as a bar from 1x, its 95 % interval as a whisker; '
            f'log scale, 0.5x and 2x at the ends">ratio and its 95 % CI<div style="display:flex;'
            f'justify-content:space-between;width:{BAR_PX}px;font-weight:normal;font-size:11px">'
            "<span>0.5×</span><span>1×</span><span>2×</span></div></th>")
    out = []
    for shown, hover, c in rows:
        title = f' title="{esc(hover)}"' if hover else ""
        before = fmt_quantity(c.baseline_median, c.unit) if c is not None else "–"
        after = fmt_quantity(c.median, c.unit) if c is not None else "–"
        out.append(f'<tr><th class="bench mono" style="{LABEL_STYLE}"{title}>{esc(shown)}</th>'
                   f'<td class="num">{esc(before)}</td><td class="num">{esc(after)}</td>'
                   f"{cell_html(c)}{bar_html(c)}</tr>\n")
    return (f'<div class="scroll"><table class="heatmap narrow" id="heatmap"><thead><tr>{head}</tr></thead>'
            f"<tbody>\n{''.join(out)}</tbody></table></div>")
