#!/usr/bin/env python3
"""Fidelity: `osmeter run --suite lebench` against LEBench's own program, row by row.

LEBench (github LinuxPerfStudy/LEBench, SOSP 2019) is one C program,
TEST_DIR/OS_Eval.c, that prints two figures per row: its "k-best" (a stable
minimum, computed by its calc_k_closest()) and the plain average, in
seconds. osmeter's lebench suite reproduces its rows with LEBench's timed
regions (docs/lebench.md). This script runs both on the same CPU, back to
back, and prints, for each of LEBench's 42 rows:

    LEBench k-best and average | osmeter median (95 % CI) and k-best |
    ratio osmeter median / LEBench k-best | with --exact (the default), the
    median of `osmeter run --suite lebench --lebench-exact` (one call per
    clock pair, CLOCK_MONOTONIC: LEBench's way of timing) and its ratio |
    whether each ratio lies within 0.8 .. 1.25 | the row's documented
    difference (docs/lebench.md) when it does not.

Rows osmeter does not reproduce yet (the file, ipc and poll families) are
listed as "pending" with LEBench's figure only. Then the wall time of each
tool and the count of rows within the tolerance.

Order and placement. LEBench runs first: `OS_Eval 0 NAME` under
`taskset -c CPU`, its output to a file as in its own set-up (fully
buffered: no write and no reader between its timings), in a temporary
directory with LEBENCH_DIR pointing there (its test file, its Unix socket in
TEST_DIR/ and its output CSV stay inside), at its default iteration counts,
after its own fixed 60 s sleep. Then `osmeter run --suite lebench --cpu CPU
--lebench-exact`, then the same without --lebench-exact, both through the
osmeter of this interpreter (`python -m osmeter`) into a temporary store,
with TMPDIR in the same directory (so both tools' test files live on the
same file system). The directory is removed on every exit path (Ctrl-C and
SIGTERM included; LEBench's process group is killed) unless --keep DIR.

LEBench pins its context-switch processes to CPU 0 itself (and sets nice
-20, which needs root), whatever taskset says: the default CPU is therefore
0 for both tools; with --cpu N (N != 0) that row compares CPU 0 with CPU N.

The timings mean something only on an otherwise idle machine: nothing else
should run while this script does (it takes LEBench's 15-30 minutes plus
osmeter's two suite runs, about a minute).

Exit status: 0 when every row measured by both tools lies within the
tolerance (judged on the --lebench-exact ratio when it ran, else on the
default one), and when skipped (no --lebench: the message starts with
"skipped:"); 1 when a row lies outside it or a tool failed; 2 for a bad
command line.

Usage:
  benchmarks/lebench_vs_osmeter.py --lebench PATH/TO/OS_Eval [--cpu 0] [--no-exact] [--repeat R]
                                   [--lebench-runs 2] [--keep DIR] [--json FILE]
  benchmarks/lebench_vs_osmeter.py --build-from LEBENCH_CHECKOUT [--base-iter 1000] [--lebench-runs 2] ...
      (builds OS_Eval into the work directory from a copy of its OS_Eval.c with
      BASE_ITER set and its sleep(60) removed: docs/lebench.md, "Fidelity";
      --lebench-runs 2 runs LEBench twice and flags the rows whose two
      k-bests differ by more than 0.8 .. 1.25: LEBench against itself)
  benchmarks/lebench_vs_osmeter.py --only-parse output.NAME.csv --store STORE.db
                                   [--run REF] [--exact-run REF] [--json FILE]
      (re-prints the table from a LEBench CSV and the lebench runs of an
      osmeter store: by default the latest run of each kind; a --keep DIR
      holds DIR/lebench/output.osmeter-fidelity.csv and DIR/osmeter.db)

Build LEBench yourself (none of its code is in osmeter):
  git clone https://github.com/LinuxPerfStudy/LEBench && cd LEBench/TEST_DIR
  gcc -o OS_Eval -pthread -O0 OS_Eval.c        (what its makefile does)
Tolerance (issue 9): each ratio within 0.8 .. 1.25.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterable, Mapping, Sequence

LOW, HIGH = 0.8, 1.25
LEBENCH_NAME = "osmeter-fidelity"  # OS_Eval's second argument: the CSV is output.<NAME>.csv
LEBENCH_SLEEP_S = 60.0  # OS_Eval sleeps this long before its first test
LEBENCH_BASE_ITER = 10000  # OS_Eval.c's BASE_ITER: its rows take 1/4 to 100 x this many samples
SUN_PATH_MAX = 107  # sockaddr_un.sun_path, less its terminating NUL
LEBENCH_SOCKET = "/TEST_DIR/socket"  # appended by OS_Eval to $LEBENCH_DIR
# LEBench's CSV names that differ from its row names (docs/lebench.md).
LEBENCH_SPELLING = {"context siwtch": "context switch"}
BUILD_ADVICE = (
    "build LEBench's program from github LinuxPerfStudy/LEBench as its makefile does: "
    "`git clone https://github.com/LinuxPerfStudy/LEBench && cd LEBench/TEST_DIR && "
    "gcc -o OS_Eval -pthread -O0 OS_Eval.c`, then give it with --lebench PATH/TO/OS_Eval"
)


# ---------------------------------------------------------------------------
# Pure parts: LEBench's CSV and log, matching rows, the table.


@dataclass(frozen=True)
class LebenchFigure:
    """One row of LEBench's output CSV, in nanoseconds."""

    kbest: float
    average: float


@dataclass(frozen=True)
class OsmeterFigure:
    """One lebench-suite result of an osmeter run (figures in the result's unit)."""

    status: str  # ok / skip / error
    median: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    kbest: float = math.nan
    mean: float = math.nan
    n: int = 0
    unit: str | None = None
    flags: tuple[str, ...] = ()
    reason: str | None = None  # skip reason or error message


