"""`osmeter fleet run` without hosts: bad input refused before anything runs,
the architecture -> probe mapping, the static-ELF check, the missing cross
compiler's message, the resume selection and refusals, and the progress
lines made from ansible-runner's events. (Real hosts: tests/e2e/test_fleet.py.)"""

from __future__ import annotations

import argparse
import contextlib

import io
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from osmeter import errors
from osmeter.errors import ProbeError, UsageError
from osmeter.fleet import plays, probes, state
from osmeter.fleet.events import ArchStep, RunStep
from osmeter.model import RunInfo
from probe_helpers import REPO, optional_tool_missing


def _ansible_or_skip() -> None:
    try:
        import ansible_runner  # noqa: F401
        from osmeter.fleet.ansible import ansible_bin

        ansible_bin("ansible")
    except (ImportError, errors.MissingDependencyError):
        optional_tool_missing("Ansible is missing (pip install 'ansible-core>=2.14' 'ansible-runner>=2.3')")


# -- bad input: exit 2, nothing stored ------------------------------------------------------------------


@pytest.fixture
def ansible() -> None:
    _ansible_or_skip()


def test_a_missing_inventory_is_named(cli, ansible, tmp_path, store_path) -> None:
    r = cli("fleet", "run", str(tmp_path / "nope.ini"), "--suite", "quick")
    assert r.code == errors.EXIT_USAGE and f"inventory {tmp_path / 'nope.ini'}: no such file" in r.err
    assert not store_path.exists()


@pytest.mark.slow  # Ansible parses each inventory (a second each); CI runs it
@pytest.mark.parametrize("name, text, said", [
    ("bad.ini", "[lab\nh1 x=\n", "Failed to parse"),
    ("bad.yml", "all:\n  hosts: [1,\n", "YAML parsing failed"),
])
def test_a_malformed_inventory_is_named_with_ansibles_words(cli, ansible, tmp_path, store_path, name, text,
                                                             said) -> None:
    inventory = tmp_path / name
    inventory.write_text(text)
    r = cli("fleet", "run", str(inventory), "--suite", "quick")
    assert r.code == errors.EXIT_USAGE, r.err
    assert f"inventory {inventory}: Ansible cannot read it" in r.err and said in r.err, r.err
    assert not store_path.exists()


@pytest.mark.slow
def test_a_pattern_that_matches_no_host_is_refused(cli, ansible, tmp_path, store_path) -> None:
    inventory = tmp_path / "inv.yml"
    inventory.write_text("all:\n  hosts:\n    a1:\n    a2:\n")
    r = cli("fleet", "run", str(inventory), "--suite", "quick", "--limit", "web*")
    assert r.code == errors.EXIT_USAGE and "no host matches the pattern 'web*'" in r.err, r.err
    empty = tmp_path / "empty.ini"
    empty.write_text("[lab]\n")
    r = cli("fleet", "run", str(empty), "--suite", "quick")
    assert r.code == errors.EXIT_USAGE and "no host matches the pattern 'all'" in r.err, r.err
    assert not store_path.exists()


def test_unknown_suite_and_missing_suite_are_refused(cli, tmp_path, store_path) -> None:
    r = cli("fleet", "run", str(tmp_path / "inv.ini"), "--suite", "huge")
    assert r.code == errors.EXIT_USAGE and "invalid choice: 'huge'" in r.err
    r = cli("fleet", "run", str(tmp_path / "inv.ini"))
    assert r.code == errors.EXIT_USAGE and "needs --suite" in r.err
    assert not store_path.exists()


def test_a_parameter_the_probe_refuses_is_refused_before_any_host(cli, ansible, probe, tmp_path, store_path,
                                                                    monkeypatch) -> None:
    monkeypatch.setenv("OSMETER_PROBE", probe)
    inventory = tmp_path / "inv.ini"
    inventory.write_text("[lab]\nh1 ansible_connection=local\n")
    start = time.monotonic()
    r = cli("fleet", "run", str(inventory), "--suite", "quick", "--param", "no_such_param=1")
    assert r.code == errors.EXIT_USAGE and "no_such_param" in r.err, r.err
    assert "connecting" not in r.err and not store_path.exists()
    assert time.monotonic() - start < 30


