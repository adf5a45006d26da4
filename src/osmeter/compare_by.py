"""`osmeter compare --by host|kernel|label`: runs grouped into columns, every
benchmark instance of every column against a baseline column.

What a column is (docs/compare.md, "By host, kernel or label"):

* its runs: `host` one machine (host_keys: its machine_id, which the probe
  reads off /etc/machine-id, with its hostname; a run without one by its
  hostname or inventory name), so a local run and a fleet run of one
  machine are one column; `kernel` the machine's kernel_release; `label`
  the run's label; a run without one is a column of its own, `run ID`;
* its name: for `host` the one inventory name its runs were given (not
  `localhost`), else the machine's hostname, with its machine_id's first
  digits (or a run id) when two columns would have one name; --baseline
  also takes any other name of its runs; for `kernel` and `label` the value;
* the order: by name, numbers compared as numbers (`node2` before
  `node10`, kernel `6.1` before `6.10`); the baseline is `--baseline`, else
  the first column;
* its run: of the column's runs, the complete ones before the others, then
  the newest (start time, then id). An instance that run does not hold ok is
  taken from the column's next run *on the same host* that does (a fleet
  host resumed with `--resume` has its results in two runs), never from
  another host; the runs not used are named in the column's notes.

A cell is the ratio of medians with its interval, the noise threshold and
the flags as caveat, as osmeter compare makes them: from the repetitions
when a side has several, else from the two results' stored intervals
(compare.ratio_from_intervals: no samples read), or with `bootstrap` as the
pairwise compare does (compare.compare_instances); or the reason there is
none: the instance skipped, failed or missing in the column, not ok in the
baseline, measured in another unit, or needing samples that are not stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from . import compare as cmp
from . import differences as dif
from .comparing import Key, compared_instance, instance_keys
from .errors import NotFoundError, UsageError
from .frozen import built
from .model import BenchResult, RunInfo
from .sysinfo import KEY_HOSTNAME, KEY_KERNEL, KEY_MACHINE_ID, machine_identity, machine_text
from .sysinfo import host_of as host_of  # the report's JSON names each column's run's host

if TYPE_CHECKING:
    from .store.sql import SQLStore

BY_CHOICES = ("host", "kernel", "label")
LATEST = "latest"

# A cell's state: compared (a Comparison), the baseline's own figure, or why there is no comparison.
COMPARED = "compared"
BASELINE = "baseline"
MISSING = "missing"  # the column's runs do not hold the instance
SKIP = "skip"
ERROR = "error"
NO_BASELINE = "no-baseline"  # the baseline column has no ok result of the instance
OTHER_UNIT = "other-unit"
NO_SAMPLES = "no-samples"
STATES = (COMPARED, BASELINE, MISSING, SKIP, ERROR, NO_BASELINE, OTHER_UNIT, NO_SAMPLES)


def column_name(run: RunInfo, by: str) -> str:
    """The column a run alone belongs to under --by `by` (`run ID` when the run lacks the fact);
    columns_of groups --by host across runs (host_keys)."""
    if by == "host":
        return host_name([run])
    if by == "kernel":
        value = machine_text(run.machine, KEY_KERNEL)
    elif by == "label":
        value = run.label
    else:
        raise UsageError(f"--by {by!r}: expected one of {', '.join(BY_CHOICES)}")
    return value if value else f"run {run.id}"


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key comparing digit runs as numbers: node2 < node10, 6.1.0 < 6.10.0."""
    parts = re.split(r"(\d+)", text)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts))


# --- hosts: one machine, one host -----------------------------------------------

LOOPBACK = re.compile(r"localhost(\.localdomain)?|127\.\d+\.\d+\.\d+|::1", re.IGNORECASE)
HostKey = tuple[str, ...]


def loopback(name: str) -> bool:
    """An inventory name that names whichever machine runs Ansible: no name for a host."""
    return LOOPBACK.fullmatch(name) is not None


def _own_key(run: RunInfo) -> HostKey:
    ident = machine_identity(run.machine)
    if ident is not None:
        return ("machine", ident)
    if run.host and not loopback(run.host):
        return ("inventory", run.host)
    name = machine_text(run.machine, KEY_HOSTNAME)
    return ("hostname", name) if name else ("run", str(run.id))


def _evidence(run: RunInfo, key: HostKey) -> list[HostKey]:
    """What ties a run to a machine: its hostname, and its inventory name with it."""
    name = machine_text(run.machine, KEY_HOSTNAME) or ""
    if key[0] == "machine":
        return [("hostname", name)] + ([("inventory", run.host, name)] if run.host else [])
    return [("hostname", name)] if key[0] == "hostname" else [("inventory", run.host or "", name)]


