"""osmeter hotspots: where a benchmark's time goes, as a flame graph, a table
of functions, the depth view, and the difference of two profiles.

    osmeter hotspots BENCH [--param K=V]... [-o DIR]       profile one instance
    osmeter hotspots BENCH --diff K=V[,K=V] K=V[,K=V]      profile two parameter sets, diff them
    osmeter hotspots --diff A B                            diff two stored/saved profiles
    osmeter hotspots --show REF                            render a stored/saved profile again

The probe samples only the timed region (docs/methods/hotspots.md); the
profile is stored with the run. Files written to DIR: profile.folded,
flamegraph.svg, top.txt, depth.txt (diff: a.folded, b.folded, diff.svg,
diff.txt). A diff ranks functions by the change of their time per
operation, each side's shares times its ns per operation (hotspots.timed):
the median of the result the profile belongs to, else the profile's window;
by the change of share when a side has neither (a folded file).

Every option is checked before anything is measured or stored (exit 2 with
nothing stored): the modes, --max-time against --min-time, the output
directory and each file to be written in it, and that each parameter set is
one instance of BENCH (one value per parameter, a known parameter, a value
in its range: the probe's catalogue).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import outfile, textsafe
from ..catalog import Benchmark, Param, parse_catalog
from ..errors import NotFoundError, UsageError
from ..hotspots import flamegraph, folded, medians, timed
from ..hotspots.sources import STDIN, Profile, file_of, from_stored, load, params_text
from ..probe import locate_probe, run_document
from ..progress import make_progress
from ..recorder import RunContext, RunRecorder
from ..report import hotspots as hs
from ..runner import drive, problem_text, try_finish, verdict
from ..store import open_store, resolve_location
from .options import add_json_option, add_store_option, non_negative_int, positive_float, positive_int
from .run import param_assignment

NAME = "hotspots"
DEFAULT_MIN_TIME = 5.0
DEFAULT_FREQUENCY = 999
_ASSIGN_SPLIT = re.compile(r",(?=[a-z_][a-z0-9_]*=)")
SHOW_FILES = ("profile.folded", "flamegraph.svg", "top.txt", "depth.txt")
DIFF_FILES = ("a.folded", "b.folded", "diff.svg", "diff.txt")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="where a benchmark's time goes in the kernel: flame graph, top functions, depth view, diff",
        description="Profile one benchmark instance's timed region (perf_event_open sampling, or the ftrace "
        "function tracer), store the profile with the run, and write its folded stacks, an interactive flame "
        "graph (one self-contained SVG), the top functions by self and total time, and the time per call "
        "depth. --diff compares two profiles. See docs/methods/hotspots.md.",
    )
    p.add_argument("bench", nargs="?", metavar="BENCH", help="the benchmark to profile (e.g. task.fork)")
    p.add_argument("--param", action="append", default=[], type=param_assignment, metavar="KEY=VALUE",
                   help="a parameter of BENCH (one value each: a profile is of one instance)")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"),
                   help="compare two profiles, ranked by the change of each function's time per operation (its "
                   "share x the result's median): with BENCH, two parameter sets (KEY=V[,KEY=V...]) profiled now; "
                   "without, two stored runs (RUN[:BENCH], RUN an id, label, latest or latest~N), probe output "
                   "files or folded files (these have no median: ranked by the change of share)")
    p.add_argument("--show", metavar="REF", help="render a stored run's profile (RUN[:BENCH], RUN an id, label, latest or "
                   "latest~N) or a saved file again")
    p.add_argument("--profile", choices=("sample", "function"), default="sample",
                   help="sample: perf_event_open sampling (default); function: the ftrace function tracer "
                   "(root; exact call counts)")
    p.add_argument("--event", choices=("auto", "cpu-clock", "cycles"), default="auto",
                   help="what to sample on: cycles where the CPU's PMU has them, else cpu-clock (default auto)")
    p.add_argument("--frequency", type=positive_int, default=DEFAULT_FREQUENCY, metavar="HZ",
                   help=f"samples per second (default {DEFAULT_FREQUENCY})")
    p.add_argument("--min-time", type=positive_float, default=DEFAULT_MIN_TIME, metavar="S",
                   help=f"sample the benchmark at least this long (default {DEFAULT_MIN_TIME:g} s)")
    p.add_argument("--max-time", type=positive_float, metavar="S", help="at most this long (default 2 x --min-time)")
    p.add_argument("--cpu", type=non_negative_int, metavar="N", help="pin the probe to CPU N")
    p.add_argument("-o", "--output", metavar="DIR", help="write the files here (default ./hotspots-<run id>)")
    p.add_argument("--top", type=positive_int, default=20, metavar="N", help="rows of the tables (default 20)")
    p.add_argument("--label", help="a label for the stored run(s)")
    add_store_option(p)
    add_json_option(p, "the tables")
    return p


# ---- running ----------------------------------------------------------------


def split_assignments(text: str) -> list[str]:
    """`touched_mib=1024,concurrency=2` -> the two assignments (a comma
    followed by `name=` separates them; any other comma is in a value)."""
    parts = _ASSIGN_SPLIT.split(text)
    for part in parts:
        try:
            param_assignment(part)
        except argparse.ArgumentTypeError:
            raise UsageError(f"--diff: {text!r} is not KEY=VALUE[,KEY=VALUE...] (for example touched_mib=1024)")
    return parts


def probe_argv(probe: Path, args: argparse.Namespace, params: Sequence[str]) -> list[str]:
    argv = [str(probe), "hotspots", "--die-with-parent", args.bench]
    for assignment in params:
        argv += ["--param", assignment]
    max_time = args.max_time if args.max_time is not None else 2 * args.min_time
    if max_time < args.min_time:
        raise UsageError(f"--max-time ({max_time:g} s) is shorter than --min-time ({args.min_time:g} s)")
    argv += ["--min-time", f"{args.min_time:g}", "--max-time", f"{max_time:g}",
             "--profile", args.profile, "--event", args.event, "--frequency", str(args.frequency)]
    if args.cpu is not None:
        argv += ["--cpu", str(args.cpu)]
    return argv


@dataclass
class Profiled:
    run_id: int
    status: str
    profiles: list[Profile]
    exit_code: int
    results: list[medians.ResultMedian | None] = field(default_factory=list)  # each profile's result's median


def profile_now(store: Any, probe: Path, args: argparse.Namespace, params: Sequence[str]) -> Profiled:
    """One probe run of `hotspots`, stored; its profiles."""
    argv = probe_argv(probe, args, params)
    label = args.label or f"hotspots {args.bench} {' '.join(params)}".strip()
    context = RunContext(label=label, argv=argv, params={"hotspots": args.bench, "params": list(params),
                                                         "profile": args.profile, "event": args.event,
                                                         "frequency": args.frequency}, source="run")
    recorder = RunRecorder(store, context)
    progress = make_progress(sys.stderr)
    try:
        outcome = drive(argv, recorder, progress)
    except BaseException as e:
        progress.close()
        try_finish(recorder, f"osmeter failed: {type(e).__name__}")
        raise
    progress.close()
    if recorder.run_id is None:
        raise UsageError("interrupted before the run started; nothing stored")
    status = recorder.finish(problem_text(outcome, recorder)) or "incomplete"
    for note in recorder.notes:
        textsafe.say("note", note)
    for r in recorder.results:
        if r.status != "ok":
            textsafe.say(r.status, f"{r.bench} {params_text(r.params)}: {r.reason}")
    code = verdict(recorder, outcome, status)
    run_id = recorder.run_id
    profiles, results = [], []
    for p in medians.WithResults(store).profiles(run_id):
        if p.status != "ok":
            raise UsageError(f"{p.bench}: no profile: {p.meta.get('reason') or p.status} (run {run_id} is stored)")
        profiles.append(from_stored(p))
        results.append(medians.take(profiles[-1]))
    if not profiles:
        raise NotFoundError(f"run {run_id} holds no profile: the benchmark did not finish (see above)")
    return Profiled(run_id, status, profiles, code, results)


# ---- writing ------------------------------------------------------------------


def _num(x: Any) -> float | None:
    """x when it is a finite number (a probe file is anyone's text: meta may hold anything)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return None
    return float(x)


def describe(p: Profile) -> list[str]:
    """What a reader must know to trust the figures: event, samples, losses, symbols."""
    m = p.meta
    lines = [f"{p.label}: {m.get('mode', 'sample')} profile, event {m.get('event', '?')}, "
             f"{p.total} {p.weight_unit} in {len(p.stacks)} distinct stacks"]
    window = m.get("window") if isinstance(m.get("window"), dict) else {}
    if _num(window.get("enabled_s")):
        lines.append(f"  timed region sampled for {_num(window['enabled_s']):.2f} s over {window.get('batches')} "
                     f"batches ({m.get('ops')} operations)")
    if m.get("lost"):
        lines.append(f"  {m['lost']} samples lost (buffer overrun): shares may be skewed")
    if m.get("kernel") is False:
        lines.append(f"  no kernel stacks: {m.get('kernel_reason')}")
    sym = m.get("symbols") if isinstance(m.get("symbols"), dict) else {}
    if sym.get("kernel_reason"):
        lines.append(f"  kernel symbols: {sym['kernel_reason']}")
    notes = m.get("notes")
    for note in notes if isinstance(notes, list) else []:
        lines.append(f"  note: {note}")
    if p.weight_unit == "samples" and p.total:
        se = 50 / max(p.total, 1) ** 0.5
        lines.append(f"  a share's sampling error is at most +-{se:.1f} percentage points (1 s.e.)")
    return [textsafe.line(line) for line in lines]  # the files get them too: nothing that drives a terminal


def write_profile(directory: Path, p: Profile, top: int, prefix: str = "") -> tuple[str, list[Path]]:
    rows = folded.function_table(p.stacks, p.calls)
    view = folded.depth_view(p.stacks)
    top_text = hs.render_top(rows, top, p.weight_unit)
    depth_text = hs.render_depth(view, 5)
    texts = (folded.format_folded(p.stacks),
             flamegraph.flamegraph_svg(p.stacks, p.label, p.weight_unit, subtitle="; ".join(describe(p)[:2])),
             "\n".join(describe(p)) + "\n\n" + top_text, depth_text)
    files = {f"{prefix}{name}": text for name, text in zip(SHOW_FILES, texts)}
    written = [outfile.write(directory / name, text) for name, text in files.items()]
    return "\n".join(describe(p)) + "\n\n" + top_text + "\n" + depth_text, written


def as_json(p: Profile, top: int) -> dict[str, Any]:
    rows = folded.function_table(p.stacks, p.calls)[:top]
    return {"label": p.label, "bench": p.bench, "params": p.params, "weight_unit": p.weight_unit,
            "total": p.total, "meta": p.meta, "top": [dataclasses.asdict(r) for r in rows]}


def default_dir(args: argparse.Namespace, tag: str) -> Path:
    return Path(args.output) if args.output else Path(f"hotspots-{tag}")


def show(p: Profile, args: argparse.Namespace, tag: str) -> int:
    directory = outfile.prepare_directory(default_dir(args, tag))
    text, written = write_profile(directory, p, args.top)
    return _say(args, text, lambda: as_json(p, args.top), written)


def _say(args: argparse.Namespace, text: str, doc: Any, written: Sequence[Path]) -> int:
    """The tables on stdout (--json: doc() as JSON), then the files written
    (on stderr with --json, so stdout stays one JSON document)."""
    if args.json:
        json.dump(doc(), sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(textsafe.terminal(text))
    for path in written:
        print(textsafe.line(str(path)), file=sys.stderr if args.json else sys.stdout)
    return 0


def load_side(ref: str, location: Any) -> tuple[Profile, medians.ResultMedian | None]:
    """One side of `--diff A B` and the median of its result (hotspots.medians): a stored run's from the
    store, a probe output file's from the file."""
    opened = []

    def opener() -> Any:
        opened.append(True)
        return medians.WithResults(open_store(location, create=False))

    p = load(ref, opener)
    found = medians.take(p)  # from the store only: a file's record is not trusted with it
    if not opened:
        path = file_of(ref)
        found = medians.in_file(path, p, Path(path).name) if path is not None else None
    return p, found


def _timing(p: Profile, found: medians.ResultMedian | None) -> dict[str, Any]:
    ns, source = timed.ns_per_op(p, found.median if found else None, found.unit if found else None)
    if ns is None:
        return {"ns": None, "source": None, "reason": source}
    return {"ns": ns, "source": source, "result": found.where if found and source == timed.MEDIAN else None}


def _timed_texts(a: Profile, b: Profile, ta: dict[str, Any], tb: dict[str, Any],
                 top: int) -> tuple[str, str, list[dict[str, Any]]]:
    """The diff ranked by ns per operation: its table, its flame graph and its JSON rows."""
    rows = timed.timed_diff(a.stacks, b.stacks, ta["ns"], tb["ns"], weight_unit=a.weight_unit)
    table = hs.render_timed_diff(rows, top, hs.SideTime(a.label, ta["ns"], ta["source"], ta["result"]),
                                 hs.SideTime(b.label, tb["ns"], tb["source"], tb["result"]))
    svg = flamegraph.diff_flamegraph_svg(a.stacks, b.stacks, f"{a.label} -> {b.label}", weight_unit=a.weight_unit,
                                         ns_a=ta["ns"], ns_b=tb["ns"])
    doc = [{**dataclasses.asdict(r), "self_delta_ns": r.self_delta_ns, "total_delta_ns": r.total_delta_ns}
           for r in rows[:top]]
    return table, svg, doc


def _share_texts(a: Profile, b: Profile, ta: dict[str, Any], tb: dict[str, Any],
                 top: int) -> tuple[str, str, list[dict[str, Any]]]:
    """The diff ranked by share, when a side's ns per operation is unknown (saying so in one line)."""
    rows = folded.diff_table(a.stacks, b.stacks, a.calls, b.calls, weight_unit=a.weight_unit)
    side, t = ("A", ta) if ta["ns"] is None else ("B", tb)
    note = textsafe.line(f"ranked by the change of share: {side}'s ns per operation is unknown ({t['reason']})")
    table = note + "\n" + hs.render_diff(rows, top, a.weight_unit, a.label, b.label)
    svg = flamegraph.diff_flamegraph_svg(a.stacks, b.stacks, f"{a.label} -> {b.label}", weight_unit=a.weight_unit)
    doc = [{**dataclasses.asdict(r), "self_change": r.self_change, "total_change": r.total_change}
           for r in rows[:top]]
    return table, svg, doc


def diff(a: Profile, b: Profile, args: argparse.Namespace, tag: str, result_a: medians.ResultMedian | None = None,
         result_b: medians.ResultMedian | None = None) -> int:
    """The two profiles' diff: in ns per operation (each side's share x its ns per op: the result's median,
    else the profile's window), or in shares when a side's is unknown."""
    if a.weight_unit != b.weight_unit:
        raise UsageError(f"cannot compare a profile in {a.weight_unit} with one in {b.weight_unit} "
                         "(a sampled and a traced profile): profile both the same way")
    directory = outfile.prepare_directory(default_dir(args, tag))
    ta, tb = _timing(a, result_a), _timing(b, result_b)
    by_ns = ta["ns"] is not None and tb["ns"] is not None
    table, svg, rows = (_timed_texts if by_ns else _share_texts)(a, b, ta, tb, args.top)
    text = "\n".join(describe(a) + describe(b)) + "\n\n" + table
    texts = (folded.format_folded(a.stacks), folded.format_folded(b.stacks), svg, text)
    files = dict(zip(DIFF_FILES, texts))
    written = [outfile.write(directory / name, t) for name, t in files.items()]
    return _say(args, text, lambda: {
        "a": as_json(a, args.top), "b": as_json(b, args.top), "ranking": "ns_per_op" if by_ns else "share",
        "ns_per_op": {"a": ta, "b": tb}, "diff": rows}, written)


# ---- the command ----------------------------------------------------------------


def _check(args: argparse.Namespace) -> None:
    modes = sum(x is not None for x in (args.show, args.diff)) + (args.bench is not None and args.diff is None)
    if args.show is not None and (args.bench or args.diff):
        raise UsageError("--show renders a saved profile: give it alone (no BENCH, no --diff)")
    if modes == 0:
        raise UsageError("give a benchmark to profile (osmeter hotspots task.fork), --diff A B, or --show REF")
    if args.bench is None and args.param:
        raise UsageError("--param goes with BENCH (profiled now), not with stored profiles")
    if args.diff and args.bench is None and all(_split_stdin(ref) for ref in args.diff):
        raise UsageError("--diff: only one side can be standard input ('-')")
    if args.bench is not None and args.max_time is not None and args.max_time < args.min_time:
        raise UsageError(f"--max-time ({args.max_time:g} s) is shorter than --min-time ({args.min_time:g} s)")


def _split_stdin(ref: str) -> bool:
    return ref == STDIN or ref.startswith(STDIN + ":")


def _refuse_output(given: Path, why: str) -> UsageError:
    return UsageError(f"cannot write files into {given}: {why} (-o DIR names a directory)")


def check_output(given: Path | None, names: Sequence[str]) -> None:
    """Fail now, before anything is measured, if `names` could not be written
    into the directory `given` (made later, by outfile.prepare_directory);
    None: a directory named after the run, not known yet, in the current one."""
    if given is not None:
        try:
            st = os.stat(given)  # links followed
        except FileNotFoundError:
            if os.path.islink(given):
                outfile.prepare_directory(given)  # refuses the dangling link, saying so
            st = None
        except OSError as e:
            raise _refuse_output(given, e.strerror or str(e)) from None
        if st is not None:
            if not stat.S_ISDIR(st.st_mode):
                raise _refuse_output(given, "it is not a directory")
            outfile.check_entries(given, names)
            return
    ancestor = Path(os.path.abspath(given if given is not None else "x")).parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    shown = given if given is not None else Path(".")
    if not ancestor.is_dir():
        raise _refuse_output(shown, f"{ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise _refuse_output(shown, f"cannot create a directory in {ancestor} (Permission denied)")


def _values(param: Param, raw: str, where: str) -> set[Any]:
    """The distinct values the probe makes of one `--param KEY=RAW` (its cli_param.c: a comma list,
    A..B for an integer; a string whole); ints and choices checked against their range."""
    if param.type == "string":
        return {raw}
    out: set[Any] = set()
    for elem in raw.split(","):
        lo, dots, hi = elem.partition("..")
        if dots and param.type == "int" and re.fullmatch(r"[-+]?[0-9]{1,18}", lo) and re.fullmatch(
                r"[-+]?[0-9]{1,18}", hi):
            out.update(range(int(lo), min(int(hi), int(lo) + 1) + 1))  # enough to tell one value from more
        elif param.type == "int" and re.fullmatch(r"[-+]?[0-9]{1,18}", elem):
            value = int(elem)
            low, high = _num_or(param.min, -math.inf), _num_or(param.max, math.inf)
            if not low <= value <= high:
                raise UsageError(f"{where}: {param.name}={elem}: {value} is out of range; allowed: "
                                 f"{param.min}..{param.max}")
            out.add(value)
        elif param.type == "enum" and param.choices and elem not in param.choices:
            raise UsageError(f"{where}: {param.name}={elem}: unknown value; allowed: {', '.join(param.choices)}")
        else:
            out.add(elem)  # the probe judges what this does not know (a size, a malformed number)
    return out


def _num_or(x: Any, default: float) -> float:
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else default


def check_instances(bench: Benchmark, sets: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Each (where, assignments) names one instance of `bench`: known parameters, one value each."""
    params = {p.name: p for p in bench.params}
    for where, assignments in sets:
        values: dict[str, set[Any]] = {}
        for assignment in assignments:
            key, _, raw = assignment.partition("=")
            if key not in params:
                known = ", ".join(params) or "none"
                raise UsageError(f"{where}: {bench.name} has no parameter {key!r}; its parameters: {known}")
            values.setdefault(key, set()).update(_values(params[key], raw, where))
        many = [key for key, v in values.items() if len(v) > 1]
        if many:
            given = " ".join(a for a in assignments if a.partition("=")[0] in many)
            raise UsageError(f"{where}: {given} gives {many[0]} more than one value, and hotspots profiles one "
                             "instance: give one value per parameter (--diff A B compares two)")


def _check_bench(probe: Path, bench: str, sets: Sequence[tuple[str, Sequence[str]]]) -> None:
    catalog = parse_catalog(run_document(probe, ["list", "--json", "--all"]))
    found = next((b for b in catalog.benchmarks if b.name == bench), None)
    if found is not None:  # else the probe refuses the name itself, before anything runs
        check_instances(found, sets)


def run(args: argparse.Namespace) -> int:
    _check(args)
    location = resolve_location(args.store)
    output = Path(args.output) if args.output else None
    if args.show is not None:
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", args.show) if not _split_stdin(args.show) else "stdin"
        check_output(default_dir(args, tag), SHOW_FILES)
        p = load(args.show, lambda: open_store(location, create=False))
        return show(p, args, tag)
    if args.diff is not None and args.bench is None:
        check_output(default_dir(args, "diff"), DIFF_FILES)
        a, result_a = load_side(args.diff[0], location)
        b, result_b = load_side(args.diff[1], location)
        return diff(a, b, args, "diff", result_a, result_b)
    sets: list[list[str]] = ([list(args.param) + split_assignments(s) for s in args.diff] if args.diff
                             else [list(args.param)])
    check_output(output, DIFF_FILES if args.diff else SHOW_FILES)
    probe = locate_probe()
    where = ["--diff A", "--diff B"] if args.diff else ["--param"]
    _check_bench(probe, args.bench, list(zip(where, sets)))
    store = open_store(location, create=True)
    try:
        done = [profile_now(store, probe, args, params) for params in sets]
    finally:
        store.close()
    code = max(d.exit_code for d in done)
    if args.diff:
        tag = f"{done[0].run_id}-{done[1].run_id}"
        (a, result_a), (b, result_b) = _one(done[0]), _one(done[1])
        result = diff(a, b, args, tag, result_a, result_b)
    elif len(done[0].profiles) == 1:
        result = show(done[0].profiles[0], args, str(done[0].run_id))
    else:
        raise UsageError(f"run {done[0].run_id} holds {len(done[0].profiles)} profiles (a --param list?): "
                         f"render each with --show {done[0].run_id}:N")
    return max(code, result)


def _one(d: Profiled) -> tuple[Profile, medians.ResultMedian | None]:
    if len(d.profiles) != 1:
        raise UsageError(f"run {d.run_id} holds {len(d.profiles)} profiles: each side of --diff must be one "
                         "instance (one value per parameter)")
    return d.profiles[0], d.results[0]
