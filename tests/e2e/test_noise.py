"""osmeter noise end to end: N runs stored, tagged and labelled, the result
stored with the last one and written by --json, bad input refused before
anything runs, Ctrl-C keeping the runs already stored; and once with the
real probe on a tiny budget."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from osmeter import noise
from osmeter.errors import EXIT_OUTPUT, EXIT_USAGE
from osmeter.store import open_store

from ..conftest import FakeProbe, db_rows
from .test_interrupt import finish, read_progress_until
from .test_streams import osmeter


def stored_runs(store_path: Path) -> list:
    store = open_store(str(store_path), create=False)
    try:
        return store.runs()
    finally:
        store.close()


def test_bad_input_is_refused_before_anything_runs(cli, store_path: Path) -> None:
    for runs, why in (("1", "1 is out of range: an A/A test needs 2 to 20 runs"), ("0", "0 is out of range"),
                      ("1000", "1000 is out of range"), ("three", "'three' is not an integer")):
        r = cli("noise", "cpu.call", "--runs", runs)
        assert r.code == EXIT_USAGE and "argument --runs: " + why in r.err, r.err
    r = cli("noise", "--suite", "huge")
    assert r.code == EXIT_USAGE and "invalid choice: 'huge'" in r.err
    r = cli("noise", "cpu.call", "--suite", "quick")
    assert r.code == EXIT_USAGE and "names or --suite, not both" in r.err
    assert not store_path.exists()


@pytest.mark.slow  # the fake probe started: about 1.5 s here; CI runs it
def test_an_unknown_name_is_refused_and_nothing_stored(cli, fake_probe: FakeProbe, store_path: Path) -> None:
    r = cli("noise", "no.such_bench", "--runs", "2")
    assert r.code == EXIT_USAGE and "unknown benchmark 'no.such_bench'" in r.err, r.err
    assert db_rows(store_path, "SELECT id FROM runs") == []


@pytest.mark.slow  # two runs of the fake probe: about 2 s here; CI runs it
def test_runs_stored_tagged_and_the_result_with_the_last(cli, fake_probe: FakeProbe, store_path: Path,
                                                         tmp_path: Path) -> None:
    """Two runs; the second 12 % slower: cpu.call and syscall.null flip
    between the runs (false alarms), and each family's verdict says so."""
    fake_probe.set(runs_file=tmp_path / "runs", scale="1,1.12")
    out = tmp_path / "noise.json"
    r = cli("noise", "cpu.call", "syscall.null", "--runs", "2", "--repeat", "1", "--label", "aa", "--json", str(out))
    assert r.code == 0, r.err
    assert "noise run 1/2: aa-1" in r.err and "noise run 2/2: aa-2" in r.err
    runs = stored_runs(store_path)
    assert [(x.label, x.status, x.meta[noise.TAG_KEY]["index"]) for x in runs] == [
        ("aa-1", "complete", 1), ("aa-2", "complete", 2)]
    doc = json.loads(out.read_text())
    assert runs[-1].meta[noise.RESULT_KEY] == doc and noise.RESULT_KEY not in runs[0].meta
    assert {x["bench"] for x in doc["instances"]} == {"cpu.call", "syscall.null"}
    for x in doc["instances"]:
        assert x["spread"] == pytest.approx(0.12, rel=1e-6) and len(x["false_alarms"]) == 1
    assert "cpu: 1 instance, median spread 12%" in r.out and "1 false alarm" in r.out
    assert "worst instances:" in r.out and max(len(line) for line in r.out.splitlines()) <= 100


@pytest.mark.slow  # about 2 s; CI runs it
def test_ctrl_c_keeps_the_runs_stored(fake_probe: FakeProbe, osmeter_proc, store_path: Path,
                                      tmp_path: Path) -> None:
    # The second run's probe holds after its first benchmark until the signal
    # comes, however long that takes: no race with a delay on a busy machine.
    fake_probe.set(delay="0.05", hold_after=1, hold_run=2, runs_file=tmp_path / "runs")
    proc = osmeter_proc("noise", "cpu.call", "syscall.null", "--runs", "3", "--repeat", "1", "--label", "cc")
    read_progress_until(proc, "noise run 2/3")
    read_progress_until(proc, "[1/2]")
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 130, err
    assert "noise run 2/3 interrupted: kept: run 1 'cc-1' (complete), run 2 'cc-2' (incomplete)" in err
    assert "no noise result was stored" in err
    runs = stored_runs(store_path)
    assert [(x.label, x.status) for x in runs] == [("cc-1", "complete"), ("cc-2", "incomplete")]
    assert all(noise.RESULT_KEY not in x.meta for x in runs)
    assert fake_probe.processes() == []


@pytest.mark.slow  # two osmeter processes' worth: about 2 s
def test_stdout_closed_says_the_runs_are_stored(fake_probe: FakeProbe, store_path: Path) -> None:
    r = osmeter("noise", "cpu.call", "--runs", "2", "--repeat", "1", redirect=">&-")
    assert r.returncode == EXIT_OUTPUT, r.stderr
    assert r.stderr.endswith("osmeter: error: cannot write to standard output: it is closed; "
                             "the runs and the noise result are stored (`osmeter runs` lists them)\n"), r.stderr
    runs = stored_runs(store_path)
    assert len(runs) == 2 and noise.RESULT_KEY in runs[-1].meta


@pytest.mark.slow  # the real probe, two runs: a few seconds
def test_with_the_real_probe(cli, real_probe: str, store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "noise.json"
    r = cli("noise", "syscall.null", "cpu.call", "--runs", "2", "--repeat", "2", "--max-time", "0.05",
            "--json", str(out))
    assert r.code == 0, r.err
    doc = json.loads(out.read_text())
    assert len(doc["runs"]) == 2 and all(x["status"] == "complete" for x in doc["runs"])
    benches = {x["bench"] for x in doc["instances"]}
    assert benches == {"syscall.null", "cpu.call"}
    for x in doc["instances"]:
        assert x["spread"] is not None and x["spread"] >= 0 and x["pairs"] == 1
        assert x["resolves"] is not None and x["resolves"] >= doc["threshold"]
    assert {f["family"] for f in doc["families"]} == {"syscall", "cpu"}
    assert "syscall: 1 instance, median spread" in r.out
