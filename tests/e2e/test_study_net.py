"""`osmeter study net` end to end against the FakeProbe (tests/fake_probe.py
knows the net family: a model machine whose remote peer sits behind a
100 Mbit/s link) and a stand-in peer that answers the hello as `osmeter
serve` does (docs/peer.md): the parts, one stored run, the table, the
figures, the peer checked before anything runs, and what happens when a
part or a benchmark fails; and the quick study with the real probe, on
loopback and against a peer in a network namespace (slow)."""

from __future__ import annotations

import re

import csv
import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from osmeter.errors import EXIT_BENCH_ERRORS, EXIT_PROBE, EXIT_USAGE

from ..conftest import FakeProbe, db_rows, osmeter_command, subprocess_env

pytest.importorskip("matplotlib")

QUICK_LATENCY = 3 * 3 + 1 + 2  # 3 sizes x TCP/UDP/ICMP, connect, close on both sides
QUICK_BW = 3 * 2  # 3 write sizes x 2 directions


class StandInPeer:
    """Listens on loopback and answers every hello with `answer` (default OK)."""

    def __init__(self, answer: bytes = b"OK 0.3.0 mtu=1500\n") -> None:
        self.answer = answer
        self.hellos: list[str] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\n" not in data:
                    chunk = conn.recv(512)
                    if not chunk:
                        break
                    data += chunk
                self.hellos.append(data.decode())
                conn.sendall(self.answer)

    def close(self) -> None:
        # close() alone does not wake an accept() blocked in another thread
        # on Linux; shutdown() does (it fails with EINVAL there).
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.thread.join(timeout=5)
        assert not self.thread.is_alive(), "the stand-in peer's thread did not stop"


@pytest.fixture
def peer() -> Iterator[StandInPeer]:
    p = StandInPeer()
    yield p
    p.close()


@pytest.fixture
def runs(fake_probe: FakeProbe, tmp_path: Path) -> Path:
    """The file the FakeProbe counts its invocations in."""
    path = tmp_path / "runs"
    fake_probe.set(runs_file=path)
    return path


def table(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((out / "net-study.csv").open()))


