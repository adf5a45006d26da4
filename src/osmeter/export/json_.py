"""JSON export: a versioned envelope with the run and its results.

Strings are UTF-8, but DEL, the C1 controls and the bidi overrides are
written as \\u escapes, as json.dumps writes the C0 controls: the data is
exact and the text cannot drive a terminal (osmeter.textsafe.json_text)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Sequence

from ..lebench import RowNames
from ..textsafe import json_text
from ..model import BenchResult, RunInfo, StoredProfile
from .fields import result_rows

EXPORT_SCHEMA = 1


def run_dict(run: RunInfo) -> dict[str, Any]:
    return asdict(run)


def profile_dict(p: StoredProfile) -> dict[str, Any]:
    """A stored profile as the probe's `profile` record held it (docs/schema.md), with its result's seq."""
    return {"seq": p.seq, "bench": p.bench, "params": p.params, "status": p.status, "mode": p.mode, **p.meta,
            "stacks": [[s, w] for s, w in p.stacks]}


def document(run: RunInfo, results: Sequence[BenchResult], names: RowNames | None = None,
             profiles: Sequence[StoredProfile] = ()) -> dict[str, Any]:
    doc = {
        "osmeter_export": EXPORT_SCHEMA,
        "run": run_dict(run),
        "results": result_rows(run, results, names)[1],
    }
    if profiles:  # osmeter hotspots: each result's profile (docs/export.md)
        doc["profiles"] = [profile_dict(p) for p in profiles]
    return doc


def render(run: RunInfo, results: Sequence[BenchResult], names: RowNames | None = None,
           profiles: Sequence[StoredProfile] = ()) -> str:
    text = json.dumps(document(run, results, names, profiles), indent=2, ensure_ascii=False, allow_nan=False)
    return json_text(text) + "\n"
