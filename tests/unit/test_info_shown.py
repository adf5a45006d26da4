"""A result's `info` (schema.md: the facts in words a benchmark records: net's
peer, its probe version and placement; poll's descriptors; the file family's
file system) and the path MTU reach every view of a run: show (text and
--json), export (JSON and CSV), the Markdown and HTML reports; skips and
errors too. Text from the probe (and, for net, from a remote peer) cannot
drive a terminal or inject markup. Also net.tcp_bw's bits/s in the reports
(issue 12 review)."""

from __future__ import annotations

import csv
import io
import re
import json
from pathlib import Path

import pytest

from osmeter.fmt import fold
from osmeter.model import BenchResult
from osmeter.report import facts as fc
from osmeter.report.text import render_facts, wrap_pieces

from ..conftest import DATA, import_fixture
from .test_report import Page, assert_self_contained

FIXTURE = "run_net_info.jsonl"
PEER_1 = "127.0.0.1:41234 (own peer on CPU 1)"
REMOTE = "192.0.2.7:7478"
DESCRIPTORS = "10 unconnected TCP sockets (AF_INET, SOCK_STREAM), numbers 3..12, all ready (POLLHUP)"
HOSTILE = "0.2\x1b]0;owned\x07\x1b[31m<b onclick=\"x\">&amp;|*_</b>\u202egnp.exe\x9b2J"


def fixture_infos() -> list[dict[str, str] | None]:
    """The info of each instance of the fixture (result, skip or error record), in order."""
    out = []
    for line in (DATA / FIXTURE).read_text().splitlines():
        rec = json.loads(line)
        if rec["type"] in ("result", "skip", "error"):
            out.append(rec.get("info"))
    return out


@pytest.fixture()
def net_run(store_path: Path) -> int:
    return import_fixture(store_path, FIXTURE)


@pytest.fixture()
def hostile_run(store_path: Path, tmp_path: Path) -> int:
    """The fixture with the remote peer's version (the error record) as a hostile peer could send it."""
    lines = []
    for line in (DATA / FIXTURE).read_text().splitlines():
        rec = json.loads(line)
        if rec["type"] == "error":
            rec["info"]["peer_version"] = HOSTILE
        lines.append(json.dumps(rec))
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return import_fixture(store_path, str(path))


def test_show_lists_each_results_facts_skips_and_errors_too(cli, net_run: int) -> None:
    out = cli("show", str(net_run)).out  # a pipe: 100 characters wide; the parameters that vary
    block = out.split(fc.HEADING + ":\n")[1].split("\n\n")[0].splitlines()
    assert block == [
        "  net.tcp_rtt size=1",
        f"    peer={PEER_1}; peer_version=0.2.0; placement=cross_cpu;",
        "    path_mtu=65536",
        "  net.tcp_rtt size=64",
        "    peer=127.0.0.1:41240 (own peer on CPU 1); peer_version=0.2.0; placement=cross_cpu;",
        "    path_mtu=65536",
        "  net.tcp_bw",  # its only instance: the table and the bits/s line give its parameters
        "    peer=127.0.0.1:41250 (own peer on CPU 1); peer_version=0.2.0; placement=cross_cpu;",
        "    path_mtu=65536",
        "  net.icmp_rtt",  # a skip
        "    peer=127.0.0.1 (loopback, no peer process);",
        "    peer_version=none: the host's kernel answers ICMP echo;",
        "    placement=same_cpu (loopback: this kernel answers on the sending CPU)",
        "  net.udp_rtt",  # an error
        f"    peer={REMOTE}; peer_version=0.2.0; placement=remote",
        "  poll.epoll",
        *fold(f"    descriptors={DESCRIPTORS}", 100).split("\n"),  # longer than the line: at its spaces
    ]
    assert max(len(x) for x in block) <= 100
    wide = cli("show", str(net_run), "--wide").out
    assert '  net.tcp_rtt family=ipv4 peer="" placement=cross_cpu size=1 token_file=""\n' in wide


def test_show_json_and_export_json_carry_info_per_result(cli, net_run: int) -> None:
    want = [info or {} for info in fixture_infos()]
    for args in (("show", str(net_run), "--json"), ("export", str(net_run), "--format", "json")):
        doc = json.loads(cli(*args).out)
        assert [r["info"] for r in doc["results"]] == want, args
    assert want[4] == {"peer": REMOTE, "peer_version": "0.2.0", "placement": "remote"}  # the error's


def test_export_csv_has_an_info_column_of_canonical_json(cli, net_run: int) -> None:
    rows = list(csv.DictReader(io.StringIO(cli("export", str(net_run), "--format", "csv").out)))
    assert [json.loads(r["info"]) for r in rows] == [info or {} for info in fixture_infos()]
    assert rows[0]["info"] == json.dumps(fixture_infos()[0], sort_keys=True, separators=(",", ":"))
    assert json.loads(rows[0]["extra"])["path_mtu"] == 65536


def test_export_of_a_run_without_info_gives_empty_objects(cli, store_path: Path) -> None:
    run = import_fixture(store_path, "run_x86_64.jsonl")
    doc = json.loads(cli("export", str(run)).out)
    assert [r["info"] for r in doc["results"]] == [{}] * 5
    assert fc.HEADING not in cli("show", str(run)).out
    assert fc.TITLE not in cli("report", str(run), "--format", "md").out


