"""The median of the result a profile belongs to, which scales its shares to
ns per operation (timed.ns_per_op): a stored profile's result in its run
(the same seq), a probe output file's `result` record just before the
`profile` record (docs/schema.md: result, [counters], profile). A folded
file has none, and neither has a profile read from standard input or a
pipe, which cannot be read again (the profile's window is used instead).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import OsmeterError
from .sources import Profile, read_text

KEY = "osmeter_result"  # where WithResults puts a stored profile's result in its meta (taken out by take())


@dataclass(frozen=True)
class ResultMedian:
    median: float | None
    unit: str | None
    where: str  # "run 12, result 3"; "a.jsonl's result record before it"


class WithResults:
    """A store (duck-typed: anything it has is passed through) whose
    profiles carry their result's median and unit in meta[KEY]; take()
    takes it out again."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def profiles(self, run_id: int) -> list[Any]:
        results = {r.seq: r for r in self._store.results(run_id)}
        out = []
        for p in self._store.profiles(run_id):
            r = results.get(p.seq)
            median = r.summary.median if r is not None and r.summary is not None else None
            found = ResultMedian(median, r.unit if r is not None else None, f"run {run_id}, result {p.seq}")
            out.append(dataclasses.replace(p, meta={**p.meta, KEY: found}))
        return out


def take(p: Profile) -> ResultMedian | None:
    """What WithResults put in p.meta, taken out (anything else under KEY is dropped: a file's own field)."""
    found = p.meta.pop(KEY, None) if isinstance(p.meta, dict) else None
    return found if isinstance(found, ResultMedian) else None


def _same(rec: dict[str, Any], p: Profile) -> bool:
    """Whether the profile record `rec` is the one `p` was made of (sources.from_record keeps every field
    but these in meta)."""
    return {k: v for k, v in rec.items() if k not in ("stacks", "calls", "type")} == p.meta


def in_file(path: str, p: Profile, name: str) -> ResultMedian | None:
    """The result record just before p's profile record in the probe output file `path` (read again, within
    the same bounds); None when the file is folded stacks, or no result of the same instance precedes it."""
    if not Path(path).is_file():
        return None  # a pipe (`<(...)`) or a device cannot be read a second time: the window is used
    try:
        text = read_text(path)
    except OsmeterError:
        return None  # gone or changed since it was read: the window is used
    if not text.lstrip().startswith("{"):
        return None
    last: dict[str, Any] | None = None
    for line in text.split("\n"):
        if '"result"' not in line and '"profile"' not in line:
            continue  # samples, counters, meta: not parsed
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue  # sources.load refused the file already if this mattered
        if not isinstance(rec, dict):
            continue
        if rec.get("type") == "result":
            last = rec
        elif rec.get("type") == "profile" and _same(rec, p):
            if last is None or last.get("bench") != rec.get("bench") or last.get("params") != rec.get("params"):
                return None
            median = last.get("median")
            unit = last.get("unit")
            return ResultMedian(median if isinstance(median, (int, float)) else None,
                                unit if isinstance(unit, str) else None,
                                f"{name}'s result record before it")
    return None

