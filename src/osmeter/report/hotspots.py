"""Hotspot tables, built once in the table model (report.tables): the
report's Hotspots section (each stored profile of the run as its top
functions by total and self share, with the counts behind them and the
command that draws its flame graph), and the `osmeter hotspots` command's
top, depth and diff tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .. import textsafe
from ..fmt import fmt_interval, fmt_quantity, fold, scale_of
from ..hotspots import folded
from ..hotspots.folded import DepthView, DiffRow, FunctionRow, display_name
from ..hotspots.timed import MEDIAN, WINDOW, TimedRow
from ..model import StoredProfile
from ..records import describe_instance
from .tables import Cell, Column, Row, Table, simple, to_text

HEADING = "Hotspots"
EXPLAIN = ("Where each profiled instance's timed region spent its time (osmeter hotspots, "
           "docs/methods/hotspots.md): total = the share of samples whose stack holds the function, self = "
           "the share where it is the leaf.")
HEADERS = ("function", "total", "self", "total n", "self n")
RIGHT = (False, True, True, True, True)
TOP = 10
NAME_SHOWN = 160  # characters of a function name a table shows (the SVG and the folded file keep it whole)


@dataclass(frozen=True)
class ProfileTable:
    title: str  # the instance and what the profile is
    command: str  # to draw its flame graph
    table: Table | None  # its top functions; None when there is none (note says why)
    note: str | None  # why there is no table (unsupported, empty)


def shown(name: str) -> str:
    """A function name as a table cell: on one line, without what could drive a terminal (textsafe.line),
    cut to NAME_SHOWN characters so that a long name cannot widen every row of a long table."""
    name = textsafe.line(name)
    return name if len(name) <= NAME_SHOWN else name[: NAME_SHOWN - 2] + ".."


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _top_table(rows: Sequence[FunctionRow]) -> Table:
    columns = tuple(Column(h, r) for h, r in zip(HEADERS, RIGHT))
    return Table(columns, tuple(
        Row((Cell(shown(r.function), css="mono"), *(Cell(t) for t in (_pct(r.total_share), _pct(r.self_share),
                                                                   str(r.total_weight), str(r.self_weight)))))
        for r in rows), 'class="hotspots"')


def tables(run_id: int, profiles: Sequence[StoredProfile]) -> list[ProfileTable]:
    out = []
    for i, p in enumerate(profiles, 1):
        what = describe_instance(p.bench, p.params)
        m = p.meta
        title = (f"{what}: {p.mode} profile, {m.get('event', '?')}, {m.get('samples', 0)} "
                 f"{m.get('weight_unit', 'samples')}")
        command = f"osmeter hotspots --show {run_id}:{i}"
        if p.status != "ok":
            out.append(ProfileTable(title, command, None, f"{p.status}: {m.get('reason') or 'no reason given'}"))
            continue
        stacks = folded.stacks_from_record([[s, w] for s, w in p.stacks])
        out.append(ProfileTable(title, command, _top_table(folded.function_table(stacks, m.get("calls"))[:TOP]), None))
    return out


# ---- the hotspots command's text -----------------------------------------------------


def _text(table: Table) -> str:
    return to_text(table) + "\n"


def render_top(rows: Sequence[FunctionRow], n: int, weight_unit: str) -> str:
    """The top n functions by total share, then by self share."""
    unit = "samples" if weight_unit == "samples" else "ns"
    with_calls = any(r.calls is not None for r in rows)

    def cells(r: FunctionRow) -> list[str]:
        c = [shown(r.function), _pct(r.total_share), _pct(r.self_share), str(r.total_weight), str(r.self_weight)]
        return c + ([str(r.calls) if r.calls is not None else "-"] if with_calls else [])
    header = ["function", "total", "self", f"total {unit}", f"self {unit}"] + (["calls"] if with_calls else [])
    right = [False, True, True, True, True] + ([True] if with_calls else [])
    by_self = sorted((r for r in rows if r.self_weight), key=lambda r: (-r.self_weight, r.function))
    return (f"top {n} functions by total time (a function's stacks, counted once each):\n"
            + _text(simple(header, [cells(r) for r in rows[:n]], right))
            + f"\ntop {n} functions by self time (the function itself, at the leaf):\n"
            + _text(simple(header, [cells(r) for r in by_self[:n]], right)))


def render_depth(view: DepthView, n_per_depth: int) -> str:
    """Weight per kernel call depth, and the heaviest functions at each."""
    total = view.total or 1
    lines = [f"time per kernel call depth (depth 0: the syscall or exception entry; "
             f"{_pct(view.outside / total)} of the profile has no kernel frame):"]
    rows = []
    for d in view.depths:
        top = ", ".join(f"{shown(display_name(f))} {_pct(w / total)}" for f, w in d.functions[:n_per_depth])
        rows.append([str(d.depth), _pct(d.inclusive / total), _pct(d.self_weight / total), top])
    if view.deeper:
        lines.append(f"({_pct(view.deeper / total)} of the profile goes deeper than the {len(view.depths)} depths "
                     f"listed; the deepest frame is at depth {view.deepest:,})")
    return "\n".join(lines) + "\n" + _text(simple(["depth", "reached", "self", "functions at this depth (share)"],
                                                   rows, [True, True, True, False]))


def render_diff(rows: Sequence[DiffRow], n: int, weight_unit: str, label_a: str, label_b: str) -> str:
    """The n functions whose self share moved most, with the counts behind each share."""
    def cells(r: DiffRow) -> list[str]:
        se = f"{100 * r.se:.1f}" if r.se is not None else "-"
        return [shown(r.function), _pct(r.self_a), _pct(r.self_b), f"{100 * r.self_change:+.1f}", se,
                _pct(r.total_a), _pct(r.total_b), f"{100 * r.total_change:+.1f}",
                f"{r.self_weight_a}/{r.total_weight_a}", f"{r.self_weight_b}/{r.total_weight_b}"]
    unit = "samples" if weight_unit == "samples" else "ns"
    header = ["function", "self A", "self B", "change pp", "+-se", "total A", "total B", "change pp",
              f"A {unit} self/total", f"B {unit} self/total"]
    return (f"A: {textsafe.line(label_a)}\nB: {textsafe.line(label_b)}\n"
            "functions whose self share changed most (percentage points; +-se: one standard error of the change):\n"
            + _text(simple(header, [cells(r) for r in rows[:n]], [False] + [True] * 9)))


# ---- the diff in ns per operation (hotspots.timed) --------------------------------------

WIDTH = 100  # the timed diff's text fits this many columns
TIMED_TITLE = "functions whose self time per operation changed most"
_SOURCES = {MEDIAN: "the result's median", WINDOW: "the profile's window: its timed batches' time / "
            "their operations (a mean, time off the CPU included)"}


@dataclass(frozen=True)
class SideTime:
    label: str  # the profile
    ns: float  # per operation
    source: str  # timed.MEDIAN or timed.WINDOW
    where: str | None = None  # the result it came from ("run 12, result 3")


def _change(delta: float, se: float | None) -> str:
    """'+9.10 ± 0.40 ns': the change and its standard error in one step."""
    scale = scale_of(max(abs(delta), se or 0.0), "ns")
    sign = "+" if delta > 0 else ""
    text = f"{sign}{scale.number(delta, 3)}"
    return f"{text} ± {scale.number(se, 2)} {scale.suffix}" if se is not None else f"{text} {scale.suffix}"


def _shares(a: float, b: float) -> str:
    return f"{100 * a:.1f} → {100 * b:.1f}"


def timed_table(rows: Sequence[TimedRow]) -> Table:
    columns = (Column("function"), Column("self per op\nA → B", True), Column("change\n± s.e.", True),
               Column("self %\nA → B", True), Column("total %\nA → B", True), Column("note"))
    out = []
    for r in rows:
        ns = fmt_interval(r.self_ns_a, r.self_ns_b, "ns", ref=max(r.self_ns_a, r.self_ns_b), sep=" → ")
        note = "new" if r.appeared else "gone" if r.vanished else ""
        out.append(Row((Cell(shown(r.function), css="mono"), Cell(ns), Cell(_change(r.self_delta_ns, r.se_ns)),
                        Cell(_shares(r.self_share_a, r.self_share_b)),
                        Cell(_shares(r.total_share_a, r.total_share_b)), Cell(note))))
    return Table(columns, tuple(out), 'class="hotspots diff"')


def _side(name: str, s: SideTime) -> str:
    source = f"the median of {s.where}" if s.where and s.source == MEDIAN else _SOURCES.get(s.source, s.source)
    return f"{name}: {textsafe.line(s.label)}\n   {fmt_quantity(s.ns, 'ns')} per operation: {textsafe.line(source)}"


def render_timed_diff(rows: Sequence[TimedRow], n: int, a: SideTime, b: SideTime) -> str:
    """The n functions whose self time per operation moved most, with their shares beside it."""
    scale = scale_of(max(a.ns, b.ns), "ns")
    head = [_side("A", a), _side("B", b),
            f"time per operation: {scale.number(a.ns)} → {scale.number(b.ns)} {scale.suffix} "
            f"({_change(b.ns - a.ns, None)})",
            "a function's time per op: its self (or total) share × its side's; "
            "new: none in A, gone: none in B",
            f"{TIMED_TITLE} (± one standard error from sampling):"]
    return (fold("\n".join(head), WIDTH) + "\n"
            + to_text(timed_table(rows[:n]), width=WIDTH, wrap=(0,)) + "\n")
