"""osmeter run --repeat R: R fresh probe processes, one after the other, their
samples pooled per instance, the CI and compare built on their spread, a
disagreement flagged `unstable`, and an interruption between repetitions
keeping what finished."""

from __future__ import annotations

import math
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from osmeter.errors import EXIT_BENCH_ERRORS
from osmeter.repeats import UNSTABLE_SPREAD
from osmeter.store import open_store

from ..conftest import FakeProbe


def stored(store_path: Path, run: str = "1"):
    store = open_store(str(store_path), create=False)
    try:
        info = store.run(run)
        results = store.results(info.id)
        samples = {r.seq: store.samples(info.id, r.seq) for r in results}
        return info, results, samples
    finally:
        store.close()


def test_three_repetitions_are_three_probe_processes_pooled(cli, fake_probe: FakeProbe, store_path: Path,
                                                            tmp_path: Path) -> None:
    runs_file = tmp_path / "runs"
    fake_probe.set(runs_file=runs_file)
    r = cli("run", "--repeat", "3")
    assert r.code == EXIT_BENCH_ERRORS, r.err  # the script has one error result
    assert len(runs_file.read_text().splitlines()) == 3
    assert "repetition 2 of 3" in r.err and "repetition 3 of 3" in r.err
    info, results, samples = stored(store_path)
    assert info.status == "complete" and info.params["repeat"] == 3
    ok = [x for x in results if x.status == "ok"]
    assert ok and len(results) == 5  # one result per instance, not per repetition
    for x in ok:
        assert len(x.repetitions) == 3 and all(rep.status == "ok" for rep in x.repetitions)
        assert x.summary.n == sum(rep.n for rep in x.repetitions) == samples[x.seq].size
        # Identical repetitions: no spread, no flag.
        assert x.spread == 0 and "unstable" not in x.flags


def test_repetitions_that_disagree_are_unstable_with_a_wide_ci(cli, fake_probe: FakeProbe, store_path: Path,
                                                               tmp_path: Path) -> None:
    fake_probe.set(runs_file=tmp_path / "runs", scale="1,1.12,0.97")
    assert cli("run", "cpu.call", "syscall.null", "--repeat", "3").code == 0
    _, results, samples = stored(store_path)
    for x in results:
        assert x.status == "ok"
        assert x.spread == np.float64(1.12 / 0.97 - 1) or math.isclose(x.spread, 1.12 / 0.97 - 1, rel_tol=1e-9)
        assert x.spread > UNSTABLE_SPREAD and "unstable" in x.flags
        # The CI comes from the three medians (t with 2 degrees of freedom),
        # far wider than the samples of one process would give.
        medians = sorted(rep.median for rep in x.repetitions)
        assert x.summary.ci_low < medians[1] < x.summary.ci_high
        assert (x.summary.ci_high - x.summary.ci_low) / x.summary.median > 0.05
    shown = cli("show", "1").out
    assert "unstable" in shown


@pytest.mark.slow  # about 2.5 s; CI runs it
def test_compare_uses_the_spread_between_repetitions(cli, fake_probe: FakeProbe, store_path: Path,
                                                     tmp_path: Path) -> None:
    """Two runs of three repetitions whose medians scatter by +-1 %: not
    significant, though each process's own CI is far narrower; the same with
    every value 10 % higher: significant."""
    fake_probe.set(runs_file=tmp_path / "runs", scale="1,1.01,0.99,1.005,0.995,1.0,1.1,1.11,1.09")
    for _ in range(3):
        assert cli("run", "cpu.call", "syscall.null", "--repeat", "3").code == 0
    same = cli("compare", "1", "2", "--json")
    import json

    doc = json.loads(same.out)
    assert doc["comparisons"] and not any(c["significant"] for c in doc["comparisons"])
    slower = json.loads(cli("compare", "1", "3", "--json").out)
    assert all(c["significant"] and c["verdict"] == "slower" for c in slower["comparisons"])


def test_a_probe_that_dies_in_repetition_two_keeps_repetition_one(cli, fake_probe: FakeProbe, store_path: Path,
                                                                  tmp_path: Path) -> None:
    fake_probe.set(runs_file=tmp_path / "runs", die_after=2, die_run=2)
    r = cli("run", "--repeat", "3")
    assert r.code != 0
    info, results, _ = stored(store_path)
    assert info.status == "incomplete"
    assert len(results) == 5
    # Two instances ran twice, the rest once; none three times.
    counts = sorted(len(x.repetitions) for x in results)
    assert counts == [1, 1, 1, 2, 2]
    assert len((tmp_path / "runs").read_text().splitlines()) == 2  # repetition 3 never started


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
@pytest.mark.slow
def test_a_signal_between_repetitions_ends_the_run_incomplete(cli, fake_probe: FakeProbe, store_path: Path,
                                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              signum: int) -> None:
    """A signal while no probe runs (after repetition 1, before 2 starts)
    ends osmeter with 128+N and the run `incomplete` with repetition 1 kept,
    never stuck `running`."""
    from osmeter import runner as run_cmd

    real_drive, calls = run_cmd.drive, []

    def drive(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signum)
        return real_drive(*args, **kwargs)

    monkeypatch.setattr(run_cmd, "drive", drive)
    fake_probe.set(runs_file=tmp_path / "runs")
    before = [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)]
    r = cli("run", "cpu.call", "--repeat", "3")
    assert r.code == 128 + signum, r.err
    assert "Traceback" not in r.err
    info, results, _ = stored(store_path)
    assert info.status == "incomplete"
    assert signal.Signals(signum).name in (info.status_reason or "")
    assert len((tmp_path / "runs").read_text().splitlines()) == 1
    assert results and all(len(x.repetitions) == 1 for x in results)
    # The handlers osmeter installed are gone again.
    assert [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)] == before
