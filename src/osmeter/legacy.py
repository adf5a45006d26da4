"""Results of older probes under today's names.

osmeter 0.2 gave three benchmarks LEBench's meaning (issue 9): `task.fork`
stops the clock when fork() returns in the parent (0.1: fork + exit +
wait, now `task.fork_exit`), `task.thread_create` when pthread_create()
returns (0.1: create + join, now `task.thread_join`), and `mem.mmap` maps
PROT_READ (0.1: PROT_READ|PROT_WRITE, now `prot=read_write`); the
file-mapping benchmarks gained `group` (0.1 timed groups of 8). A result
of a 0.1 probe keeps its meaning under the new name and parameters, so a
comparison never puts two different quantities side by side.

The store's migration 0002 does the same to stored runs, in SQL; the test
suite checks that both agree.
"""

from __future__ import annotations

from typing import Any, Mapping

LEGACY_PROBE_VERSIONS = ("0.1.0",)
RENAMED = {"task.fork": "task.fork_exit", "task.thread_create": "task.thread_join"}
ADDED_PARAMS: dict[str, dict[str, Any]] = {
    "mem.mmap": {"group": 8, "prot": "read_write"},
    "mem.munmap": {"group": 8},
    "mem.page_fault": {"group": 8},
}


def upgrade(bench: str, params: Mapping[str, Any], probe_version: str) -> tuple[str, dict[str, Any]]:
    """(bench, params) of a result as today's probe names the same quantity."""
    if probe_version not in LEGACY_PROBE_VERSIONS:
        return bench, dict(params)
    added = ADDED_PARAMS.get(bench, {})
    return RENAMED.get(bench, bench), {**added, **params}
