"""Ground truth, remote network: `osmeter-probe serve` in a network namespace
behind a veth pair (tests/netlab.py, namespace_lab) with a TBF rate limit
on both ends' egress, so both directions of `net.tcp_bw` cross it:

- at 100 Mbit/s and at 1 Gbit/s, `net.tcp_bw` (send and recv) measures the
  goodput the limit lets through, within 10 %;
- `net.tcp_rtt` through the namespace exceeds loopback's: for a message
  larger than TBF's bucket it must, by at least the time the link takes to
  carry what the bucket does not cover;
- the namespace, the veth, its qdiscs and the peer are gone afterwards,
  also when a test fails inside the lab (test_net_lab_cleanup.py: apart,
  because this module's lab stays up for all its measuring tests and a
  process holds one lab at a time).

The goodput, i.e. what of the TBF's rate is TCP payload
(docs/methods/net.md, "Ground truth"): TBF counts each frame's length from
its Ethernet header on (a veth has no preamble, FCS or inter-frame gap);
a GSO packet counts as the segments it is cut into, each with its headers
(measured: the same goodput with GSO on and with `gso_max_segs 1`, at
100 Mbit/s; at 1 Gbit/s this 2-CPU guest reaches the rate only with GSO).
With MTU 1500 and TCP timestamps (Linux's default) a full segment carries
MSS = 1500 - 20 (IPv4) - 20 (TCP) - 12 (timestamp option) = 1448 bytes
of payload in a frame of 1448 + 12 + 20 + 20 + 14 (Ethernet) = 1514
bytes: goodput = rate x 1448 / 1514 = 0.95641 x rate, 95.64 Mbit/s at
100 Mbit/s, 956.4 Mbit/s at 1 Gbit/s. The ACKs flow the other way, through
the other end's TBF, which carries no data in a one-way transfer. The test
checks the MSS and path MTU the benchmark reports (extra.mss,
extra.path_mtu), so the arithmetic is that of the connection measured.
"""

from __future__ import annotations

import math
import os
from typing import Iterator

import pytest

import netlab
from probe_helpers import optional_tool_missing, run_probe

MTU, MSS = 1500, 1448
FRAME = MSS + 12 + 20 + 20 + 14  # 1514 bytes on the veth per full segment
GOODPUT_SHARE = MSS / FRAME  # 0.95641
TOLERANCE = 0.10
RATES = (100_000_000, 1_000_000_000)
BW_BUDGET = ["--min-time", "2", "--max-time", "4", "--quiet"]
RTT_BUDGET = ["--min-time", "0.5", "--max-time", "2", "--quiet"]
BIG = 65536  # a message above TBF's 32 KiB bucket at 100 Mbit/s


@pytest.fixture(scope="module")
def lab(probe: str) -> Iterator[tuple[netlab.Lab, netlab.Peer]]:
    why = netlab.missing(files=False)
    if why:
        optional_tool_missing(why)
    with netlab.namespace_lab() as lab:
        # The peer on CPU 1, the probe on CPU 0, as the loopback peer with
        # placement=cross_cpu: the paths differ, the CPUs do not.
        yield lab, lab.serve_peer(probe, cpu=1 if os.cpu_count() and os.cpu_count() > 1 else None)  # type: ignore[operator]
    assert netlab.leftovers() == []


def remote(peer: netlab.Peer) -> list[str]:
    return ["--param", f"peer={peer.address}", "--param", f"token_file={peer.token_file}"]


def results(probe: str, *argv: str) -> list[dict]:
    r = run_probe(probe, "run", *argv, "--cpu", "0", timeout=300)
    assert r.rc == 0, r.stderr + str(r.of_type("skip") + r.of_type("error"))
    return r.of_type("result")


@pytest.mark.slow  # ~30 s: two rates, both directions, 2-4 s each
@pytest.mark.parametrize("rate", RATES, ids=["100Mbit", "1Gbit"])
def test_tcp_bw_measures_the_link_goodput(probe: str, lab: tuple[netlab.Lab, netlab.Peer], rate: int) -> None:
    net, peer = lab
    net.set_rate(rate, ends="both")
    assert "tbf" in net.qdisc("remote") and "tbf" in net.qdisc("host")
    expected = rate * GOODPUT_SHARE
    got = {}
    for res in results(probe, "net.tcp_bw", *remote(peer), "--param", "direction=send,recv", *BW_BUDGET):
        d = res["params"]["direction"]
        assert res["extra"]["mss"] == MSS and res["extra"]["path_mtu"] == MTU, res["extra"]
        assert res["placement"] == "remote" and res["info"]["peer"].startswith(peer.address), res["info"]
        bits = res["median"] * 8
        assert res["extra"]["bits_per_s"] == pytest.approx(bits, rel=1e-6)
        got[d] = bits
        print(f"net.tcp_bw {d} at {rate / 1e6:g} Mbit/s: {bits / 1e6:.2f} Mbit/s of goodput, expected "
              f"{expected / 1e6:.2f} ({bits / expected:.4f}), n {res['n']}")
    assert set(got) == {"send", "recv"}
    for d, bits in got.items():
        assert abs(bits / expected - 1) <= TOLERANCE, (
            f"{d}: {bits / 1e6:.2f} Mbit/s measured; a TBF of {rate / 1e6:g} Mbit/s carries "
            f"{expected / 1e6:.2f} Mbit/s of TCP payload (x {MSS}/{FRAME})")


def wire_bytes(payload: int) -> int:
    """Bytes TBF counts for `payload` bytes of TCP data in full segments and a last partial one."""
    return payload + math.ceil(payload / MSS) * (FRAME - MSS)


@pytest.mark.slow  # ~15 s
def test_tcp_rtt_through_the_namespace_exceeds_loopback(probe: str, lab: tuple[netlab.Lab, netlab.Peer]) -> None:
    net, peer = lab
    rate = RATES[0]
    net.set_rate(rate, ends="both")
    sizes = f"size=1,{BIG}"
    there = {r["params"]["size"]: r for r in results(probe, "net.tcp_rtt", *remote(peer), "--param", sizes,
                                                       *RTT_BUDGET)}
    here = {r["params"]["size"]: r for r in results(probe, "net.tcp_rtt", "--param", sizes,
                                                      "--param", "placement=cross_cpu", *RTT_BUDGET)}
    # What the bucket does not cover crosses at the link's rate. The echo
    # streams back while the message still arrives (the peer echoes what it
    # reads), through the other end's bucket, so one way's wait is the floor.
    floor_ns = (wire_bytes(BIG) - netlab.burst_bytes(rate)) * 8 / rate * 1e9
    print(f"net.tcp_rtt 1 B: namespace {there[1]['median']:.0f} ns, loopback {here[1]['median']:.0f} ns; "
          f"{BIG} B at {rate / 1e6:g} Mbit/s: namespace {there[BIG]['median']:.0f} ns (at least "
          f"{floor_ns:.0f}), loopback {here[BIG]['median']:.0f} ns")
    assert there[BIG]["median"] > here[BIG]["median"]
    assert there[BIG]["min"] >= floor_ns
    assert there[1]["median"] > 0 and here[1]["median"] > 0


def test_the_overhead_arithmetic() -> None:
    assert FRAME == 1514 and GOODPUT_SHARE == pytest.approx(0.95641, abs=1e-5)
    assert wire_bytes(1448) == 1514 and wire_bytes(1449) == 1514 + 67
    assert netlab.burst_bytes(100_000_000) == 32768 and netlab.burst_bytes(1_000_000_000) == 325000
