"""How a benchmark instance's parameters read on a figure: byte counts in
KiB/MiB/GiB, the parameters every instance shares apart from those that
differ. Shared by the distribution and sweep figures."""

from __future__ import annotations

from typing import Any, Mapping

from ...fmt import human_bytes
from ...records import format_params

# Parameters that are byte counts (the catalogue's type "size"): shown in
# KiB/MiB/GiB in figure labels, where 62 raw counts would be unreadable.
SIZE_PARAMS = ("size", "block", "file_bytes", "file_size", "stress_size", "stride", "total", "write_size")


def is_size(name: str) -> bool:
    return name in SIZE_PARAMS or name.endswith("_bytes")


def figure_params(params: Mapping[str, Any]) -> str:
    """Parameters for a figure label: `size=1 MiB, thp=0` (byte counts in
    binary units, 0 kept as it is: it means "auto"), sorted by key."""
    parts = []
    for k in sorted(params):
        v = params[k]
        if is_size(k) and isinstance(v, int) and not isinstance(v, bool) and v:
            parts.append(f"{k}={human_bytes(v)}")
        else:
            parts.append(format_params({k: v}))
    return ", ".join(parts)


def split_params(params: list[dict]) -> tuple[dict, list[dict]]:
    """The parameters every instance shares, and what is left of each instance's."""
    if not params:
        return {}, []
    shared = {k: v for k, v in params[0].items() if all(k in p and p[k] == v for p in params[1:])}
    if len(params) == 1:
        shared = {}
    return shared, [{k: v for k, v in p.items() if k not in shared} for p in params]
