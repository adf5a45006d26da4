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
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any, Mapping, Sequence

from _lebench_parse import LEBENCH_SLEEP_S, LebenchFigure, LebenchLog, match_rows, parse_lebench_csv, parse_lebench_log
from _lebench_store import (check_units, is_exact, latest_lebench_runs, latest_run_id, osmeter_rows,
                            run_wall_seconds, stored_figures)
from _lebench_table import print_report, write_json

LEBENCH_NAME = "osmeter-fidelity"  # OS_Eval's second argument: the CSV is output.<NAME>.csv
LEBENCH_BASE_ITER = 10000  # OS_Eval.c's BASE_ITER: its rows take 1/4 to 100 x this many samples
SUN_PATH_MAX = 107  # sockaddr_un.sun_path, less its terminating NUL
LEBENCH_SOCKET = "/TEST_DIR/socket"  # appended by OS_Eval to $LEBENCH_DIR
BUILD_ADVICE = (
    "build LEBench's program from github LinuxPerfStudy/LEBench as its makefile does: "
    "`git clone https://github.com/LinuxPerfStudy/LEBench && cd LEBench/TEST_DIR && "
    "gcc -o OS_Eval -pthread -O0 OS_Eval.c`, then give it with --lebench PATH/TO/OS_Eval"
)


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
