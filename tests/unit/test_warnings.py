"""Coded warnings: each fires on the situation it names, and only then."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from osmeter.store import open_store
import numpy as np

from osmeter import stats
from osmeter.model import BenchResult
from osmeter.warnings import clock_warning, governor_warning, result_warnings, run_warnings, virtualization_warning

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


def test_quiet_machine_has_no_warning_for_a_heavy_tail(store_path: Path) -> None:
    """task.fork touched_mib=1 has a CV of 25 % from a few slow forks: its median and interval stand, so
    nothing is said (osmeter 0.2 warned high-cv); its tail is the p99/median column's."""
    run, results = stored(store_path, "run_x86_64.jsonl")
    fork = next(r for r in results if r.bench == "task.fork")
    assert fork.summary is not None and fork.summary.cv > 0.2
    assert run_warnings(run, results) == []


def _result(seq: int, bench: str, samples: np.ndarray, flags: tuple[str, ...] = ()) -> BenchResult:
    return BenchResult(seq=seq, bench=bench, params={}, status="ok", unit="ns", summary=stats.summary(samples),
                       flags=flags)


def test_result_warnings_fire_on_what_changes_a_figure_and_name_it() -> None:
    rng = np.random.default_rng(7)
    calm = rng.normal(1000, 10, 2000)
    tail = np.concatenate([calm, rng.pareto(1.2, 200) * 5000 + 1000])  # CV far above 5 %, outliers 9 %
    two = np.concatenate([rng.normal(1600, 30, 800), rng.normal(1900, 40, 1200)])
    results = [_result(0, "a.calm", calm), _result(1, "b.tail", tail),
               _result(2, "c.unmet", calm, ("precision-unmet",)), _result(3, "d.two", two, ("bimodal",))]
    assert results[1].summary is not None and results[1].summary.cv > 0.5
    got = {w.code: w for w in result_warnings(results)}
    assert list(got) == ["precision-unmet", "bimodal"]
    assert got["precision-unmet"].message.endswith("for c.unmet")
    assert re.search(r"d\.two \(1\.[56]\d µs and 1\.[89]\d µs\)", got["bimodal"].message)
    assert "osmeter plot" in got["bimodal"].advice
    assert result_warnings(results[:2]) == []


def test_noisy_virtual_board(store_path: Path) -> None:
    run, results = stored(store_path, "run_aarch64.jsonl")
    warnings = run_warnings(run, results)
    assert codes(warnings) == ["cpu-governor", "virtualized", "few-samples"]
    by_code = {w.code: w for w in warnings}
    assert "schedutil" in by_code["cpu-governor"].message and "cpupower" in by_code["cpu-governor"].advice
    assert "kvm" in by_code["virtualized"].message
    assert "file.read size=4096 (n=6)" in by_code["few-samples"].message
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
