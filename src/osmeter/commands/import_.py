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
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ImportFileError, RecordError
from ..recorder import RunContext, RunRecorder
from ..records import End, Meta, Record, parse_line
from ..store import open_store, resolve_location
from .options import add_store_option

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
    add_store_option(p)
    return p


@dataclass(frozen=True)
class ProbeFile:
    path: Path
    records: tuple[tuple[int, Record], ...]  # (line number, record)
    cut_line: int | None  # the number of an incomplete last line, dropped

    @property
    def complete(self) -> bool:
        return bool(self.records) and isinstance(self.records[-1][1], End)


def _foreign(path: Path, why: str) -> ImportFileError:
    return ImportFileError(f"{path} is not osmeter-probe run output: {why}")


def read_probe_file(path: Path) -> ProbeFile:
    """Parse and check every line; raises ImportFileError naming the first problem."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ImportFileError(f"cannot read {path}: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _foreign(path, "it is not UTF-8 text") from None
    lines = text.splitlines(keepends=True)
    if not any(line.strip() for line in lines):
        raise _foreign(path, "it is empty")
    records: list[tuple[int, Record]] = []
    cut_line = None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = parse_line(line)
        except RecordError as e:
            if number == len(lines) and not line.endswith("\n") and records:
                cut_line = number  # the writer was stopped in the middle of this line
                break
            if not records:
                raise _foreign(path, f"line {number}: {e.message}") from None
            raise ImportFileError(f"{path}, line {number}: {e.message}") from None
        if not records and not isinstance(record, Meta):
            raise _foreign(path, f"line {number} is a '{type(record).__name__.lower()}' record, not 'meta'")
        records.append((number, record))
    return ProbeFile(path, tuple(records), cut_line)


def _refuse_incomplete(probe_file: ProbeFile) -> ImportFileError:
    why = "it has no 'end' record"
    if probe_file.cut_line is not None:
        why += f" and its last line, line {probe_file.cut_line}, is cut off"
    return ImportFileError(
        f"{probe_file.path} was cut short ({why}): the probe was killed or the disk filled. "
        "Use --allow-incomplete to store its finished benchmarks as an incomplete run"
    )


def store_probe_file(probe_file: ProbeFile, recorder: RunRecorder, *, finish: bool = True) -> str | None:
    """Feed every record; the caller holds the transaction. Returns the run's
    status (None when `finish` is False: more repetitions follow)."""
    for number, record in probe_file.records:
        try:
            recorder.feed(record)
        except RecordError as e:
            raise ImportFileError(f"{probe_file.path}, line {number}: {e.message}; nothing was stored") from None
    if not finish:
        return None
    problem = None if probe_file.complete else "imported from a file that was cut short"
    status = recorder.finish(problem)
    assert status is not None  # the first record is meta, so the run exists
    return status


def run(args: argparse.Namespace) -> int:
    paths = [Path(f) for f in args.files]
    files = [read_probe_file(path) for path in paths]
    for f in files[:-1]:
        if not f.complete:
            raise ImportFileError(f"{f.path} was cut short (no 'end' record): only the last of several files "
                                  "(the repetitions of one run) may be; nothing was stored")
    if not files[-1].complete and not args.allow_incomplete:
        raise _refuse_incomplete(files[-1])
    context = RunContext(
        label=args.label,
        argv=["import", *map(str, paths)],
        params={"file": str(paths[0].resolve()), "files": [str(p.resolve()) for p in paths],
                "allow_incomplete": args.allow_incomplete, "repeat": len(paths)},
        source="import",
    )
    store = open_store(resolve_location(args.store), create=True)
    try:
        recorder = RunRecorder(store, context, repetitions=len(files))
        with store.transaction():
            for f in files[:-1]:
                store_probe_file(f, recorder, finish=False)
            status = store_probe_file(files[-1], recorder)
        counts = {s: sum(1 for r in recorder.results if r.status == s) for s in ("ok", "skip", "error")}
    finally:
        store.close()
    if files[-1].cut_line is not None:
        print(f"osmeter: warning: ignored line {files[-1].cut_line} of {files[-1].path}: it is cut off",
              file=sys.stderr)
    for note in recorder.notes:
        print(f"osmeter: note: {note}", file=sys.stderr)
    names = ", ".join(map(str, paths))
    reps = f", {len(files)} repetitions" if len(files) > 1 else ""
    print(
        f"imported {names} as run {recorder.run_id} ({status}{reps}): "
        f"{counts['ok']} ok, {counts['skip']} skipped, {counts['error']} failed"
    )
    return 0