@dataclass(frozen=True)
class RowSpec:
    """What the table needs of a row of osmeter's LEBench table (catalog.LebenchRow)."""

    name: str
    available: bool
    note: str | None = None
    pending: str | None = None


@dataclass(frozen=True)
class Line:
    """One printed row."""

    row: str
    status: str  # compared / pending / no-lebench / no-osmeter / osmeter-skip / osmeter-error / lebench-only
    lebench_kbest: float | None
    lebench_average: float | None
    median: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    kbest: float | None = None
    ratio: float | None = None  # osmeter median / LEBench k-best
    within: bool | None = None
    exact_median: float | None = None
    exact_ratio: float | None = None
    exact_within: bool | None = None
    note: str | None = None  # the row's documented difference, printed when a ratio is outside
    flags: tuple[str, ...] = ()
    detail: str | None = None  # why pending, skipped or missing
    kbest_ratio: float | None = None  # osmeter k-best / LEBench k-best
    # The same statistic on the same kind of samples: the --lebench-exact
    # run's k-best (single calls, LEBench's calc_k_closest) / LEBench's k-best.
    exact_kbest: float | None = None
    exact_kbest_ratio: float | None = None
    exact_n: int | None = None
    lebench_errors: str | None = None  # what OS_Eval printed as "[error]" during the row's test
    # --lebench-runs 2: LEBench's second run's k-best / its first (the reference);
    # outside 0.8-1.25, LEBench does not reproduce its own figure for the row.
    lebench_self_ratio: float | None = None
    lebench_self_within: bool | None = None
    lebench_n: int | None = None  # LEBench's samples for the row ("Total test iteration" in its log)


_CSV_LINE = re.compile(r"^\s*(?P<name>.+?)\s+(?P<child>Child\s+)?(?P<kind>kbest|average):\s*,\s*(?P<value>[^,]*)")
_TIMESPEC = re.compile(r"^(?P<sec>-?\d+)\.(?P<nsec>-?\d+)$")


def timespec_ns(text: str) -> float:
    """LEBench prints a struct timespec as "%ld.%09ld": seconds, then nanoseconds."""
    m = _TIMESPEC.match(text.strip())
    if not m:
        raise ValueError(f"not a LEBench time (seconds.nanoseconds): {text!r}")
    nsec = m.group("nsec")
    sign = -1 if nsec.startswith("-") else 1
    return int(m.group("sec")) * 1e9 + sign * int(nsec.lstrip("-"))


def parse_lebench_csv(text: str) -> dict[str, LebenchFigure]:
    """LEBench's output.NAME.csv → {row name: figures in ns}, in LEBench's order.

    Its lines are "%10s" name + "kbest:," or "average:," + value (two-line
    tests add "Child kbest:," and "Child average:,", the row "NAME Child").
    Names are given as osmeter's table spells them ("context siwtch" →
    "context switch"). A row with only one of its two figures is refused."""
    found: dict[str, dict[str, float]] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        m = _CSV_LINE.match(raw)
        if not m:
            continue  # the header lines: "OS Benchmark experiment", "Test Name:,NAME,"
        name = LEBENCH_SPELLING.get(m.group("name"), m.group("name"))
        if m.group("child"):
            name += " Child"
        try:
            value = timespec_ns(m.group("value"))
        except ValueError as e:
            raise ValueError(f"line {number}: {e}") from None
        found.setdefault(name, {})[m.group("kind")] = value
    out = {}
    for name, figs in found.items():
        if set(figs) != {"kbest", "average"}:
            raise ValueError(f"LEBench row {name!r} has {sorted(figs)} but not both kbest and average")
        out[name] = LebenchFigure(kbest=figs["kbest"], average=figs["average"])
    return out


@dataclass(frozen=True)
class LebenchLog:
    """What OS_Eval printed on stdout."""

    test_seconds: dict[str, float]  # "Test took" of each test, by LEBench's name
    total_seconds: float | None  # its final "Test took" (the 60 s sleep included)
    errors: dict[str, dict[str, int]]  # test → its "[error] ..." lines and how often each appeared
    iterations: dict[str, int] = dataclasses.field(default_factory=dict)  # test → "Total test iteration N"

    def base_iter(self) -> int | None:
        """LEBench's BASE_ITER, from its first test (ref runs BASE_ITER x 100)."""
        n = self.iterations.get("ref")
        return n // 100 if n else None

    def slept(self) -> bool | None:
        """Whether its total includes its 60 s sleep (removed by --build-from)."""
        if self.total_seconds is None:
            return None
        return self.total_seconds - sum(self.test_seconds.values()) > LEBENCH_SLEEP_S / 2

    def row_iterations(self) -> dict[str, int]:
        """{row: samples}, a two-line test's "NAME Child" row sharing NAME's."""
        out = {}
        for test, n in self.iterations.items():
            out[test] = out[f"{test} Child"] = n
        return out

    def row_errors(self) -> dict[str, str]:
        """{row: "message (xN); ..."} for every row whose test printed errors
        (a two-line test's "NAME Child" row shares NAME's)."""
        out = {}
        for test, errs in self.errors.items():
            text = "; ".join(f"{msg} (x{n})" for msg, n in errs.items())
            out[test] = out[f"{test} Child"] = text
        return out


