"""`osmeter report --fleet ID`: the report of a fleet run (osmeter fleet run).

First the hosts: per host its run (several when it was resumed), its
status — complete; incomplete (some results stored, the run stopped);
failed (no ok result stored) — and the machine in one line (kernel, arch,
CPU, CPUs, memory). Then the comparison by host (compare --by host against
the first host: report.html_by as HTML, the table in Markdown and text)
with the sysinfo that differs between the hosts. Then every run's own
section, as `osmeter report RUN` writes it: for a fleet run of up to
INLINE_RUNS runs, or all of them when asked (--all-runs); a larger one's
report says how to get a run's (20 000 rows of tables for 100 hosts of 200
results is no overview, and takes seconds to lay out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import compare_by as cb
from ..compare import DEFAULT_THRESHOLD
from ..errors import UsageError
from ..model import RunInfo
from ..sysinfo import KEY_ARCH, KEY_KERNEL, machine_text
from . import by_cells as bc
from . import names as nm
from .content import RunReport
from .escaping import esc
from .tables import Cell, Column, Row, Table, to_html, to_markdown, to_text
from ..fmt import human_bytes

COMPLETE, INCOMPLETE, FAILED = "complete", "incomplete", "failed"
INLINE_RUNS = 10  # a fleet run of more runs leaves their sections out unless asked (--all-runs)


def host_status(run: RunInfo) -> str:
    """complete; failed: not complete and no ok result; incomplete: the rest."""
    if run.status == "complete":
        return COMPLETE
    return FAILED if run.counts.ok == 0 else INCOMPLETE


def machine_line(run: RunInfo) -> str:
    m = run.machine
    memory = m.get("memory_bytes")
    parts = [
        machine_text(m, KEY_KERNEL) and f"Linux {machine_text(m, KEY_KERNEL)}",
        machine_text(m, KEY_ARCH),
        machine_text(m, "cpu_model"),
        m.get("cpus_online") and f"{m['cpus_online']} CPUs",
        isinstance(memory, int) and not isinstance(memory, bool) and f"{human_bytes(memory)} memory",
    ]
    return ", ".join(str(p) for p in parts if p) or "-"


@dataclass
class HostRow:
    host: str
    run: RunInfo
    status: str  # COMPLETE, INCOMPLETE, FAILED
    others: list[RunInfo]  # the host's other runs in the fleet run

    def cells(self) -> list[str]:
        c = self.run.counts
        runs = str(self.run.id) + (f" (also {', '.join(str(r.id) for r in self.others)})" if self.others else "")
        reason = self.run.status_reason or ""
        return [self.host, runs, self.status + (f": {reason}" if reason else ""), f"{c.ok}/{c.skip}/{c.error}",
                machine_line(self.run), self.run.start_time]


HOST_HEADERS = ("host", "run", "status", "ok/skip/error", "machine", "started")


def hosts_table(hosts: list[HostRow], linked: bool = True) -> Table:
    """A row per host: its run (linked in HTML to its section when `linked`), status (a badge), counts,
    machine and start."""
    columns = tuple(Column(h, css="num" if h == "ok/skip/error" else None) for h in HOST_HEADERS)
    rows = []
    for h in hosts:
        c = h.cells()
        link = f'<a href="#run-{h.run.id}">{esc(c[1])}</a>' if linked else None
        rows.append(Row((Cell(c[0], css="mono"), Cell(c[1], html=link),
                         Cell(c[2], html=f'<span class="badge {esc(h.status)}">{esc(c[2])}</span>'),
                         Cell(c[3], css="num"), Cell(c[4]), Cell(c[5])), f"host {h.status}"))
    return Table(columns, tuple(rows), 'class="hosts" id="hosts"')


@dataclass
class FleetReport:
    fleet: str
    hosts: list[HostRow]
    outcome: cb.ByOutcome | None  # None when the hosts cannot be compared (fewer than two)
    note: str  # why there is no comparison
    labels: nm.InstanceLabels
    runs: list[RunInfo]  # every run of the fleet run, by host
    reports: list[RunReport]  # the runs' sections; none when left out
    unstored: list[tuple[str, str]]  # (host, why): failed with no run stored, from this machine's fleet state
    left_out: bool = False  # the runs' sections left out (more than INLINE_RUNS runs, no --all-runs)

    def left_out_line(self) -> str:
        return (f"The runs' own sections are left out ({len(self.runs)} runs): `osmeter report RUN` writes a "
                f"run's (its figures included), --all-runs puts every run's here.")

    @property
    def counts(self) -> str:
        by = {s: sum(1 for h in self.hosts if h.status == s) for s in (COMPLETE, INCOMPLETE, FAILED)}
        by[FAILED] += len(self.unstored)
        return f"{len(self.hosts) + len(self.unstored)} hosts: " + ", ".join(f"{n} {s}" for s, n in by.items())

    def unstored_lines(self) -> list[str]:
        return [f"{host}: failed, no run stored: {why}" for host, why in self.unstored]


def unstored_hosts(fleet: str, stored: set[str]) -> list[tuple[str, str]]:
    """The hosts of the fleet run that failed without storing a run. Only the
    machine that ran `osmeter fleet run` knows them (its fleet state,
    docs/fleet.md); elsewhere there are none to show."""
    from ..fleet import state as fleet_state

    try:
        st = fleet_state.load(fleet)
    except UsageError:
        return []
    return [(h, s.reason or s.status) for h, s in sorted(st.hosts.items()) if h not in stored and s.status != "stored"]


def build(store: Any, ref: str, names: str, build_reports: Any, all_runs: bool = False) -> FleetReport:
    """The fleet run `ref` (an id or latest); `build_reports(store, refs, read)` makes the runs' sections
    (`read`: their results, by run id, as read here): of every run when `all_runs` or there are at most
    INLINE_RUNS of them, else of none (the comparison then reads only what it needs, SQLStore.figures)."""
    fleet, runs = cb.fleet_runs(store, ref)
    columns = cb.columns_of(runs, "host")
    hosts = [HostRow(c.name, c.run, host_status(c.run), c.runs[1:]) for c in columns]
    ordered = [r for c in columns for r in c.runs]
    sections = all_runs or len(ordered) <= INLINE_RUNS
    # each run's results read once, whole, when its section needs them
    read = {r.id: store.results(r.id) for r in ordered} if sections else None
    outcome, note = None, ""
    try:
        outcome = cb.compare_by(store, runs, "host", None, DEFAULT_THRESHOLD, fleet, results=read)
    except UsageError as e:
        note = e.message
    labels = nm.InstanceLabels(nm.row_names(names), [x for r in ordered for x in read[r.id]] if read is not None
                               else cb.results_of(store, outcome, ordered))
    reports = build_reports(store, [str(r.id) for r in ordered], read) if read is not None else []
    unstored = unstored_hosts(fleet, {r.host for r in runs if r.host})  # inventory names (a column may be a hostname)
    return FleetReport(fleet, hosts, outcome, note, labels, ordered, reports, unstored, left_out=read is None)


# --- HTML ---------------------------------------------------------------------------


def render_html(report: FleetReport, expect_path: str = "") -> str:
    from .html import page, run_section
    from .names import run_title
    from .html_by import sections

    title = f"osmeter fleet report: {report.fleet}"
    parts = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">{esc(report.counts)}; failed: no result stored, incomplete: the run stopped before the '
        "end (its reason), complete: the whole suite ran.</p>",
        "<h2>Hosts</h2>",
        to_html(hosts_table(report.hosts, linked=not report.left_out)),
        *(f'<p class="host failed"><span class="badge failed">{esc(line)}</span></p>'
          for line in report.unstored_lines()),
    ]
    if report.outcome is not None:
        parts.append(sections(report.outcome, report.labels))
    else:
        parts.append(f'<p class="muted">No comparison by host: {esc(report.note)}</p>')
    if report.left_out:
        parts.append(f'<h2>The runs</h2>\n<p class="muted">{esc(report.left_out_line())}</p>')
        return page(title, "\n".join(parts))
    links = "".join(f'<a href="#run-{r.run.id}">{esc(run_title(r.run))}</a>' for r in report.reports)
    parts.append(f'<h2>The runs</h2>\n<nav class="toc">{links}</nav>')
    if not any(r.figures or r.failures for r in report.reports):
        parts.append('<p class="muted">Each run as <code>osmeter report RUN</code> shows it, without its figures: '
                     "<code>osmeter report RUN</code> draws one run's, <code>--run-figures</code> every run's here "
                     "(several seconds a run).</p>")
    parts += [run_section(r, expect_path) for r in report.reports]
    return page(title, "\n".join(parts))


# --- Markdown and text -----------------------------------------------------------------


def render_md(report: FleetReport, expect_path: str = "") -> str:
    from . import markdown as md

    out = [f"# osmeter fleet report: {md.inline(report.fleet)}", md.inline(report.counts) + ".", "## Hosts",
           to_markdown(hosts_table(report.hosts)),
           *(["\n".join(f"- {md.inline(line)}" for line in report.unstored_lines())] if report.unstored else [])]
    o = report.outcome
    if o is not None:
        out += [f"## Change against {md.inline(o.columns[o.baseline].name)}, by host",
                to_markdown(bc.heatmap_table(o, report.labels)),
                "\n".join(f"- {md.inline(line.strip())}" for line in bc.legend_lines(o)),
                md.inline(bc.counts_line(o)) + ".",
                "## Sysinfo that differs between the hosts",
                (to_markdown(bc.sysinfo_table(o)) if o.differences
                 else "The hosts' machine descriptions are the same."),
                "\n".join(f"- {md.inline(n)}" for n in bc.columns_used(o) + bc.reasons(o, report.labels))]
    else:
        out.append(f"No comparison by host: {md.inline(report.note)}")
    if report.left_out:
        out.append(md.inline(report.left_out_line()))
    return "\n\n".join(out + [md.run_section(r, expect_path) for r in report.reports]) + "\n"


def render_txt(report: FleetReport, expect_path: str = "") -> str:
    from .. import textsafe
    from .by_text import render_text
    from .text import render_report as render_text_report

    parts = [f"fleet run {report.fleet}: {report.counts}", to_text(hosts_table(report.hosts)),
             *(["\n".join(report.unstored_lines())] if report.unstored else [])]
    parts.append(render_text(report.outcome, report.labels) if report.outcome is not None
                 else f"no comparison by host: {report.note}")
    if report.left_out:
        return textsafe.terminal("\n\n".join(parts + [report.left_out_line()]) + "\n")
    return textsafe.terminal("\n\n".join(parts) + "\n\n") + render_text_report(report.reports, expect_path)
