"""osmeter report --fleet ID: the fleet run's hosts with their status, the comparison by host with the sysinfo
diff, and every run's section, as HTML, Markdown and text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from osmeter import errors

from ..fleet_runs import FLEET, add_host_run
from ..synthetic import MACHINE, noisy
from .test_report import Page, assert_self_contained


@pytest.fixture
def fleet(store_path: Path) -> tuple[int, int, int, int]:
    """host-a, host-b (twice as slow a syscall, another kernel), host-c incomplete, host-d failed (nothing ok)."""
    rng = np.random.default_rng(11)
    null, call = noisy(rng, 100.0, 1000), noisy(rng, 1.5, 1000)
    a = add_host_run(store_path, [("syscall.null", {}, "ns", null), ("cpu.call", {"args": 0}, "ns", call)], "host-a")
    b = add_host_run(store_path, [("syscall.null", {}, "ns", null * 2), ("cpu.call", {"args": 0}, "ns", call)],
                     "host-b", machine=dict(MACHINE, hostname="b", kernel_release="6.12.0-rt"))
    c = add_host_run(store_path, [("cpu.call", {"args": 0}, "ns", call)], "host-c", status="incomplete")
    d = add_host_run(store_path, [], "host-d", status="incomplete",
                     failed=[("syscall.null", {}, "error", "probe: exec format error")])
    return a, b, c, d


def test_html_fleet_report(cli, fleet, tmp_path: Path) -> None:
    out = tmp_path / "fleet.html"
    r = cli("report", "--fleet", FLEET, "-o", str(out))
    assert r.code == 0, r.err
    text = out.read_text()
    assert_self_contained(text)
    page = Page(text)
    assert {"hosts", "heatmap-by", "sysinfo-diff", "run-1", "run-2", "run-3", "run-4"} <= page.ids()
    hosts = [a["class"] for t, a in page.tags if t == "tr" and (a.get("class") or "").startswith("host ")]
    assert hosts == ["host complete", "host complete", "host incomplete", "host failed"]
    assert "4 hosts: 2 complete, 1 incomplete, 1 failed" in text
    assert "host unreachable (ssh: connection refused)" in text  # an incomplete run's reason
    heat = text[text.index('id="heatmap-by"'):text.index("Sysinfo that differs")]
    assert "+100" in heat and "host-d" in heat and ">error<" in heat
    diff = text[text.index('id="sysinfo-diff"'):]
    assert "kernel_release" in diff and "6.12.0-rt" in diff
    assert text.index('id="hosts"') < text.index('id="heatmap-by"') < text.index('id="run-1"')


def test_markdown_and_text_fleet_report(cli, fleet, tmp_path: Path) -> None:
    out = tmp_path / "fleet.md"
    assert cli("report", "--fleet", "latest", "-o", str(out)).code == 0
    md = out.read_text()
    assert md.startswith(f"# osmeter fleet report: {FLEET}")
    rows = [l for l in md.splitlines() if l.startswith("| host-")]
    assert [l.split("|")[3].strip().split(":")[0] for l in rows[:4]] == ["complete", "complete", "incomplete",
                                                                           "failed"]
    heat = md[md.index("## Change against host-a, by host"):md.index("## Sysinfo that differs")]
    assert "| syscall.null | ns | " in heat and "+100.0% slower" in heat and "error" in heat
    assert "| kernel\\_release |" in md or "| kernel_release |" in md
    assert md.count("\n## Run ") == 4
    r = cli("report", "--fleet", FLEET, "--format", "txt")
    assert r.code == 0 and r.out.startswith(f"fleet run {FLEET}: 4 hosts: 2 complete, 1 incomplete, 1 failed")
    assert "+100.0% slower" in r.out and "sysinfo that differs" in r.out


def test_a_fleet_of_one_host_has_no_comparison(cli, store_path: Path) -> None:
    add_host_run(store_path, [("syscall.null", {}, "ns", noisy(np.random.default_rng(1), 10.0, 100))], "solo")
    r = cli("report", "--fleet", FLEET, "--format", "md")
    assert r.code == 0 and "No comparison by host: compare --by host needs at least two columns" in r.out


def test_bad_fleet_report_input(cli, fleet) -> None:
    r = cli("report", "--fleet", FLEET, "1")
    assert r.code == errors.EXIT_USAGE and "give run ids or --fleet, not both" in r.err
    r = cli("report", "--fleet", "fleet-none")
    assert r.code == errors.EXIT_NOT_FOUND and "no fleet run 'fleet-none'" in r.err


def test_hosts_that_stored_nothing_come_from_the_fleet_state(cli, fleet) -> None:
    """A host that failed before storing a run (unreachable) is only in the
    fleet state of the machine that ran the fleet: the report lists it there."""
    from osmeter.fleet import state as fleet_state

    st = fleet_state.FleetState(FLEET, "t", "/inv", "all", "quick", {}, "store",
                                hosts={"host-a": fleet_state.HostState("stored", run_id=1),
                                       "host-e": fleet_state.HostState("failed", "unreachable: ssh: connect refused")})
    fleet_state.save(st)
    r = cli("report", "--fleet", FLEET, "--format", "txt")
    assert r.code == 0 and r.out.startswith(f"fleet run {FLEET}: 5 hosts: 2 complete, 1 incomplete, 2 failed"), r.out
    assert "host-e: failed, no run stored: unreachable: ssh: connect refused" in r.out
    assert "host-a: failed" not in r.out


def _svgs(text: str) -> int:
    return text.count("<svg")


def test_run_figures_are_drawn_only_when_asked(cli, fleet, tmp_path: Path) -> None:
    """A fleet report's runs have their tables; their figures (seconds a run) come with --run-figures, each run
    announced on stderr; `osmeter report RUN` still draws a run's figures."""
    plain, drawn = tmp_path / "plain.html", tmp_path / "drawn.html"
    r = cli("report", "--fleet", FLEET, "-o", str(plain))
    assert r.code == 0 and "drawing the figures" not in r.err
    text = plain.read_text()
    assert _svgs(text) == 0 and "without its figures" in text and "--run-figures" in text
    assert 'id="run-1"' in text and "syscall.null" in text[text.index('id="run-1"'):]
    r = cli("report", "--fleet", FLEET, "--run-figures", "-o", str(drawn))
    assert r.code == 0, r.err
    assert "drawing the figures of run 1 (1 of 4)" in r.err and "(4 of 4)" in r.err
    with_figures = drawn.read_text()
    assert _svgs(with_figures) > 0 and "without its figures" not in with_figures
    one = tmp_path / "one.html"
    assert cli("report", "1", "-o", str(one)).code == 0 and _svgs(one.read_text()) > 0