def host_keys(runs: Sequence[RunInfo]) -> dict[int, HostKey]:
    """Each run's host, by run id (docs/fleet.md, "One machine, one host"):

    * a run whose machine description has a machine_id: that machine
      (machine_id and hostname, sysinfo.machine_identity), whether it ran
      locally or through the fleet under any inventory name;
    * a run without one (an older probe's; a machine without
      /etc/machine-id): its inventory name, or its hostname for a local run
      or a fleet run of `localhost`; it joins the one machine among the
      runs of that hostname (and inventory name) when there is exactly one;
    * the runs of one machine that one fleet run ran under several
      inventory names (network namespaces, containers that share the
      machine's name and ID): a host per inventory name, as the inventory
      has it.
    """
    own = {r.id: _own_key(r) for r in runs}
    machines: dict[HostKey, set[HostKey]] = {}
    for r in runs:
        if own[r.id][0] == "machine":
            for ev in _evidence(r, own[r.id]):
                machines.setdefault(ev, set()).add(own[r.id])
    for r in runs:
        if own[r.id][0] in ("hostname", "inventory"):
            found = machines.get(_evidence(r, own[r.id])[0], set())
            if len(found) == 1:
                own[r.id] = next(iter(found))
    named: dict[tuple[HostKey, str], set[str]] = {}
    for r in runs:
        if r.fleet and r.host:
            named.setdefault((own[r.id], r.fleet), set()).add(r.host)
    split = {key for (key, _), hosts in named.items() if len(hosts) > 1}
    return {r.id: own[r.id] + ((r.host or "",) if own[r.id] in split else ()) for r in runs}


def host_name(runs: Sequence[RunInfo]) -> str:
    """The name people read for one host's runs (the preferred first): the
    one inventory name they were given (not localhost), else the machine's
    hostname."""
    given = {r.host for r in runs if r.host and not loopback(r.host)}
    if len(given) == 1:
        return given.pop()
    for r in runs:
        name = machine_text(r.machine, KEY_HOSTNAME)
        if name:
            return name
    return runs[0].host or f"run {runs[0].id}"


def _distinct_names(columns: Sequence[Column]) -> None:
    """Two hosts of one name (two machines called `vm`): each name gets the
    first digits of its machine_id, or its run's id."""
    by_name: dict[str, list[Column]] = {}
    for col in columns:
        by_name.setdefault(col.name, []).append(col)
    for name, same in by_name.items():
        if len(same) < 2:
            continue
        ids = [next((r.machine[KEY_MACHINE_ID] for r in col.runs if isinstance(r.machine.get(KEY_MACHINE_ID), str)),
                    "") for col in same]
        short = [i[:8] or None for i in ids]
        for col, tag in zip(same, short):
            col.name = f"{name} ({tag if tag and short.count(tag) == 1 else f'run {col.run.id}'})"


# --- the runs of a fleet run ---------------------------------------------------


def fleet_runs(store: SQLStore, ref: str) -> tuple[str, list[RunInfo]]:
    """The fleet run `ref` (its id, or `latest`: the one whose first run started last)
    and all its runs. NotFoundError (exit 6, as for an unknown run id) when there is none.
    Only the fleet run's own runs are read (a store holds thousands of others)."""
    known = store.fleet_starts()
    if not known:
        raise NotFoundError(f"the store {store.shown} holds no fleet run (`osmeter fleet run INVENTORY` makes one)")
    if ref == LATEST:
        ref = max(known, key=lambda f: (known[f], f))
    if ref not in known:
        newest = sorted(known, key=lambda f: known[f], reverse=True)
        shown = ", ".join(newest[:10]) + (f" and {len(newest) - 10} more" if len(newest) > 10 else "")
        raise NotFoundError(f"no fleet run {ref!r} in the store {store.shown}; its fleet runs: {shown}")
    return ref, store.fleet_runs(ref)


# --- columns ----------------------------------------------------------------------


def _preference(run: RunInfo) -> tuple[bool, str, int]:
    return (run.status == "complete", run.start_time, run.id)


