"""`osmeter study rt` end to end against the FakeProbe (tests/fake_probe.py
models the rt family: memory-bound kernels whose tails grow under
stressors) and with the real probe: the parts, one stored run, a table per
configuration, the summary of the finding, the figures, skips shown with
their reason and never drawn, SCHED_FIFO refused said, a part that dies,
bad input refused before anything runs; and `osmeter compare` of two such
runs showing the maxima and variances that changed."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from osmeter.errors import EXIT_PROBE, EXIT_USAGE

from ..conftest import FakeProbe, db_rows, osmeter_command, subprocess_env

pytest.importorskip("matplotlib")

KERNELS = 19
SOME = "bsort,crc,matrix1,st"
N_SOME = 4
TABLES = ("rt-workload-stress0.csv", "rt-workload-stress1-read.csv", "rt-workload-stress1-write.csv",
          "rt-study-ratios.csv", "rt-cyclic.csv", "rt-study.txt")
FIGURES = ("rt-workload-distributions", "rt-deadline-misses", "rt-cyclic-histogram")


@pytest.fixture
def runs(fake_probe: FakeProbe, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the FakeProbe counts its invocations in; its catalogue has the rt family;
    the study plans for two CPUs (the configurations no stress, 1 x read, 1 x write)."""
    from osmeter.studies import rt as study_rt

    path = tmp_path / "runs"
    fake_probe.set(runs_file=path, list_rt=1)
    monkeypatch.setattr(study_rt, "allowed_cpus", lambda: 2)
    return path


def table(out: Path, name: str) -> list[dict[str, str]]:
    return list(csv.DictReader((out / name).open()))


