"""osmeter noise: the machine's A/A test.

The same benchmarks in N independent runs (each an `osmeter run`, stored
and labelled LABEL-1..N, tagged in its meta as a noise run), then per
instance the spread of the runs' medians, the false alarms of `compare`
between them and the smallest change compare resolves here; a verdict per
family and the worst instances (osmeter.noise; docs/compare.md, "What this
machine can resolve: osmeter noise"). The result is stored in the last
run's meta, where `compare` finds it for runs of the same machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any, Mapping

from .. import compare as cmp
from .. import noise, outfile, textsafe
from ..errors import EXIT_OK, Interrupted, OsmeterError, UsageError, interruption_signal
from ..model import RunInfo
from ..probe import locate_probe
from ..report.noise_text import render_text
from ..report.params import catalog_defaults, telling_params
from ..runner import DEFAULT_SUITE, SUITES, RunOptions, record_run, verdict
from ..store import open_store, resolve_location
from ..store.base import Store
from ..argtypes import percentage
from .options import add_store_option, non_negative_int, positive_float, positive_int
from .run import param_assignment

NAME = "noise"


def run_count(text: str) -> int:
    """argparse type for --runs: an integer from noise.MIN_RUNS to noise.MAX_RUNS."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not noise.MIN_RUNS <= value <= noise.MAX_RUNS:
        raise argparse.ArgumentTypeError(f"{text} is out of range: an A/A test needs {noise.MIN_RUNS} to "
                                         f"{noise.MAX_RUNS} runs")
    return value


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="the machine's A/A test: the same benchmarks in N runs, and the smallest change compare resolves",
        description="Run the same benchmarks (names, or a suite; the standard suite when nothing is given) in N "
        "independent runs, each stored and labelled LABEL-1..N, then report per instance the spread of the "
        "runs' medians, the false alarms of compare between the identical runs and the smallest change compare "
        "resolves on this machine, with a verdict per family. The result is stored with the last run; compare "
        "then marks a significant change below it 'below this machine's noise' (docs/compare.md). It takes "
        "N times as long as `osmeter run` (the standard suite: about 3 minutes a run on a 2-CPU VM; "
        "--suite quick for a first look).",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run, e.g. syscall.null (see `osmeter list`)")
    p.add_argument("--suite", choices=SUITES, help=f"run a suite (default when no NAME is given: {DEFAULT_SUITE})")
    p.add_argument("--runs", type=run_count, default=noise.DEFAULT_RUNS, metavar="N",
                   help=f"independent runs, {noise.MIN_RUNS}..{noise.MAX_RUNS} (default {noise.DEFAULT_RUNS})")
    p.add_argument("--param", action="append", default=[], type=param_assignment, metavar="KEY=VALUE",
                   help="set a parameter, as for `osmeter run`")
    p.add_argument("--cpu", type=non_negative_int, metavar="N", help="pin to CPU N (default: the least busy)")
    p.add_argument("--label", help="the runs' labels are LABEL-1..LABEL-N (default noise-YYYYmmdd-HHMMSS)")
    p.add_argument("--min-time", type=positive_float, metavar="S", help="minimum time per benchmark, seconds")
    p.add_argument("--max-time", type=positive_float, metavar="S", help="maximum time per benchmark, seconds")
    p.add_argument("--sweep", action="store_true",
                   help="run each named benchmark over its suite sweep (e.g. cpu.call args=0..7)")
    p.add_argument("--repeat", type=positive_int, metavar="R",
                   help="repetitions per run, as for `osmeter run` (default: the suite's)")
    p.add_argument("--threshold", metavar="PCT", type=percentage, default=100 * cmp.DEFAULT_THRESHOLD,
                   help=f"compare's noise threshold for the comparisons of the runs (default "
                   f"{100 * cmp.DEFAULT_THRESHOLD:g}); compare recomputes what is resolved at its own")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON to FILE")
    add_store_option(p)
    return p


