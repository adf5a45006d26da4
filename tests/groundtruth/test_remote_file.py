"""Ground truth, remote files: a directory on a "remote machine" (a network
namespace behind a veth pair, served by sshd, mounted here with sshfs;
tests/netlab.py) behind a TBF rate limit of 100 Mbit/s. A cold sequential
read of a 64 MiB file there measures the limit minus the protocol overhead
stated below, within 15 %; without the limit it is faster; the namespace,
the mount and the qdisc are gone afterwards, also when a test fails.

The overhead, i.e. what of the 12.5 MB/s the TBF lets through is file data
(docs/methods/file.md, "Remote files"):
- TBF counts each frame's length from its Ethernet header on (a veth has no
  preamble, FCS or inter-frame gap; a GSO packet counts as its segments).
  With a 1500-byte MTU and TCP timestamps a segment carries 1448 bytes of
  data in 1448 + 32 (TCP) + 20 (IPv4) + 14 (Ethernet) = 1514 bytes.
- SSH (chacha20-poly1305, pinned by the lab) sends the SFTP stream in
  channel-data packets of 32768 bytes (OpenSSH's packet size for a session
  channel), each with 9 bytes of message header (type, channel, length),
  4 of packet length, 1 of padding length, 6 of padding (to a multiple of
  8) and a 16-byte tag: 36 bytes per 32768.
- SFTP answers each 32768-byte read (sshfs's request size, pinned by the
  lab) with a 13-byte header (length, type, id, data length).
Reads of ACKs, SFTP requests and SSH window adjustments flow the other way,
which has no limit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

import netlab
from probe_helpers import ProbeRun, optional_tool_missing, run_probe

RATE_BIT_S = 100_000_000  # 100 Mbit/s: 12.5 MB/s on the wire
MSS, FRAME = 1448, 1448 + 32 + 20 + 14
SSH_DATA, SSH_PACKET = 32768, 32768 + 9 + 4 + 1 + 6 + 16
SFTP_READ, SFTP_REPLY = netlab.SFTP_READ, netlab.SFTP_READ + 13
PAYLOAD_SHARE = (MSS / FRAME) * (SSH_DATA / SSH_PACKET) * (SFTP_READ / SFTP_REPLY)  # 0.95498
EXPECTED_MB_S = RATE_BIT_S / 8 * PAYLOAD_SHARE / 1e6  # 11.937 MB/s of file data
TOLERANCE = 0.15

FILE = ["--param", "file_size=64M", "--param", "block=1M"]
# At 12 MB/s one pass over 64 MiB takes 5.6 s; this asks for one pass and
# stops within about two.
LIMITED_BUDGET = ["--min-samples", "64", "--min-time", "5", "--max-time", "10", "--quiet"]
FREE_BUDGET = ["--min-samples", "64", "--min-time", "0.5", "--max-time", "3", "--quiet"]


@pytest.fixture
def lab() -> Iterator[netlab.RemoteDir]:
    why = netlab.missing()
    if why:
        optional_tool_missing(why)
    with netlab.remote_dir(RATE_BIT_S) as remote:
        yield remote
    assert netlab.leftovers() == []


def cold_read(probe: str, lab: netlab.RemoteDir, budget: list[str]) -> tuple[ProbeRun, dict]:
    r = run_probe(probe, "run", "file.seq_read_cold", "--param", f"dir={lab.mount}", *FILE, *budget, timeout=300)
    assert r.rc == 0, r.stderr + str(r.of_type("skip") + r.of_type("error"))
    res = r.result("file.seq_read_cold")
    assert res["info"]["fs_type"] == "fuse.sshfs", res["info"]
    assert res["info"]["remote"] == "yes", res["info"]
    assert res["info"]["cache_bypass"], res["info"]
    assert list(lab.served.iterdir()) == []  # the work directory went with the probe
    return r, res


@pytest.mark.slow
def test_cold_read_of_a_remote_file_measures_the_link(probe: str, lab: netlab.RemoteDir) -> None:
    lab.set_rate(RATE_BIT_S)
    assert "tbf" in lab.qdisc() and "100Mbit" in lab.qdisc()
    _, limited = cold_read(probe, lab, LIMITED_BUDGET)
    mb_s = limited["extra"]["mb_per_s"]
    assert abs(mb_s / EXPECTED_MB_S - 1) <= TOLERANCE, (
        f"{mb_s:.3f} MB/s measured; the link carries {EXPECTED_MB_S:.3f} MB/s of file data "
        f"(100 Mbit/s less {100 * (1 - PAYLOAD_SHARE):.2f} % of protocol overhead)")
    # The per-block figure agrees: 1 MiB in the median block time.
    per_block = (1 << 20) / (limited["median"] * 1e-9) / 1e6
    assert abs(per_block / EXPECTED_MB_S - 1) <= TOLERANCE, per_block

    lab.set_rate(None)
    assert "tbf" not in lab.qdisc()
    _, free = cold_read(probe, lab, FREE_BUDGET)
    assert free["extra"]["mb_per_s"] > 1.5 * mb_s, (free["extra"]["mb_per_s"], mb_s)
    print(f"remote cold read: {mb_s:.3f} MB/s at 100 Mbit/s (expected {EXPECTED_MB_S:.3f}), "
          f"{per_block:.3f} MB/s from the median block, {free['extra']['mb_per_s']:.1f} MB/s unlimited; "
          f"bypass {limited['info']['cache_bypass']}, n {limited['n']}")


def test_the_overhead_arithmetic() -> None:
    assert FRAME == 1514 and SSH_PACKET == 32804 and SFTP_REPLY == 32781
    assert EXPECTED_MB_S == pytest.approx(11.937, abs=0.001)


def test_the_lab_is_removed_when_a_test_fails() -> None:
    why = netlab.missing()
    if why:
        optional_tool_missing(why)
    seen = {}
    with pytest.raises(RuntimeError, match="the test failed"):
        with netlab.remote_dir(RATE_BIT_S) as remote:
            (remote.mount / "file").write_text("over ssh")
            assert (remote.served / "file").read_text() == "over ssh"
            seen = {"ns": remote.ns, "mount": str(remote.mount), "root": remote.root}
            assert "tbf" in remote.qdisc()
            raise RuntimeError("the test failed")
    assert netlab.leftovers() == []
    assert seen["ns"] not in netlab._namespaces()
    assert not any(p == seen["mount"] for p, _ in netlab._mounts())
    assert not Path(seen["root"]).exists()


def test_a_lab_left_by_a_killed_run_is_removed_by_the_next(tmp_path: Path) -> None:
    why = netlab.missing()
    if why:
        optional_tool_missing(why)
    pid, (ns, mount, root) = netlab.abandoned_lab(f"""
with netlab.remote_dir({RATE_BIT_S}) as lab:
    print(lab.ns, lab.mount, lab.root, flush=True)""")
    left = netlab.leftovers(pid)
    assert f"netns {ns}" in left and f"mount {mount}" in left and root in left
    removed = netlab.remove_stale()
    assert f"netns {ns}" in removed and mount in removed and root in removed
    assert netlab.leftovers(pid) == []
    assert not os.path.exists(root)
