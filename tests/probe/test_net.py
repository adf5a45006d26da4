"""net.* with tiny budgets: plausible figures and units on IPv4 and IPv6,
the peer's facts in every result, bad parameters, a peer that is not there,
refuses the token or dies mid-run (an error, and the run goes on), losses
counted and not timed, and no process left behind."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from probe_helpers import TINY, ProbeRun, probe_finished, probe_started, run_probe
from task_helpers import children, wait_children, wait_gone

NET = ["net.tcp_rtt", "net.udp_rtt", "net.tcp_bw", "net.tcp_connect", "net.tcp_close", "net.icmp_rtt"]
# tcp_bw: short samples so a tiny budget still holds a few.
FAST_BW = ["--param", "duration=20"]


def ncpus() -> int:
    return len(os.sched_getaffinity(0))


def has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def free_port() -> int:
    """A loopback port where nothing listens (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_plausible(res: dict) -> None:
    """Bounds no loopback or LAN figure leaves, even on a loaded VM."""
    bench = res["bench"]
    if bench == "net.tcp_bw":
        assert res["unit"] == "bytes_per_s"
        assert 1e6 < res["median"] < 1e12, res
        assert res["extra"]["bits_per_s"] == pytest.approx(8 * res["median"], rel=1e-6)
        assert res["extra"]["mss"] > 0 and res["extra"]["bytes_moved"] > 0
    else:
        assert res["unit"] == "ns"
        low = 300 if bench == "net.icmp_rtt" else 1000  # an echo answered in the sender's softirq
        assert low < res["median"] < 50_000_000, res
    if bench in ("net.udp_rtt", "net.icmp_rtt"):
        assert res["extra"]["lost"] == 0 and res["extra"]["loss_fraction"] == 0
    assert res["extra"]["path_mtu"] >= 1280
    info = res["info"]
    assert info["peer"] and info["peer_version"] and info["placement"]
    if bench == "net.icmp_rtt":
        assert info["icmp_method"].startswith(("ping socket", "raw socket")), info
        assert res["placement"] == "same_cpu"
    else:
        assert "own peer on CPU" in info["peer"], info
        assert res["placement"] == info["placement"] == res["params"]["placement"]


def icmp_available(r) -> bool:
    """icmp_rtt measures where a ping socket or root allows; else its skip must say how to allow it."""
    skips = [x for x in r.of_type("skip") if x["bench"] == "net.icmp_rtt"]
    for s in skips:
        assert "net.ipv4.ping_group_range" in s["reason"] and "root" in s["reason"], s
    return not skips


# ipv6 is slow-marked to keep the default run under 5 minutes (~4 s); CI runs it.
@pytest.mark.parametrize("family", ["ipv4", pytest.param("ipv6", marks=pytest.mark.slow)])
def test_every_net_benchmark_gives_a_plausible_figure(probe, family):
    if family == "ipv6" and not has_ipv6_loopback():
        r = run_probe(probe, "run", "net.tcp_rtt", "--param", "family=ipv6", *TINY)
        assert r.of_type("skip") and "no IPv6 loopback" in r.of_type("skip")[0]["reason"]
        return
    r = run_probe(probe, "run", *NET, "--sweep", "--param", f"family={family}", *FAST_BW, *TINY)
    assert r.rc == 0, r.stderr
    results = r.of_type("result")
    names = {x["bench"] for x in results}
    assert names >= set(NET) - {"net.icmp_rtt"}
    assert ("net.icmp_rtt" in names) == icmp_available(r)
    assert {x["params"]["direction"] for x in results if x["bench"] == "net.tcp_bw"} == {"send", "recv"}
    assert {x["params"]["side"] for x in results if x["bench"] == "net.tcp_close"} == {"active", "passive"}
    assert {x["params"]["size"] for x in results if x["bench"] == "net.udp_rtt"} == {16, 1472, 65507}
    for res in results:
        check_plausible(res)
        host = "::1" if family == "ipv6" else "127.0.0.1"
        assert res["info"]["peer"].startswith((host, f"[{host}]")), res["info"]
    close = {x["params"]["side"]: x for x in results if x["bench"] == "net.tcp_close"}
    assert 0 < close["active"]["extra"]["shutdown_ns"] < close["active"]["median"]
    assert 0 < close["passive"]["extra"]["eof_ns"] < close["passive"]["median"]
    assert close["passive"]["extra"]["close_ns"] > 0
    assert r.result("net.tcp_connect")["extra"]["syn_retransmits"] >= 0


def test_message_sizes_up_to_the_limits(probe):
    """A 1 MiB TCP message (more than the socket buffers hold) and the largest datagram."""
    r = run_probe(probe, "run", "net.tcp_rtt", "--param", "size=1M", *TINY)
    assert r.rc == 0, r.stderr
    assert r.result("net.tcp_rtt", size=1 << 20)["median"] > r.result("net.tcp_rtt")["extra"]["path_mtu"]
    r = run_probe(probe, "run", "net.udp_rtt", "--param", "size=8,65507", "--param", "family=ipv4", *TINY)
    assert r.rc == 0, r.stderr
    assert r.result("net.udp_rtt", size=8)["median"] > 1000


def test_placement_same_cpu_pins_the_peer_to_the_probes_cpu(probe):
    r = run_probe(probe, "run", "net.tcp_rtt", "--param", "placement=same_cpu", *TINY)
    res = r.result("net.tcp_rtt")
    assert res["placement"] == "same_cpu"
    assert f"own peer on CPU {res['cpu']}" in res["info"]["peer"]


@pytest.mark.skipif(ncpus() < 2, reason="needs two CPUs")
def test_placement_cross_cpu_puts_the_peer_elsewhere(probe):
    res = run_probe(probe, "run", "net.tcp_rtt", *TINY).result("net.tcp_rtt")
    assert res["placement"] == "cross_cpu"
    assert f"own peer on CPU {res['cpu']}" not in res["info"]["peer"]


def test_cross_cpu_skips_on_one_cpu(probe):
    one = min(os.sched_getaffinity(0))
    r = run_probe(probe, "run", "net.tcp_rtt", *TINY, preexec_fn=lambda: os.sched_setaffinity(0, {one}))
    assert r.rc == 0, r.stderr
    skip = r.of_type("skip")[0]
    assert "placement=cross_cpu needs a second CPU" in skip["reason"], skip
    assert "--param placement=same_cpu" in skip["reason"], skip
    assert skip["info"]["placement"] == "cross_cpu"


def test_list_says_which_net_benchmarks_want_a_second_cpu(probe):
    """placement=cross_cpu, the default, needs a second CPU: `list` says so
    (requires: free_cpu); ICMP on loopback has no peer process."""
    r = run_probe(probe, "list", "--json", jsonl=False)
    assert r.rc == 0, r.stderr
    requires = {b["name"]: b["requires"] for b in json.loads(r.stdout)["benchmarks"]
                if b["family"] == "net"}
    for name in ("net.tcp_rtt", "net.udp_rtt", "net.tcp_bw", "net.tcp_connect", "net.tcp_close"):
        assert requires[name] == ["free_cpu"], (name, requires[name])
    assert requires["net.icmp_rtt"] == []


@pytest.mark.parametrize("bench,bad,allowed", [
    ("net.tcp_rtt", "size=0", "1 B..1 MiB"),
    ("net.tcp_rtt", "size=2M", "1 B..1 MiB"),
    ("net.udp_rtt", "size=7", "8 B..65507 B"),
    ("net.udp_rtt", "size=65508", "8 B..65507 B"),
    ("net.tcp_bw", "direction=both", "send, recv"),
    ("net.tcp_bw", "write_size=512", "1 KiB..16 MiB"),
    ("net.tcp_bw", "duration=5", "10..60000"),
    ("net.tcp_close", "side=both", "active, passive"),
    ("net.icmp_rtt", "size=-1", "0..65507"),
    ("net.icmp_rtt", "method=udp", "auto, ping, raw"),
    ("net.tcp_connect", "family=ipv5", "ipv4, ipv6"),
    ("net.tcp_connect", "placement=far", "same_cpu, cross_cpu"),
    ("net.tcp_connect", "peer=" + "1" * 301, "300"),
])
def test_bad_parameters_are_rejected(probe, bench, bad, allowed):
    r = run_probe(probe, "run", bench, "--param", bad)
    assert r.rc == 2 and r.stdout == "", (bad, r.stdout)
    assert allowed in r.stderr, r.stderr


def test_a_peer_where_nothing_listens_is_a_quick_error(probe):
    port = free_port()
    t0 = time.monotonic()
    r = run_probe(probe, "run", "net.tcp_rtt", "net.tcp_connect", "--param", f"peer=127.0.0.1:{port}", *TINY)
    assert time.monotonic() - t0 < 10
    assert r.rc == 1
    errors = r.of_type("error")
    assert len(errors) == 2
    for e in errors:
        assert f"127.0.0.1:{port}" in e["message"] and "refused" in e["message"], e
        assert e["info"]["placement"] == "remote"


@pytest.mark.parametrize("bench,params,why", [
    ("net.tcp_rtt", ["peer=nothing"], "'nothing' is not a numeric IPv4 or IPv6 address"),
    ("net.tcp_rtt", ["peer=1.2.3.4:0"], "port 0; give the port the peer listens on"),
    ("net.tcp_bw", ["peer=127.0.0.1:abc"], "'abc' is not an integer"),
    ("net.tcp_connect", ["peer=:7478"], "no host"),
    ("net.udp_rtt", ["peer=[::1"], "write an IPv6 address as [ADDR]"),
    ("net.tcp_close", ["peer=[::1]"], "is an IPv6 address but family=ipv4: give family=ipv6"),
    ("net.tcp_rtt", ["peer=[::1]:7478"], "is an IPv6 address but family=ipv4: give family=ipv6"),
    ("net.icmp_rtt", ["peer=127.0.0.1", "family=ipv6"], "is an IPv4 address but family=ipv6: give family=ipv4"),
])
def test_a_malformed_or_contradicted_peer_is_refused_before_anything_runs(probe, bench, params, why):
    """peer= is checked with family= when the instances are made (bench.h's
    check): exit 2 naming the instance and the reason, no record, nothing
    run; through a suite too."""
    args = [a for p in params for a in ("--param", p)]
    r = run_probe(probe, "run", "syscall.getuid", bench, *args, *TINY)
    assert r.rc == 2 and r.stdout == "", r.stdout
    assert f"{bench} (" in r.stderr and why in r.stderr, r.stderr
    r = run_probe(probe, "run", "--suite", "standard", *args, *TINY)
    assert r.rc == 2 and r.stdout == "" and why in r.stderr, r.stderr


def test_icmp_takes_a_peer_without_a_port(probe):
    """ICMP has no port: peer=HOST:0 is the host (checked, not refused)."""
    r = run_probe(probe, "run", "net.icmp_rtt", "--param", "peer=127.0.0.1:0", *TINY)
    assert r.rc in (0, 1) and r.of_type("end"), r.stderr
    assert "port 0" not in r.stdout


# ---- a peer given by peer= -------------------------------------------------


class FakePeer:
    """A minimal peer on loopback speaking docs/peer.md: it answers every
    hello with OK (or ERR token), echoes, takes close sessions, and can hang
    up an echo session after `echo_limit` bytes (a peer that goes away)."""

    def __init__(self, token: str = "", echo_limit: int | None = None, answer: bytes = b"OK 9.9.9-fake\n"):
        self.token, self.echo_limit, self.answer = token, echo_limit, answer
        self.lsock = socket.create_server(("127.0.0.1", 0))
        self.port = self.lsock.getsockname()[1]
        self.hellos: list[str] = []
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.lsock.settimeout(0.1)
        while not self.stop:
            try:
                conn, _ = self.lsock.accept()
            except OSError:
                continue
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    def _session(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            line = b""
            while not line.endswith(b"\n"):
                got = self._recv(conn, 1)
                if not got:
                    return
                line += got
            words = line.decode().split()
            self.hellos.append(line.decode())
            if self.token and f"token={self.token}" not in words:
                conn.sendall(b"ERR token\n")
                return
            conn.sendall(self.answer)
            if not self.answer.startswith(b"OK "):
                return
            if words[2] == "echo":
                self._echo(conn)
            else:
                self._recv(conn, 1)  # close: EOF or 'C', then close

    @staticmethod
    def _recv(conn: socket.socket, n: int) -> bytes:
        """recv, with a reset taken as the end (the probe closes with a RST at times)."""
        try:
            return conn.recv(n)
        except OSError:
            return b""

    def _echo(self, conn: socket.socket) -> None:
        moved = 0
        while True:
            data = self._recv(conn, 65536)
            if not data:
                return
            conn.sendall(data)
            moved += len(data)
            if self.echo_limit is not None and moved >= self.echo_limit:
                return  # hangs up

    def close(self) -> None:
        self.stop = True
        self.thread.join()
        self.lsock.close()


@contextmanager
def fake_peer(**kw) -> Iterator[FakePeer]:
    p = FakePeer(**kw)
    try:
        yield p
    finally:
        p.close()


def test_a_remote_peer_is_recorded_with_its_version_and_token(probe, tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    with fake_peer(token="s3cret") as peer:
        r = run_probe(probe, "run", "net.tcp_rtt", "net.tcp_connect", "--param", f"peer=127.0.0.1:{peer.port}",
                      "--param", f"token_file={token}", *TINY)
        assert r.rc == 0, r.stderr
        for res in r.of_type("result"):
            assert res["placement"] == "remote" and res["info"]["placement"] == "remote"
            assert res["info"]["peer"] == f"127.0.0.1:{peer.port}"
            assert res["info"]["peer_version"] == "9.9.9-fake"
            assert res["extra"]["path_mtu"] >= 1280
        assert all("token=s3cret" in h for h in peer.hellos)
        # The environment variable when there is no token_file.
        r = run_probe(probe, "run", "net.tcp_rtt", "--param", f"peer=127.0.0.1:{peer.port}", *TINY,
                      env=dict(os.environ, OSMETER_PEER_TOKEN="s3cret"))
        assert r.rc == 0 and r.of_type("result"), r.stderr


def test_a_wrong_token_shows_the_peers_refusal(probe, tmp_path):
    token = tmp_path / "token"
    token.write_text("wrong\n")
    with fake_peer(token="s3cret") as peer:
        r = run_probe(probe, "run", "net.tcp_rtt", "--param", f"peer=127.0.0.1:{peer.port}",
                      "--param", f"token_file={token}", *TINY)
    assert r.rc == 1
    msg = r.of_type("error")[0]["message"]
    assert "ERR token" in msg and f"127.0.0.1:{peer.port}" in msg, msg
    r = run_probe(probe, "run", "net.tcp_rtt", "--param", "peer=127.0.0.1:1",
                  "--param", f"token_file={tmp_path / 'missing'}", *TINY)
    assert "token_file" in r.of_type("error")[0]["message"] and "No such file" in r.of_type("error")[0]["message"]


EVIL = "\x1b[31mevil\x1b[0m mtu=\x1b]0;pwned\x07 udp_port=0 cookie=zz"


def no_control(text: str) -> bool:
    return not any(ord(c) < 0x20 and c not in "\n\t" or ord(c) == 0x7f for c in text)


@pytest.mark.parametrize("answer", [f"OK {EVIL}", f"ERR {EVIL}"])
def test_what_a_peer_sends_reaches_no_terminal_or_record_unfiltered(probe, answer):
    """A peer's answer (version, key=value words, an ERR reason) is kept or
    printed as printable ASCII only: no terminal escape gets through."""
    with fake_peer(answer=answer.encode() + b"\n") as peer:
        r = run_probe(probe, "run", "net.udp_rtt", "net.tcp_connect", "--param", f"peer=127.0.0.1:{peer.port}",
                      *TINY)
    assert no_control(r.stdout) and no_control(r.stderr), (r.stdout, r.stderr)
    assert "\\u001b" not in r.stdout and "\\u0007" not in r.stdout, r.stdout
    said = [e["message"] for e in r.of_type("error")] + [x["info"].get("peer_version", "") for x in r.records
                                                        if x["type"] in ("result", "error")]
    assert any("?[31mevil?[0m" in m for m in said), said


def test_a_peer_that_hangs_up_is_an_error_and_the_run_goes_on(probe):
    with fake_peer(echo_limit=300) as peer:
        r = run_probe(probe, "run", "net.tcp_rtt", "syscall.getuid", "--param", f"peer=127.0.0.1:{peer.port}",
                      *TINY)
    assert r.rc == 1
    msg = r.of_type("error")[0]["message"]
    # EOF, or a RST when a byte of the next round trip was still unread
    assert re.fullmatch(rf"peer 127\.0\.0\.1:{peer.port} (closed|reset) the connection.* after \d+ round trips(; the peer may have .*)?", msg), msg
    r.result("syscall.getuid")


def serve_available(probe: str) -> bool:
    p = subprocess.run([probe, "serve", "--help"], capture_output=True, text=True, timeout=30)
    return "unknown command" not in (p.stderr + p.stdout)


@contextmanager
def serve(probe: str, *args: str) -> Iterator[int]:
    """`osmeter-probe serve` on a free loopback port with args, once it
    accepts connections; its port. Stopped (SIGTERM) and reaped on every path."""
    if not serve_available(probe):
        pytest.skip("this probe has no serve command")
    port = free_port()
    srv = subprocess.Popen([probe, "serve", "--listen", f"127.0.0.1:{port}", *args],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield port
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.communicate(timeout=10)


def test_a_real_serve_refuses_a_wrong_token(probe, tmp_path):
    with serve(probe, "--token", "right") as port:
        token = tmp_path / "token"
        token.write_text("wrong\n")
        r = run_probe(probe, "run", "net.tcp_rtt", "--param", f"peer=127.0.0.1:{port}",
                      "--param", f"token_file={token}", *TINY)
        assert "ERR token" in r.of_type("error")[0]["message"]
        token.write_text("right\n")
        r = run_probe(probe, "run", "net.tcp_rtt", "--param", f"peer=127.0.0.1:{port}",
                      "--param", f"token_file={token}", *TINY)
        assert r.rc == 0 and r.result("net.tcp_rtt")["placement"] == "remote", r.stderr


@pytest.mark.parametrize("bench,params", [
    ("net.tcp_bw", ["direction=recv"]),
    ("net.tcp_bw", ["direction=send"]),
    ("net.udp_rtt", []),
    ("net.tcp_rtt", ["size=64K"]),
])
@pytest.mark.slow
def test_a_session_ended_at_the_peers_limits_says_so(probe, bench, params):
    """serve --session-bytes 100k closes a session early: the client's error
    names the peer's limits as a likely cause."""
    with serve(probe, "--session-bytes", "100k") as port:
        args = [a for p in params for a in ("--param", p)]
        # Half a second at least: a tiny budget can reach its precision
        # before 100 kB of small datagrams have gone (net.udp_rtt).
        r = run_probe(probe, "run", bench, "--param", f"peer=127.0.0.1:{port}", *args, "--min-time", "0.5",
                      "--max-time", "3", "--quiet")
    msg = r.of_type("error")[0]["message"]
    assert "the peer may have ended the session at its limits" in msg and "--session-bytes" in msg, msg


# ---- the own peer dies mid-run -------------------------------------------


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        out += kids
        todo += kids
    return out


@pytest.mark.parametrize("bench,params,what", [
    ("net.tcp_rtt", [], "round trips"),
    ("net.udp_rtt", [], "round trips"),
    ("net.tcp_bw", ["--param", "duration=500"], "samples"),
])
@pytest.mark.slow  # ~4 s each
def test_a_killed_own_peer_is_an_error_and_the_run_goes_on(probe, bench, params, what):
    with probe_started(probe, "run", bench, "syscall.getuid", *params, "--min-time", "3", "--max-time", "3",
                       "--max-samples", "10000000", "--quiet") as p:
        peer = wait_children(p.pid, 1)[0]
        time.sleep(0.7)  # into the measurement
        seen = descendants(p.pid)
        os.kill(peer, signal.SIGKILL)
        r = probe_finished(p)
    assert r.rc == 1, r.stderr
    (error,) = r.of_type("error")
    assert error["bench"] == bench
    assert error["message"].startswith("peer 127.0.0.1:"), error
    assert f" {what}" in error["message"] and "after" in error["message"], error
    assert r.result("syscall.getuid")
    assert wait_gone(seen) == []


@pytest.mark.slow
def test_no_process_is_left_after_a_run(probe):
    p = subprocess.Popen([probe, "run", "net.tcp_close", "--param", "side=passive", "--min-time", "1",
                          "--max-time", "1.5", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = set()
    while p.poll() is None:
        seen.update(descendants(p.pid))
        time.sleep(0.05)
    assert p.wait() == 0
    assert seen  # the own peer, and session processes
    assert wait_gone(sorted(seen)) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_own_peer_does_not_outlive_a_killed_probe(probe, sig):
    p = subprocess.Popen([probe, "run", "net.tcp_rtt", "--min-time", "30", "--max-time", "30", "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        kids = wait_children(p.pid, 1)
        time.sleep(0.3)
        seen = descendants(p.pid)
    finally:
        p.send_signal(sig)
        p.wait(timeout=10)
    assert kids and wait_gone(seen) == []


# ---- losses ----------------------------------------------------------------


def udp_session_pid(probe_pid: int, timeout: float = 10) -> int:
    """The own peer's udp session process (the peer's child)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for peer in children(probe_pid):
            sessions = children(peer)
            if sessions:
                return sessions[0]
        time.sleep(0.05)
    raise AssertionError("no session process")


def stop_the_udp_session(probe: str, seconds: float | None, *budget: str) -> ProbeRun:
    """Runs net.udp_rtt and stops its session process (SIGSTOP) for `seconds`
    (None: for good) while it measures."""
    with probe_started(probe, "run", "net.udp_rtt", *budget, "--quiet") as p:
        sess = udp_session_pid(p.pid)
        time.sleep(0.5)
        os.kill(sess, signal.SIGSTOP)
        if seconds is not None:
            time.sleep(seconds)
            os.kill(sess, signal.SIGCONT)
        return probe_finished(p)


# Slow-marked to keep the default run under 5 minutes (~6 s); CI runs it.
@pytest.mark.slow
def test_udp_losses_are_counted_not_timed(probe):
    """The session stopped for 1.5 s: the datagram in flight gets no
    answer within 1 s (lost, then a late answer: stale); the one sent after
    that loss is answered when the session resumes, about 0.5 s later — a
    true round trip, timed. No sample holds a loss's 1 s wait, the figure
    stays a round trip's, and the run ends ok."""
    r = stop_the_udp_session(probe, 1.5, "--min-time", "4", "--max-time", "6", "--max-samples", "10000000")
    assert r.rc == 0, r.stderr
    res = r.result("net.udp_rtt")
    assert res["extra"]["lost"] >= 1 and res["extra"]["loss_fraction"] > 0, res["extra"]
    (samples,) = r.of_type("samples")
    assert res["batch"] == 1, res["batch"]  # a round trip is microseconds: one by one
    assert max(samples["values"]) < 1_000_000_000  # the loss timeout: a timed loss is >= 1 s
    assert res["median"] < 10_000_000


@pytest.mark.slow  # ~6 s: five 1 s loss timeouts
def test_too_many_udp_losses_are_an_error(probe):
    # --max-samples as in the test above: on a fast machine the default limit
    # ends the run before the session is stopped.
    r = stop_the_udp_session(probe, None, "--min-time", "20", "--max-time", "20", "--max-samples", "10000000")
    assert r.rc == 1, r.stderr
    (error,) = r.of_type("error")
    assert "datagrams lost (5 in a row; no answer within 1000 ms)" in error["message"], error


@contextmanager
def netns() -> Iterator[str]:
    """A network namespace with its loopback up, removed on every path."""
    name = f"osmnet{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], check=False)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a network namespace)")


def in_netns(ns: str, probe: str, *args: str, user: tuple[str, ...] = ()) -> list[dict]:
    p = subprocess.run(["ip", "netns", "exec", ns, *user, probe, "run", *args, *TINY],
                       capture_output=True, text=True, timeout=60)
    return [json.loads(x) for x in p.stdout.splitlines()]


@needs_root
def test_icmp_ping_socket_raw_socket_and_skip(probe):
    """Both socket kinds and the skip, with ping_group_range set in a
    namespace of our own (the host's stays as it is)."""
    with netns() as ns:
        sysctl = ["ip", "netns", "exec", ns, "sysctl", "-qw"]
        subprocess.run([*sysctl, "net.ipv4.ping_group_range=0 2147483647"], check=True)
        for method, kind in (("ping", "ping socket"), ("raw", "raw socket")):
            recs = in_netns(ns, probe, "net.icmp_rtt", "--param", f"method={method}", "--param", "family=ipv4,ipv6")
            results = [x for x in recs if x["type"] == "result"]
            assert len(results) == 2, recs
            for res in results:
                assert res["info"]["icmp_method"].startswith(kind)
                check_plausible(res)
        subprocess.run([*sysctl, "net.ipv4.ping_group_range=1 0"], check=True)
        nobody = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        skip = next(x for x in in_netns(ns, probe, "net.icmp_rtt", user=nobody) if x["type"] == "skip")
        assert 'net.ipv4.ping_group_range (now "1 0"' in skip["reason"] and "CAP_NET_RAW" in skip["reason"], skip


@needs_root
@pytest.mark.parametrize("route,words", [
    ("unreachable", "host unreachable"),
    ("prohibit", "prohibited"),
])
def test_icmp_to_an_unreachable_host_names_the_icmp_error(probe, route, words):
    """An unreachable host is named so, never 'refused ... nothing listens
    there' (a TCP or UDP port's words); peer_version claims no answer."""
    with netns() as ns:
        subprocess.run(["ip", "netns", "exec", ns, "ip", "route", "add", route, "10.255.255.1"], check=True)
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647"],
                       check=True)
        recs = in_netns(ns, probe, "net.icmp_rtt", "--param", "peer=10.255.255.1", "--param", "method=ping")
    err = next(x for x in recs if x["type"] == "error")
    assert f"peer 10.255.255.1: {words}" in err["message"] and "nothing listens" not in err["message"], err
    assert "answers" not in err["info"].get("peer_version", ""), err["info"]


@pytest.mark.slow  # ~9 s: loss timeouts, then five in a row
@needs_root
def test_icmp_echoes_ignored_are_losses_then_an_error(probe):
    with netns() as ns:
        def ignore(on: int) -> None:
            subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv4.icmp_echo_ignore_all={on}"],
                           check=True)

        p = subprocess.Popen(["ip", "netns", "exec", ns, probe, "run", "net.icmp_rtt", "--min-time", "3",
                              "--max-time", "5", "--max-samples", "10000000", "--quiet"],
                             stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None
        while json.loads(p.stdout.readline())["type"] != "progress":
            pass  # the meta record; then the benchmark starts
        time.sleep(0.5)
        ignore(1)
        time.sleep(1.5)
        ignore(0)
        out, _ = p.communicate(timeout=30)
        res = next(json.loads(x) for x in out.splitlines() if json.loads(x)["type"] == "result")
        assert res["extra"]["lost"] >= 1 and res["median"] < 10_000_000, (res["extra"], res["elapsed_s"], out)
        ignore(1)
        t0 = time.monotonic()
        error = next(x for x in in_netns(ns, probe, "net.icmp_rtt") if x["type"] == "error")
        assert time.monotonic() - t0 < 20
        assert "5 in a row" in error["message"] and "icmp_echo_ignore_all" in error["message"], error


def test_suites(probe):
    """quick: tcp_rtt size 1 alone; standard: modest; full: the size sweeps."""
    cat = json.loads(run_probe(probe, "list", "--json").stdout)
    net = {b["name"]: b for b in cat["benchmarks"] if b["family"] == "net"}
    assert set(net) == set(NET)
    assert [n for n, b in net.items() if "quick" in b["suites"]] == ["net.tcp_rtt"]
    assert net["net.tcp_rtt"]["sweep"] == []
    assert all("standard" in b["suites"] and "full" in b["suites"] for b in net.values())
    assert len(net["net.udp_rtt"]["sweep"]) == 3 and len(net["net.tcp_bw"]["sweep"]) == 2
    assert [x["size"] for x in net["net.tcp_rtt"]["sweep_full"]] == [1, 64, 1024, 16384, 65536, 1 << 20]
    assert len(net["net.tcp_bw"]["sweep_full"]) == 6


def test_methods_note_names_the_timed_regions():
    note = (Path(__file__).resolve().parents[2] / "docs" / "methods" / "net.md").read_text()
    for word in ("sockperf", "iperf3", "TIME_WAIT", "half", "goodput", "ping_group_range", "SO_LINGER"):
        assert word in note, word
