"""The command line: bad input, exit codes, messages, and nothing stored by mistake."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from osmeter import errors
from osmeter.commands import COMMANDS

from ..conftest import DATA, FakeProbe, db_rows, import_fixture


def run_rows(store_path: Path) -> list[tuple[object, ...]]:
    return db_rows(store_path, "SELECT id FROM runs")


def test_exit_codes_are_distinct() -> None:
    codes = [getattr(errors, n) for n in dir(errors) if n.startswith("EXIT_") and n != "EXIT_SIGNAL_BASE"]
    assert len(codes) == len(set(codes))
    classes = [errors.UsageError, errors.StoreError, errors.ProbeError, errors.ImportFileError, errors.NotFoundError,
               errors.RecordError, errors.MissingDependencyError, errors.RegressionFound]
    assert len({c.exit_code for c in classes}) == len(classes)
    assert errors.Interrupted(2).exit_code == 130 and errors.Interrupted(15).exit_code == 143


def test_commands_are_listed_in_order() -> None:
    assert [c.NAME for c in COMMANDS] == ["run", "list", "runs", "show", "compare", "noise", "report", "plot", "export", "import",
                                         "sysinfo", "serve", "study", "hotspots", "mem-levels", "page-cache", "fleet", "kernels",
                                         "store"]


def test_version(cli) -> None:
    r = cli("--version")
    assert r.code == 0 and r.out.startswith("osmeter 0.2.0")


def test_unknown_command(cli) -> None:
    r = cli("frobnicate")
    assert r.code == errors.EXIT_USAGE and "invalid choice: 'frobnicate'" in r.err


@pytest.mark.parametrize("bad", ["size", "=4k", "1size=4k", "si ze=4"])
def test_bad_param_format_stores_nothing(cli, fake_probe: FakeProbe, store_path: Path, bad: str) -> None:
    r = cli("run", "cpu.call", "--param", bad)
    assert r.code == errors.EXIT_USAGE and "is not KEY=VALUE" in r.err
    assert not store_path.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cpu", "-1"], "out of range"),
        (["--min-time", "0"], "must be more than 0"),
        (["--min-time", "nan"], "not a finite number"),
        (["--fifo", "100"], "between 1 and 99"),
        (["--min-samples", "many"], "not an integer"),
        (["--clock", "hpet"], "invalid choice"),
    ],
)
def test_bad_option_values(cli, fake_probe: FakeProbe, store_path: Path, args: list[str], message: str) -> None:
    r = cli("run", *args)
    assert r.code == errors.EXIT_USAGE and message in r.err
    assert not store_path.exists()


def test_names_and_suite_together_are_refused(cli, fake_probe: FakeProbe, store_path: Path) -> None:
    r = cli("run", "cpu.call", "--suite", "quick")
    assert r.code == errors.EXIT_USAGE and "not both" in r.err
    assert not store_path.exists()


def test_probe_rejection_is_shown_and_nothing_stored(cli, fake_probe: FakeProbe, store_path: Path) -> None:
    r = cli("run", "cpu.nonesuch")
    assert r.code == errors.EXIT_USAGE
    assert "unknown benchmark 'cpu.nonesuch'" in r.err
    assert run_rows(store_path) == []
    r = cli("run", "cpu.call", "--param", "colour=blue")
    assert r.code == errors.EXIT_USAGE and "unknown parameter 'colour'" in r.err
    fake_probe.set(usage_error="--param args=9: out of range, allowed 0..7")
    r = cli("run", "cpu.call", "--param", "args=9")
    assert r.code == errors.EXIT_USAGE and "allowed 0..7" in r.err
    assert run_rows(store_path) == []


def test_probe_argv(cli, fake_probe: FakeProbe, tmp_path: Path) -> None:
    argv_file = tmp_path / "argv.json"
    fake_probe.set(argv_file=argv_file)
    cli("run")
    # The standard suite in 3 repetitions, each with a third of the budget.
    assert json.loads(argv_file.read_text()) == [
        "run", "--die-with-parent", "--suite", "standard", "--budget-fraction", "0.333333"
    ]
    cli(
        "run", "cpu.call", "syscall.null", "--param", "args=3", "--cpu", "2", "--min-time", "0.5",
        "--max-time", "2", "--min-samples", "30", "--fifo", "50", "--mlock", "--clock", "monotonic_raw",
        "--label", "x", "--repeat", "1", "--lebench-exact",
    )
    assert json.loads(argv_file.read_text()) == [
        "run", "--die-with-parent", "cpu.call", "syscall.null", "--param", "args=3", "--cpu", "2",
        "--min-time", "0.5", "--max-time", "2", "--min-samples", "30", "--fifo", "50",
        "--clock", "monotonic_raw", "--mlock", "--lebench-exact",
    ]


def test_unwritable_store_fails_before_the_probe_runs(cli, fake_probe: FakeProbe, tmp_path: Path) -> None:
    argv_file = tmp_path / "argv.json"
    fake_probe.set(argv_file=argv_file)
    (tmp_path / "file").write_text("x")
    bad = tmp_path / "file" / "osmeter.db"
    r = cli("run", "--store", str(bad))
    assert r.code == errors.EXIT_STORE
    assert str(bad) in r.err and "--store" in r.err
    assert not argv_file.exists()


def test_corrupt_store_fails_before_the_probe_runs(cli, fake_probe: FakeProbe, store_path: Path, tmp_path: Path) -> None:
    argv_file = tmp_path / "argv.json"
    fake_probe.set(argv_file=argv_file)
    store_path.parent.mkdir(parents=True)
    store_path.write_bytes(b"garbage" * 100)
    r = cli("run")
    assert r.code == errors.EXIT_STORE and "left untouched" in r.err
    assert store_path.read_bytes() == b"garbage" * 100
    assert not argv_file.exists()
    assert cli("runs").code == errors.EXIT_STORE


def test_postgresql_url_of_no_server_fails_before_the_probe_runs(cli, fake_probe: FakeProbe, tmp_path: Path) -> None:
    argv_file = tmp_path / "argv.json"
    fake_probe.set(argv_file=argv_file)
    r = cli("run", "--store", "postgresql://me:secret@db.invalid/osm")
    assert r.code == errors.EXIT_STORE and "cannot open the store postgresql://me@db.invalid/osm" in r.err, r.err
    assert "does not resolve" in r.err and "secret" not in r.err
    assert not argv_file.exists()


def test_probe_not_found(cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from osmeter import probe

    monkeypatch.setattr(probe, "BUNDLED_PROBE", tmp_path / "not-installed")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("OSMETER_PROBE", raising=False)  # isolated_env names the real probe
    r = cli("list")
    assert r.code == errors.EXIT_PROBE and "osmeter-probe not found" in r.err and "OSMETER_PROBE" in r.err
    monkeypatch.setenv("OSMETER_PROBE", str(DATA / "list.json"))  # not executable
    r = cli("run")
    assert r.code == errors.EXIT_PROBE and "is not an executable file" in r.err


def test_unknown_run(cli, store_path: Path) -> None:
    r = cli("show", "1")
    assert r.code == errors.EXIT_NOT_FOUND and "no store at" in r.err
    import_fixture(store_path)
    r = cli("show", "42")
    assert r.code == errors.EXIT_NOT_FOUND and "no run 42" in r.err and "osmeter runs" in r.err
    r = cli("export", "42", "--format", "csv")
    assert r.code == errors.EXIT_NOT_FOUND
    r = cli("show", "last-tuesday")
    assert r.code == errors.EXIT_USAGE


def test_runs_on_an_empty_store(cli, store_path: Path) -> None:
    r = cli("runs")
    assert r.code == 0 and "no runs" in r.out
    assert not store_path.exists()
    r = cli("runs", "--json")
    assert json.loads(r.out) == {"osmeter_runs": 1, "total": 0, "runs": []}


def test_runs_lists_the_newest_with_last_and_every_run_with_all(cli, store_path: Path) -> None:
    """A store of thousands of runs answers at once: the newest 50 unless
    --last N or --all says otherwise, with a line saying how many are left out."""
    ids = [import_fixture(store_path, label=f"r{i}") for i in range(3)]

    def listed(out: str) -> list[int]:
        return [int(line.split()[0]) for line in out.splitlines() if line.split() and line.split()[0].isdigit()]

    r = cli("runs")
    assert r.code == 0 and listed(r.out) == ids and "of 3 runs" not in r.out  # 3 <= 50: all of them
    r = cli("runs", "--last", "2")
    assert r.code == 0 and listed(r.out) == ids[1:], r.out
    assert r.out.splitlines()[-1] == "(the newest 2 of 3 runs; --all lists every run, --last N the newest N)"
    r = cli("runs", "--all")
    assert r.code == 0 and listed(r.out) == ids and "newest" not in r.out
    doc = json.loads(cli("runs", "--json", "--last", "1").out)
    assert doc["total"] == 3 and [x["id"] for x in doc["runs"]] == ids[2:]
    for bad, message in ((["--last", "0"], "must be between 1 and"), (["--last", "x"], "not an integer"),
                         (["--last", "2", "--all"], "not allowed with argument")):
        r = cli("runs", *bad)
        assert r.code == errors.EXIT_USAGE and message in r.err, r.err


def test_list(cli, fake_probe: FakeProbe) -> None:
    r = cli("list")
    assert r.code == 0
    line = next(l for l in r.out.splitlines() if l.startswith("cpu.call"))
    assert "args=0 [0..7]" in line and "quick,standard,full" in line and "ns" in line
    assert "placement=same_cpu {same_cpu|cross_cpu}" in r.out
    assert "(needs root)" in r.out
    doc = json.loads(cli("list", "--json").out)
    assert doc == json.loads((DATA / "list.json").read_text())


def test_sysinfo(cli, fake_probe: FakeProbe) -> None:
    r = cli("sysinfo")
    assert r.code == 0
    assert any(l.split()[:2] == ["hostname", "testbox"] for l in r.out.splitlines())
    assert "virtualization" in r.out and "-" in r.out  # null shown as '-'
    assert "spectre_v2" in r.out  # lists shown as JSON
    explained = cli("sysinfo", "--explain").out.splitlines()
    at = explained.index(next(l for l in explained if l.startswith("hostname ")))
    assert explained[at + 1].strip() == "# uname -n"
    assert json.loads(cli("sysinfo", "--json").out)["schema"] == 1


def test_export_to_file_is_atomic(cli, store_path: Path, tmp_path: Path) -> None:
    import_fixture(store_path)
    out = tmp_path / "out.csv"
    out.write_text("old content")
    r = cli("export", "latest", "--format", "csv", "-o", str(out))
    assert r.code == 0 and r.out == ""
    assert out.read_text().startswith("run_id,run_label,seq,bench")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.csv")] == []
    r = cli("export", "latest", "--format", "json", "-o", str(tmp_path / "missing-dir" / "x.json"))
    assert r.code == errors.EXIT_USAGE and "cannot write" in r.err


def test_load_returns_a_dataframe(store_path: Path) -> None:
    import osmeter

    run_id = import_fixture(store_path)
    import_fixture(store_path, "run_aarch64.jsonl")
    df = osmeter.load(str(store_path), run=run_id)
    assert list(df["bench"]) == ["cpu.call", "syscall.null", "file.read_cold", "task.fork", "ctxsw.pipe"]
    assert df.loc[0, "samples"].shape == (40,) and df.loc[2, "samples"] is None
    assert len(osmeter.load()) == 8  # $OSMETER_STORE, every run


def test_load_without_pandas_says_what_to_install(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    import osmeter

    import_fixture(store_path)
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(errors.MissingDependencyError, match=r"pip install 'osmeter\[pandas\]'"):
        osmeter.load()


@pytest.mark.slow
def test_store_failure_mid_run_keeps_what_finished(cli, fake_probe: FakeProbe, store_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk on the third result: exit 3, two results kept, run incomplete, the rest measured
    into the spool (issue 27), no process left."""
    from osmeter.store.sqlite import SQLiteStore

    real_add = SQLiteStore.add_result

    def add_result(self, run_id, result, samples):
        if result.seq == 2:
            raise errors.StoreError(f"cannot write to the store {self.path}: database or disk is full")
        return real_add(self, run_id, result, samples)

    monkeypatch.setattr(SQLiteStore, "add_result", add_result)
    fake_probe.set(delay="0.05", spawn_child=1)
    r = cli("run")
    assert r.code == errors.EXIT_STORE and "disk is full" in r.err
    assert db_rows(store_path, "SELECT bench FROM results ORDER BY seq") == [("cpu.call",), ("syscall.null",)]
    [(status, reason)] = db_rows(store_path, "SELECT status, status_reason FROM runs")
    assert status == "incomplete" and reason.startswith("the store failed after 2 result(s)"), reason
    assert "the measuring went on" in r.err and "osmeter import" in r.err
    assert fake_probe.processes() == []


