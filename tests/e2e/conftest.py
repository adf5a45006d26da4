"""Fixtures of the end-to-end tests."""

from __future__ import annotations

from typing import Iterator

import pytest

import netlab
import sshlab
from probe_helpers import find_probe, optional_tool_missing


@pytest.fixture
def real_probe(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real osmeter-probe, which `osmeter` then runs (OSMETER_PROBE)."""
    path = find_probe()
    if path is None:
        pytest.fail("osmeter-probe not found: pip install . (or set OSMETER_TEST_PROBE)")
    monkeypatch.setenv("OSMETER_PROBE", path)
    return path


@pytest.fixture
def hosts() -> Iterator[list[sshlab.SshHost]]:
    """Three sshd hosts on loopback (tests/sshlab.py) for the fleet tests; skipped
    with the install hint without sshd or ansible-runner; nothing left after."""
    why = sshlab.missing()
    if why:
        optional_tool_missing(why)
    try:
        import ansible_runner  # noqa: F401
    except ImportError:
        optional_tool_missing("ansible-runner is missing (pip install 'ansible-runner>=2.3' 'ansible-core>=2.14')")
    with sshlab.ssh_hosts(3) as lab:
        yield lab
    assert netlab.leftovers() == []
