"""retried_under_load (tests/probe_helpers.py): a timing check that failed
while the CPUs were contended runs once more; on a quiet machine, never."""
from __future__ import annotations

import pytest

import probe_helpers


def attempts_of(monkeypatch: pytest.MonkeyPatch, pressure_us: list[int], fails: int) -> tuple[list[int], bool]:
    """Runs a check that fails its first `fails` attempts while CPU pressure
    reads `pressure_us` in turn; returns the attempts made and whether it passed."""
    readings = iter(pressure_us)
    monkeypatch.setattr(probe_helpers, "_cpu_pressure_us", lambda: next(readings))
    made: list[int] = []

    def check() -> int:
        made.append(len(made) + 1)
        assert len(made) > fails, f"attempt {len(made)} failed"
        return len(made)

    try:
        probe_helpers.retried_under_load(check)
    except AssertionError:
        return made, False
    return made, True


def test_a_failure_under_load_is_retried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # 10 s of CPU wait in a fraction of a second: busy.
    assert attempts_of(monkeypatch, [0, 10_000_000], fails=1) == ([1, 2], True)
    assert attempts_of(monkeypatch, [0, 10_000_000], fails=2) == ([1, 2], False)  # a real defect fails twice


def test_a_failure_on_a_quiet_machine_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    assert attempts_of(monkeypatch, [5, 5], fails=1) == ([1], False)


def test_a_pass_is_not_repeated(monkeypatch: pytest.MonkeyPatch) -> None:
    assert attempts_of(monkeypatch, [0, 10_000_000], fails=0) == ([1], True)


def test_without_psi_the_load_average_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe_helpers.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(probe_helpers.os, "getloadavg", lambda: (2.5, 1.0, 1.0))
    assert attempts_of(monkeypatch, [None, None], fails=1) == ([1, 2], True)
    monkeypatch.setattr(probe_helpers.os, "getloadavg", lambda: (0.3, 1.0, 1.0))
    assert attempts_of(monkeypatch, [None, None], fails=1) == ([1], False)
