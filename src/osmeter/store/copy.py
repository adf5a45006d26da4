"""`osmeter store copy`: runs moved between stores, whatever their backends.

A run is copied as stored, row by row (its run row, results with their
samples blobs, profiles, the digests of the files it was imported from),
under a new id in the destination, in one transaction per run: a run is
there whole or not at all, and an interrupted copy loses nothing (run it
again). Each run has a uid (migration 0007), the same in every store it
is copied to: a run already in the destination is not copied again, unless
that copy was made while the run was going (by an earlier osmeter):
then it is brought up to date. A run still `running` is not copied: its
copy would stay a part forever.
Before a run is copied it is read through the model, so a damaged run is
reported and left behind rather than spread to another store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..errors import StoreError
from .base import StoreConnectionLost
from .sql import SQLStore

_CHILDREN = ("results", "profiles", "imported_files")


@dataclass
class CopyOutcome:
    copied: list[tuple[int, int]] = field(default_factory=list)  # (source id, destination id)
    present: list[tuple[int, int]] = field(default_factory=list)  # already there: (source id, destination id)
    damaged: list[StoreError] = field(default_factory=list)
    updated: list[tuple[int, int]] = field(default_factory=list)  # an earlier copy of a then running run, completed
    running: list[int] = field(default_factory=list)  # source ids not copied: still running


def _check(src: SQLStore, run_id: int) -> None:
    """Every column of the run read through the model (StoreError when damaged)."""
    src.run(str(run_id))
    for r in src.results(run_id):
        src.samples(run_id, r.seq)
    src.profiles(run_id)


def copy_run(src: SQLStore, dst: SQLStore, run_id: int) -> tuple[int | None, str]:
    """The run copied, or found by its uid: (destination id, what was done:
    "copied", "present", "updated" or "running" (not copied: still going))."""
    (row,) = src.raw_rows("runs", run_id)
    if row["status"] == "running":
        return None, "running"
    present = dst.run_with_uid(row["uid"])
    if present is not None:
        (there,) = dst.raw_rows("runs", present)
        if there["status"] != "running":
            return present, "present"
    children = {t: [{k: v for k, v in r.items() if k != "id"} for r in src.raw_rows(t, run_id)] for t in _CHILDREN}
    fields = {k: v for k, v in row.items() if k != "id"}
    if present is not None:
        dst.overwrite_run(present, fields, children)  # copied while it was going (by an older osmeter)
        return present, "updated"
    with dst.transaction():
        new_id = dst.insert_run(fields)
        for table, rows in children.items():
            dst.insert_rows(table, [{**r, "run_id": new_id} for r in rows])
    return new_id, "copied"


def copy_runs(src: SQLStore, dst: SQLStore, run_ids: Sequence[int] | None,
              say: Callable[[str], None] = lambda _: None) -> CopyOutcome:
    """The runs (all of SRC's when run_ids is None) copied to dst, oldest first."""
    out = CopyOutcome()
    if run_ids is None:
        runs, out.damaged = src.readable_runs()
        run_ids = [r.id for r in runs]
    for run_id in run_ids:  # an unknown id (NotFoundError) before anything is copied
        try:
            src.run(str(run_id))
        except StoreError:
            pass  # damaged: reported, and left behind, below
    for i, run_id in enumerate(run_ids, 1):
        try:
            _check(src, run_id)
        except StoreError as e:
            out.damaged.append(e)
            say(f"[{i}/{len(run_ids)}] run {run_id}: damaged, not copied")
            continue
        try:
            new_id, done = copy_run(src, dst, run_id)
        except StoreConnectionLost:
            raise  # the destination is gone: nothing more can be copied
        except StoreError as e:  # this run refused (a second complete run of a fleet host): the others go on
            out.damaged.append(StoreError(f"run {run_id} not copied: {e.message}"))
            say(f"[{i}/{len(run_ids)}] run {run_id}: refused by the destination, not copied")
            continue
        if new_id is None:
            out.running.append(run_id)
            say(f"[{i}/{len(run_ids)}] run {run_id}: still running, not copied (copy it again when it has ended)")
            continue
        {"copied": out.copied, "present": out.present, "updated": out.updated}[done].append((run_id, new_id))
        say(f"[{i}/{len(run_ids)}] run {run_id} -> " + {"copied": f"run {new_id}",
                                                          "present": f"already there as run {new_id}",
                                                          "updated": f"run {new_id}, updated (it was copied while "
                                                                     "it was still going)"}[done])
    return out
