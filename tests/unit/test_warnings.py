"""Coded warnings: each fires on the situation it names, and only then."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from osmeter.store import open_store
from osmeter.warnings import clock_warning, governor_warning, run_warnings, virtualization_warning

from ..conftest import import_fixture


def stored(store_path: Path, name: str):
    run_id = import_fixture(store_path, name)
    store = open_store(str(store_path), create=False)
    try:
        run = store.run(str(run_id))
        return run, store.results(run_id)
    finally:
        store.close()


def codes(warnings) -> list[str]:
    return [w.code for w in warnings]


def test_quiet_machine_warns_only_about_the_noisy_result(store_path: Path) -> None:
    run, results = stored(store_path, "run_x86_64.jsonl")
    warnings = run_warnings(run, results)
    assert codes(warnings) == ["high-cv"]
    assert "task.fork touched_mib=1" in warnings[0].message
    assert "--cpu" in warnings[0].advice


def test_noisy_virtual_board(store_path: Path) -> None:
    run, results = stored(store_path, "run_aarch64.jsonl")
    warnings = run_warnings(run, results)
    assert codes(warnings) == ["cpu-governor", "virtualized", "high-cv", "few-samples", "outliers"]
    by_code = {w.code: w for w in warnings}
    assert "schedutil" in by_code["cpu-governor"].message and "cpupower" in by_code["cpu-governor"].advice
    assert "kvm" in by_code["virtualized"].message
    assert "file.read size=4096 (n=6)" in by_code["few-samples"].message
    assert "syscall.null (3 of 25)" in by_code["outliers"].message
    assert all(w.render().startswith(f"warning [{w.code}]: ") for w in warnings)


def test_clock_warning(store_path: Path) -> None:
    run, _ = stored(store_path, "run_x86_64.jsonl")
    assert clock_warning(run) is None
    fallback = replace(run, meta=dict(run.meta, clock=dict(run.meta["clock"], source="monotonic_raw")))
    w = clock_warning(fallback)
    assert w is not None and w.code == "clock" and "invariant" in w.advice
    forced = replace(run, meta=dict(run.meta, clock=dict(run.meta["clock"], source="monotonic_raw", forced=True)))
    w = clock_warning(forced)
    assert w is not None and "--clock" in w.advice
    armv7 = replace(fallback, meta=dict(fallback.meta, build=dict(run.meta["build"], arch="armv7l")))
    assert clock_warning(armv7) is None  # no user-space counter to expect there


def test_machine_warnings_need_the_facts() -> None:
    assert governor_warning({}) is None and governor_warning({"cpufreq_governor": None}) is None
    assert governor_warning({"cpufreq_governor": ["performance", "performance"]}) is None
    assert governor_warning({"cpufreq_governor": ["performance", "powersave"]}) is not None
    # A stored machine description may hold any JSON (a damaged store, an odd import): no traceback.
    for odd in ([{}], [[1]], {"a": {}}, [None], 1.5):
        w = governor_warning({"cpufreq_governor": odd})
        assert w is not None and w.code == "cpu-governor"
    assert virtualization_warning({"virtualization": "none"}) is None
    assert virtualization_warning({"virtualization": None}) is None
    assert virtualization_warning({"virtualization": "xen"}) is not None