def test_markdown_report_has_the_facts_and_the_bit_rates(cli, net_run: int) -> None:
    md = cli("report", str(net_run), "--format", "md").out
    section = md.split(f"### {fc.TITLE}")[1].split("### Machine")[0]
    assert (f'| net.tcp_rtt size=1 | peer: {PEER_1}<br>'
            "peer_version: 0.2.0<br>placement: cross_cpu<br>path_mtu: 65536 |") in section
    assert f"| net.udp_rtt | peer: {REMOTE}<br>peer_version: 0.2.0<br>placement: remote |" in section
    assert f"| poll.epoll | descriptors: {DESCRIPTORS} |" in section
    bits = md.split("In bits/s (median x 8")[1].split("\n\n")[1]
    assert bits.startswith("- net.tcp_bw direction=send") and bits.endswith(" Gbit/s")
    assert md.index("### Results") < md.index("In bits/s") < md.index(f"### {fc.TITLE}") < md.index("### Machine")


def test_html_report_has_the_facts_and_the_bit_rates(cli, net_run: int, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert cli("report", str(net_run), "-o", str(out)).code == 0
    text = out.read_text()
    assert_self_contained(text)
    assert f"info-{net_run}" in Page(text).ids()
    table = text.split(f'id="info-{net_run}"')[1].split("</table>")[0]
    assert (f'<td class="mono">net.udp_rtt</td><td class="value"><span class="mono">peer</span>: {REMOTE}<br>'
            '<span class="mono">peer_version</span>: 0.2.0<br><span class="mono">placement</span>: remote</td>') in table
    assert table.count("<tr>") == 7  # the header and six instances (each own peer has its own port)
    bits = text.split('<ul class="bit-rates">')[1].split("</ul>")[0]
    assert "net.tcp_bw direction=send" in bits and bits.endswith(" Gbit/s</li>")


def test_hostile_info_is_shown_safely_everywhere(cli, hostile_run: int, tmp_path: Path) -> None:
    shown = cli("show", str(hostile_run)).out
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown and "\x9b" not in shown
    assert 'peer_version=0.2<b onclick="x">&amp;|*_</b>gnp.exe' in shown  # the text, without what drives a terminal
    doc = json.loads(cli("show", str(hostile_run), "--json").out)
    assert doc["results"][4]["info"]["peer_version"] == HOSTILE  # JSON: exact, as \u escapes
    exported = cli("export", str(hostile_run)).out
    assert "\x1b" not in exported and "\u202e" not in exported and "\\u202e" in exported
    md = cli("report", str(hostile_run), "--format", "md").out
    assert "\x1b" not in md and "\u202e" not in md and not re.search(r"(?<!\\)<b |(?<!\\)</b", md)
    assert "peer_version: 0.2\\<b onclick=\"x\"\\>&amp;\\|\\*\\_\\</b\\>gnp.exe" in md
    out = tmp_path / "r.html"
    assert cli("report", str(hostile_run), "-o", str(out)).code == 0
    text = out.read_text()
    assert "\x1b" not in text and "\u202e" not in text and "<b " not in text
    assert "0.2&lt;b onclick=&quot;x&quot;&gt;&amp;amp;|*_&lt;/b&gt;gnp.exe" in text
    txt = cli("report", str(hostile_run), "--format", "txt").out
    assert "\x1b" not in txt and "\u202e" not in txt


def _result(seq: int, bench: str, params: dict, info: dict | None, extra: dict | None = None) -> BenchResult:
    record = {} if info is None else {"info": info}
    return BenchResult(seq=seq, bench=bench, params=params, status="skip", reason="r", record=record,
                       extra=extra or {})


def test_groups_merge_results_of_one_benchmark_with_the_same_facts() -> None:
    same = {"descriptors": "d"}
    results = [_result(0, "poll.poll", {"nfds": 10}, same), _result(1, "poll.poll", {"nfds": 1000}, same),
               _result(2, "poll.select", {"nfds": 10}, same), _result(3, "poll.select", {"nfds": 1000}, {"x": "y"}),
               _result(4, "poll.select", {"nfds": 5}, same), _result(5, "cpu.call", {}, None),
               _result(6, "net.tcp_rtt", {}, {"peer": "p"}, {"path_mtu": 1500.0, "mss": 1448})]
    groups = fc.groups(results)
    assert [(g.who, g.facts) for g in groups] == [
        ("poll.poll (all 2 instances)", (("descriptors", "d"),)),
        ("poll.select (nfds=10; nfds=5)", (("descriptors", "d"),)),
        ("poll.select nfds=1000", (("x", "y"),)),
        ("net.tcp_rtt", (("peer", "p"), ("path_mtu", "1500"))),  # mss is no fact shown
    ]


def test_facts_skip_non_strings_and_what_the_file_block_shows() -> None:
    r = _result(0, "file.read", {"size": 1}, {"dir": "/d", "fs_type": "ext4", "remote": "no", "file": "/d/f",
                                             "cache_bypass": "O_DIRECT", "odd": 3}, {"path_mtu": float("nan")})
    assert fc.facts(r) == (("cache_bypass", "O_DIRECT"), ("dir", "/d"), ("file", "/d/f"), ("fs_type", "ext4"),
                           ("remote", "no"))
    text = render_facts([r])  # "files measured in" lists dir, fs_type, remote and the bypass method already
    assert text.splitlines() == [fc.HEADING + ":", "  file.read", "    file=/d/f"]
    assert render_facts([_result(0, "file.read", {}, {"dir": "/d"})]) == ""


def test_wrap_pieces_wraps_between_pieces_only() -> None:
    assert wrap_pieces(["aaaa", "bbbb", "cccc"], 16) == ["    aaaa; bbbb;", "    cccc"]
    assert wrap_pieces(["x" * 30, "y"], 16) == ["    " + "x" * 30 + ";", "    y"]
    assert wrap_pieces([], 16) == []