def options_from_args(args: argparse.Namespace) -> RunOptions:
    if args.names and args.suite:
        raise UsageError("give benchmark names or --suite, not both")
    return RunOptions(names=tuple(args.names), suite=None if args.names else (args.suite or DEFAULT_SUITE),
                      params=tuple(args.param), cpu=args.cpu, label=None, min_time=args.min_time,
                      max_time=args.max_time, min_samples=None, fifo=None, mlock=False, clock=None,
                      sweep=args.sweep, repeat=args.repeat)


def _kept(store: Store, ids: list[int]) -> str:
    if not ids:
        return "nothing was stored"
    runs = [store.run(str(i)) for i in ids]
    return "kept: " + ", ".join(f"run {r.id} {r.label!r} ({r.status})" for r in runs)


def _stored_as(store: Store, label: str, ids: list[int]) -> list[int]:
    """The run labelled `label` stored after `ids`, when there is one (an interrupted noise run)."""
    try:
        found = store.run(label)
    except OsmeterError:  # none, or the label is ambiguous
        return []
    return [found.id] if found.meta.get(noise.TAG_KEY) and found.id > max(ids, default=0) else []


def measure(opts: RunOptions, store: Store, count: int, series: str) -> tuple[list[int], dict[int, float], int]:
    """The N runs, one after the other: their ids, wall times and the worst exit code.
    Interrupted (Ctrl-C, SIGTERM): the runs stored so far are kept and named."""
    probe = locate_probe()
    ids: list[int] = []
    walls: dict[int, float] = {}
    code = EXIT_OK
    for i in range(1, count + 1):
        label = f"{series}-{i}"
        print(f"noise run {i}/{count}: {label}", file=sys.stderr, flush=True)
        started = time.monotonic()
        tag = {noise.TAG_KEY: {"series": series, "index": i, "runs": count}}
        try:
            recorder, outcome, status = record_run(replace(opts, label=label), store, probe, meta=tag)
            if recorder.run_id is not None:
                ids.append(recorder.run_id)
            code = max(code, verdict(recorder, outcome, status))
        except Interrupted as e:
            raise Interrupted(e.signum, f"noise run {i}/{count} interrupted: {_kept(store, ids)}; "
                              "no noise result was stored") from None
        except KeyboardInterrupt as e:  # between repetitions: record_run stored the run as it was
            ids += _stored_as(store, label, ids)
            raise Interrupted(interruption_signal(e), f"noise run {i}/{count} interrupted: {_kept(store, ids)}; "
                              "no noise result was stored") from None
        except OsmeterError:
            if ids:
                textsafe.say("note", f"noise run {i}/{count} failed: {_kept(store, ids)}; no noise result was stored")
            raise
        walls[ids[-1]] = time.monotonic() - started
        print(f"noise run {i}/{count}: run {ids[-1]} {status}, {len(recorder.results)} "
              f"result(s), {walls[ids[-1]]:.1f} s", file=sys.stderr, flush=True)
    return ids, walls, code


def params_namer(store: Store, runs: list[RunInfo]) -> noise.ParamsOf:
    """The parameters worth naming each instance by (report.params), from the first run's results."""
    shown = telling_params(store.results(runs[0].id), catalog_defaults())

    def of(bench: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        return shown(SimpleNamespace(bench=bench, params=params))  # type: ignore[arg-type]

    return of


def run(args: argparse.Namespace) -> int:
    opts = options_from_args(args)
    if args.json is not None:
        outfile.check(args.json)
    threshold = args.threshold / 100
    series = args.label or datetime.now(timezone.utc).strftime("noise-%Y%m%d-%H%M%S")
    store = open_store(resolve_location(args.store), create=True)
    try:
        ids, walls, code = measure(opts, store, args.runs, series)
        runs = [store.run(str(i)) for i in ids]
        instances = noise.analyse(store, runs, threshold)
        doc = noise.document(instances, runs, threshold, walls, params_of=params_namer(store, runs))
        store.set_run_meta(ids[-1], noise.RESULT_KEY, doc)
    finally:
        store.close()
    sys.stdout.write(textsafe.terminal(render_text(doc)))
    if args.json is not None:
        outfile.write(args.json, json.dumps(doc, indent=2, allow_nan=False) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return code