def parse_lebench_log(text: str) -> LebenchLog:
    """OS_Eval's stdout. Its file is fully buffered and its forked children
    die by SIGINT, so lines that children printed are mostly lost."""
    tests: dict[str, float] = {}
    errors: dict[str, dict[str, int]] = {}
    iterations: dict[str, int] = {}
    total = None
    current = None
    test = "(before the first test)"  # where an error line belongs
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"Performing test (.*)\.$", line)
        if m:
            current = test = LEBENCH_SPELLING.get(m.group(1), m.group(1))
            continue
        m = re.match(r"Total test iteration (\d+)\.$", line)
        if m and current is not None:
            iterations[current] = int(m.group(1))
            continue
        m = re.match(r"Test took: (\S+) seconds", line)
        if m:
            seconds = timespec_ns(m.group(1)) / 1e9
            if current is None:
                total = seconds
            else:
                tests[current] = seconds
            current = None
            continue
        if line.startswith("[error]"):
            errs = errors.setdefault(test, {})
            errs[line] = errs.get(line, 0) + 1
    return LebenchLog(tests, total, errors, iterations)


def _ratio(value: float, ref: float | None) -> float | None:
    if ref is None or not ref > 0 or not math.isfinite(value):
        return None
    return value / ref


def _within(r: float | None) -> bool | None:
    return None if r is None else LOW <= r <= HIGH


def match_rows(
    rows: Sequence[RowSpec],
    lebench: Mapping[str, LebenchFigure],
    default: Mapping[str, OsmeterFigure],
    exact: Mapping[str, OsmeterFigure] | None = None,
    lebench_errors: Mapping[str, str] | None = None,
    lebench_again: Mapping[str, LebenchFigure] | None = None,
    lebench_iterations: Mapping[str, int] | None = None,
) -> list[Line]:
    """One line per row of osmeter's table, in its order, then any row of
    LEBench's CSV the table does not know (status lebench-only).
    `lebench_errors`: LebenchLog.row_errors(); `lebench_again`: a second
    LEBench run (its k-best against the first: lebench_self_ratio);
    `lebench_iterations`: LebenchLog.row_iterations()."""
    lines = _match_rows(rows, lebench, default, exact, lebench_errors)
    return [lebench_extras(ln, lebench, lebench_again, lebench_iterations) for ln in lines]


def lebench_extras(ln: Line, lebench: Mapping[str, LebenchFigure], again: Mapping[str, LebenchFigure] | None,
                   iterations: Mapping[str, int] | None) -> Line:
    """The row's LEBench-against-itself ratio (second run's k-best / first's)
    and its sample count, when known."""
    first, second = lebench.get(ln.row), (again or {}).get(ln.row)
    self_ratio = _ratio(second.kbest, first.kbest) if first and second else None
    return dataclasses.replace(ln, lebench_self_ratio=self_ratio, lebench_self_within=_within(self_ratio),
                               lebench_n=(iterations or {}).get(ln.row))


def _match_rows(
    rows: Sequence[RowSpec],
    lebench: Mapping[str, LebenchFigure],
    default: Mapping[str, OsmeterFigure],
    exact: Mapping[str, OsmeterFigure] | None,
    lebench_errors: Mapping[str, str] | None,
) -> list[Line]:
    errors = lebench_errors or {}
    lines = []
    for spec in rows:
        lb = lebench.get(spec.name)
        kb, avg = (lb.kbest, lb.average) if lb else (None, None)
        err = errors.get(spec.name)
        if not spec.available:
            lines.append(Line(spec.name, "pending", kb, avg, detail=spec.pending or "not built yet",
                              lebench_errors=err))
            continue
        fig = default.get(spec.name)
        ex = exact.get(spec.name) if exact is not None else None
        if fig is None or fig.status != "ok":
            status = "no-osmeter" if fig is None else f"osmeter-{fig.status}"
            detail = "no result in the osmeter run" if fig is None else fig.reason
            lines.append(Line(spec.name, status, kb, avg, detail=detail, lebench_errors=err))
            continue
        ratio = _ratio(fig.median, kb)
        ex_median = ex.median if ex is not None and ex.status == "ok" else None
        ex_ratio = _ratio(ex_median, kb) if ex_median is not None else None
        within, ex_within = _within(ratio), _within(ex_ratio)
        outside = within is False or ex_within is False
        flags = tuple(dict.fromkeys(fig.flags + (ex.flags if ex is not None else ())))
        lines.append(Line(
            spec.name, "compared" if lb else "no-lebench", kb, avg,
            median=fig.median, ci_low=fig.ci_low, ci_high=fig.ci_high, kbest=fig.kbest,
            ratio=ratio, within=within, exact_median=ex_median, exact_ratio=ex_ratio, exact_within=ex_within,
            note=(spec.note or "no documented difference") if outside else None,
            flags=flags,
            detail=None if lb else "no such row in LEBench's CSV",
            kbest_ratio=_ratio(fig.kbest, kb), lebench_errors=err,
            exact_kbest=ex.kbest if ex is not None and ex.status == "ok" else None,
            exact_kbest_ratio=_ratio(ex.kbest, kb) if ex is not None and ex.status == "ok" else None,
            exact_n=ex.n if ex is not None and ex.status == "ok" else None,
        ))
    known = {spec.name for spec in rows}
    for name, lb in lebench.items():
        if name not in known:
            lines.append(Line(name, "lebench-only", lb.kbest, lb.average, detail="not a row of osmeter's table",
                              lebench_errors=errors.get(name)))
    return lines


@dataclass(frozen=True)
class Counts:
    compared: int  # rows with a figure from both tools
    within: int  # of them, default ratio within the tolerance
    exact_compared: int
    exact_within: int
    pending: int
    self_compared: int = 0  # rows with two LEBench runs (--lebench-runs 2)
    self_within: int = 0  # of them, LEBench's two k-bests within the tolerance

    @property
    def judged_ok(self) -> bool:
        """The verdict: on the --lebench-exact ratios when they exist, else the default ones."""
        if self.exact_compared:
            return self.exact_within == self.exact_compared
        return self.within == self.compared


