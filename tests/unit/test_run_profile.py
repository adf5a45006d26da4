"""osmeter run --profile: the probe's command line, the profiles of several
repetitions stored as one, and a missing profile said once per reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osmeter.errors import UsageError
from osmeter.hotspots.merge import merge_profiles
from osmeter.recorder import RunContext, RunRecorder
from osmeter.records import parse_line
from osmeter.runner import RunOptions, counters_argv, probe_argv
from osmeter.store import open_store

from ..conftest import DATA, StoreAt

LINES = (DATA / "run_x86_64.jsonl").read_text().splitlines()


def profile(bench: str, params: dict[str, Any], stacks: list[list[Any]], status: str = "ok",
            ops: int = 1000, enabled_s: float = 0.5, notes: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "profile", "bench": bench, "params": params, "lebench_row": None, "status": status,
            "reason": None if status == "ok" else "perf_event_open: Permission denied (perf_event_paranoid is 3)",
            "mode": "sample", "event": "cpu-clock", "frequency_hz": 999, "weight_unit": "samples",
            "samples": sum(w for _, w in stacks), "lost": 0, "kernel": True, "kernel_reason": None,
            "symbols": {"kernel": "kallsyms", "kernel_reason": None},
            "window": {"start_ns": 1.0, "end_ns": 2.0, "enabled_s": enabled_s, "batches": 10, "left_out": 3},
            "ops": ops, "stacks": stacks, "calls": None, "notes": notes or [], **extra}


def options(**kw: Any) -> RunOptions:
    base = dict(names=("syscall.null",), suite=None, params=(), cpu=None, label=None, min_time=None, max_time=None,
                min_samples=None, fifo=None, mlock=False, clock=None)
    return RunOptions(**{**base, **kw})  # type: ignore[arg-type]


# ---- the probe's command line ------------------------------------------------------------


def test_profile_runs_the_probes_hotspots_with_the_runs_options() -> None:
    argv = probe_argv(Path("/p"), options(profile=True, min_time=0.2, repeat=3))
    assert argv[:3] == ["/p", "hotspots", "--die-with-parent"]
    assert argv[argv.index("--frequency") + 1] == "999" and argv[argv.index("--profile") + 1] == "sample"
    assert argv[argv.index("--min-time") + 1] == "0.2" and "--budget-fraction" in argv
    assert probe_argv(Path("/p"), options())[1] == "run"


def test_counters_go_to_a_pass_of_their_own() -> None:
    opts = options(profile=True, counters="sw", profile_frequency=4999)
    argv = probe_argv(Path("/p"), opts)
    assert "--counters" not in argv and "sw" not in argv and argv[argv.index("--frequency") + 1] == "4999"
    counted = counters_argv(Path("/p"), opts)
    assert counted[1] == "run" and counted[counted.index("--counters") + 1] == "sw" and "--frequency" not in counted


def test_a_profile_frequency_needs_profile() -> None:
    with pytest.raises(UsageError, match="--profile-frequency goes with --profile"):
        probe_argv(Path("/p"), options(profile_frequency=99))


# ---- merging repetitions -----------------------------------------------------------------


def test_merged_profile_sums_stacks_samples_operations_and_time() -> None:
    a = profile("syscall.null", {}, [["p;do_syscall_64_[k]", 30], ["p", 10]], ops=1000, enabled_s=0.5,
                notes=["cycles cannot be sampled here", "3 samples outside the timed batches were left out"])
    b = profile("syscall.null", {}, [["p;do_syscall_64_[k]", 20], ["p;x_[k]", 5]], ops=3000, enabled_s=1.5,
                notes=["cycles cannot be sampled here", "4 samples outside the timed batches were left out"])
    m = merge_profiles([a, b])
    assert dict((k, w) for k, w in m["stacks"]) == {"p;do_syscall_64_[k]": 50, "p": 10, "p;x_[k]": 5}
    assert m["stacks"][0] == ["p;do_syscall_64_[k]", 50]  # heaviest first, as the probe writes them
    assert (m["samples"], m["ops"], m["repetitions"]) == (65, 4000, 2)
    assert m["window"]["enabled_s"] == pytest.approx(2.0) and m["window"]["batches"] == 20
    assert m["notes"] == ["cycles cannot be sampled here", "7 samples outside the timed batches were left out"]


def test_a_repetition_without_a_profile_adds_nothing() -> None:
    good = profile("syscall.null", {}, [["p", 10]])
    bad = profile("syscall.null", {}, [], status="unsupported")
    assert merge_profiles([bad, good]) == good
    assert merge_profiles([bad, bad])["status"] == "unsupported"
    other = profile("syscall.null", {}, [["p", 5]], event="cycles")
    assert merge_profiles([good, other]) == other  # never samples of one event added to another's


def test_merging_nothing_is_a_bug() -> None:
    with pytest.raises(ValueError):
        merge_profiles([])


# ---- the recorder ------------------------------------------------------------------------


def with_profiles(status: str = "ok") -> list[str]:
    """The replayed run with a profile record after each ok result."""
    out = []
    for line in LINES:
        out.append(line)
        rec = json.loads(line)
        if rec["type"] == "result":
            out.append(json.dumps(profile(rec["bench"], rec["params"], [["p;f_[k]", 7]], status=status)))
    return out


def test_repetitions_store_one_pooled_profile_per_result(store_at: StoreAt) -> None:
    store = open_store(store_at.location, create=True)
    try:
        recorder = RunRecorder(store, RunContext("t", ["probe"], {}, "run"), repetitions=2)
        for _ in range(2):
            for line in with_profiles():
                recorder.feed(parse_line(line))
        recorder.finish()
        stored = store.profiles(recorder.run_id)
        ok = [r for r in recorder.results if r.status == "ok"]
        assert sorted(p.seq for p in stored) == sorted(r.seq for r in ok)
        assert all(p.stacks == [("p;f_[k]", 14)] and p.meta["repetitions"] == 2 for p in stored)
        assert recorder.profile_note() is None
    finally:
        store.close()


def test_a_missing_profile_is_said_once_per_reason(store_at: StoreAt) -> None:
    store = open_store(store_at.location, create=True)
    try:
        recorder = RunRecorder(store, RunContext("t", ["probe"], {}, "run"), repetitions=2)
        for _ in range(2):
            for line in with_profiles("unsupported"):
                recorder.feed(parse_line(line))
        recorder.finish()
        note = recorder.profile_note()
        assert note is not None and note.count("perf_event_paranoid is 3") == 1
        assert note.startswith("3 profile(s) unsupported")  # three instances, each counted once over two repetitions
        assert all(p.status == "unsupported" for p in store.profiles(recorder.run_id))
    finally:
        store.close()


def test_counters_of_repetitions_sum_counts_and_windows() -> None:
    from osmeter.recorder import merge_counters

    def rec(ops: int, windows: int, total: float, counted: float, cost: float) -> dict[str, Any]:
        return {"ops": ops, "windows": windows, "counters": [
            {"name": "task-clock", "status": "ok", "unit": "ns", "value": total / ops, "total": total,
             "counted": counted, "window_cost": cost, "running": 1, "reason": None}]}

    m = merge_counters([rec(100, 10, 1000.0, 1100.0, 10.0), rec(300, 30, 2000.0, 2600.0, 20.0)])
    (c,) = m["counters"]
    assert (m["ops"], m["windows"]) == (400, 40)
    assert c["total"] == 3000.0 and c["value"] == pytest.approx(7.5) and c["counted"] == 3700.0
    assert c["window_cost"] == pytest.approx((10 * 10 + 20 * 30) / 40)  # per window, over all of them
