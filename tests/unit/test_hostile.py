"""The hostile cases of issue 27 (tests/hostile/run_hostile.py): no
traceback, no undocumented exit code, no secret printed, no case past its
time limit, nothing left behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "hostile" / "run_hostile.py"


@pytest.mark.slow
def test_every_hostile_case_is_handled(probe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSMETER_PROBE", probe)
    p = subprocess.run([sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True, timeout=1800)
    doc = json.loads(p.stdout)
    bad = [c for c in doc["cases"] if c["problems"]]
    assert not bad and p.returncode == 0, bad
    assert len(doc["cases"]) >= 20 and set(doc["tally"].values()) == {0}


def test_the_script_catches_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tally can fail: a case that crashes is counted."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import run_hostile
    finally:
        sys.path.remove(str(SCRIPT.parent))
    monkeypatch.setattr(run_hostile, "OSMETER", [sys.executable, "-c", "raise SystemExit(1/0)"])
    out = run_hostile.run_case(run_hostile.Case("crash", []), tmp_path)
    assert any(p.startswith("traceback") for p in out.problems) and "exit code 1 not documented" in out.problems
    monkeypatch.setattr(run_hostile, "OSMETER", [sys.executable, "-c", f"print('{run_hostile.SECRET}')"])
    out = run_hostile.run_case(run_hostile.Case("leak", []), tmp_path)
    assert "a secret printed" in out.problems