def count(lines: Iterable[Line]) -> Counts:
    lines = list(lines)
    return Counts(
        compared=sum(ln.within is not None for ln in lines),
        within=sum(ln.within is True for ln in lines),
        exact_compared=sum(ln.exact_within is not None for ln in lines),
        exact_within=sum(ln.exact_within is True for ln in lines),
        pending=sum(ln.status == "pending" for ln in lines),
        self_compared=sum(ln.lebench_self_within is not None for ln in lines),
        self_within=sum(ln.lebench_self_within is True for ln in lines),
    )


def fmt_ns(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    if abs(v) < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}".replace(",", " ")


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}"


def _yes(w: bool | None) -> str:
    return "-" if w is None else ("yes" if w else "NO")


def _errors_text(ln: Line) -> str | None:
    return f"LEBench's test printed: {ln.lebench_errors}" if ln.lebench_errors else None


def _join(*parts: str | None) -> str:
    return "; ".join(p for p in parts if p)


def render_table(lines: Sequence[Line], exact: bool) -> str:
    """The table as aligned text (figures in ns); the note column last. With
    a second LEBench run, a column of its k-best / the first's ("NO" when
    outside the tolerance: LEBench does not reproduce itself there)."""
    selfcheck = any(ln.lebench_self_ratio is not None for ln in lines)
    head = ["LEBench row", "LEBench k-best", "LEBench avg"]
    head += ["LEBench run2/run1"] if selfcheck else []
    head += ["osmeter median (95% CI)", "osmeter k-best", "ratio"]
    if exact:
        head += ["exact median", "exact ratio", "exact k-best (n)", "k-best ratio"]
    head += [f"in {LOW}-{HIGH}" + (" (default/exact)" if exact else ""), "note"]
    body = []
    for ln in lines:
        cells = [ln.row, fmt_ns(ln.lebench_kbest), fmt_ns(ln.lebench_average)]
        if selfcheck:
            r = ln.lebench_self_ratio
            cells.append("-" if r is None else fmt_ratio(r) + ("" if ln.lebench_self_within else " NO"))
        if ln.median is None:
            label = {"pending": "pending", "lebench-only": "(not in osmeter)"}.get(ln.status, ln.status)
            cells += [label, "", ""]
            if exact:
                cells += ["", "", "", ""]
            cells += ["", _join(ln.detail, _errors_text(ln))]
        else:
            cells += [f"{fmt_ns(ln.median)} ({fmt_ns(ln.ci_low)}..{fmt_ns(ln.ci_high)})", fmt_ns(ln.kbest),
                      fmt_ratio(ln.ratio)]
            if exact:
                kb = f"{fmt_ns(ln.exact_kbest)} ({ln.exact_n})" if ln.exact_kbest is not None else ""
                cells += [fmt_ns(ln.exact_median), fmt_ratio(ln.exact_ratio), kb, fmt_ratio(ln.exact_kbest_ratio)]
            cells.append(f"{_yes(ln.within)}/{_yes(ln.exact_within)}" if exact else _yes(ln.within))
            note = ln.note or ""
            if note and ln.flags:
                note += f" [osmeter flags: {', '.join(ln.flags)}]"
            cells.append(_join(ln.detail, note, _errors_text(ln)))
        body.append(cells)
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head) - 1)]
    right = set(range(1, len(head) - 2))  # figures right-aligned; row name, verdict and note left

    def fmt(cells: list[str]) -> str:
        out = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join([*out, cells[-1]]).rstrip()

    rule = "  ".join("-" * w for w in widths) + "  ----"
    return "\n".join([fmt(head), rule, *(fmt(c) for c in body)]) + "\n"


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def report_document(lines: Sequence[Line], info: Mapping[str, Any]) -> dict[str, Any]:
    """Everything, for --json: the rows, the counts and what was run."""
    c = count(lines)
    return _jsonable({
        "schema": 1,
        "tolerance": [LOW, HIGH],
        "unit": "ns",
        **info,
        "counts": {**dataclasses.asdict(c), "judged_ok": c.judged_ok},
        "rows": [dataclasses.asdict(ln) for ln in lines],
    })


# ---------------------------------------------------------------------------
# osmeter's side: its LEBench table and results, through its Python API.


def osmeter_rows(lebench: Mapping[str, LebenchFigure], results: Mapping[str, OsmeterFigure]) -> list[RowSpec]:
    """osmeter's LEBench table, from the installed probe; without a usable
    probe, LEBench's CSV order with the rows osmeter has results for."""
    from osmeter.errors import OsmeterError
    from osmeter.lebench import probe_rows

    try:
        return [RowSpec(r.name, r.available, r.note, r.pending) for r in probe_rows()]
    except OsmeterError as e:
        print(f"note: no osmeter-probe to read the LEBench table from ({e}); rows follow LEBench's CSV",
              file=sys.stderr)
    names = list(dict.fromkeys([*lebench, *results]))
    return [RowSpec(n, n in results, None, None if n in results else "no osmeter result") for n in names]


def stored_figures(store_path: Path, run_ref: str) -> tuple[Any, dict[str, OsmeterFigure]]:
    """(RunInfo, {LEBench row: figure}) of one stored run."""
    from osmeter.store import open_store

    store = open_store(str(store_path), create=False)
    try:
        run = store.run(run_ref)
        out = {}
        for res in store.results(run.id):
            row = res.lebench_row
            if row is None:
                continue
            s = res.summary
            out[row] = OsmeterFigure(
                status=res.status,
                median=s.median if s else math.nan, ci_low=s.ci_low if s else math.nan,
                ci_high=s.ci_high if s else math.nan, kbest=s.lebench_kbest if s else math.nan,
                mean=s.mean if s else math.nan, n=s.n if s else 0,
                unit=res.unit, flags=tuple(res.flags), reason=res.reason,
            )
        return run, out
    finally:
        store.close()