def test_an_unknown_resume_id_is_refused(cli, tmp_path, store_path) -> None:
    r = cli("fleet", "run", str(tmp_path / "inv.ini"), "--resume", "fleet-20260101T000000Z-abcd")
    assert r.code == errors.EXIT_USAGE and "no such fleet run" in r.err
    r = cli("fleet", "run", str(tmp_path / "inv.ini"), "--resume")
    assert r.code == errors.EXIT_USAGE and "no fleet run to resume" in r.err
    assert not store_path.exists()


# -- architectures and probes -----------------------------------------------------------------------------


@pytest.mark.parametrize("uname, name", [("x86_64", "x86-64"), ("amd64", "x86-64"), ("aarch64", "aarch64"),
                                         ("arm64", "aarch64"), ("armv7l", "armv7"), ("armv8l", "armv7"),
                                         ("riscv64", "riscv64"), (" AARCH64\n", "aarch64")])
def test_uname_to_probe_architecture(uname, name) -> None:
    assert probes.arch_of(uname).name == name


@pytest.mark.parametrize("uname", ["i686", "ppc64le", "s390x", "mips", "armv6l", ""])
def test_an_architecture_without_a_probe_is_refused(uname) -> None:
    with pytest.raises(ProbeError) as e:
        probes.arch_of(uname)
    assert "no osmeter probe for the architecture" in e.value.message
    assert "x86-64, aarch64, armv7, riscv64" in e.value.message


def test_the_built_probe_is_a_static_executable_of_this_machine(probe) -> None:
    native = probes.native_arch()
    assert native is not None
    assert probes.elf_problem(Path(probe), native) is None
    other = probes.arch_named("riscv64" if native.name != "riscv64" else "aarch64")
    assert f"is not an {other.name} executable" in probes.elf_problem(Path(probe), other)


def test_a_dynamic_or_foreign_file_is_refused(tmp_path) -> None:
    native = probes.native_arch()
    dynamic = Path(shutil.which("ls") or "/bin/ls").resolve()
    assert "dynamically linked" in probes.elf_problem(dynamic, native)
    script = tmp_path / "osmeter-probe"
    script.write_text("#!/bin/sh\necho hi\n")
    assert "is not an ELF executable" in probes.elf_problem(script, native)
    finder = probes.ProbeFinder({native.name: dynamic})
    with pytest.raises(ProbeError) as e:
        finder.probe_for(native)
    assert f"the {native.name} probe (--probe {native.name})" in e.value.message


def test_a_missing_cross_compiler_says_what_to_install(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no compiler at all
    arch = probes.arch_named("riscv64" if probes.native_arch() != probes.arch_named("riscv64") else "aarch64")
    message = probes.missing_compiler(arch)
    assert f"{arch.prefix}-gcc is missing (Debian: apt-get install {arch.package})" in message
    assert f"--probe {arch.name}=PATH" in message
    finder = probes.ProbeFinder({}, {"PATH": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                                     "OSMETER_SOURCE": str(REPO)})
    with pytest.raises(ProbeError) as e:
        finder.probe_for(arch)
    assert e.value.message == message
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("osmeter-probe"))


@pytest.mark.slow
@pytest.mark.cross
def test_a_foreign_probe_is_cross_built_once_and_cached(tmp_path) -> None:
    arch = probes.arch_named("aarch64" if probes.native_arch() != probes.arch_named("aarch64") else "riscv64")
    if probes.missing_compiler(arch) or not shutil.which("cmake"):
        optional_tool_missing(probes.missing_compiler(arch) or "cmake is missing (Debian: apt-get install cmake)",
                              "cross")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "OSMETER_SOURCE": str(REPO), "PATH": "/usr/bin:/bin"}
    built = probes.ProbeFinder({}, env).probe_for(arch)
    assert built.origin.startswith("built into") and built.helper is not None
    assert probes.elf_problem(built.probe, arch) is None
    assert built.probe.parent.parent.name == probes.project_version(REPO)
    again = probes.ProbeFinder({}, env).probe_for(arch)
    assert again.origin.startswith("cache") and again.probe == built.probe
    assert [p.name for p in (tmp_path / "cache" / "osmeter" / "probes").iterdir()] == [built.probe.parent.parent.name]


# -- resume ---------------------------------------------------------------------------------------------