@dataclass
class Column:
    """The runs of one column, the one used first."""

    name: str
    runs: list[RunInfo]  # preferred first: complete before incomplete, then newest
    filled: dict[int, int] = field(default_factory=dict)  # run id -> cells taken from it (runs after the first)
    hosts: Mapping[int, HostKey] = field(default_factory=dict)  # run id -> its host (host_keys)
    aliases: frozenset[str] = frozenset()  # --by host: the other names of its runs, which --baseline takes

    @property
    def run(self) -> RunInfo:
        return self.runs[0]

    @property
    def same_host(self) -> list[RunInfo]:
        """The runs a cell may come from: the first, and the others on its host, in order."""
        host = self.hosts.get(self.run.id)
        return [r for r in self.runs if r is self.run or (host is not None and self.hosts.get(r.id) == host)]

    def notes(self) -> list[str]:
        """Which runs the column used, and which it did not; the other names of its machine."""
        given = {r.host or machine_text(r.machine, KEY_HOSTNAME) or "" for r in self.runs} - {self.name, ""}
        own = sorted(given) if self.aliases else []
        out = [f"{self.name}: also {', '.join(own)} (the same machine)"] if own else []
        if len(self.runs) > 1:
            out.append(f"{self.name}: run {self.run.id} ({self.run.status}, started {self.run.start_time})")
        for r in self.runs[1:]:
            n = self.filled.get(r.id, 0)
            how = f"{n} cell{'s' if n != 1 else ''} from it (same host)" if n else "not used"
            out.append(f"{self.name}: run {r.id} ({r.status}, started {r.start_time}): {how}")
        return out


def columns_of(runs: Sequence[RunInfo], by: str) -> list[Column]:
    """The runs grouped by `by` (a host: host_keys), in the columns' order (natural_key of the name)."""
    hosts = host_keys(runs)
    groups: dict[Any, list[RunInfo]] = {}
    for r in runs:
        groups.setdefault(hosts[r.id] if by == "host" else column_name(r, by), []).append(r)
    columns = []
    for key, members in groups.items():
        members = sorted(members, key=_preference, reverse=True)
        if by != "host":
            columns.append(Column(key, members, hosts=hosts))
            continue
        names = {r.host for r in members if r.host} | {machine_text(r.machine, KEY_HOSTNAME) for r in members}
        columns.append(Column(host_name(members), members, hosts=hosts,
                              aliases=frozenset(n for n in names if n)))
    if by == "host":
        _distinct_names(columns)
    return sorted(columns, key=lambda c: natural_key(c.name))


def baseline_index(columns: Sequence[Column], baseline: str | None, by: str) -> int:
    if len(columns) < 2:
        only = f" ({columns[0].name})" if columns else ""
        one = columns[0].runs if columns else []
        if by == "host" and len(one) > 1:  # a local run and a fleet run of one machine, say
            only = (f" ({columns[0].name}: runs {', '.join(str(r.id) for r in sorted(one, key=lambda r: r.id))} "
                    "are of one machine; `osmeter compare RUN RUN` compares two of them)")
        raise UsageError(
            f"compare --by {by} needs at least two columns, and these runs make {len(columns)}{only}: "
            "give more runs, or another --by"
        )
    if baseline is None:
        return 0
    names = [c.name for c in columns]
    if baseline in names:
        return names.index(baseline)
    named = [i for i, c in enumerate(columns) if baseline in c.aliases]  # another name of a host's runs
    if len(named) == 1:
        return named[0]
    if named:
        raise UsageError(f"--baseline {baseline!r} names {len(named)} columns of --by {by} "
                         f"({', '.join(names[i] for i in named)}): give the column's name")
    raise UsageError(f"--baseline {baseline!r} is not a column of --by {by}: the columns are {', '.join(names)}")


# --- the grid --------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    state: str  # one of STATES
    run_id: int | None = None  # the run the column's figure comes from
    comparison: cmp.Comparison | None = None  # state COMPARED
    median: float | None = None  # the column's median (ok results)
    reason: str = ""  # why there is no comparison (skip reason, error, ...)


@dataclass
class Row:
    key: Key
    bench: str
    params: dict[str, Any]
    unit: str | None
    cells: list[Cell]


@dataclass
class ByOutcome:
    by: str
    columns: list[Column]
    baseline: int  # index into columns
    threshold: float
    rows: list[Row]
    differences: list[dif.Difference]  # the machine facts that differ between the columns' runs
    fleet: str | None = None
    read: dict[int, list[BenchResult]] = field(default_factory=dict)  # run id -> its results (SQLStore.figures)
    bootstrap: bool = False  # cells of two single-repetition results by the bootstrap (else their intervals)

    @property
    def comparisons(self) -> list[cmp.Comparison]:
        return [c.comparison for row in self.rows for c in row.cells if c.comparison is not None]

    def notes(self) -> list[str]:
        return [n for col in self.columns for n in col.notes()]


Picked = tuple[RunInfo, BenchResult]


