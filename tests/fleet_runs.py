"""Stored runs of a fleet run (RunInfo.host, RunInfo.fleet) with samples we choose, for compare --by and
the fleet report: a run per host through the store API, as osmeter fleet run stores them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from osmeter.model import BenchResult, NewRun
from osmeter.stats import higher_is_better, summary
from osmeter.store import open_store

from .synthetic import MACHINE, META, Spec

FLEET = "fleet-20261127T001500Z-ab12"
OLD_FLEET = "fleet-20261120T090000Z-cd34"


def add_host_run(
    store_path: Path,
    specs: Sequence[Spec],
    host: str | None,
    fleet: str | None = FLEET,
    machine: Mapping[str, Any] | None = None,
    failed: Sequence[tuple[str, Mapping[str, Any], str, str]] = (),  # bench, params, status, reason
    status: str = "complete",
    start_time: str = "2026-11-27T00:15:00Z",
    label: str | None = None,
) -> int:
    """One run of `host` in `fleet` with these ok results and these skipped or failed ones; its id."""
    store = open_store(str(store_path), create=True)
    try:
        with store.transaction():
            run_id = store.create_run(NewRun(
                label=label, start_time=start_time, source="import", osmeter_version="0.2.0",
                probe_version="0.2.0", suite="quick", argv=["fleet"], params={},
                machine=dict(machine if machine is not None else dict(MACHINE, hostname=host or "synth")),
                meta=dict(META, suite="quick"), host=host, fleet=fleet,
            ))
            seq = 0
            for bench, params, unit, samples in specs:
                x = np.asarray(samples, dtype=np.float64)
                store.add_result(run_id, BenchResult(
                    seq=seq, bench=bench, params=dict(params), status="ok", unit=unit,
                    summary=summary(x, higher_is_better=higher_is_better(unit)), batch=1), x)
                seq += 1
            for bench, params, state, reason in failed:
                store.add_result(run_id, BenchResult(seq=seq, bench=bench, params=dict(params), status=state,
                                                     reason=reason), None)
                seq += 1
            reason = None if status == "complete" else "host unreachable (ssh: connection refused)"
            store.finish_run(run_id, status, "2026-11-27T00:20:00Z", reason)
        return run_id
    finally:
        store.close()
