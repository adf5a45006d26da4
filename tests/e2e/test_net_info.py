"""End to end with the real probe (issue 12 review): what a net result records
in words (`info`: the peer's address, its probe version, the placement) and
its path MTU reach `osmeter show`, `show --json`, `export` (JSON and CSV)
and the Markdown and HTML reports; net.tcp_bw's bits/s reach the reports."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from pathlib import Path

import pytest

from ..conftest import osmeter_command, subprocess_env

BUDGET = ["--min-time", "0.01", "--max-time", "0.3", "--min-samples", "3", "--repeat", "1"]
OWN_PEER = re.compile(r"127\.0\.0\.1:\d+ \(own peer on CPU \d+\)")


def osmeter(*args: str) -> str:
    p = subprocess.run(osmeter_command(*args), capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.slow  # ~5 s of real runs; unit/test_info_shown.py checks every view of info by default
def test_net_info_is_shown_exported_and_reported(real_probe: str, store_path: Path, tmp_path: Path) -> None:
    osmeter("run", "net.tcp_rtt", "net.tcp_bw", "--param", "size=1", "--param", "duration=50", *BUDGET)
    doc = json.loads(osmeter("export", "latest", "--format", "json"))
    version = doc["run"]["probe_version"]
    results = {r["bench"]: r for r in doc["results"]}
    assert set(results) == {"net.tcp_rtt", "net.tcp_bw"} and all(r["status"] == "ok" for r in results.values())
    for r in results.values():
        info = r["info"]
        assert OWN_PEER.fullmatch(info["peer"]), info
        assert info["peer_version"] == version and info["placement"] == "cross_cpu"
        assert r["extra"]["path_mtu"] >= 1280
    assert json.loads(osmeter("show", "latest", "--json"))["results"] == doc["results"]

    rows = list(csv.DictReader(io.StringIO(osmeter("export", "latest", "--format", "csv"))))
    assert [json.loads(row["info"]) for row in rows] == [r["info"] for r in doc["results"]]

    rtt = results["net.tcp_rtt"]
    shown = osmeter("show", "latest", "--wide")  # one line per fact group, however wide (show folds to 100)
    block = shown.split("recorded with the results (info; docs/schema.md):\n")[1].split("\n\n")[0]
    mtu = int(rtt["extra"]["path_mtu"])
    assert (f"  net.tcp_rtt\n    peer={rtt['info']['peer']}; peer_version={version}; placement=cross_cpu; "
            f"path_mtu={mtu}") in block
    assert "in bits/s (median x 8" in shown

    md = osmeter("report", "latest", "--format", "md")
    assert (f"| net.tcp_rtt | peer: {rtt['info']['peer']}<br>peer_version: {version}<br>placement: cross_cpu"
            f"<br>path_mtu: {mtu} |") in md
    assert re.search(r"^- net\.tcp_bw direction=send .*: [\d.]+ [kMGT]?bit/s$", md, re.M), md

    out = tmp_path / "r.html"
    p = subprocess.run(osmeter_command("report", "latest", "-o", str(out)), capture_output=True, text=True,
                       env=subprocess_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    html = out.read_text()
    table = html.split('class="info"')[1].split("</table>")[0]
    assert f'<span class="mono">peer_version</span>: {version}' in table
    assert f'<span class="mono">peer</span>: {rtt["info"]["peer"]}' in table
    assert re.search(r'<ul class="bit-rates"><li>.*net\.tcp_bw direction=send.*: [\d.]+ [kMGT]?bit/s</li></ul>',
                     html)
