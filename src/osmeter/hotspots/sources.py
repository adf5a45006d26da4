"""Where a profile comes from: a stored run, a probe output file, a folded file.

`osmeter hotspots --show REF` and `--diff A B` take any of:

- a stored run, `RUN` (an id, a label, `latest` or `latest~N`: docs/store.md,
  "Naming a run"), with `:BENCH` or `:SEQ` when the run holds more than one
  profile (`12:task.fork`, `12:3`, `latest~1:task.fork`, `audit-on:2`). The
  reference is split at its last `:`; a label holding `:` is named whole
  (`kernel:6.1`, when no run is labelled `kernel`) or with a trailing `:`
  (`kernel:6.1:`, `kernel:6.1:task.fork`);
- a probe output file (`osmeter-probe hotspots ... -o FILE`, JSON Lines):
  its profile record(s), `FILE:BENCH` likewise;
- a folded-stacks file (`*.folded`, the flame graph tools' format);
- `-`, standard input holding either kind of file (`-:BENCH` likewise).

A file path wins over a run reference when both could be meant, and a
reference holding `/` is a file path, never a label. Files are
read within bounds (osmeter.inputs): at most MAX_INPUT_BYTES, and a pipe or
device that stalls or never ends is given up on (/dev/zero, a FIFO with no
writer); folded.py bounds what is in them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import inputs
from ..errors import NotFoundError, UsageError
from .folded import MAX_WEIGHT, Stacks, lines, parse_folded, stacks_from_record

MAX_INPUT_BYTES = 256 * inputs.MIB  # a folded or probe output file: far above any profile osmeter makes
WEIGHT_UNITS = ("samples", "ns")
STDIN = "-"


@dataclass
class Profile:
    """One profile, whatever its source, as the renderers take it."""

    label: str  # for titles and table headers: "run 12 task.fork touched_mib=1024"
    stacks: Stacks
    weight_unit: str = "samples"  # or "ns" (function mode)
    calls: dict[str, int] | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # the profile record's other fields
    bench: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(w for _, w in self.stacks)


def params_text(params: Any) -> str:
    if not isinstance(params, dict):
        return str(params)[:80]
    return " ".join(f"{k}={v}" for k, v in params.items())


def _calls(value: Any, label: str) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_WEIGHT
            for k, v in value.items()):
        raise UsageError(f"{label}: 'calls' is not a map of function names to counts (0 to 2**63-1)")
    return dict(value)


def from_record(rec: dict[str, Any], label: str) -> Profile:
    """A `profile` record (the probe's, or a stored profile's fields)."""
    if rec.get("status", "ok") != "ok":
        raise UsageError(f"{label}: the profile is {rec.get('status')}: {rec.get('reason') or 'no reason given'}")
    unit = rec.get("weight_unit") or "samples"
    if unit not in WEIGHT_UNITS:
        raise UsageError(f"{label}: weight_unit is {str(unit)[:40]!r}, not one of {', '.join(WEIGHT_UNITS)}")
    params = rec.get("params") or {}
    if not isinstance(params, dict):
        raise UsageError(f"{label}: params is not a map of parameter names to values")
    stacks = stacks_from_record(rec.get("stacks") or [], label)
    meta = {k: v for k, v in rec.items() if k not in ("stacks", "calls", "type")}
    return Profile(label=label, stacks=stacks, weight_unit=unit, calls=_calls(rec.get("calls"), label), meta=meta,
                   bench=rec.get("bench"), params=dict(params))


def _pick(candidates: Sequence[tuple[str, Any]], which: str | None, where: str) -> Any:
    """One of several (name, profile) by bench name or 1-based position."""
    if not candidates:
        raise NotFoundError(f"{where} holds no profile (`osmeter hotspots BENCH` makes one)")
    if which is None:
        if len(candidates) > 1:
            names = ", ".join(f"{i}: {n}" for i, (n, _) in enumerate(candidates, 1))
            raise UsageError(f"{where} holds {len(candidates)} profiles; name one with :BENCH or :N ({names})")
        return candidates[0][1]
    if which.isdigit():
        i = int(which)
        if not 1 <= i <= len(candidates):
            raise NotFoundError(f"{where} has profiles 1 to {len(candidates)}, not {i}")
        return candidates[i - 1][1]
    hits = [p for n, p in candidates if n.split(" ")[0] == which or n == which]
    if len(hits) != 1:
        names = ", ".join(n for n, _ in candidates)
        raise NotFoundError(f"{where}: {'no' if not hits else 'more than one'} profile of {which!r} ({names})")
    return hits[0]


def _split_ref(ref: str) -> tuple[str, str | None]:
    if ":" in ref and ref != STDIN and not Path(ref).exists():
        base, which = ref.rsplit(":", 1)
        return base, which or None
    return ref, None


def read_text(path: str) -> str:
    """A profile file's text (`-`: standard input), read within bounds (module docstring)."""
    return inputs.read_text_bounded(path, MAX_INPUT_BYTES, what="profile file", stdin=True,
                                    idle_s=inputs.IDLE_S, total_s=inputs.TOTAL_S,
                                    too_large_hint="a profile is a few MiB; is it the file you meant?")