# Slow-marked to keep the default run under 5 minutes (~4 s; the tiny study runs by default); CI runs it.
@pytest.mark.slow
def test_quick_study_tables_figures_and_one_run(cli, runs: Path, store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    # Four kernels (the fake probe's memory-bound matrix1 among them): every kernel the same code path, and a
    # part per kernel and stressed configuration, each a fake probe's start.
    r = cli("study", "rt", "--quick", "-o", str(out), "--jobs", "200", "--cyclic-s", "2", "--kernels", SOME)
    assert r.code == 0, r.err
    # one stored run of 2 + 2 x (4 + 1) probe invocations: unstressed workload and cyclic, then per stressed
    # configuration a workload part per kernel and the cyclic part
    assert runs.read_text().count("run") == 2 + 2 * (N_SOME + 1)
    assert db_rows(store_path, "SELECT label, status FROM runs") == [("rt study", "complete")]
    (params,) = db_rows(store_path, "SELECT params FROM runs")
    recorded = json.loads(params[0])
    assert recorded["study"] == "rt" and recorded["jobs"] == 200 and recorded["cyclic_loops"] == 2000
    assert recorded["configs"] == ["no stress", "1 x read", "1 x write"] and len(recorded["parts"]) == 2 + 2 * (N_SOME + 1)
    assert "label" not in recorded["parts"][0] and recorded["parts"][0]["max_samples"] == 200
    for name in TABLES:
        assert (out / name).exists(), name
    for name in ("rt-workload-stress0.csv", "rt-workload-stress1-write.csv"):
        rows = table(out, name)
        assert len(rows) == N_SOME and all(x["status"] == "ok" and x["jobs"] == "200" for x in rows)
    base = {x["kernel"]: x for x in table(out, "rt-workload-stress0.csv")}
    for x in table(out, "rt-workload-stress1-write.csv"):  # the unstressed period, in whole us, everywhere
        assert float(x["period_us"]) == round(float(base[x["kernel"]]["period_us"])), x
    assert float(base["bsort"]["median_us"]) == pytest.approx(10.0, rel=0.02)  # the model's 10 us
    assert float(base["bsort"]["period_us"]) == pytest.approx(20.0, rel=0.01)
    ratios = {(x["kernel"], x["configuration"]): x for x in table(out, "rt-study-ratios.csv")}
    assert len(ratios) == 2 * N_SOME
    mat = ratios[("matrix1", "1 x write")]  # memory-bound: tail and max up, median barely
    assert float(mat["median_ratio"]) < 1.1 and float(mat["max_ratio"]) > 1.5 and float(mat["variance_ratio"]) > 10
    assert mat["max_test"] == "higher" and mat["variance_test"] == "higher"
    assert ratios[("bsort", "1 x write")]["variance_test"] == "no significant change"
    cyc = table(out, "rt-cyclic.csv")
    assert [x["configuration"] for x in cyc] == ["no stress", "1 x read", "1 x write"]
    assert all(x["cycles"] == "2000" and x["policy"] == "SCHED_FIFO 80" for x in cyc)
    for name in FIGURES:
        assert (out / f"{name}.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (out / "rt-study.txt").read_text()
    assert text in r.out
    assert "rt.workload, 1 x write stressor on other CPUs: execution time per job (us)" in text
    assert "max or variance significantly higher for" in text and "matrix1" in text
    assert "note: stressors 1 x write: 1 x write over 64 MiB" in text
    assert "machine: kernel_release 6.8.0-test, preemption voluntary, cpufreq_governor performance" in text


@pytest.mark.slow
def test_skipped_configurations_show_the_reason_and_no_figure(cli, fake_probe: FakeProbe, runs: Path,
                                                              tmp_path: Path) -> None:
    """A model machine with one CPU: every stressed point is skipped by the probe."""
    fake_probe.set(cpus=1)
    out = tmp_path / "out"
    r = cli("study", "rt", "--quick", "-o", str(out), "--jobs", "50", "--cyclic-s", "1", "--kernels", "crc,st")
    assert r.code == 0, r.err
    for name in ("rt-workload-stress1-read.csv", "rt-workload-stress1-write.csv"):
        rows = table(out, name)
        assert [x["status"] for x in rows] == ["skip: stress=1 needs 1 other CPUs; this machine gives 0"] * 2
        assert all(x["median_us"] == "" for x in rows)
    assert table(out, "rt-study-ratios.csv") == []
    assert "stressed / unstressed: no kernel has both an unstressed and a stressed result" in r.out
    cyc = table(out, "rt-cyclic.csv")
    assert cyc[0]["status"] == "ok" and cyc[1]["status"].startswith("skip: stress=1 needs 1 other CPUs")
    import re

    svg = (out / "rt-workload-distributions.svg").read_text()
    assert "1xread" not in svg and "1xwrite" not in svg and "no stress" in svg  # skipped points are not drawn
    assert "1 x read" not in re.sub(r"<[^>]+>", "", (out / "rt-cyclic-histogram.svg").read_text())


# Slow-marked to keep the default run under 5 minutes (~2 s); CI runs it.
@pytest.mark.slow
def test_fifo_refused_is_said(cli, fake_probe: FakeProbe, runs: Path, tmp_path: Path) -> None:
    fake_probe.set(no_fifo=1)
    r = cli("study", "rt", "--quick", "-o", str(tmp_path / "out"), "--jobs", "20", "--cyclic-s", "1",
            "--kernels", "crc")
    assert r.code == 0, r.err
    assert "note: policy: SCHED_OTHER: SCHED_FIFO 80 refused: needs root or CAP_SYS_NICE" in r.out
    assert "these latencies are not a real-time thread's" in r.out


# Slow-marked to keep the default run under 5 minutes (~2 s); CI runs it.
@pytest.mark.slow
def test_priority_zero_is_passed_on(cli, fake_probe: FakeProbe, runs: Path, tmp_path: Path) -> None:
    argv = tmp_path / "argv.json"
    fake_probe.set(argv_file=argv)
    r = cli("study", "rt", "--quick", "-o", str(tmp_path / "out"), "--jobs", "20", "--cyclic-s", "1",
            "--kernels", "crc", "--priority", "0", "--cpu", "0")
    assert r.code == 0, r.err
    last = json.loads(argv.read_text())  # the last part: rt.cyclic under 1 x write
    assert "priority=0" in last and last[last.index("--cpu") + 1] == "0" and "rt.cyclic" in last
    assert "SCHED_OTHER (priority=0)" in r.out


@pytest.mark.slow
def test_a_part_that_dies_stops_the_study_and_keeps_what_ran(cli, fake_probe: FakeProbe, runs: Path,
                                                            store_path: Path, tmp_path: Path) -> None:
    fake_probe.set(die_after=0, die_run=4)  # the 1 x read workload part of the second kernel, st
    out = tmp_path / "out"
    r = cli("study", "rt", "--quick", "-o", str(out), "--jobs", "20", "--cyclic-s", "1", "--kernels", "crc,st")
    assert r.code == EXIT_PROBE, r.err
    assert db_rows(store_path, "SELECT status FROM runs") == [("incomplete",)]
    assert runs.read_text().count("run") == 4
    assert [x["status"] for x in table(out, "rt-workload-stress1-read.csv")] == ["ok", "not run"]
    assert [x["status"] for x in table(out, "rt-workload-stress1-write.csv")] == ["not run", "not run"]
    assert (out / "rt-workload-distributions.svg").exists()


@pytest.mark.parametrize("args, message", [
    (["--kernels", "crc,quicksort"], "unknown kernel quicksort"),
    (["--priority", "100"], "0 (SCHED_OTHER) or 1-99"),
    (["--jobs", "0"], "must be at least 1"),
    (["--cyclic-s", "0"], "must be more than 0"),
])
def test_bad_arguments_are_refused_before_anything(cli, runs: Path, store_path: Path, tmp_path: Path,
                                                   args, message) -> None:
    r = cli("study", "rt", "-o", str(tmp_path / "out"), *args)
    assert r.code == EXIT_USAGE and message in r.err, r.err
    assert not runs.exists() and not store_path.exists() and not (tmp_path / "out").exists()


# Slow-marked to keep the default run under 5 minutes (two studies, ~6 s); CI runs it.
@pytest.mark.slow
def test_compare_two_studies_shows_max_and_variance(cli, fake_probe: FakeProbe, runs: Path, tmp_path: Path) -> None:
    """The same study twice: a change of nothing but noise; the table carries the
    max and variance rows of every rt instance."""
    for k in (1, 2):
        r = cli("study", "rt", "--quick", "-o", str(tmp_path / f"out{k}"), "--jobs", "200", "--cyclic-s", "1",
                "--kernels", "crc,matrix1", "--label", f"study {k}")
        assert r.code == 0, r.err
    r = cli("compare", "1", "2", "--json")
    doc = json.loads(r.out)
    assert [d["key"] for d in doc["differences"]] == []  # two labels, the same study: nothing to explain
    rt = [c for c in doc["comparisons"] if c["bench"].startswith("rt.")]
    assert len(rt) == 3 * 2 + 3 and all([s["stat"] for s in c["stats"]] == ["max", "variance"] for c in rt)


# --- the real probe ------------------------------------------------------------


def real_study(out: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    p = subprocess.run(osmeter_command("study", "rt", "--quick", "-o", str(out), *args), capture_output=True,
                       text=True, env=subprocess_env(), timeout=600)
    return p, time.monotonic() - started


def has_rt(probe: str) -> bool:
    doc = json.loads(subprocess.run([probe, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    return any(b["name"] == "rt.workload" for b in doc["benchmarks"])


@pytest.mark.slow
def test_tiny_study_with_the_real_probe(real_probe: str, store_path: Path, tmp_path: Path) -> None:
    """Two kernels, 40 jobs, a quarter second of cycles per configuration: the
    whole matrix measured for real in a few seconds."""
    if not has_rt(real_probe):
        pytest.skip("this osmeter-probe has no rt family yet")
    out = tmp_path / "out"
    p, elapsed = real_study(out, "--jobs", "40", "--cyclic-s", "0.25", "--kernels", "bsort,matrix1")
    assert p.returncode == 0, p.stderr[-3000:]
    cpus = len(os.sched_getaffinity(0))
    configs = 1 + 2 * max(1, cpus - 1)
    assert db_rows(store_path, "SELECT label, status FROM runs") == [("rt study", "complete")]
    base = table(out, "rt-workload-stress0.csv")
    assert [x["kernel"] for x in base] == ["bsort", "matrix1"]
    for x in base:
        assert x["status"].startswith("ok"), x
        assert x["jobs"] == "40" and 0.5 < float(x["median_us"]) < 50_000, x
        assert float(x["period_us"]) == pytest.approx(2 * float(x["median_us"]), rel=0.5)
    stressed = table(out, "rt-workload-stress1-write.csv")
    if cpus >= 2:
        assert all(x["status"].startswith("ok") for x in stressed), stressed
        by_kernel = {x["kernel"]: x for x in base}
        for x in stressed:  # the unstressed part's period, in whole us
            assert float(x["period_us"]) == round(float(by_kernel[x["kernel"]]["period_us"])), (x, by_kernel)
        assert len(table(out, "rt-study-ratios.csv")) == 2 * (configs - 1)
    else:
        assert all("needs 1 CPU besides the measured one" in x["status"] for x in stressed), stressed
    cyc = table(out, "rt-cyclic.csv")
    assert len(cyc) == configs and cyc[0]["status"].startswith("ok") and cyc[0]["cycles"] == "250"
    assert 0 <= float(cyc[0]["min_us"]) < float(cyc[0]["max_us"]) < 1e6
    assert (out / "rt-cyclic-histogram.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert elapsed < 60, f"the tiny study took {elapsed:.0f} s"
    print(f"study rt --quick --jobs 40 --cyclic-s 0.25 --kernels bsort,matrix1: {elapsed:.1f} s")


@pytest.mark.slow  # the promise: the whole quick study in under 5 minutes on 2 vCPUs
def test_quick_study_with_the_real_probe_in_five_minutes(real_probe: str, store_path: Path, tmp_path: Path) -> None:
    if not has_rt(real_probe):
        pytest.skip("this osmeter-probe has no rt family yet")
    out = tmp_path / "out"
    p, elapsed = real_study(out)
    assert p.returncode == 0, p.stderr[-3000:]
    assert elapsed < 300, f"the quick study took {elapsed:.0f} s"
    rows = table(out, "rt-workload-stress0.csv")
    assert len(rows) == KERNELS and all(x["status"].startswith("ok") for x in rows)
    print(f"study rt --quick: {elapsed:.0f} s\n{p.stdout}")
