"""The HTML of `osmeter compare --by`: the heatmap of columns (hosts,
kernels, labels) against the baseline column as a table whose cells say
more when hovered, the machine facts that differ between the columns, the
runs each column used and why cells have no comparison. `render_page` is
the page of `compare --by -o FILE.html`; `sections` is what the fleet
report (report.fleet) includes. Escaping and pieces as html.py and
html_compare.py.
"""

from __future__ import annotations

from .. import compare_by as cb
from .. import compare as cmp
from . import by_cells as bc
from . import names as nm
from .html import esc, flag_legend_html, page
from .names import run_subtitle
from .tables import to_html


def heatmap_html(outcome: cb.ByOutcome, labels: nm.InstanceLabels) -> str:
    return bc.heatmap_html(outcome, labels, run_subtitle).rstrip("\n")


def _legend(outcome: cb.ByOutcome) -> str:
    muted = bc.muted_colour(0.25)
    states = {c.state for r in outcome.rows for c in r.cells} - {cb.COMPARED, cb.BASELINE}
    words = "".join(f"<span><b>{esc(bc.STATE_WORDS[s])}</b>: {esc(bc.STATE_MEANINGS[s])}</span>"
                    for s in cb.STATES if s in states)
    return (
        '<div class="legend"><span>faster / better</span><span class="bar"></span><span>slower / worse</span>'
        f'<span><span class="swatch" style="background:{muted};background-image:repeating-linear-gradient(45deg,'
        'rgba(255,255,255,.65) 0 2px,transparent 2px 6px)"></span>no significant change (muted, hatched)</span>'
        f'<span><span class="swatch" style="background:{bc.BASE_COLOUR}"></span>baseline column: its median</span>'
        + words
        + (f'<span><span class="mark">{bc.CAVEAT_MARK}</span> dashed: a flagged figure behind the cell (hover)</span>'
           if bc.caveat_flags(outcome) else "")
        + "</div>"
    )


def sysinfo_html(outcome: cb.ByOutcome) -> str:
    if not outcome.differences:
        return '<p class="muted">The columns\' machine descriptions are the same.</p>\n'
    return to_html(bc.sysinfo_table(outcome))


def sections(outcome: cb.ByOutcome, labels: nm.InstanceLabels, level: int = 2) -> str:
    """Heatmap, its legend, the sysinfo diff, the columns' runs and what was not compared."""
    h = f"h{level}"
    base = outcome.columns[outcome.baseline]
    parts = [
        f"<{h}>Change against {esc(base.name)}, by {esc(outcome.by)}</{h}>",
        f'<p class="sub">{esc(bc.counts_line(outcome))}. Method: {esc(cmp.METHOD)}; noise threshold '
        f"{100 * outcome.threshold:g} %.</p>",
        '<p class="muted">Each cell: the change of the median against the baseline column in % (for a rate such as '
        "bytes/s a rise is better), coloured when significant: red worse, green better, deeper for larger changes "
        "(full colour at 2×). A change that is not significant (its 95 % interval includes 1, or it is within the "
        "noise threshold) is muted and hatched. Hover a cell for the medians, the interval and the run.</p>",
        _legend(outcome),
        heatmap_html(outcome, labels),
        flag_legend_html(bc.caveat_flags(outcome)),
        f"<{h}>Sysinfo that differs between the columns</{h}>",
        sysinfo_html(outcome),
        f"<{h}>Columns and their runs</{h}>",
        "<ul>" + "".join(f"<li>{esc(n)}</li>" for n in bc.columns_used(outcome)) + "</ul>",
    ]
    why = bc.reasons(outcome, labels)
    if why:
        parts += [f"<{h}>Not compared</{h}>", "<ul>" + "".join(f"<li>{esc(n)}</li>" for n in why) + "</ul>"]
    return "\n".join(parts)


def render_page(outcome: cb.ByOutcome, labels: nm.InstanceLabels) -> str:
    fleet = f" of fleet run {outcome.fleet}" if outcome.fleet else ""
    title = f"osmeter compare --by {outcome.by}{fleet}"
    return page(title, f"<h1>{esc(title)}</h1>\n" + sections(outcome, labels))