def load_file(path: str, which: str | None) -> Profile:
    text = read_text(path)
    name = "standard input" if path == STDIN else Path(path).name
    start = re.search(r"\S", text)
    if start is None or text[start.start()] != "{":
        return Profile(label=name, stacks=parse_folded(text, "standard input" if path == STDIN else path))
    records: list[tuple[str, Any]] = []
    for n, line in lines(text):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError) as e:
            why = (e.msg if isinstance(e, json.JSONDecodeError) else "nested too deeply"
                   if isinstance(e, RecursionError) else "a number of more than 4300 digits")  # int()'s limit
            raise UsageError(f"{path}:{n}: not JSON ({why}): not a probe output file") from None
        if isinstance(rec, dict) and rec.get("type") == "profile":
            records.append((f"{rec.get('bench')} {params_text(rec.get('params') or {})}".strip(), rec))
    rec = _pick(records, which, path)
    return from_record(rec, f"{name} {rec.get('bench')} {params_text(rec.get('params') or {})}".strip())


def from_stored(p: Any) -> Profile:
    """A stored profile (model.StoredProfile)."""
    rec = {**p.meta, "status": p.status, "mode": p.mode, "bench": p.bench, "params": p.params,
           "stacks": [[s, w] for s, w in p.stacks]}
    return from_record(rec, f"run {p.run_id} {p.bench} {params_text(p.params)}".strip())


def load_stored(store: Any, ref: str, which: str | None) -> Profile:
    run = store.run(ref)
    candidates = [(f"{p.bench} {params_text(p.params)}".strip(), p) for p in store.profiles(run.id)]
    return from_stored(_pick(candidates, which, f"run {run.id}"))


def load(ref: str, store_opener: Any) -> Profile:
    """A profile by reference (module docstring); store_opener() opens the
    store only when the reference is not a file."""
    base, which = _split_ref(ref)
    if base == STDIN:
        return load_file(STDIN, which)
    path = Path(base)
    if path.exists():
        if path.is_dir():
            raise UsageError(f"{ref} is a directory; give a folded-stacks file, a probe output file or a run")
        return load_file(base, which)
    if "/" in base:
        raise UsageError(f"{base!r} is neither a file nor a stored run: no such file (a reference holding '/' is "
                         "a file path; a run is given by its id, label, latest or latest~N, optionally with "
                         ":BENCH or :N)")
    try:
        store = store_opener()
    except NotFoundError as e:  # no store: say what else the reference could have been
        raise NotFoundError(f"{base!r} is neither a file nor a stored run: {e.message}") from None
    try:
        return _stored(store, ref, base, which)
    finally:
        store.close()


def _stored(store: Any, ref: str, base: str, which: str | None) -> Profile:
    """The stored profile `base`[:`which`] names; when `base` is a label no run
    has, the whole `ref` as a label holding `:` (module docstring)."""
    try:
        return load_stored(store, base, which)
    except UsageError as e:
        if not getattr(e, "unknown", False):  # store.refs.UnknownLabel: no run has that label
            raise
        if which is not None:
            try:
                return load_stored(store, ref, None)
            except UsageError as whole:
                if not getattr(whole, "unknown", False):
                    raise
        raise UsageError(f"{base!r} is neither a file nor a stored run: {e.message}") from None


def diff_links(store: Any, runs: Sequence[Any]) -> list[dict[str, Any]]:
    """For `osmeter compare`: each instance profiled in the baseline (runs[0])
    and in another run, with the command that diffs the two profiles."""
    from ..records import canonical_params  # noqa: PLC0415

    def keyed(run_id: int) -> dict[tuple[str, str], str]:
        out = {}
        for i, p in enumerate(store.profiles(run_id), 1):
            if p.status == "ok":
                out.setdefault((p.bench, canonical_params(p.params)), f"{run_id}:{i}")
        return out

    if not runs:
        return []
    base = keyed(runs[0].id)
    links = []
    for run in runs[1:]:
        for key, ref in keyed(run.id).items():
            if key in base:
                links.append({"bench": key[0], "params": json.loads(key[1]), "baseline": base[key], "run": ref,
                              "command": f"osmeter hotspots --diff {base[key]} {ref}"})
    return links


def file_of(ref: str) -> str | None:
    """The file `load(ref)` reads its profile from; None when it is a stored run or standard input."""
    base, _ = _split_ref(ref)
    return base if base != STDIN and Path(base).exists() and not Path(base).is_dir() else None
