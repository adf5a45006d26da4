"""The network lab of the remote ground truth (tests/netlab.py,
namespace_lab, with osmeter's peer inside) leaves nothing behind: not when
a test fails inside it, not when the test run is killed. Apart from
test_net_remote.py, whose module-wide lab would still be up here (a
process holds one lab at a time)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import netlab
from probe_helpers import optional_tool_missing

RATE = 100_000_000


def test_the_lab_and_its_peer_are_removed_when_a_test_fails(probe: str) -> None:
    why = netlab.missing(files=False)
    if why:
        optional_tool_missing(why)
    seen: dict = {}
    with pytest.raises(RuntimeError, match="the test failed"):
        with netlab.namespace_lab(RATE, ends="both") as lab:
            peer = lab.serve_peer(probe)
            seen = {"ns": lab.ns, "root": lab.root, "pid": peer.proc.pid, "if": lab.host_if}
            assert "tbf" in lab.qdisc("host") and "tbf" in lab.qdisc("remote")
            assert any(w.startswith(f"process {peer.proc.pid} ") for w in netlab.leftovers())
            raise RuntimeError("the test failed")
    assert netlab.leftovers() == []
    assert seen["ns"] not in netlab._namespaces() and not Path(seen["root"]).exists()
    assert not os.path.exists(f"/proc/{seen['pid']}")
    assert seen["if"] not in netlab.run("ip", "-o", "link", "show").stdout


@pytest.mark.slow
def test_a_lab_left_by_a_killed_run_is_removed_by_the_next(probe: str) -> None:
    why = netlab.missing(files=False)
    if why:
        optional_tool_missing(why)
    pid, (ns, root, peer_pid) = netlab.abandoned_lab(f"""
with netlab.namespace_lab({RATE}, ends="both") as lab:
    peer = lab.serve_peer({probe!r})
    print(lab.ns, lab.root, peer.proc.pid, flush=True)""")
    left = netlab.leftovers(pid)
    assert f"netns {ns}" in left and root in left and any(w.startswith(f"process {peer_pid} ") for w in left)
    removed = netlab.remove_stale()
    assert f"netns {ns}" in removed and root in removed
    assert netlab.leftovers(pid) == []
    deadline = time.monotonic() + 10  # killed, then reaped by whoever inherited it
    while os.path.exists(f"/proc/{peer_pid}") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not os.path.exists(f"/proc/{peer_pid}")