class _Index:
    """Every column's results by instance, read once."""

    def __init__(self, store: SQLStore, columns: Sequence[Column],
                 results: Mapping[int, list[BenchResult]] | None = None) -> None:
        self.store = store
        self.sources = [col.same_host for col in columns]  # each column's, worked out once
        ids = [r.id for runs in self.sources for r in runs]
        given = results or {}
        read = store.figures([i for i in ids if i not in given])
        read.update({i: given[i] for i in ids if i in given})
        self.by_run: dict[int, dict[Key, BenchResult]] = {run_id: instance_keys(rs) for run_id, rs in read.items()}

    def pick(self, i: int, key: Key) -> Picked | None:
        """Column i's result of `key`: the first of its runs holding it ok, else the first holding it."""
        runs = self.sources[i]
        if len(runs) == 1:  # most columns: one run (a fleet's host)
            res = self.by_run[runs[0].id].get(key)
            return None if res is None else (runs[0], res)
        found = [(r, self.by_run[r.id][key]) for r in runs if key in self.by_run[r.id]]
        chosen = next((p for p in found if p[1].status == "ok" and p[1].summary is not None), None)
        return chosen or (found[0] if found else None)

    def keys(self, columns: Sequence[Column], first: int) -> list[Key]:
        """Every instance, the baseline column's in its runs' order first, then the others'."""
        order = [columns[first]] + [c for i, c in enumerate(columns) if i != first]
        seen: dict[Key, None] = {}
        for col in order:
            for r in col.same_host:
                seen.update(dict.fromkeys(self.by_run[r.id]))
        return list(seen)


def _not_ok(picked: Picked | None) -> Cell | None:
    if picked is None:
        return Cell(MISSING, reason="not in the column's runs")
    run, res = picked
    if res.status != "ok" or res.summary is None:
        return Cell(SKIP if res.status == "skip" else ERROR, run.id, reason=res.reason or res.status)
    return None


def _pending_cell(picked: Picked | None, base: Picked | None) -> Cell | None:
    """The cell of a column when it is not compared (why not), else None: both
    sides ok, in one unit."""
    bad = _not_ok(picked)
    if bad is not None:
        return bad
    assert picked is not None
    run, res = picked
    assert res.summary is not None
    median = res.summary.median
    if base is None or base[1].status != "ok" or base[1].summary is None:
        why = "not in the baseline" if base is None else f"{base[1].status} in the baseline ({base[1].reason})"
        return Cell(NO_BASELINE, run.id, median=median, reason=why)
    if res.unit != base[1].unit:
        return Cell(OTHER_UNIT, run.id, median=median, reason=f"measured in {res.unit}, the baseline in {base[1].unit}")
    return None


def _booted(index: _Index, picks: Sequence[Picked | None], base: Picked, todo: Sequence[int], threshold: float,
            cells: list[Cell | None]) -> None:
    """The cells of `todo` (columns) made as compare RUN RUN makes them
    (compare.compare_instances: repetitions, else the bootstrap of the ratio
    from the samples, read here in one query), or NO_SAMPLES."""
    b_run, b = base
    wanted = [(p[0].id, p[1].seq) for p in (base, *(picks[i] for i in todo)) if p is not None]
    samples_of = {k: v for k, v in index.store.samples_of(wanted).items() if v is not None}
    if (b_run.id, b.seq) not in samples_of:
        for i in todo:
            run, res = picks[i]  # type: ignore[misc]
            cells[i] = Cell(NO_SAMPLES, run.id, median=res.summary.median,  # type: ignore[union-attr]
                            reason="the baseline has no stored samples")
        return
    others, compared = [], []
    for i in todo:
        run, res = picks[i]  # type: ignore[misc]
        if (run.id, res.seq) not in samples_of:
            cells[i] = Cell(NO_SAMPLES, run.id, median=res.summary.median, reason="no stored samples")  # type: ignore[union-attr]
            continue
        others.append((compared_instance(res, samples_of[(run.id, res.seq)]), run.id))
        compared.append(i)
    done = cmp.compare_instances(compared_instance(b, samples_of[(b_run.id, b.seq)]), others, b_run.id, threshold)
    for i, comparison in zip(compared, done):
        cells[i] = Cell(COMPARED, comparison.run_id, comparison, median=comparison.median)


