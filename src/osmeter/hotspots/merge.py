"""The profiles of several repetitions of one instance as one record.

`osmeter run --profile --repeat R` runs the probe R times; each repetition
samples its own share of the timed region and writes its own `profile`
record (docs/schema.md). The result stored is the pooled one, so its
profile is the pooled one too: stacks, samples, losses, operations and the
window's time summed, as if one probe had sampled all of it. A repetition
whose profile is not `ok` adds nothing but its note; when none is `ok`, the
first record is kept as it is (its status and reason say why).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

OK = "ok"
_LEADING_COUNT = re.compile(r"^(\d+) (.+)$", re.S)
_SUMMED = ("samples", "lost", "ops")
_WINDOW_SUMMED = ("enabled_s", "batches", "left_out")


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else 0.0


def _stack_items(record: Mapping[str, Any]) -> list[tuple[str, int]]:
    items = record.get("stacks")
    out = []
    for item in items if isinstance(items, list) else []:
        if (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], int) and not isinstance(item[1], bool) and item[1] > 0):
            out.append((item[0], item[1]))
    return out


def _calls(records: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    if not all(isinstance(r.get("calls"), dict) for r in records):
        return None
    calls: dict[str, int] = {}
    for r in records:
        for name, n in r["calls"].items():
            calls[name] = calls.get(name, 0) + _int(n)
    return calls


def _merged_notes(lists: Sequence[Any]) -> list[str]:
    """Each distinct note once; notes that differ only in their leading count
    ("23 samples outside the timed batches ...") as one, with the counts summed."""
    counted: dict[str, int | None] = {}
    order: list[str] = []
    for notes in lists:
        for note in notes if isinstance(notes, list) else []:
            if not isinstance(note, str):
                continue
            m = _LEADING_COUNT.match(note)
            key, n = (m.group(2), int(m.group(1))) if m else (note, None)
            if key not in counted:
                order.append(key)
                counted[key] = None
            if n is not None:
                counted[key] = (counted[key] or 0) + n
    return [k if counted[k] is None else f"{counted[k]} {k}" for k in order]


def merge_profiles(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One profile record for the repetitions' `records` (in order)."""
    if not records:
        raise ValueError("no profile to merge")
    good = [r for r in records if r.get("status") == OK]
    if len(records) == 1 or len(good) <= 1:
        return dict(good[0] if good else records[0])
    modes = {(r.get("mode"), r.get("event"), r.get("weight_unit")) for r in good}
    if len(modes) > 1:  # never add samples of one kind to weights of another
        return dict(good[-1])
    merged = dict(good[0])
    for key in _SUMMED:
        merged[key] = sum(_int(r.get(key)) for r in good)
    window = dict(good[0].get("window") or {})
    windows = [r.get("window") if isinstance(r.get("window"), dict) else {} for r in good]
    for key in _WINDOW_SUMMED:
        total = sum(_num(w.get(key)) for w in windows)
        window[key] = int(total) if key != "enabled_s" else total
    merged["window"] = window
    stacks: dict[str, int] = {}
    for r in good:
        for frames, weight in _stack_items(r):
            stacks[frames] = stacks.get(frames, 0) + weight
    merged["stacks"] = [[k, v] for k, v in sorted(stacks.items(), key=lambda kv: (-kv[1], kv[0]))]
    merged["calls"] = _calls(good)
    merged["notes"] = _merged_notes([r.get("notes") for r in good])
    merged["repetitions"] = len(good)
    return merged
