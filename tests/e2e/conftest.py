"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import pytest

from probe_helpers import find_probe


@pytest.fixture
def real_probe(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real osmeter-probe, which `osmeter` then runs (OSMETER_PROBE)."""
    path = find_probe()
    if path is None:
        pytest.fail("osmeter-probe not found: pip install . (or set OSMETER_TEST_PROBE)")
    monkeypatch.setenv("OSMETER_PROBE", path)
    return path
