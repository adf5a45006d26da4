"""LEBench's side of benchmarks/lebench_vs_osmeter.py, pure: its output CSV and
its log (OS_Eval's stdout), the row types, matching LEBench's rows with
osmeter's (ratios, the tolerance, LEBench against itself with --lebench-runs 2)
and the counts the verdict is taken on. Nothing here runs or reads a store."""
from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

LOW, HIGH = 0.8, 1.25
LEBENCH_SLEEP_S = 60.0  # OS_Eval sleeps this long before its first test
# LEBench's CSV names that differ from its row names (docs/lebench.md).
LEBENCH_SPELLING = {"context siwtch": "context switch"}


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
