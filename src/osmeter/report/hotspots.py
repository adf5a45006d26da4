"""The report's Hotspots section: each stored profile of the run (osmeter
hotspots) as its top functions by total and self share, with the counts
behind them and the command that draws its flame graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..hotspots import folded
from ..model import StoredProfile
from ..records import describe_instance

HEADING = "Hotspots"
EXPLAIN = ("Where each profiled instance's timed region spent its time (osmeter hotspots, "
           "docs/methods/hotspots.md): total = the share of samples whose stack holds the function, self = "
           "the share where it is the leaf.")
HEADERS = ("function", "total", "self", "total n", "self n")
RIGHT = (False, True, True, True, True)
TOP = 10


@dataclass(frozen=True)
class ProfileTable:
    title: str  # the instance and what the profile is
    command: str  # to draw its flame graph
    rows: list[list[str]]
    note: str | None  # why there is no table (unsupported, empty)


def tables(run_id: int, profiles: Sequence[StoredProfile]) -> list[ProfileTable]:
    out = []
    for i, p in enumerate(profiles, 1):
        what = describe_instance(p.bench, p.params)
        m = p.meta
        title = (f"{what}: {p.mode} profile, {m.get('event', '?')}, {m.get('samples', 0)} "
                 f"{m.get('weight_unit', 'samples')}")
        command = f"osmeter hotspots --show {run_id}:{i}"
        if p.status != "ok":
            out.append(ProfileTable(title, command, [], f"{p.status}: {m.get('reason') or 'no reason given'}"))
            continue
        stacks = folded.stacks_from_record([[s, w] for s, w in p.stacks])
        rows = [[r.function, f"{100 * r.total_share:.1f}%", f"{100 * r.self_share:.1f}%", str(r.total_weight),
                 str(r.self_weight)] for r in folded.function_table(stacks, m.get("calls"))[:TOP]]
        out.append(ProfileTable(title, command, rows, None))
    return out