def test_run_figures_needs_a_fleet_and_html(cli, fleet) -> None:
    r = cli("report", "1", "--run-figures")
    assert r.code == errors.EXIT_USAGE and "--run-figures goes with --fleet" in r.err
    r = cli("report", "--fleet", FLEET, "--run-figures", "--format", "md")
    assert r.code == errors.EXIT_USAGE and "HTML only" in r.err and r.out == ""


def test_a_large_fleet_run_leaves_the_runs_sections_out_unless_asked(cli, fleet, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Over fleet.INLINE_RUNS runs (here made 3, the fixture has 4): the hosts, the comparison and a line
    saying how to get a run's section, in every format; --all-runs puts every section back."""
    from osmeter.report import fleet as fleet_report

    monkeypatch.setattr(fleet_report, "INLINE_RUNS", 3)
    line = "The runs' own sections are left out (4 runs): `osmeter report RUN` writes a run's"
    r = cli("report", "--fleet", FLEET, "--format", "txt")
    assert r.code == 0 and line in r.out and "+100.0% slower" in r.out, r.out
    assert "\nprobe " not in r.out  # a run section's heading: "run N: ... \nprobe VERSION, osmeter ..."
    assert "\nprobe " in cli("report", "--fleet", FLEET, "--format", "txt", "--all-runs").out
    md = cli("report", "--fleet", FLEET, "--format", "md").out
    assert "## Change against host-a, by host" in md and md.count("\n## Run ") == 0 and "left out (4 runs)" in md
    out = tmp_path / "fleet.html"
    assert cli("report", "--fleet", FLEET, "-o", str(out)).code == 0
    page = Page(out.read_text())
    assert {"hosts", "heatmap-by"} <= page.ids() and not {"run-1", "run-2", "run-3", "run-4"} & page.ids()
    assert not [a for t, a in page.tags if t == "a" and (a.get("href") or "").startswith("#run-")]  # no dead links
    assert "left out (4 runs)" in out.read_text()

    md = cli("report", "--fleet", FLEET, "--format", "md", "--all-runs").out
    assert md.count("\n## Run ") == 4 and "left out" not in md
    assert cli("report", "--fleet", FLEET, "--format", "md").out.count("\n## Run ") == 0
    monkeypatch.setattr(fleet_report, "INLINE_RUNS", 4)  # as many runs as the limit: every section
    assert cli("report", "--fleet", FLEET, "--format", "md").out.count("\n## Run ") == 4


def test_all_runs_goes_with_fleet(cli, fleet) -> None:
    r = cli("report", "1", "--all-runs")
    assert r.code == errors.EXIT_USAGE and "--all-runs goes with --fleet" in r.err