def test_sweep_and_sampling_options_reach_the_probe(cli, fake_probe: FakeProbe, tmp_path: Path) -> None:
    argv_file = tmp_path / "argv.json"
    fake_probe.set(argv_file=argv_file)
    cli("run", "cpu.call", "--sweep", "--max-samples", "100", "--target-rse", "0.02", "--repeat", "4")
    assert json.loads(argv_file.read_text()) == [
        "run", "--die-with-parent", "cpu.call", "--max-samples", "100", "--target-rse", "0.02",
        "--budget-fraction", "0.25", "--sweep",
    ]


def test_sweep_with_a_suite_is_refused(cli, fake_probe: FakeProbe, store_path: Path) -> None:
    r = cli("run", "--suite", "quick", "--sweep")
    assert r.code == errors.EXIT_USAGE and "--sweep goes with benchmark names" in r.err
    assert run_rows(store_path) == []


@pytest.mark.parametrize("args", [["runs", "--label", "\udcff"], ["import", "caf\udce9.jsonl"], ["sh\udcffow", "1"]])
def test_non_utf8_arguments_are_a_usage_error(cli, store_path: Path, args: list[str]) -> None:
    # Python hands the bytes of a non-UTF-8 argument over as lone surrogates.
    r = cli(*args)
    assert r.code == 2, r.err
    assert "is not valid UTF-8 text" in r.err and "Traceback" not in r.err
    assert not store_path.exists()


