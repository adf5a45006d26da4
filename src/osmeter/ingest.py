"""Ingesting probe files: reading a probe's JSON Lines file within bounds,
checking it, and storing one run's files (its repetitions) in one transaction.

`osmeter import` and `osmeter fleet run` both store probe output this way.

Reading is bounded (docs/schema.md, "Reader limits"): a file larger than
max_bytes is refused; so is a pipe or device that sends more, or nothing
for READ_IDLE_S, or is still sending after READ_TOTAL_S. Lines end at a newline
only: U+2028, U+2029 and U+0085 are characters inside a string, not line
ends. The SHA-256 of the bytes of each file is stored with the run, and a
file imported before, alone or among others, is refused (naming the run)
unless the caller allows it; the same file given twice in one import is
always refused (its samples would count twice, as two repetitions).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .errors import ImportFileError, RecordError
from .inputs import read_bounded
from .recorder import RunContext, RunRecorder
from .records import MAX_LINE_BYTES, End, Meta, Record, Unknown, parse_line
from .store.base import Store

MIB = 1024 * 1024
DEFAULT_MAX_SIZE_MIB = 256  # --max-size: a full suite's file is tens of MiB
READ_IDLE_S = 10.0  # a pipe or device that sends nothing for this long is given up on
READ_TOTAL_S = 120.0  # ... and one still sending after this long




@dataclass(frozen=True)
class ProbeFile:
    path: Path
    records: tuple[tuple[int, Record], ...]  # (line number, record)
    cut_line: int | None  # the number of an incomplete last line, dropped
    sha256: str = ""  # of the file's bytes

    @property
    def complete(self) -> bool:
        return any(isinstance(r, End) for _, r in self.records)  # only unknown records may follow it


def _foreign(path: Path, why: str) -> ImportFileError:
    return ImportFileError(f"{path} is not osmeter-probe run output: {why}")


def read_capped(path: Path, max_bytes: int) -> bytes:
    """The bytes of `path`, refusing more than max_bytes and, for a pipe or
    device, one that stalls or never ends. Raises ImportFileError."""
    return read_bounded(path, max_bytes, what="probe file", error=ImportFileError, idle_s=READ_IDLE_S,
                        total_s=READ_TOTAL_S,
                        too_large_hint="no probe output is that large; give a larger --max-size if it really is")


def read_probe_file(path: Path, max_bytes: int = DEFAULT_MAX_SIZE_MIB * MIB) -> ProbeFile:
    """Parse and check every line; raises ImportFileError naming the first problem."""
    data = read_capped(path, max_bytes)
    lines = data.split(b"\n")  # "\n" only: never U+2028/U+2029/U+0085 (str.splitlines would)
    last_cut = lines[-1] != b""  # no newline at the end: the last line may be cut off
    if not last_cut:
        lines.pop()
    if not any(line.strip() for line in lines):
        raise _foreign(path, "it is empty")
    records: list[tuple[int, Record]] = []
    cut_line = end_line = None
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = _parse_raw(raw)
        except RecordError as e:
            if number == len(lines) and last_cut and records:
                cut_line = number  # the writer was stopped in the middle of this line
                break
            if not records:
                raise _foreign(path, f"line {number}: {e.message}") from None
            raise ImportFileError(f"{path}, line {number}: {e.message}") from None
        if not records and not isinstance(record, Meta):
            raise _foreign(path, f"line {number} is a '{_kind(record)}' record, not 'meta'")
        if end_line is not None and not isinstance(record, Unknown):  # a newer probe's records may follow (schema.md)
            raise ImportFileError(f"{path}, line {number}: a '{_kind(record)}' record after the 'end' record of "
                                  f"line {end_line}; a probe writes nothing after 'end'. Several outputs joined in one "
                                  "file? Import each file as it was written (several: one run's repetitions)")
        records.append((number, record))
        if isinstance(record, End):
            end_line = number
    return ProbeFile(path, tuple(records), cut_line, hashlib.sha256(data).hexdigest())


def _kind(record: Record) -> str:
    return record.kind if isinstance(record, Unknown) else type(record).__name__.lower()


def _parse_raw(raw: bytes) -> Record:
    if len(raw) > MAX_LINE_BYTES:
        raise RecordError(f"the line is longer than {MAX_LINE_BYTES // MIB} MiB, the limit for one record")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecordError(f"it is not UTF-8 text (byte {e.start + 1} of the line)") from None
    return parse_line(text)


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


def content_hash(files: list[ProbeFile]) -> str:
    """What identifies an import: the SHA-256 of the file, or for several
    files (repetitions) the SHA-256 of their digests, in order."""
    if len(files) == 1:
        return files[0].sha256
    return hashlib.sha256("\n".join(f.sha256 for f in files).encode()).hexdigest()


def refuse_same_file_twice(files: list[ProbeFile]) -> None:
    """One probe run given twice would be counted as two repetitions: its
    samples twice, its spread zero. --again does not allow it."""
    first: dict[str, Path] = {}
    for f in files:
        if f.sha256 in first:
            raise ImportFileError(f"{first[f.sha256]} and {f.path} have the same bytes (SHA-256): one probe run "
                                  "given twice would count its samples twice, as two repetitions; "
                                  "nothing was stored. Give each repetition's file once")
        first[f.sha256] = f.path


def refuse_imported_before(store: Store, files: list[ProbeFile], digest: str) -> None:
    """The same import again, or a file of it imported before (alone or
    among others): refused, naming the run, so no samples are stored twice."""
    earlier = store.runs_with_content(digest) if len(files) > 1 else []
    if earlier:
        raise ImportFileError(f"these files were imported before, as run {', '.join(map(str, earlier))} (same "
                              "SHA-256); nothing was stored. Give --again to store them as another run")
    for f in files:
        earlier = store.runs_with_content(f.sha256)
        if earlier:
            raise ImportFileError(f"{f.path} was imported before, in run {', '.join(map(str, earlier))} (same "
                                  "SHA-256): its samples would be stored twice; nothing was stored. "
                                  "Give --again to store them again, as another run")


def refuse_cut_short(files: list[ProbeFile], allow_incomplete: bool) -> None:
    """Only the last of a run's files may be cut short, and only when allowed."""
    for f in files[:-1]:
        if not f.complete:
            raise ImportFileError(f"{f.path} was cut short (no 'end' record): only the last of several files "
                                  "(the repetitions of one run) may be; nothing was stored")
    if not files[-1].complete and not allow_incomplete:
        raise _refuse_incomplete(files[-1])


@dataclass(frozen=True)
class Stored:
    recorder: RunRecorder
    status: str  # complete / incomplete
    counts: dict[str, int]  # ok / skip / error


def store_files(store: Store, context: RunContext, files: list[ProbeFile], *, again: bool = True) -> Stored:
    """`files` (a run's repetitions) stored as one run, in one transaction,
    with their digests (what `import` recognises when they come again).

    again=False refuses files imported before (refuse_imported_before),
    checked inside the transaction under a lock on their digests, so of
    two imports of one file racing each other the second is refused as if
    it had come later."""
    recorder = RunRecorder(store, context, repetitions=len(files))
    with store.transaction():
        if not again:
            digest = content_hash(files)
            store.lock_content([digest, *(f.sha256 for f in files)])
            refuse_imported_before(store, files, digest)
        for f in files[:-1]:
            store_probe_file(f, recorder, finish=False)
        status = store_probe_file(files[-1], recorder)
        assert recorder.run_id is not None and status is not None
        store.set_content_hash(recorder.run_id, content_hash(files), [f.sha256 for f in files])
    counts = {s: sum(1 for r in recorder.results if r.status == s) for s in ("ok", "skip", "error")}
    return Stored(recorder, status, counts)
