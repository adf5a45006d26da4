"""Naming a run: one resolution for every command that takes a run, on both backends.

A run reference (docs/store.md, "Naming a run") is one of:

- an id: ASCII digits (`12`; `0` and `-1` are numbers too, of no run);
- `latest`: the newest run (the highest id: the one stored last);
- `latest~N`: N runs before the newest, as git's HEAD~N (`latest~0` is
  `latest`, `latest~1` the run before it);
- a label (`osmeter run --label`, `osmeter import --label`): the one run
  with exactly that label. Several runs with it are an error that lists them
  (at most MAX_LISTED, then how many more) and how to name one; none is an
  error that names the closest labels there are.

A number is always an id, and `latest` and `latest~...` always the latest
forms: a run labelled so is named by its id. A reference longer than
MAX_REF_CHARS is refused before the store is asked. Every error but an
unknown id (NotFoundError, as before labels) is a UsageError; resolving
never writes.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Callable

from .. import textsafe
from ..errors import NotFoundError, UsageError

MAX_RUN_ID = 2**63 - 1  # SQLite's INTEGER PRIMARY KEY, PostgreSQL's BIGINT
MAX_REF_CHARS = 200
MAX_LISTED = 10  # runs listed when a label names several
MAX_LABELS_SCANNED = 2_000  # distinct labels searched for the closest ones, the newest first (~0.15 s)
MAX_SUGGESTED = 4
LATEST = "latest"
RUN_HELP = "a run id, label, latest or latest~N"  # every command's help for RUN
FORMS = "its id (a number) or 'latest' (or 'latest~N': N runs before the newest) or its label"
LISTS = "`osmeter runs` lists the runs and their labels"

_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() takes "²", which int() refuses
_NUMBER = re.compile(r"-?[0-9]+")  # an id; below 1 it is no run (NotFoundError), as ever

Reader = Callable[[str, dict[str, Any]], list[Any]]  # SQLStore._read: SQL with :names -> rows


class UnknownLabel(UsageError):
    """No run has the label given (hotspots tells this from a reference
    that is neither a file nor a run by its `unknown` attribute)."""

    unknown = True


@dataclass(frozen=True)
class Ref:
    """A parsed reference: exactly one of id, back (latest~back) and label is set."""

    text: str
    id: int | None = None
    back: int | None = None
    label: str | None = None


def shown(text: str, limit: int = 60) -> str:
    """User or stored text quoted for a message, cut when long."""
    return repr(textsafe.clip(text, limit))


def parse(ref: str) -> Ref:
    """The reference's form (module docstring), without asking the store."""
    if not isinstance(ref, str):
        raise UsageError(f"a run is given by {FORMS}, not {type(ref).__name__}")
    if len(ref) > MAX_REF_CHARS:
        raise UsageError(f"a run reference of {len(ref)} characters is too long (at most {MAX_REF_CHARS}): "
                         f"{shown(ref, 40)}")
    if not ref.strip():
        raise UsageError(f"the run reference is empty; a run is given by {FORMS}")
    if _NUMBER.fullmatch(ref):
        return Ref(ref, id=int(ref))
    if ref == LATEST:
        return Ref(ref, back=0)
    if ref.startswith(LATEST + "~"):
        n = ref[len(LATEST) + 1:]
        if not _DIGITS.fullmatch(n):
            raise UsageError(f"{shown(ref)}: latest~N takes a whole number N >= 0 of runs before the newest "
                             "(latest~1: the run before it); a run labelled so is named by its id")
        return Ref(ref, back=int(n))
    return Ref(ref, label=ref)


def resolve(ref: str, read: Reader, where: str) -> int:
    """The id of the run `ref` names in the store `where` (shown in messages),
    read through `read`; the caller reads the run by that id (an id of no run:
    NotFoundError(missing_id(...)))."""
    r = parse(ref)
    if r.id is not None:
        if not 1 <= r.id <= MAX_RUN_ID:
            raise NotFoundError(f"no run {ref} in the store {where}: run ids are 1 to {MAX_RUN_ID}; {LISTS}")
        return r.id
    if r.back is not None:
        return _back(r, read, where)
    assert r.label is not None
    return _labelled(r.label, read, where)


def _count(read: Reader) -> int:
    return int(read("SELECT count(*) AS n FROM runs", {})[0]["n"])


def _back(r: Ref, read: Reader, where: str) -> int:
    assert r.back is not None
    rows = (read("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET :n", {"n": r.back})
            if r.back <= MAX_RUN_ID else [])
    if rows:
        return int(rows[0]["id"])
    total = _count(read)
    if total == 0:
        raise NotFoundError(f"the store {where} has no runs yet")
    span = "latest~0 only" if total == 1 else f"latest~0 (the newest) to latest~{total - 1} (the oldest)"
    raise UsageError(f"{shown(r.text)}: the store {where} holds {total} run{'s' if total != 1 else ''}, "
                     f"so {span}")