def _run(run_id: int, host: str | None, fleet: str | None, status: str) -> RunInfo:
    return RunInfo(id=run_id, label=None, start_time="2026-01-01T00:00:00Z", end_time=None, status=status,
                   status_reason=None, source="import", osmeter_version="0", probe_version="0", suite="quick",
                   argv=[], params={}, machine={}, meta={}, host=host, fleet=fleet)


class _Runs:
    def __init__(self, runs: list[RunInfo]) -> None:
        self._runs = runs

    def runs(self) -> list[RunInfo]:
        return self._runs


def test_resume_runs_only_the_hosts_without_a_complete_run_of_that_fleet() -> None:
    fid = "fleet-20260101T000000Z-abcd"
    store = _Runs([_run(1, "a", fid, "complete"), _run(2, "b", fid, "incomplete"), _run(3, "c", "fleet-other", "complete"),
                   _run(4, "d", None, "complete"), _run(5, "a", fid, "complete"), _run(6, "e", fid, "running")])
    done = state.complete_hosts(store, fid)  # type: ignore[arg-type]
    assert done == {"a": 5}
    assert state.hosts_to_run(["a", "b", "c", "d", "e"], done) == ["b", "c", "d", "e"]
    assert state.hosts_to_run(["a"], done) == []


def _state(root: Path, suffix: str = "abcd") -> state.FleetState:
    st = state.FleetState(id=f"fleet-20260101T00000{len(suffix)}Z-{suffix}", created="2026-01-01T00:00:00Z",
                          inventory="/inv.ini", limit="all", suite="quick",
                          probe_options={"params": ["size=4096"], "max_time": 0.1}, store="/s.db")
    st.hosts["h1"] = state.HostState(status="failed", reason="unreachable: x", leftovers=["/tmp/osmeter-x"])
    state.save(st, root)
    return st


def test_state_round_trip_latest_and_unknown(tmp_path) -> None:
    first = _state(tmp_path)
    assert state.load("latest", tmp_path) == first
    assert state.load(first.id, tmp_path).hosts["h1"].leftovers == ["/tmp/osmeter-x"]
    with pytest.raises(UsageError, match="no such fleet run"):
        state.load("fleet-20990101T000000Z-0000", tmp_path)
    assert state.ID_PATTERN.fullmatch(state.new_id())


def test_resume_refuses_a_different_suite_or_param(tmp_path) -> None:
    st = _state(tmp_path)
    state.refuse_changes(st, None, {}, [])
    state.refuse_changes(st, "quick", {"params": ["size=4096"]}, ["params"])
    with pytest.raises(UsageError, match="measures --suite quick, not standard"):
        state.refuse_changes(st, "standard", {}, [])
    with pytest.raises(UsageError, match=r"started with --param size=4096, not size=8192"):
        state.refuse_changes(st, None, {"params": ["size=8192"]}, ["params"])
    with pytest.raises(UsageError, match=r"started with --max-time 0.1, not 1.0"):
        state.refuse_changes(st, None, {"max_time": 1.0}, ["max_time"])