@pytest.mark.slow  # a study (about 3 s; CI runs it), as the README's slow tests are
def test_loopback_only_says_the_remote_column_is_absent(cli, runs: Path, store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = cli("study", "net", "--quick", "-o", str(out))
    assert r.code == 0, r.err
    assert runs.read_text().count("run") == 2  # latencies, bandwidth: one stored run
    assert db_rows(store_path, "SELECT label, status FROM runs") == [("net study", "complete")]
    (params,) = db_rows(store_path, "SELECT params FROM runs")
    recorded = json.loads(params[0])
    assert recorded["study"] == "net" and recorded["peer"] is None and len(recorded["parts"]) == 2
    rows = table(out)
    assert len(rows) == QUICK_LATENCY + QUICK_BW and {x["where"] for x in rows} == {"loopback"}
    assert [x["size_bytes"] for x in rows if x["benchmark"] == "net.tcp_rtt"] == ["16", "1024", "16384"]
    tcp1 = next(x for x in rows if x["benchmark"] == "net.tcp_rtt" and x["size_bytes"] == "16")
    assert float(tcp1["median_us"]) == pytest.approx(20.0)  # the model's 20 us
    assert float(tcp1["min_us"]) == pytest.approx(18.0)
    bw = {(x["variant"], x["size_bytes"]): float(x["mbit_per_s"]) for x in rows if x["part"] == "bandwidth"}
    assert bw[("send", "131072")] == pytest.approx(20000) and bw[("recv", "16384")] == pytest.approx(4500)
    assert {x["variant"] for x in rows if x["benchmark"] == "net.tcp_close"} == {"active", "passive"}
    for name in ("net-rtt-by-size", "net-bw-by-write-size"):
        assert (out / f"{name}.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (out / "net-loopback-vs-remote.svg").exists()
    assert "the remote column is absent" in r.out and "osmeter serve --listen ADDR:PORT --token-file F" in r.out
    assert "the remote column is absent" in r.err  # said before the run too
    assert re.search(r"TCP round trip of 16 B, (same|cross) CPU: 20\.00 us, 2\.50 x ping's", r.out)  # placement said
    assert (out / "net-study.txt").read_text() in r.out


# Slow-marked to keep the default run under 5 minutes (~4 s); CI runs it.
@pytest.mark.slow
def test_with_a_peer_loopback_against_remote(cli, runs: Path, store_path: Path, tmp_path: Path,
                                            peer: StandInPeer) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    out = tmp_path / "out"
    address = f"127.0.0.1:{peer.port}"
    r = cli("study", "net", "--quick", "-o", str(out), "--peer", address, "--token-file", str(token))
    assert r.code == 0, r.err
    assert peer.hellos == ["OSMPEER 1 close token=s3cret\n"]  # checked once, before the run
    assert f"the peer {address} answered: osmeter-probe 0.3.0 mtu=1500" in r.err
    assert runs.read_text().count("run") == 4
    (params,) = db_rows(store_path, "SELECT params FROM runs")
    parts = json.loads(params[0])["parts"]
    assert [p["names"] for p in parts] == [list(parts[0]["names"]), ["net.tcp_bw"]] * 2
    assert f"peer={address}" in parts[2]["params"] and f"token_file={token}" in parts[2]["params"]
    assert not any(a.startswith(("peer=", "token_file=")) for p in parts[:2] for a in p["params"])
    rows = table(out)
    assert len(rows) == 2 * (QUICK_LATENCY + QUICK_BW)
    assert {x["where"] for x in rows} == {"loopback", f"remote {address}"}
    remote_send = [float(x["mbit_per_s"]) for x in rows if x["where"] != "loopback" and x["variant"] == "send"]
    assert remote_send == [pytest.approx(95.64)] * 3  # the model's 100 Mbit/s link
    assert (out / "net-loopback-vs-remote.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = r.out.split("loopback against remote\n", 1)[1]
    tcp = next(line for line in summary.splitlines() if line.startswith("TCP round trip, 16 B"))
    assert float(tcp.split()[-1]) == pytest.approx(5.13)  # remote / loopback: the model's 102.56 / 20.00 us
    assert f"remote {address}: peer {address}, peer version 0.3.0, path mtu 1500, mss 1448" in r.out
    assert "the remote column is absent" not in r.out


@pytest.mark.parametrize("args, message", [
    (["--peer", "192.0.2.7"], "expected HOST:PORT"),
    (["--peer", "192.0.2.7:0"], "expected HOST:PORT"),
    (["--peer", "::1:7478"], "IPv6 address in brackets"),
    (["--peer", "192.0.2.7:7478"], "needs its token: give --token-file F"),
    (["--token-file", "/etc/hostname"], "--token-file goes with --peer"),
    (["--peer", "192.0.2.7:7478", "--token-file", "/nonexistent/token"], "No such file or directory"),
])
def test_bad_peer_arguments_are_refused_before_anything(cli, runs: Path, store_path: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, args, message) -> None:
    monkeypatch.delenv("OSMETER_PEER_TOKEN", raising=False)
    r = cli("study", "net", "-o", str(tmp_path / "out"), *args)
    assert r.code == EXIT_USAGE and message in r.err, r.err
    assert not runs.exists() and not store_path.exists() and not (tmp_path / "out").exists()


def test_a_peer_that_is_down_or_refuses_is_said(cli, runs: Path, store_path: Path, tmp_path: Path) -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    r = cli("study", "net", "-o", str(tmp_path / "out"), "--peer", f"127.0.0.1:{port}")
    assert r.code == EXIT_USAGE and "cannot reach the peer" in r.err and "Connection refused" in r.err
    assert "osmeter serve --listen" in r.err
    refusing = StandInPeer(b"ERR token\n")
    not_a_peer = StandInPeer(b"SSH-2.0-OpenSSH_9.2\r\n")
    try:
        token = tmp_path / "token"
        token.write_text("wrong\n")
        r = cli("study", "net", "-o", str(tmp_path / "out"), "--peer", f"127.0.0.1:{refusing.port}",
                "--token-file", str(token))
        assert r.code == EXIT_USAGE and "refused the study: token (check --token-file)" in r.err, r.err
        r = cli("study", "net", "-o", str(tmp_path / "out"), "--peer", f"127.0.0.1:{not_a_peer.port}")
        assert r.code == EXIT_USAGE and "is not an osmeter peer" in r.err and "SSH-2.0" in r.err
    finally:
        refusing.close()
        not_a_peer.close()
    assert not runs.exists() and not store_path.exists()


# Slow-marked to keep the default run under 5 minutes (~3.5 s); CI runs it.
@pytest.mark.slow
def test_the_token_may_come_from_the_environment(cli, runs: Path, tmp_path: Path, peer: StandInPeer,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSMETER_PEER_TOKEN", "from-env")
    r = cli("study", "net", "--quick", "-o", str(tmp_path / "out"), "--peer", f"127.0.0.1:{peer.port}")
    assert r.code == 0, r.err
    assert peer.hellos == ["OSMPEER 1 close token=from-env\n"]


@pytest.mark.slow
def test_a_benchmark_whose_peer_vanishes_is_an_error_row_and_the_run_goes_on(
        cli, fake_probe: FakeProbe, runs: Path, store_path: Path, tmp_path: Path) -> None:
    fake_probe.set(net_error="net.tcp_connect", net_skip="net.icmp_rtt")
    out = tmp_path / "out"
    r = cli("study", "net", "--quick", "-o", str(out))
    assert r.code == EXIT_BENCH_ERRORS, r.err
    rows = table(out)
    assert len(rows) == QUICK_LATENCY + QUICK_BW
    (connect,) = [x for x in rows if x["benchmark"] == "net.tcp_connect"]
    assert connect["status"].startswith("error: the peer closed the connection mid-run")
    assert all(x["status"].startswith("skip: no ICMP socket") for x in rows if x["benchmark"] == "net.icmp_rtt")
    assert all(x["status"] == "ok" for x in rows if x["part"] == "bandwidth")
    assert db_rows(store_path, "SELECT status FROM runs") == [("complete",)]
    assert "ICMP" not in r.out.split("loopback against remote\n", 1)[1].split("\n\n")[0]  # no ping row without ping


@pytest.mark.slow
def test_a_part_that_dies_stops_the_study_and_keeps_what_ran(cli, fake_probe: FakeProbe, runs: Path,
                                                            store_path: Path, tmp_path: Path) -> None:
    fake_probe.set(die_after=2, die_run=2)  # the bandwidth part is killed after two instances
    out = tmp_path / "out"
    r = cli("study", "net", "--quick", "-o", str(out))
    assert r.code == EXIT_PROBE, r.err
    assert db_rows(store_path, "SELECT status FROM runs") == [("incomplete",)]
    rows = table(out)
    assert len(rows) == QUICK_LATENCY + 2
    assert (out / "net-rtt-by-size.svg").exists()


# --- the real probe ------------------------------------------------------------


def study(out: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    p = subprocess.run(osmeter_command("study", "net", "--quick", "-o", str(out), *args), capture_output=True,
                       text=True, env=subprocess_env(), timeout=300)
    return p, time.monotonic() - started


def plausible(rows: list[dict[str, str]]) -> None:
    for x in rows:
        assert x["status"] == "ok", x
        if x["part"] == "bandwidth":
            assert 10 < float(x["mbit_per_s"]) < 1e6, x
        else:
            assert 0.5 < float(x["median_us"]) < 100_000, x


@pytest.mark.slow  # ~15-30 s: the quick study on loopback, measured for real
def test_quick_study_with_the_real_probe(real_probe: str, store_path: Path, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("net.icmp_rtt may need root here (a raw socket, or ping_group_range); the FakeProbe tests cover the rest")
    out = tmp_path / "out"
    p, elapsed = study(out)
    assert p.returncode == 0, p.stderr[-3000:]
    assert elapsed < 60, f"the quick study took {elapsed:.0f} s on loopback"
    rows = table(out)
    assert len(rows) == QUICK_LATENCY + QUICK_BW and {x["where"] for x in rows} == {"loopback"}
    plausible(rows)
    assert db_rows(store_path, "SELECT label, status FROM runs") == [("net study", "complete")]
    for name in ("net-rtt-by-size", "net-bw-by-write-size"):
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "the remote column is absent" in p.stdout and "x ping's" in p.stdout


@pytest.mark.slow  # ~40 s: the quick study on loopback and against a peer in a namespace at 100 Mbit/s
def test_quick_study_against_a_peer_in_a_namespace(real_probe: str, store_path: Path, tmp_path: Path) -> None:
    import netlab
    from probe_helpers import optional_tool_missing

    why = netlab.missing(files=False)
    if why:
        optional_tool_missing(why)
    out = tmp_path / "out"
    with netlab.namespace_lab(100_000_000, ends="both") as lab:
        peer = lab.serve_peer(real_probe)
        p, elapsed = study(out, "--peer", peer.address, "--token-file", str(peer.token_file))
    assert netlab.leftovers() == []
    assert p.returncode == 0, p.stderr[-3000:]
    rows = table(out)
    assert len(rows) == 2 * (QUICK_LATENCY + QUICK_BW)
    plausible(rows)
    remote = [x for x in rows if x["where"] == f"remote {peer.address}"]
    assert len(remote) == QUICK_LATENCY + QUICK_BW
    for x in remote:
        if x["part"] == "bandwidth":  # 100 Mbit/s less the headers: 95.6 Mbit/s of goodput (test_net_remote.py)
            assert 80 < float(x["mbit_per_s"]) < 105, x
    assert (out / "net-loopback-vs-remote.svg").exists()
    assert f"remote {peer.address}" in p.stdout.split("loopback against remote\n", 1)[1].splitlines()[0]
    assert "path mtu 1500, mss 1448" in p.stdout
    print(f"study net --quick with a namespace peer: {elapsed:.0f} s")