def _labelled(label: str, read: Reader, where: str) -> int:
    rows = read("SELECT id, start_time, label FROM runs WHERE label = :l ORDER BY id DESC LIMIT :k",
                {"l": label, "k": MAX_LISTED + 1})
    if len(rows) == 1:
        return int(rows[0]["id"])
    if not rows:
        raise UnknownLabel(_unknown(label, read, where))
    total = int(read("SELECT count(*) AS n FROM runs WHERE label = :l", {"l": label})[0]["n"])
    newest = int(read("SELECT max(id) AS n FROM runs", {})[0]["n"])
    listed = [_candidate(row, read, newest) for row in rows[:MAX_LISTED]]
    more = f"; and {total - MAX_LISTED} more" if total > MAX_LISTED else ""
    first = int(rows[0]["id"])
    raise UsageError(f"the label {shown(label)} names {total} runs in the store {where}: {'; '.join(listed)}{more}; "
                     f"name one by its id or latest~N, as listed (the newest: {first}); {LISTS}")


def _candidate(row: Any, read: Reader, newest: int) -> str:
    """`run 14 (latest~2, 2026-11-22 07:40)` for the list of runs one label names."""
    run_id = int(row["id"])
    back = 0 if run_id == newest else int(read("SELECT count(*) AS n FROM runs WHERE id > :i", {"i": run_id})[0]["n"])
    start = row["start_time"]
    when = textsafe.clip(str(start).replace("T", " ")[:16], 20) if start is not None else "no start time"
    return f"run {run_id} (latest~{back}, {textsafe.line(when)})"


def _unknown(label: str, read: Reader, where: str) -> str:
    """No run has this label: the message, naming the closest labels there are
    (not those a reference cannot name: digits, latest forms)."""
    rows = read("SELECT label, count(*) AS n, max(id) AS newest FROM runs WHERE label IS NOT NULL "
                "GROUP BY label ORDER BY max(id) DESC LIMIT :k", {"k": MAX_LABELS_SCANNED})
    runs = {str(r["label"]): (int(r["n"]), int(r["newest"])) for r in rows}
    close = closest(label, [lab for lab in runs if nameable(lab)])
    text = f"no run labelled {shown(label)} in the store {where}"
    if close:
        named = ", ".join(f"{shown(c)} ({_runs_of(*runs[c])})" for c in close)
        text += f"; the closest label{'s' if len(close) > 1 else ''}: {named}"
    hint = _latest_hint(label)
    return f"{text}. {f'Did you mean {hint}? ' if hint else ''}A run is given by {FORMS}; {LISTS}"


def nameable(label: str) -> bool:
    """Whether a reference can name a run by this label (not a number, `latest` or `latest~...`)."""
    try:
        return parse(label).label is not None
    except UsageError:  # empty, too long, `latest~beta`
        return False


def missing_id(run_id: int, read: Reader, where: str) -> str:
    """No run has this id: the message (and the run labelled so, if one is: digits are an id)."""
    text = f"no run {run_id} in the store {where}"
    rows = read("SELECT id FROM runs WHERE label = :l ORDER BY id DESC LIMIT 1", {"l": str(run_id)})
    if rows:
        text += f" (run {int(rows[0]['id'])} is labelled {str(run_id)!r}, but a number is always a run id)"
    return f"{text}; {LISTS}"


def _runs_of(n: int, newest: int) -> str:
    return f"run {newest}" if n == 1 else f"{n} runs, the newest {newest}"


def closest(label: str, labels: list[str]) -> list[str]:
    """At most MAX_SUGGESTED labels near `label`: the same but for case, then
    those holding it (or held in it), then the most alike (difflib)."""
    low = label.casefold()
    folded = {lab: lab.casefold() for lab in labels}
    same = [lab for lab, f in folded.items() if f == low]
    holding = [lab for lab, f in folded.items() if len(low) >= 3 and f != low and (low in f or f in low and len(f) >= 3)]
    alike = difflib.get_close_matches(label, labels, n=MAX_SUGGESTED, cutoff=0.6)
    out: list[str] = []
    for lab in same + holding[:MAX_SUGGESTED] + alike:
        if lab not in out:
            out.append(lab)
    return out[:MAX_SUGGESTED]


def _latest_hint(label: str) -> str | None:
    """`latest~1` for `Latest~1` or `latest-1`, `latest` for `lastest`: a latest form mistyped."""
    low = label.strip().casefold().replace("-", "~")
    if low == LATEST or (low.startswith(LATEST + "~") and _DIGITS.fullmatch(low[len(LATEST) + 1:])):
        return low
    return LATEST if difflib.get_close_matches(low, [LATEST], n=1, cutoff=0.75) else None