def test_resume_from_the_cli_refuses_a_changed_suite(cli, tmp_path, store_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    st = _state(state.state_root())
    r = cli("fleet", "run", "/inv.ini", "--resume", st.id, "--suite", "standard")
    assert r.code == errors.EXIT_USAGE and "measures --suite quick, not standard" in r.err
    r = cli("fleet", "run", "/inv.ini", "--resume", "--param", "size=1")
    assert r.code == errors.EXIT_USAGE and "--param size=4096, not size=1" in r.err
    assert not store_path.exists()


def test_resume_keeps_the_store_limit_and_label_and_refuses_others(cli, tmp_path, store_path, monkeypatch) -> None:
    """Left out on --resume, --store, --limit and --label are the fleet run's
    (its SQLite store by absolute path, so another directory finds it);
    given and different, they are refused, naming what the fleet run has."""
    from osmeter.commands import fleet as fleet_cmd

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    st = _state(state.state_root())
    st.limit, st.label, st.store = "boards", "rt kernel", str(tmp_path / "kept.db")
    state.save(st)
    args = fleet_cmd.add_parser(argparse.ArgumentParser().add_subparsers()).parse_args(
        ["run", "/inv.ini", "--resume"])
    monkeypatch.delenv("OSMETER_STORE")
    kept, _, location = fleet_cmd._prepare(args)
    assert (location, args.limit, args.label) == (str(tmp_path / "kept.db"), "boards", "rt kernel")
    for option, value, kept_value in (("--limit", "web*", "boards"), ("--label", "std", "rt kernel"),
                                      ("--store", "other.db", str(tmp_path / "kept.db"))):
        r = cli("fleet", "run", "/inv.ini", "--resume", option, value)
        assert r.code == errors.EXIT_USAGE and f"{kept_value}, not " in r.err, r.err
    same = fleet_cmd.add_parser(argparse.ArgumentParser().add_subparsers()).parse_args(
        ["run", "/inv.ini", "--resume", "--store", "kept.db"])  # the same file, given relative to here
    assert fleet_cmd._prepare(same)[2] == "kept.db"


# -- progress from ansible-runner's events --------------------------------------------------------------


def _event(kind: str, host: str | None, task: str, res: dict | None = None) -> dict:
    return {"event": kind, "event_data": {"host": host, "task": task, "res": res or {}}}


def test_the_architecture_step_reports_hosts() -> None:
    out = io.StringIO()
    step = ArchStep(out=out)
    step(_event("playbook_on_start", None, ""))
    step(_event("runner_on_start", "web1", "setup"))
    step(_event("runner_on_ok", "web1", "setup", {"ansible_facts": {"ansible_architecture": "aarch64"}}))
    step(_event("runner_on_start", "db\x1b[31m1", "setup"))
    step(_event("runner_on_unreachable", "db\x1b[31m1", "setup", {"msg": "Failed to connect to the host via ssh"}))
    assert step.arches == {"web1": "aarch64"}
    assert step.failed == {"db\x1b[31m1": "unreachable: Failed to connect to the host via ssh"}
    assert out.getvalue() == ("  web1: connecting\n  db1: connecting\n"
                              "  db1: failed: unreachable: Failed to connect to the host via ssh\n")


def test_the_run_step_reports_each_step_stores_and_fails() -> None:
    out = io.StringIO()
    made: list[tuple[str, str]] = []
    removed: list[str] = []
    step = RunStep(arch_of=lambda h: "armv7", running="running --suite quick", made=lambda h, p: made.append((h, p)),
                   fetched=lambda h: "stored run 7 (complete: 48 ok, 0 skipped, 0 failed)",
                   removed=removed.append, out=out)
    step(_event("runner_on_ok", "a", plays.T_TMP, {"path": "/tmp/osmeter-fleet-x.1"}))
    for task in (plays.T_COPY, plays.T_RUN, plays.T_FETCH):
        step(_event("runner_on_start", "a", task))
    step(_event("runner_on_ok", "a", plays.T_FETCH))
    step(_event("runner_on_ok", "a", plays.T_REMOVE))
    failed_run = {"rc": 3, "stdout": "....\r\nosmeter-fleet: repetition 2 of 3: exit status 3\r\nosmeter-probe: error: "
                  "cannot write /tmp/x/rep-2.jsonl: No space left on device\r\n"}
    step(_event("runner_on_start", "b", plays.T_RUN))
    step(_event("runner_on_failed", "b", plays.T_RUN, failed_run))
    step(_event("runner_on_failed", "b", plays.T_REMOVE, {"msg": "later failure"}))
    step(_event("runner_on_unreachable", "c", plays.T_COPY, {"msg": "Connection reset"}))
    assert made == [("a", "/tmp/osmeter-fleet-x.1")] and removed == ["a"] and step.done == {"a"}
    assert step.failed["b"] == ("the probe failed in repetition 2 of 3: exit status 3; its stderr ends: "
                                "osmeter-probe: error: cannot write /tmp/x/rep-2.jsonl: No space left on device")
    assert step.failed["c"] == "unreachable: Connection reset (while copying the probe)"
    assert out.getvalue().splitlines() == [
        "  a: copying the armv7 probe", "  a: running --suite quick", "  a: fetching the output",
        "  a: stored run 7 (complete: 48 ok, 0 skipped, 0 failed)", "  b: running --suite quick",
        "  b: failed: the probe failed in repetition 2 of 3: exit status 3; its stderr ends: osmeter-probe: error: "
        "cannot write /tmp/x/rep-2.jsonl: No space left on device",
        "  c: failed: unreachable: Connection reset (while copying the probe)"]


def test_a_probe_killed_by_a_signal_is_said_so() -> None:
    text = plays.failure_text({"rc": 3, "stdout": "osmeter-fleet: repetition 1 of 1: exit status 137\n"})
    assert text == "the probe failed in repetition 1 of 1: killed by signal 9"


def _remote_dir(tmp_path: Path, probe: str) -> Path:
    work = tmp_path / "remote"
    work.mkdir()
    shutil.copy(probe, work / "osmeter-probe")
    return work


@contextlib.contextmanager
def _long_remote_script(work: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The run task's script on a 30 s probe, in a session of its own (a
    failing test kills the probe too), once the probe has started its output."""
    head, tail = plays.run_command(["run", "cpu.call", "--min-time", "30", "--max-time", "60", "--quiet"], 1)
    proc = subprocess.Popen(f"exec {head} {work} {tail}", shell=True, stdout=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not (work / "rep-1.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the session: the probe and heartbeat too, if the script is gone
        proc.wait()


@pytest.mark.slow  # waits out a hang-up; CI runs it
def test_the_remote_script_stops_the_probe_and_removes_its_directory(tmp_path, probe) -> None:
    """The script of the run task, run here: a probe that fails is reported
    with its stderr; a hang-up stops the probe and removes the directory."""
    work = _remote_dir(tmp_path, probe)
    head, tail = plays.run_command(["run", "--suite", "no-such-suite"], 1)
    p = subprocess.run(f"{head} {work} {tail}", shell=True, capture_output=True, text=True, timeout=60)
    assert p.returncode == 3 and "repetition 1 of 1: exit status 2" in p.stdout and "no-such-suite" in p.stdout
    with _long_remote_script(work) as proc:
        proc.send_signal(1)  # SIGHUP: the connection went away
        assert proc.wait(timeout=20) == 129
    assert not work.exists()


def _session_shells(sid: int) -> list[int]:
    """The shells (a run script, its heartbeat subshell) in session `sid`."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            comm, rest = stat.read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        if comm.endswith("(sh") and int(rest.split()[3]) == sid:  # field 6 of proc_pid_stat(5): the session
            pids.append(int(stat.parent.name))
    return pids


@pytest.mark.slow  # waits for the heartbeat; CI runs it
def test_the_remote_scripts_heartbeat_ends_with_the_script_however_it_ended(tmp_path, probe) -> None:
    """The heartbeat must not outlive the script. The script kills it on its
    way out, but that SIGTERM is lost when it comes before the subshell has
    reset the script's TERM trap (a probe that fails at once), and a script
    killed with SIGKILL sends none. Before: such a heartbeat lived on,
    orphaned, a dot every 2 s for good, and on a host kept the run task's
    connection open until --host-timeout (the HUP test's first part, a probe
    that fails at once, hung 60 s in about one run of three). Now it sees
    its script gone within 2 s."""
    work = _remote_dir(tmp_path, probe)
    with _long_remote_script(work) as proc:
        os.kill(proc.pid, signal.SIGKILL)  # the script alone: no trap runs, its heartbeat is not told
        assert proc.wait(timeout=10) == -signal.SIGKILL
        deadline = time.monotonic() + 10
        while _session_shells(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _session_shells(proc.pid) == []


@pytest.mark.slow  # waits for the heartbeat; CI runs it
def test_the_remote_script_stops_when_its_connection_closes_without_a_hang_up(tmp_path, probe) -> None:
    """An sshd killed with SIGKILL sends no SIGHUP: the script's stdout pipe
    just has no reader. Its next dot (every 2 s) fails and the script stops
    the probe and removes the directory. Before: the heartbeat's subshell
    died of SIGPIPE without a word and the probe ran its whole suite, its
    directory there meanwhile (CI, 2026-11-29: tests/e2e/test_fleet.py's
    dropped host left /tmp/osmeter-fleet-*)."""
    work = _remote_dir(tmp_path, probe)
    with _long_remote_script(work) as proc:
        assert proc.stdout is not None
        proc.stdout.close()  # the connection is gone; no signal comes
        assert proc.wait(timeout=20) == 143  # its heartbeat's SIGTERM, well before the probe's 30 s
    assert not work.exists()