def is_exact(run: Any) -> bool:
    return bool(run.meta.get("lebench_exact") or run.params.get("lebench_exact"))


def latest_lebench_runs(store_path: Path) -> tuple[str | None, str | None]:
    """Ids of the latest lebench-suite runs of the store: (default, --lebench-exact)."""
    from osmeter.store import open_store

    store = open_store(str(store_path), create=False)
    try:
        runs = [r for r in store.runs() if r.suite == "lebench"]
    finally:
        store.close()
    default = [r.id for r in runs if not is_exact(r)]
    exact = [r.id for r in runs if is_exact(r)]
    return (str(max(default)) if default else None), (str(max(exact)) if exact else None)


def run_wall_seconds(run: Any) -> float | None:
    """A stored run's wall time from its start and end stamps (whole seconds)."""
    from datetime import datetime

    if not run.end_time:
        return None
    try:
        start = datetime.fromisoformat(run.start_time.replace("Z", "+00:00"))
        end = datetime.fromisoformat(run.end_time.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (end - start).total_seconds()


def check_units(*figures: Mapping[str, OsmeterFigure]) -> None:
    for figs in figures:
        for row, f in figs.items():
            if f.status == "ok" and f.unit not in (None, "ns"):
                sys.exit(f"osmeter row {row!r} is in {f.unit}, not ns: this script compares times only")


# ---------------------------------------------------------------------------
# Building LEBench with a reduced BASE_ITER (--build-from).

_BASE_ITER = re.compile(r"^#define BASE_ITER[ \t]+\d+[ \t]*$", re.M)
_SLEEP = re.compile(r"^([ \t]*)sleep\(60\);", re.M)


def prepare_source(text: str, base_iter: int | None) -> str:
    r"""OS_Eval.c with `#define BASE_ITER` set to base_iter (None: left) and
    its `sleep(60);` commented out; the same as
    sed -e 's/^#define BASE_ITER .*/#define BASE_ITER N/' -e 's|^\([[:space:]]*\)sleep(60);|\1/* sleep(60); */|'
    Raises ValueError when either line is not there exactly once."""
    if base_iter is not None:
        text, n = _BASE_ITER.subn(f"#define BASE_ITER {base_iter}", text)
        if n != 1:
            raise ValueError(f"OS_Eval.c has {n} `#define BASE_ITER N` lines, not one: cannot set BASE_ITER")
    text, n = _SLEEP.subn(r"\1/* sleep(60); removed by lebench_vs_osmeter.py */", text)
    if n != 1:
        raise ValueError(f"OS_Eval.c has {n} `sleep(60);` lines, not one: cannot remove its initial sleep")
    return text


def build_lebench(src: Path, base_iter: int | None, out: Path) -> Path:
    """Build LEBench's OS_Eval from a checkout (or its TEST_DIR) into `out`,
    as its makefile does (gcc -pthread -O0), from prepare_source's copy."""
    c = next((p for p in (src / "OS_Eval.c", src / "TEST_DIR" / "OS_Eval.c") if p.is_file()), None)
    if c is None:
        sys.exit(f"--build-from {src}: no OS_Eval.c there nor in TEST_DIR/; give LEBench's checkout")
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        sys.exit("--build-from needs a C compiler: install the Debian package gcc")
    try:
        text = prepare_source(c.read_text(encoding="utf-8", errors="replace"), base_iter)
    except ValueError as e:
        sys.exit(f"{c}: {e}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "OS_Eval.c").write_text(text, encoding="utf-8")
    exe = out / "OS_Eval"
    r = subprocess.run([cc, "-o", str(exe), "-pthread", "-O0", str(out / "OS_Eval.c")],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"building LEBench from {c} failed:\n{r.stderr[-2000:]}")
    print(f"built {exe} from {c} (BASE_ITER {base_iter or 'unchanged'}, its 60 s sleep removed)", flush=True)
    return exe


# ---------------------------------------------------------------------------
# Running the two tools.


class Terminated(Exception):
    """SIGTERM or SIGHUP arrived: unwind so that every clean-up runs."""


def _on_signal(signum: int, frame: Any) -> None:
    raise Terminated(signal.Signals(signum).name)


def _stop(proc: subprocess.Popen, sig: int, group: bool) -> None:
    """Stop a child started in its own session: `sig` to it (or its whole
    process group), then SIGKILL to the group if it is still there 15 s later."""
    if proc.poll() is not None:
        return
    try:
        (os.killpg if group else os.kill)(proc.pid, sig)
        proc.wait(timeout=15)
        return
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def _default_sigint() -> None:
    """In LEBench's process, before exec: SIGINT back to its default action.
    Its forked children end themselves with kill(getpid(), SIGINT); a shell
    starts background jobs with SIGINT ignored, and an ignored signal stays
    ignored across exec, so they would survive and run the rest of LEBench's
    program, each forking again (thousands of processes)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_lebench(binary: Path, cpu: int, lebench_dir: Path, progress: IO[str],
                every_s: float = 60.0, expect: str | None = None) -> tuple[Path, float, str]:
    """Run OS_Eval pinned to `cpu` in `lebench_dir`: (CSV, wall seconds, its stdout).

    Its stdout goes straight to a file, as in LEBench's own set-up (cron,
    `>> LEBench.out`): fully buffered, so nothing is written and no reader
    wakes up between its timings (its page-fault test prints a line per
    sample; line buffering would add a write() and a reader to every one).
    Progress is the elapsed time and the last test its flushed output shows."""
    (lebench_dir / "TEST_DIR").mkdir(parents=True)  # it binds $LEBENCH_DIR/TEST_DIR/socket
    home = str(lebench_dir) + "/"  # it does strcpy(home) + strcat("output_file.csv")
    if len(home + LEBENCH_SOCKET) > SUN_PATH_MAX:
        sys.exit(f"{home}: too long a path for LEBench's Unix socket (sun_path holds {SUN_PATH_MAX} bytes): "
                 "set TMPDIR to a shorter directory or give a shorter --keep DIR")
    argv = ["taskset", "-c", str(cpu), str(binary), "0", LEBENCH_NAME]
    log_path = lebench_dir / "lebench.log"
    expect = expect or f"it sleeps {LEBENCH_SLEEP_S:.0f} s first, then takes 15-30 minutes"
    print(f"LEBench: {' '.join(argv)} (LEBENCH_DIR={home}; {expect})", file=progress, flush=True)
    start = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=lebench_dir, env=dict(os.environ, LEBENCH_DIR=home), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=_default_sigint)
        try:
            while True:
                try:
                    rc = proc.wait(timeout=every_s)
                    break
                except subprocess.TimeoutExpired:
                    seen = re.findall(rb"^Performing test (.*)\.$", log_path.read_bytes(), re.M)
                    last = f"; its output has reached test {len(seen)}, {seen[-1].decode(errors='replace')}" \
                        if seen else ""
                    print(f"  [{time.monotonic() - start:5.0f} s] LEBench running{last}", file=progress, flush=True)
        finally:
            _stop(proc, signal.SIGKILL, group=True)  # OS_Eval cleans nothing up; its process group goes with it
    wall = time.monotonic() - start
    text = log_path.read_text(encoding="utf-8", errors="replace")
    csv = lebench_dir / f"output.{LEBENCH_NAME}.csv"
    if rc != 0 or not csv.exists():
        tail = "\n".join(text.splitlines()[-15:])
        sys.exit(f"LEBench failed (exit status {rc}; {'no' if not csv.exists() else 'with'} {csv.name}):\n{tail}")
    print(f"  [{wall:5.0f} s] LEBench done", file=progress, flush=True)
    return csv, wall, text


def run_osmeter(store: Path, cpu: int, exact: bool, repeat: int | None, tmpdir: Path, log_path: Path,
                progress: IO[str]) -> float:
    """`python -m osmeter run --suite lebench` into `store`; its wall time in seconds."""
    label = "lebench-exact" if exact else "lebench-default"
    argv = [sys.executable, "-m", "osmeter", "run", "--suite", "lebench", "--cpu", str(cpu),
            "--store", str(store), "--label", label]
    if exact:
        argv.append("--lebench-exact")
    if repeat is not None:
        argv += ["--repeat", str(repeat)]
    print(f"osmeter: {' '.join(argv[2:])}", file=progress, flush=True)
    start = time.monotonic()
    with open(log_path, "w", encoding="utf-8") as log:
        # Its progress (stderr) goes to the terminal, its summary table to the log.
        proc = subprocess.Popen(argv, stdout=log, env=dict(os.environ, TMPDIR=str(tmpdir)),
                                start_new_session=True)
        try:
            rc = proc.wait()
        finally:
            _stop(proc, signal.SIGTERM, group=False)  # osmeter stops its probe and marks the run incomplete
    wall = time.monotonic() - start
    if rc == 2 and exact:
        sys.exit("osmeter rejected `run --suite lebench --lebench-exact` (exit status 2): this osmeter is too old "
                 "for --lebench-exact; rerun with --no-exact or update osmeter")
    if rc not in (0, 8):  # 8: the run completed, some benchmark reported an error (shown in the table)
        sys.exit(f"osmeter run failed (exit status {rc}; docs/exit-codes.md); its output: {log_path}")
    return wall


def latest_run_id(store: Path, label: str) -> str:
    from osmeter.store import open_store

    s = open_store(str(store), create=False)
    try:
        ids = [r.id for r in s.runs() if r.label == label]
    finally:
        s.close()
    if not ids:
        sys.exit(f"no run labelled {label!r} in {store}")
    return str(max(ids))


# ---------------------------------------------------------------------------


def print_report(lines: Sequence[Line], exact: bool, walls: Sequence[str], out: IO[str]) -> Counts:
    out.write(render_table(lines, exact))
    out.write("Figures in ns; ratio = osmeter median / LEBench k-best; CI = 95 % confidence interval of the median;\n"
              "k-best ratio = the --lebench-exact run's k-best (LEBench's calc_k_closest on single-call samples, n of\n"
              "them) / LEBench's k-best: the same statistic, which for a wide distribution is a low quantile that\n"
              "falls as n grows (LEBench takes 5 000 to 1 000 000 samples per row).\n")
    for w in walls:
        out.write(w + "\n")
    c = count(lines)
    out.write(f"within {LOW}-{HIGH}: default run {c.within} of {c.compared} rows")
    if exact:
        out.write(f", --lebench-exact run {c.exact_within} of {c.exact_compared} rows")
    out.write(f"; {c.pending} rows pending in osmeter\n")
    if c.self_compared:
        bad = [ln.row for ln in lines if ln.lebench_self_within is False]
        out.write(f"LEBench against itself (second run's k-best / first's): {c.self_within} of {c.self_compared} "
                  f"rows within {LOW}-{HIGH}" + (f"; not reproduced: {', '.join(bad)}" if bad else "") + "\n")
    verdict = "--lebench-exact ratios" if c.exact_compared else "default ratios"
    out.write(f"tolerance {LOW}..{HIGH} ({verdict}): {'PASS' if c.judged_ok else 'FAIL'}\n")
    out.flush()
    return c


def write_json(path: str | None, lines: Sequence[Line], info: Mapping[str, Any]) -> None:
    if path:
        Path(path).write_text(json.dumps(report_document(lines, info), indent=2) + "\n", encoding="utf-8")
        print(f"saved {path}")


def compare_and_print(lebench: Mapping[str, LebenchFigure], log: LebenchLog | None, store: Path, run_ref: str,
                      exact_ref: str | None, walls: list[str], json_path: str | None, info: dict[str, Any],
                      lebench_again: Mapping[str, LebenchFigure] | None = None) -> int:
    """Read the osmeter runs, print the table, wall times and counts, save --json; the exit status."""
    run, default = stored_figures(store, run_ref)
    exact_run, exact = stored_figures(store, exact_ref) if exact_ref else (None, None)
    check_units(default, *([exact] if exact else []))
    lines = match_rows(osmeter_rows(lebench, default), lebench, default, exact, log.row_errors() if log else None,
                       lebench_again, log.row_iterations() if log else None)
    if log and log.base_iter() is not None and log.base_iter() != LEBENCH_BASE_ITER:
        walls.append(f"LEBench ran with BASE_ITER {log.base_iter()} (its default {LEBENCH_BASE_ITER}): its rows have "
                     f"{log.base_iter() / LEBENCH_BASE_ITER:g} x the samples of docs/lebench.md's \"LEBench's samples\" "
                     "(the lebench_n of each row in --json)")
    if log and log.errors:
        n = sum(sum(e.values()) for e in log.errors.values())
        walls.append(f"LEBench printed {n} [error] lines, in its tests {', '.join(log.errors)} (see the note column)")
    c = print_report(lines, exact is not None, walls, sys.stdout)
    write_json(json_path, lines, {
        **info,
        "store": str(store),
        "osmeter_runs": {"default": run.id, "exact": exact_run.id if exact_run else None},
        "osmeter_argv": {"default": run.argv, "exact": exact_run.argv if exact_run else None},
        "machine": run.machine,
        "lebench_log": dataclasses.asdict(log) if log else None,
    })
    return 0 if c.judged_ok else 1


def only_parse(a: argparse.Namespace) -> int:
    from osmeter.store import resolve_location

    csv = Path(a.only_parse)
    lebench = parse_lebench_csv(csv.read_text(encoding="utf-8", errors="replace"))
    csv2 = csv.parent.parent / "lebench-2" / csv.name  # a --keep DIR of --lebench-runs 2 has it
    again = parse_lebench_csv(csv2.read_text(encoding="utf-8", errors="replace")) if csv2.exists() else None
    store = Path(resolve_location(a.store))
    run_ref, exact_ref = a.run, a.exact_run
    if run_ref is None or (exact_ref is None and a.exact):
        latest_default, latest_exact = latest_lebench_runs(store)
        run_ref = run_ref or latest_default
        exact_ref = exact_ref or (latest_exact if a.exact else None)
    if run_ref is None:
        sys.exit(f"no `--suite lebench` run without --lebench-exact in {store}; give one with --run REF")
    walls = []
    log_path = csv.parent / "lebench.log"  # where a --keep DIR has it
    log = parse_lebench_log(log_path.read_text(encoding="utf-8", errors="replace")) if log_path.exists() else None
    if log and log.total_seconds is not None:
        walls.append(f"wall time: LEBench {log.total_seconds:.0f} s (its own total, {LEBENCH_SLEEP_S:.0f} s "
                     "initial sleep included)")
    from osmeter.store import open_store

    s = open_store(str(store), create=False)
    try:
        runs = [s.run(ref) for ref in (run_ref, exact_ref) if ref]
    finally:
        s.close()
    for r in runs:
        w = run_wall_seconds(r)
        walls.append(f"wall time: osmeter run {r.id} ({'--lebench-exact' if is_exact(r) else 'default'}) "
                     + (f"{w:.0f} s" if w is not None else "unknown") + " (from its stored start and end)")
    return compare_and_print(lebench, log, store, run_ref, exact_ref, walls, a.json,
                             {"mode": "only-parse", "lebench_csv": str(csv),
                              "lebench_csv_2": str(csv2) if again else None}, again)


def lebench_binary(a: argparse.Namespace, work: Path) -> Path:
    """--lebench's program, or one built from --build-from into `work`."""
    if a.build_from:
        return build_lebench(Path(a.build_from), a.base_iter, work / "build")
    binary = Path(a.lebench)
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        sys.exit(f"{binary}: not an executable file; {BUILD_ADVICE}")
    return binary


def run_lebenches(a: argparse.Namespace, binary: Path, work: Path) -> list[tuple[Path, float, str]]:
    """LEBench --lebench-runs times, each in its own directory (the first in
    work/lebench, as --only-parse expects; the second in work/lebench-2)."""
    expect = "its 60 s sleep removed" if a.build_from else None
    out = []
    for i in range(a.lebench_runs):
        d = work / ("lebench" if i == 0 else f"lebench-{i + 1}")
        if a.lebench_runs > 1:
            print(f"LEBench run {i + 1} of {a.lebench_runs}", flush=True)
        out.append(run_lebench(binary, a.cpu, d, sys.stdout, expect=expect))
    return out


def lebench_wall_text(wall: float, log: LebenchLog, run: int) -> str:
    base = log.base_iter()
    counts = "its default iteration counts" if base in (None, LEBENCH_BASE_ITER) else f"BASE_ITER {base}"
    slept = f"{LEBENCH_SLEEP_S:.0f} s of it is its initial sleep" if log.slept() is not False else "no initial sleep"
    return f"wall time: LEBench{f' run {run}' if run > 1 else ''} {wall:.0f} s ({counts}; {slept})"


def check_osmeter_probe() -> None:
    """Fail before LEBench's minutes when osmeter will not find its probe."""
    from osmeter.probe import ProbeError, locate_probe

    try:
        locate_probe()
    except ProbeError as e:
        sys.exit(f"osmeter cannot run: {e}")


def measure(a: argparse.Namespace) -> int:
    if not shutil.which("taskset"):
        sys.exit("taskset not found: install the Debian package util-linux")
    check_osmeter_probe()
    if a.keep:
        work = Path(a.keep).resolve()
        if work.exists() and any(work.iterdir()):
            sys.exit(f"--keep {work}: the directory is not empty")
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="osm-lb-"))
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        binary = lebench_binary(a, work)
        print(f"CPU {a.cpu} for both tools. Timings mean something only on an otherwise idle machine.", flush=True)
        if a.cpu != 0:
            print("note: LEBench pins its context-switch processes to CPU 0 whatever taskset says", flush=True)
        runs = run_lebenches(a, binary, work)
        store = work / "osmeter.db"
        walls_os = {}
        kinds = [True, False] if a.exact else [False]
        for exact in kinds:
            log_path = work / f"osmeter-{'exact' if exact else 'default'}.log"
            walls_os[exact] = run_osmeter(store, a.cpu, exact, a.repeat, work, log_path, sys.stdout)
        figures = [parse_lebench_csv(csv.read_text(encoding="utf-8", errors="replace")) for csv, _, _ in runs]
        logs = [parse_lebench_log(text) for _, _, text in runs]
        print()
        walls = [lebench_wall_text(wall, log, i + 1) for i, ((_, wall, _), log) in enumerate(zip(runs, logs))]
        if a.exact:
            walls.append(f"wall time: osmeter run --suite lebench --lebench-exact {walls_os[True]:.0f} s")
        walls.append(f"wall time: osmeter run --suite lebench {walls_os[False]:.0f} s")
        status = compare_and_print(
            figures[0], logs[0], store, latest_run_id(store, "lebench-default"),
            latest_run_id(store, "lebench-exact") if a.exact else None, walls, a.json,
            {"mode": "measure", "cpu": a.cpu, "lebench_binary": str(binary.resolve()),
             "lebench_runs": a.lebench_runs, "base_iter": logs[0].base_iter(),
             "wall_s": {"lebench": runs[0][1], "lebench_all": [w for _, w, _ in runs],
                        "osmeter_exact": walls_os.get(True), "osmeter": walls_os[False]}},
            figures[1] if len(figures) > 1 else None,
        )
        if a.keep:
            print(f"kept {work}: re-print with --only-parse {runs[0][0]} --store {store}")
        return status
    except (KeyboardInterrupt, Terminated) as e:
        print(f"\nstopped ({e.__class__.__name__}{': ' + str(e) if str(e) else ''}); cleaning up", file=sys.stderr)
        return 130 if isinstance(e, KeyboardInterrupt) else 143
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n\n")[-2:]))
    ap.add_argument("--lebench", metavar="PATH", help="LEBench's OS_Eval, built by you (see below)")
    ap.add_argument("--build-from", metavar="SRC_DIR", help="build OS_Eval from LEBench's checkout (or its "
                    "TEST_DIR) into the work directory, its 60 s sleep removed (instead of --lebench)")
    ap.add_argument("--base-iter", type=int, metavar="N", help="with --build-from: LEBench's BASE_ITER (its "
                    "default 10000; 1000 takes a tenth of the time)")
    ap.add_argument("--lebench-runs", type=int, default=1, choices=(1, 2), help="run LEBench twice to flag the rows "
                    "it does not reproduce itself (second k-best / first outside 0.8-1.25; default 1)")
    ap.add_argument("--cpu", type=int, default=0, help="the CPU both tools run on (default 0: LEBench pins its "
                    "context switch there)")
    ap.add_argument("--exact", action=argparse.BooleanOptionalAction, default=True,
                    help="also run osmeter with --lebench-exact (default: yes)")
    ap.add_argument("--repeat", type=int, help="passed to osmeter run (default: the suite's)")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR (must be empty) and keep it: LEBench's CSV and log, "
                    "the osmeter store")
    ap.add_argument("--json", metavar="FILE", help="save the rows, counts, wall times and settings as JSON")
    ap.add_argument("--only-parse", metavar="CSV", help="measure nothing: print the table from LEBench's output "
                    "CSV and the lebench runs of an osmeter store")
    ap.add_argument("--store", metavar="PATH", help="with --only-parse: the osmeter store (default: as osmeter "
                    "finds it, $OSMETER_STORE first)")
    ap.add_argument("--run", metavar="REF", help="with --only-parse: the default run (default: the latest "
                    "lebench-suite run without --lebench-exact)")
    ap.add_argument("--exact-run", metavar="REF", help="with --only-parse: the --lebench-exact run (default: the "
                    "latest one)")
    a = ap.parse_args(argv)
    if a.cpu < 0:
        ap.error("--cpu must be 0 or more")
    if a.repeat is not None and a.repeat < 1:
        ap.error("--repeat must be 1 or more")
    if a.only_parse:
        return only_parse(a)
    if (a.store or a.run or a.exact_run) and not a.only_parse:
        ap.error("--store, --run and --exact-run go with --only-parse")
    if a.lebench and a.build_from:
        ap.error("give --lebench or --build-from, not both")
    if a.base_iter is not None and (not a.build_from or a.base_iter < 1):
        ap.error("--base-iter N (1 or more) goes with --build-from")
    if not a.lebench and not a.build_from:
        print(f"skipped: no LEBench program given; {BUILD_ADVICE}")
        return 0
    return measure(a)


if __name__ == "__main__":
    sys.exit(main())
