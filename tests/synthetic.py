"""Runs with samples we choose, written through the store API.

For compare and report tests: a known distribution per benchmark, so a test
knows which differences are real (injected) and which are noise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from osmeter.model import BenchResult, NewRun
from osmeter.stats import higher_is_better, summary
from osmeter.store import open_store

MACHINE = {
    "hostname": "synth",
    "kernel_release": "6.8.0-synth",
    "arch": "x86_64",
    "cpu_model": "Synthetic CPU @ 3.0GHz",
    "cpus_online": 4,
    "cpufreq_governor": "performance",
    "virtualization": "none",
    "clocksource": "tsc",
    "caches": [
        {"level": 1, "type": "Data", "size_bytes": 49152, "line_bytes": 64, "ways": 12, "shared_cpu_list": "0"},
        {"level": 2, "type": "Unified", "size_bytes": 1310720, "line_bytes": 64, "ways": 10, "shared_cpu_list": "0"},
    ],
    "memory_bytes": 17179869184,
    "mitigations": {"spectre_v2": "Mitigation: Retpolines", "meltdown": "Not affected"},
}
META = {
    "type": "meta",
    "schema": 1,
    "command": "run",
    "clock": {"source": "tsc", "forced": False, "hz": 3e9, "resolution_ns": 10.0, "overhead_ns": 20.0},
    "cpu": 1,
    "cpu_choice": "least_busy",
    "build": {"compiler": "gcc 12.2.0", "flags": "-O2", "static": True, "build_type": "Release", "arch": "x86_64"},
}

Spec = tuple[str, Mapping[str, Any], str, np.ndarray]  # bench, params, unit, samples


def add_run(
    store_path: Path,
    specs: Sequence[Spec],
    label: str | None = None,
    machine: Mapping[str, Any] | None = None,
    skips: Sequence[tuple[str, Mapping[str, Any], str]] = (),
    suite: str | None = "standard",
) -> int:
    """Store one complete run with these results; returns its id."""
    store = open_store(str(store_path), create=True)
    try:
        with store.transaction():
            run_id = store.create_run(
                NewRun(
                    label=label,
                    start_time="2026-11-22T08:00:00Z",
                    source="import",
                    osmeter_version="0.1.0",
                    probe_version="0.1.0",
                    suite=suite,
                    argv=["synthetic"],
                    params={},
                    machine=dict(machine if machine is not None else MACHINE),
                    meta=dict(META, suite=suite),
                )
            )
            seq = 0
            for bench, params, unit, samples in specs:
                x = np.asarray(samples, dtype=np.float64)
                result = BenchResult(
                    seq=seq, bench=bench, params=dict(params), status="ok", unit=unit, summary=summary(x, higher_is_better=higher_is_better(unit)), batch=1
                )
                store.add_result(run_id, result, x)
                seq += 1
            for bench, params, reason in skips:
                store.add_result(
                    run_id, BenchResult(seq=seq, bench=bench, params=dict(params), status="skip", reason=reason), None
                )
                seq += 1
            store.finish_run(run_id, "complete", "2026-11-22T08:01:00Z", None)
        return run_id
    finally:
        store.close()


def noisy(rng: np.random.Generator, median: float, n: int, cv: float = 0.03) -> np.ndarray:
    """Positive samples around `median`: lognormal body with a few slow outliers."""
    x = median * rng.lognormal(0.0, cv, n)
    spikes = rng.random(n) < 0.01
    x[spikes] *= 1.0 + rng.exponential(0.5, int(spikes.sum()))
    return x
