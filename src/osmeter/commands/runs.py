"""osmeter runs: the stored runs, oldest first: the newest DEFAULT_LAST of
them (--last N, --all), so that a store of thousands of runs answers at once.

Stored text (labels, host names, kernels) is shown without escape sequences,
controls or bidi overrides (osmeter.textsafe); --json escapes them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import textsafe
from ..errors import EXIT_STORE, NotFoundError, StoreError
from ..model import RunInfo
from ..fmt import render_table
from ..store import describe, open_store, resolve_location
from ..sysinfo import KEY_KERNEL, host_of, machine_text
from .options import add_json_option, add_store_option, positive_int_up_to

NAME = "runs"
RUNS_SCHEMA = 1
HEADERS = ("id", "label", "start", "status", "suite", "ok", "skip", "error", "host", "kernel")
_RIGHT = (True, False, False, False, False, True, True, True, False, False)
DEFAULT_LAST = 50
MAX_LAST = 1_000_000_000


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(NAME, help="list the stored runs",
                       description=f"List the runs in the store, oldest first: the newest {DEFAULT_LAST} unless "
                                   "--last or --all says otherwise.")
    add_store_option(p)
    add_json_option(p, "the runs")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--last", type=positive_int_up_to(MAX_LAST), default=DEFAULT_LAST, metavar="N",
                       help=f"list the newest N runs (default {DEFAULT_LAST})")
    which.add_argument("--all", action="store_true", help="list every run")
    return p


def run_summary(run: RunInfo) -> dict[str, Any]:
    return {
        "id": run.id,
        "label": run.label,
        "start_time": run.start_time,
        "end_time": run.end_time,
        "status": run.status,
        "status_reason": run.status_reason,
        "source": run.source,
        "suite": run.suite,
        "counts": {"ok": run.counts.ok, "skip": run.counts.skip, "error": run.counts.error},
        "host": host_of(run),
        "inventory_host": run.host,
        "fleet": run.fleet,
        "kernel": machine_text(run.machine, KEY_KERNEL),
        "probe_version": run.probe_version,
    }


def render_runs(runs: list[RunInfo]) -> str:
    rows = [
        [
            str(r.id),
            r.label or "-",
            r.start_time,
            r.status,
            r.suite or "-",
            str(r.counts.ok),
            str(r.counts.skip),
            str(r.counts.error),
            host_of(r) or "-",
            machine_text(r.machine, KEY_KERNEL) or "-",
        ]
        for r in runs
    ]
    # stored text may hold anything: no escape sequence, control or bidi override reaches the terminal,
    # and a long label (host, kernel) is cut (textsafe.clip): --json has it whole
    return render_table(HEADERS, [[textsafe.clip(textsafe.line(c)) for c in row] for row in rows], _RIGHT) + "\n"


def run(args: argparse.Namespace) -> int:
    location = resolve_location(args.store)
    try:
        store = open_store(location, create=False)
    except NotFoundError:
        runs: list[RunInfo] = []
        damaged: list[StoreError] = []
        total = 0
    else:
        try:
            total = store.count_runs()
            runs, damaged = store.readable_runs(None if args.all else args.last)
        finally:
            store.close()
    left_out = max(0, total - len(runs) - len(damaged))
    if args.json:
        doc = {"osmeter_runs": RUNS_SCHEMA, "total": total, "runs": [run_summary(r) for r in runs]}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif not runs and not damaged:
        sys.stdout.write(f"no runs in {describe(location)} yet: `osmeter run` makes one\n")
    elif runs:
        sys.stdout.write(render_runs(runs))
        if left_out:
            sys.stdout.write(f"(the newest {len(runs) + len(damaged):,} of {total:,} runs; "
                             f"--all lists every run, --last N the newest N)\n")
    for e in damaged:  # after the list, so the runs that can be read are seen; the exit code says it all
        textsafe.say("error", e.message)
    return EXIT_STORE if damaged else 0
