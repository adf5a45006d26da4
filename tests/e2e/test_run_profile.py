"""osmeter run --profile with the real probe: a profile per result, pooled
over the repetitions, the counters of --counters from a pass of their own,
and hotspots --show reading the stored profile."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from osmeter.store import open_store

from ..conftest import osmeter_command, subprocess_env


def osmeter(*args: str) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(osmeter_command(*args), capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    return p


@pytest.mark.slow  # three probe processes, about 4 s; CI runs it (tests/unit/test_run_profile.py: the logic)
def test_a_profiled_run_stores_a_pooled_profile_and_counters_per_result(real_probe: str, store_path: Path,
                                                                        tmp_path: Path) -> None:
    osmeter("run", "syscall.null", "syscall.getuid", "--profile", "--counters", "task-clock,page-faults",
            "--repeat", "2", "--min-time", "0.05", "--max-time", "0.2", "--label", "profiled")
    store = open_store(str(store_path), create=False)
    try:
        run = store.run("profiled")
        results = store.results(run.id)
        profiles = {p.seq: p for p in store.profiles(run.id)}
    finally:
        store.close()
    assert [r.bench for r in results] == ["syscall.null", "syscall.getuid"] and run.argv[1] == "hotspots"
    for r in results:
        p = profiles[r.seq]
        assert p.status in ("ok", "empty", "unsupported"), p.status
        if p.status == "ok":
            assert p.meta["repetitions"] == 2 and p.meta["ops"] > 0 and p.stacks
            assert sum(w for _, w in p.stacks) == p.meta["samples"]
        names = [c["name"] for c in r.counters["counters"]]  # the counters' own pass
        assert names == ["task-clock", "page-faults"] and r.counters["ops"] > 0
        assert len(r.repetitions) == 2  # the counters' pass is not pooled into the figure
    if profiles[results[0].seq].status == "ok":
        shown = osmeter("hotspots", "--show", "profiled:syscall.null", "-o", str(tmp_path / "hs"))
        assert "syscall.null" in shown.stdout and (tmp_path / "hs" / "flamegraph.svg").exists()
