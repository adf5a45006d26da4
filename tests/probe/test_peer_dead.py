"""A remote peer (`peer=`) that is dead or dies (issue 27): the first
benchmark that cannot reach it pays the client's timeout once, and the
run's other benchmarks against that peer fail at once, citing that first
error; a peer killed in the middle of a session is said to be gone, not to
have ended the session at its limits (which a peer that is still up may
have done: tests/probe/test_net.py)."""
from __future__ import annotations

import os
import signal
import time

import pytest

from peer_helpers import serving, wait_until
from probe_helpers import TINY, probe_finished, probe_started, run_probe

NET = ["net.tcp_rtt", "net.tcp_connect", "net.tcp_close", "net.tcp_bw", "net.udp_rtt"]
CLIENT_TIMEOUT_S = 10  # OSM_PEER_CLIENT_TIMEOUT_S: the hello's answer


@pytest.mark.slow
def test_a_frozen_peer_costs_one_timeout_not_one_per_benchmark(probe):
    """A peer stopped with SIGSTOP (its kernel still accepts connections,
    nothing answers the hello): one timeout, every other benchmark against
    it an error at once that cites the first; the run goes on."""
    with serving(probe) as frozen:
        os.kill(frozen.pid, signal.SIGSTOP)
        try:
            start = time.monotonic()
            r = run_probe(probe, "run", *NET, "syscall.getuid", "--param", f"peer=127.0.0.1:{frozen.port}", *TINY,
                          timeout=300)
            took = time.monotonic() - start
        finally:
            os.kill(frozen.pid, signal.SIGCONT)
    errors = r.of_type("error")
    assert [e["bench"] for e in errors] == NET, errors
    first = f"peer 127.0.0.1:{frozen.port} did not answer the hello in {CLIENT_TIMEOUT_S} s"
    assert errors[0]["message"] == first, errors[0]
    for e in errors[1:]:
        assert e["message"] == (f"peer 127.0.0.1:{frozen.port} not tried again: it could not be reached earlier "
                                f"in this run ({first})"), e
    r.result("syscall.getuid")
    # One client timeout (10 s); before, one per benchmark against the peer: 50 s.
    assert took < 3.5 * CLIENT_TIMEOUT_S, f"{took:.1f} s: {[e['message'] for e in errors]}"


def test_a_refused_peer_is_not_tried_again(probe):
    """Nothing listens at the address: refused at once, and the others cite it."""
    with serving(probe) as gone:
        port = gone.port
        gone.kill()
    r = run_probe(probe, "run", "net.tcp_rtt", "net.tcp_bw", "--param", f"peer=127.0.0.1:{port}", *TINY)
    first, second = r.of_type("error")
    cited = f"cannot connect to peer 127.0.0.1:{port}: Connection refused"
    assert first["message"].endswith(cited), first
    assert second["message"] == (f"peer 127.0.0.1:{port} not tried again: it could not be reached earlier in "
                                 f"this run ({cited})"), second


def test_a_peer_killed_mid_session_is_said_to_be_gone_not_at_its_limits(probe):
    """SIGKILL to `serve` (its sessions die with it) while net.tcp_rtt runs
    against it: the error says the peer no longer answers, not that it may
    have ended the session at its limits; the next benchmark against it
    fails at once, citing why."""
    with serving(probe) as peer:
        with probe_started(probe, "run", "net.tcp_rtt", "net.tcp_bw", "--param",
                           f"peer=127.0.0.1:{peer.port}", "--min-time", "20", "--max-time", "20",
                           "--max-samples", "10000000", "--quiet") as p:
            assert wait_until(lambda: len(peer.sessions()) >= 1, timeout=20), peer.stderr()
            time.sleep(0.5)  # into the measurement
            peer.kill()
            r = probe_finished(p, timeout=60)
    assert r.rc == 1, r.stderr
    rtt, bw = r.of_type("error")
    assert rtt["bench"] == "net.tcp_rtt" and bw["bench"] == "net.tcp_bw"
    msg = rtt["message"]
    assert msg.startswith(f"peer 127.0.0.1:{peer.port} ") and " round trips" in msg, msg
    assert "at its limits" not in msg, msg
    assert (f", and the peer no longer answers (cannot connect to peer 127.0.0.1:{peer.port}: Connection refused): "
            "it was stopped or killed, or its host or the network went down") in msg, msg
    assert bw["message"].startswith(f"peer 127.0.0.1:{peer.port} not tried again: it could not be reached"), bw