def _row(index: _Index, columns: Sequence[Column], first: int, key: Key, threshold: float, bootstrap: bool) -> Row:
    picks = [index.pick(i, key) for i in range(len(columns))]
    base = picks[first]
    cells: list[Cell | None] = []
    todo: list[int] = []  # columns left to the bootstrap
    b_inst = compared_instance(base[1]) if base is not None and base[1].summary is not None else None
    b_side = cmp.side_uncertainty(b_inst) if b_inst is not None else None  # once a row, not once a cell
    for i, picked in enumerate(picks):
        if i == first:
            cells.append(_not_ok(picked) or Cell(BASELINE, picked[0].id if picked else None,
                                                 median=picked[1].summary.median if picked and picked[1].summary
                                                 else None))
            continue
        cell = _pending_cell(picked, base)
        if cell is None:
            assert picked is not None and b_inst is not None and base is not None
            run, res = picked
            inst = compared_instance(res)
            # one repetition a side: the stored intervals, or (--bootstrap) the bootstrap as compare RUN RUN
            single = b_inst.uncertainty is None and inst.uncertainty is None
            ci = None if bootstrap and single else \
                cmp.ratio_of_sides(b_inst.median, b_side, inst.median, cmp.side_uncertainty(inst))
            method = cmp.METHOD_INTERVALS if single else cmp.METHOD_REPETITIONS
            if ci is None:
                todo.append(i)
            else:
                c = cmp.comparison_of(b_inst, inst, run.id, base[0].id, threshold, ci, method)
                cell = built(Cell, {"state": COMPARED, "run_id": run.id, "comparison": c, "median": inst.median,
                                    "reason": ""})  # 20 000 cells for 100 hosts
        cells.append(cell)
    if todo:
        assert base is not None
        _booted(index, picks, base, todo, threshold, cells)
    for col, cell in zip(columns, cells):
        assert cell is not None
        if cell.run_id is not None and cell.run_id != col.run.id:
            col.filled[cell.run_id] = col.filled.get(cell.run_id, 0) + 1
    present = [p for p in [base, *picks] if p is not None]  # never empty: the key came from some run
    unit = next((p[1].unit for p in present if p[1].unit), None)
    return Row(key, key[0], dict(present[0][1].params), unit, [c for c in cells if c is not None])


def compare_by(store: SQLStore, runs: Sequence[RunInfo], by: str, baseline: str | None, threshold: float,
               fleet: str | None = None, bootstrap: bool = False,
               results: Mapping[int, list[BenchResult]] | None = None) -> ByOutcome:
    """Group `runs` into columns by `by` and compare every column with the
    baseline column: each cell from the two results' stored intervals
    (compare.ratio_from_intervals), or with `bootstrap` as compare RUN RUN
    makes it (the bootstrap of the ratio where neither side has repetitions).
    A cell without a usable interval gets the bootstrap either way.
    `results`: runs' results already read (by run id), not read again."""
    columns = columns_of(runs, by)
    first = baseline_index(columns, baseline, by)
    index = _Index(store, columns, results)
    rows = [_row(index, columns, first, key, threshold, bootstrap) for key in index.keys(columns, first)]
    order = [first] + [i for i in range(len(columns)) if i != first]
    diffs = dif.fact_differences([dif.machine_facts(columns[i].run.machine) for i in order])
    # back into the columns' order (fact_differences puts the baseline first for its list deltas)
    back = [order.index(i) for i in range(len(columns))]
    differences = [dif.Difference(d.key, tuple(d.values[j] for j in back)) for d in diffs]
    read = {run_id: list(results.values()) for run_id, results in index.by_run.items()}
    return ByOutcome(by, columns, first, threshold, rows, differences, fleet, read, bootstrap)


def results_of(store: SQLStore, outcome: ByOutcome | None, runs: Sequence[RunInfo]) -> list[BenchResult]:
    """Every result of `runs`, in order, for the instances' labels: those the
    comparison read (SQLStore.figures: no record, extra or counters) are not
    read again."""
    read = outcome.read if outcome is not None else {}
    return [x for r in runs for x in (read[r.id] if r.id in read else store.results(r.id))]


def select_runs(store: SQLStore, refs: Sequence[str], fleet: str | None) -> tuple[str | None, list[RunInfo]]:
    """The runs --fleet ID and the RUN arguments name (each once), and the fleet's id."""
    runs: list[RunInfo] = []
    fleet_id = None
    if fleet is not None:
        fleet_id, runs = fleet_runs(store, fleet)
        runs = list(runs)
    given: set[int] = set()
    for ref in refs:
        info = store.run(ref)
        if info.id in given:
            raise UsageError(f"run {info.id} is given twice")
        given.add(info.id)
        if not any(r.id == info.id for r in runs):  # a run of the fleet run named again: no harm
            runs.append(info)
    if not runs:
        raise UsageError("compare --by needs runs: --fleet ID (or latest), or runs (ids, labels, latest~N)")
    return fleet_id, runs
