"""osmeter import: store a probe's JSON Lines file as if `osmeter run` had made it.

The whole file is read and checked first: every line parses, the first
record is `meta` with a schema this osmeter reads, and the last is `end`.
Then it is stored in one transaction, so a file is stored whole or not at
all. A file cut short (no `end`, maybe half a last line) is refused unless
--allow-incomplete is given; then its finished benchmarks are stored and
the run is marked incomplete.

Several files are the repetitions of one run (`osmeter run --repeat`'s
method, done by hand on a board without Python: run the probe R times with
`--budget-fraction 1/R`, then import the R files together): their samples
are pooled per instance and their spread gives the confidence interval
(docs/statistics.md, "Repetitions"). Only the last may be cut short.

Reading is bounded (docs/schema.md, "Reader limits"): a file larger than
--max-size is refused; so is a pipe or device that sends more, or nothing
for READ_IDLE_S, or is still sending after READ_TOTAL_S. Lines end at a newline
only: U+2028, U+2029 and U+0085 are characters inside a string, not line
ends. The SHA-256 of the bytes of each file is stored with the run, and a
file imported before, alone or among others, is refused (naming the run)
unless --again is given; the same file given twice in one import is
always refused (its samples would count twice, as two repetitions).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import textsafe
from ..ingest import (DEFAULT_MAX_SIZE_MIB, MIB, read_probe_file, refuse_cut_short,
                      refuse_same_file_twice, store_files)
from ..recorder import RunContext
from ..store import open_store, resolve_location
from .options import add_store_option, positive_int

NAME = "import"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        NAME,
        help="store a .jsonl file written by osmeter-probe",
        description="Store the output of `osmeter-probe run -o FILE` (for example from a board without Python).",
    )
    p.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="a JSON Lines file written by osmeter-probe run; several: the repetitions of one run",
    )
    p.add_argument("--label", help="a name for the imported run")
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="store a file that was cut short (no 'end' record); the run is marked incomplete",
    )
    p.add_argument(
        "--again",
        action="store_true",
        help="store the file even if the same bytes were imported before (a second run)",
    )
    p.add_argument(
        "--max-size",
        type=positive_int,
        default=DEFAULT_MAX_SIZE_MIB,
        metavar="MIB",
        help=f"refuse a file larger than MIB mebibytes (default {DEFAULT_MAX_SIZE_MIB})",
    )
    add_store_option(p)
    return p


def run(args: argparse.Namespace) -> int:
    paths = [Path(f) for f in args.files]
    files = [read_probe_file(path, args.max_size * MIB) for path in paths]
    refuse_cut_short(files, args.allow_incomplete)
    context = RunContext(
        label=args.label,
        argv=["import", *map(str, paths)],
        params={"file": str(paths[0].resolve()), "files": [str(p.resolve()) for p in paths],
                "allow_incomplete": args.allow_incomplete, "repeat": len(paths)},
        source="import",
    )
    refuse_same_file_twice(files)
    store = open_store(resolve_location(args.store), create=True)
    try:
        stored = store_files(store, context, files, again=args.again)
        recorder, status, counts = stored.recorder, stored.status, stored.counts
    finally:
        store.close()
    if files[-1].cut_line is not None:
        textsafe.say("warning", f"ignored line {files[-1].cut_line} of {files[-1].path}: it is cut off")
    for warning in recorder.warnings:
        textsafe.say("warning", warning)
    for note in recorder.notes:
        textsafe.say("note", note)
    if recorder.profile_note():
        textsafe.say("note", f"profiles: {recorder.profile_note()}")
    names = textsafe.line(", ".join(map(str, paths)))
    reps = f", {len(files)} repetitions" if len(files) > 1 else ""
    print(
        f"imported {names} as run {recorder.run_id} ({status}{reps}): "
        f"{counts['ok']} ok, {counts['skip']} skipped, {counts['error']} failed"
    )
    return 0
