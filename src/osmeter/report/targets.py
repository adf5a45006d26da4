"""Where a run's file benchmarks measured: their directories and file systems.

The file family records in each result's `info` (schema.md) the directory,
its file system type, device and mount options, whether it is remote, and
for the cold reads how the page cache was bypassed. A figure of a file
benchmark means nothing without them (ext4 on a local disk, an sshfs mount
over a 100 Mbit/s link and tmpfs differ by orders of magnitude), so the run's
summary lists them, one line per distinct place, with the benchmarks that
measured there."""

from __future__ import annotations

from typing import Sequence

from ..model import BenchResult

PLACE_KEYS = ("dir", "fs_type", "device", "mount_options", "remote")
SHOWN_KEYS = PLACE_KEYS + ("cache_bypass",)  # what the block says of each result it lists


def _place(info: dict[str, str]) -> tuple[str, ...]:
    return tuple(info.get(k, "") for k in PLACE_KEYS)


def _describe(place: tuple[str, ...]) -> str:
    d = dict(zip(PLACE_KEYS, place))
    fs = d["fs_type"] or "unknown file system"
    where = f"{d['dir']}: {fs}"
    if d["device"]:
        where += f" on {d['device']}"
    if d["remote"] == "yes":
        where += " (remote)"
    if d["mount_options"]:
        where += f", mounted {d['mount_options']}"
    return where


def targets_lines(results: Sequence[BenchResult]) -> list[str]:
    """One line per directory measured, then its benchmarks and bypass methods; [] when none."""
    places: dict[tuple[str, ...], list[str]] = {}
    methods: dict[tuple[str, ...], list[str]] = {}
    for r in results:
        info = r.info
        if not info.get("dir"):
            continue
        key = _place(info)
        benches = places.setdefault(key, [])
        if r.bench not in benches:
            benches.append(r.bench)
        m = info.get("cache_bypass")
        if m and m not in methods.setdefault(key, []):
            methods[key].append(m)
    lines = []
    for key, benches in places.items():
        lines.append("  " + _describe(key))
        tail = ", ".join(benches)
        if methods.get(key):
            tail += "; page cache bypassed by " + ", ".join(methods[key])
        lines.append("    " + tail)
    return lines


def shown_keys(results: Sequence[BenchResult]) -> dict[int, tuple[str, ...]]:
    """seq -> the info keys the block shows for that result (those with a `dir`), so that
    the other facts of the result can be listed without repeating them."""
    return {r.seq: SHOWN_KEYS for r in results if r.info.get("dir")}


def render_targets(results: Sequence[BenchResult]) -> str | None:
    """The "files measured in" block of a run's summary, or None."""
    lines = targets_lines(results)
    return "files measured in:\n" + "\n".join(lines) if lines else None