@pytest.mark.parametrize("args", [["runs", "--store", "\x00"], ["export", "1", "-o", "\x00"],
                                  ["report", "1", "-o", "a\x00.html"], ["import", "x\x00.jsonl"]])
def test_a_nul_in_an_argument_is_a_usage_error(cli, store_path: Path, args: list[str]) -> None:
    """What the CI fuzz found (os.stat raises ValueError on a NUL): refused
    once, in cli.main, before any path reaches the file system."""
    r = cli(*args)
    assert r.code == errors.EXIT_USAGE, r.err
    assert "holds a NUL character" in r.err and "Traceback" not in r.err
    assert not store_path.exists()


def test_non_utf8_label_given_for_real(fake_probe: FakeProbe, store_path: Path) -> None:
    import subprocess

    from ..conftest import osmeter_command, subprocess_env

    argv = [os.fsencode(a) for a in osmeter_command("run", "cpu.call", "--label")] + [b"\xff\xfe"]
    done = subprocess.run(argv, capture_output=True, env=subprocess_env(), timeout=60)
    assert done.returncode == 2, done.stderr
    assert b"argument 4 (b'\\xff\\xfe') is not valid UTF-8 text" in done.stderr and b"Traceback" not in done.stderr
    assert not store_path.exists()


def test_ctrl_c_while_starting_is_an_interruption(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C during the imports (numpy, matplotlib: a third of a second) or the parsing.
    from osmeter import cli as cli_module

    def interrupted(argv: object = ()) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module, "build_parser", interrupted)
    r = cli("runs")
    assert r.code == 130 and r.err == "osmeter: interrupted\n"


def test_a_command_imports_only_its_own_module() -> None:
    """`osmeter runs` does not import the report, fleet or hotspots commands (nor matplotlib): half a
    second of every start on a slow machine. An unknown command or `--help` still lists them all."""
    import subprocess
    import sys

    code = ("import sys; from osmeter import cli; p = cli.build_parser(['runs']); "
            "print(sorted(m for m in sys.modules if m.startswith('osmeter.commands.') and m != 'osmeter.commands.options'"
            " or m == 'matplotlib'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['osmeter.commands.runs']"
    from osmeter import cli as cli_module
    from osmeter.commands import NAMES

    listed = cli_module.build_parser(["nosuch"])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(listed) == list(NAMES)
