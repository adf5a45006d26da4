"""`osmeter fleet run` hardened (issue 27): paths relative to the caller's
directory, the inventory read within bounds (Ansible reads a copy), a
per-host time limit, nothing left behind by a killed fleet run or a killed
remote probe, --label on --resume, and one attempt of a fleet run at a time.

The hosts here are this machine through Ansible's local connection; the
frozen-sshd case is tests/e2e/test_fleet_frozen.py."""

from __future__ import annotations

import io
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import osmeter_command, subprocess_env
from osmeter import errors
from osmeter.commands.fleet import probe_choice
from osmeter.fleet import plays, probes, state
from osmeter.fleet.ansible import PRIVATE_PREFIX, processes_naming
from osmeter.fleet.events import RunStep
from osmeter.fleet.inventory import copy_inventory
from probe_helpers import optional_tool_missing

TINY = ["--repeat", "1", "--min-time", "0.001", "--max-time", "0.01", "--min-samples", "2"]
TMP = Path(tempfile.gettempdir())


@pytest.fixture
def ansible() -> None:
    try:
        import ansible_runner  # noqa: F401

        from osmeter.fleet.ansible import ansible_bin

        ansible_bin("ansible")
    except (ImportError, errors.MissingDependencyError):
        optional_tool_missing("Ansible is missing (pip install 'ansible-core>=2.14' 'ansible-runner>=2.3')")


def _local_inventory(path: Path, *hosts: str, extra: str = "") -> Path:
    lines = ["[lab]"] + [f"{h} ansible_connection=local ansible_python_interpreter={sys.executable} {extra}"
                         for h in hosts]
    path.write_text("\n".join(lines) + "\n")
    return path


def _private_dirs() -> set[Path]:
    return set(TMP.glob(PRIVATE_PREFIX + "*"))


def _run(*args: str, timeout: float = 300, probe: str | None = None, cwd: Path | None = None,
         limit_as: int | None = None) -> subprocess.CompletedProcess[str]:
    """`osmeter ARGS` as a process in a session of its own, killed with all it
    started should it outlive `timeout`; optionally under an address-space limit."""
    env = subprocess_env()
    if probe:
        env["OSMETER_PROBE"] = probe

    def limit() -> None:
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    p = subprocess.Popen(osmeter_command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=cwd, start_new_session=True, preexec_fn=limit)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        err += f"\n(killed after {timeout} s)"
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def _wait(cond, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


# -- paths relative to the caller's directory -------------------------------------------------------------


def test_probe_paths_are_taken_from_here_and_sent_as_copies(tmp_path, probe, monkeypatch) -> None:
    """--probe ARCH=rel/path is this directory's, and what Ansible copies is a
    copy in the private directory, by absolute path."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probes").mkdir()
    shutil.copy(probe, tmp_path / "probes" / "good")
    native = probes.native_arch()
    arch, path = probe_choice(f"{native.name}=probes/good")
    assert path == tmp_path / "probes" / "good"
    staging = tmp_path / "private" / "probes"
    sent = probes.ProbeFinder({arch: Path("probes/good")}, staging=staging).probe_for(native)
    assert sent.probe.is_absolute() and sent.probe.parent == staging / native.name
    assert sent.probe.read_bytes() == Path(probe).read_bytes() and os.access(sent.probe, os.X_OK)


def test_a_fifo_or_device_is_never_opened_as_a_probe(tmp_path) -> None:
    native = probes.native_arch()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    assert probes.elf_problem(fifo, native) == f"{fifo} is not a regular file"  # opening it would wait for a writer
    with pytest.raises(errors.ProbeError, match="is not a regular file"):
        probes.ProbeFinder({native.name: Path("/dev/zero")}, staging=tmp_path / "s").probe_for(native)
    assert time.monotonic() - start < 5


@pytest.mark.slow  # a fleet run of the quick suite on this machine (~30 s); CI runs it
def test_relative_inventory_probe_and_store_on_a_local_host(ansible, probe, tmp_path) -> None:
    """Before: Ansible looked for `probes/good` in its private directory and
    failed the host ("Could not find or access")."""
    work = tmp_path / "work"
    (work / "probes").mkdir(parents=True)
    shutil.copy(probe, work / "probes" / "good")
    _local_inventory(work / "inv.ini", "h1")
    native = probes.native_arch().name
    before = _private_dirs()
    r = _run("fleet", "run", "inv.ini", "--suite", "quick", *TINY, "--probe", f"{native}=probes/good",
             "--store", "s.db", cwd=work, probe=probe)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "h1: stored run 1" in r.stderr and (work / "s.db").is_file()
    assert _private_dirs() <= before and not list(TMP.glob("osmeter-fleet-*"))


# -- the inventory, within bounds ---------------------------------------------------------------------------


def test_the_inventory_copy_takes_its_vars_directories_along(tmp_path) -> None:
    (tmp_path / "inv").mkdir()
    inv = tmp_path / "inv" / "hosts.yml"
    inv.write_text("all:\n  hosts:\n    h1:\n")
    (tmp_path / "inv" / "group_vars").mkdir()
    (tmp_path / "inv" / "group_vars" / "all.yml").write_text("x: 1\n")
    (tmp_path / "inv" / "script.py").write_text("#!/bin/sh\n")
    (tmp_path / "inv" / "script.py").chmod(0o755)
    copy = copy_inventory(inv, tmp_path / "c1")
    assert copy == tmp_path / "c1" / "hosts.yml" and copy.read_text() == inv.read_text()
    assert (tmp_path / "c1" / "group_vars" / "all.yml").read_text() == "x: 1\n"
    tree = copy_inventory(tmp_path / "inv", tmp_path / "c2")
    assert sorted(p.name for p in tree.rglob("*")) == ["all.yml", "group_vars", "hosts.yml", "script.py"]
    assert os.access(tree / "script.py", os.X_OK)


def test_a_fifo_in_an_inventory_directory_is_refused(tmp_path) -> None:
    """Before: Ansible opened the FIFO and waited for a writer (120 s, then
    'ansible took more than 120 s to list its hosts')."""
    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / "hosts.ini").write_text("[lab]\nh1\n")
    os.mkfifo(tmp_path / "inv" / "pipe")
    with pytest.raises(errors.UsageError, match=r"pipe is not a regular file or a directory"):
        copy_inventory(tmp_path / "inv", tmp_path / "copy")


def test_dev_zero_as_the_inventory_is_refused_at_once(ansible, tmp_path) -> None:
    """Before: Ansible read /dev/zero until the kernel killed it (24 GB); here,
    under a 4 GiB address-space limit, it failed otherwise or timed out."""
    before = _private_dirs()
    start = time.monotonic()
    r = _run("fleet", "run", "/dev/zero", "--suite", "quick", timeout=120, limit_as=4 << 30)
    assert r.returncode == errors.EXIT_USAGE, r.stderr
    assert "the inventory file /dev/zero is not a regular file and sent more than 16 MiB" in r.stderr, r.stderr
    assert time.monotonic() - start < 60 and _private_dirs() <= before


@pytest.mark.slow  # waits out the 10 s a silent pipe is given; CI runs it
def test_a_silent_pipe_as_the_inventory_is_given_up_on(ansible, tmp_path) -> None:
    fifo = tmp_path / "inventory"
    os.mkfifo(fifo)
    holder = os.open(fifo, os.O_RDWR)  # a writer that never writes
    try:
        r = _run("fleet", "run", str(fifo), "--suite", "quick", timeout=100)
    finally:
        os.close(holder)
    assert r.returncode == errors.EXIT_USAGE and "sent nothing for 10 s" in r.stderr, r.stderr


# -- --label on --resume, one attempt at a time -------------------------------------------------------------


def _state(root: Path, store: Path) -> state.FleetState:
    st = state.FleetState(id="fleet-20260101T000000Z-abcd", created="2026-01-01T00:00:00Z", inventory="/inv.ini",
                          limit="all", suite="quick", probe_options={}, store=str(store))
    state.save(st, root)
    return st


def test_resume_refuses_a_label_the_first_attempt_did_not_give(cli, store_path) -> None:
    """Before: "that fleet run labels its runs None, not x"."""
    st = _state(state.state_root(), store_path)
    r = cli("fleet", "run", "/inv.ini", "--resume", st.id, "--label", "x")
    assert r.code == errors.EXIT_USAGE, r.err
    assert (f"--resume {st.id}: that fleet run's runs have no label (it was started without --label), not 'x'; "
            "a fleet run's label is set by its first attempt: leave --label out") in r.err, r.err
    assert "None" not in r.err and not store_path.exists()


def test_a_second_attempt_of_a_fleet_run_is_refused_while_one_runs(cli, tmp_path, store_path) -> None:
    """Before: both attempts ran (and stored the same host twice)."""
    st = _state(state.state_root(), store_path)
    code = ("import sys, time\nfrom osmeter.fleet import state\n"
            f"with state.locked({st.id!r}, resuming=True):\n    print('locked', flush=True)\n    time.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        r = cli("fleet", "run", str(tmp_path / "inv.ini"), "--resume", st.id)
        assert r.code == errors.EXIT_USAGE, r.err
        assert f"fleet {st.id} is being resumed by pid {holder.pid}; wait for it to end" in r.err, r.err
    finally:
        holder.kill()
        holder.wait()
    r = cli("fleet", "run", str(tmp_path / "inv.ini"), "--resume", st.id)  # a killed holder's lock is gone
    assert "is being resumed" not in r.err and f"inventory {tmp_path / 'inv.ini'}: no such file" in r.err, r.err
    assert not store_path.exists()


def test_a_refused_first_attempt_leaves_no_state(cli, tmp_path) -> None:
    r = cli("fleet", "run", str(tmp_path / "nope.ini"), "--suite", "quick")
    assert r.code == errors.EXIT_USAGE
    root = state.state_root()
    assert not root.exists() or list(root.iterdir()) == []


# -- the per-host time limit --------------------------------------------------------------------------------


def test_a_task_stopped_at_the_host_timeout_is_reported_so() -> None:
    out = io.StringIO()
    step = RunStep(arch_of=lambda h: "x86-64", running="running", made=lambda h, p: None, fetched=lambda h: "",
                   removed=lambda h: None, out=out, host_timeout=90)
    res = {"failed": True, "msg": "Task failed: Timed out after 12 second(s).", "timedout": {"period": 12}}
    step({"event": "runner_on_failed", "event_data": {"host": "a", "task": plays.T_RUN, "res": res}})
    assert step.failed["a"] == ("timed out: the host took more than its 90 s (--host-timeout) "
                                "(while running the probe)")


def test_every_task_up_to_the_fetch_has_what_is_left_of_the_hosts_time() -> None:
    play = plays.playbook()[0]
    tasks = play["tasks"][1:-1] + play["tasks"][-1]["block"]
    assert play["tasks"][0]["name"] == plays.T_START
    assert [t["name"] for t in tasks] == [plays.T_OLD, plays.T_TMP, plays.T_COPY, plays.T_RUN, plays.T_FETCH]
    assert all(t["timeout"] == plays.TIME_LEFT for t in tasks)
    assert play["tasks"][-1]["always"][0]["timeout"] == plays.CLEANUP_STEP_S


HANG = """#!/bin/sh
# The host's Python: copying a file hangs (as on a host that stops answering); all else runs.
case "$*" in *AnsiballZ_copy.py*) echo $$ >> "{pids}"; exec sleep 600;; esac
exec "{python}" "$@"
"""


@pytest.mark.slow  # waits out a 75 s host timeout; CI runs it
def test_a_host_past_its_time_limit_fails_and_the_others_are_stored(ansible, probe, tmp_path) -> None:
    """Copying the probe to h2 hangs: h2 fails at --host-timeout (timed out,
    its directory removed), h1's run is stored, exit 11. Before: no limit,
    the fleet run waited for h2 (here: killed after 200 s)."""
    pids = tmp_path / "hung.pids"
    python = tmp_path / "python"
    python.write_text(HANG.format(pids=pids, python=sys.executable))
    python.chmod(0o755)
    inventory = _local_inventory(tmp_path / "inv.ini", "h1")
    inventory.write_text(inventory.read_text() + f"h2 ansible_connection=local ansible_python_interpreter={python}\n")
    try:
        start = time.monotonic()
        r = _run("fleet", "run", str(inventory), "--suite", "quick", *TINY, "--host-timeout", "75",
                 probe=probe, timeout=200)
        took = time.monotonic() - start
    finally:
        for pid in (pids.read_text().split() if pids.exists() else []):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert r.returncode == errors.EXIT_HOSTS_FAILED, r.stdout + r.stderr
    assert ("h2: failed: timed out: the host took more than its 75 s (--host-timeout) (while copying the probe)"
            in r.stdout), r.stdout + r.stderr
    assert "h1: run 1" in r.stdout and took < 75 + 100
    assert not list(TMP.glob("osmeter-fleet-*")) and _wait(lambda: not _leftover_probes(), 10)


def _leftover_probes() -> list[int]:
    """Probes still running from a host's temporary directory."""
    found = []
    for pid in processes_naming("osmeter-fleet-"):
        try:
            if b"osmeter-probe" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


# -- nothing left behind ------------------------------------------------------------------------------------


@pytest.mark.slow  # a fleet run killed, then another one; CI runs it
def test_a_killed_fleet_runs_directory_is_removed_by_the_next(ansible, probe, tmp_path) -> None:
    """SIGKILL to `fleet run` while its host runs the probe: its private
    directory stays (nothing can remove it then), and ansible-playbook runs
    on; the next fleet run stops what names it and removes it, and the host's
    script, its connection gone, stops the probe and removes its directory."""
    inventory = _local_inventory(tmp_path / "inv.ini", "h1")
    before = _private_dirs()
    env = subprocess_env() | {"OSMETER_PROBE": probe}
    proc = subprocess.Popen(osmeter_command("fleet", "run", str(inventory), "--suite", "quick", "--repeat", "1"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "h1: running" in line:
                break
        time.sleep(1.0)
        (private,) = _private_dirs() - before
        proc.kill()
        proc.wait(timeout=30)
        assert private.is_dir() and processes_naming(str(private))  # left: the defect
        r = _run("fleet", "run", str(inventory), "--suite", "quick", "--limit", "nomatch", probe=probe, timeout=120)
        assert r.returncode == errors.EXIT_USAGE and "no host matches" in r.stderr, r.stderr
        assert f"osmeter: removed {private}, left by a fleet run that was killed" in r.stderr, r.stderr
        assert not private.exists() and processes_naming(str(private)) == []
        assert _wait(lambda: not list(TMP.glob("osmeter-fleet-*")) and not _leftover_probes(), 20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow  # waits for a probe to start; CI runs it
def test_the_remote_script_keeps_the_probes_temporary_files_in_its_directory(tmp_path, probe) -> None:
    """A probe killed with SIGKILL cannot remove its work directory; the
    script gave it TMPDIR in its own directory and removes that on its way
    out. Before: /tmp/osmeter-probe.PID.* stayed on the host for good."""
    work = tmp_path / "remote"
    work.mkdir()
    shutil.copy(probe, work / "osmeter-probe")
    head, tail = plays.run_command(["run", "file.open_close", "--min-time", "30", "--max-time", "60", "--quiet"], 1)
    proc = subprocess.Popen(f"exec {head} {work} {tail}", shell=True, stdout=subprocess.PIPE, text=True)
    try:
        assert _wait(lambda: list((work / "tmp").glob("osmeter-probe.*")), 20), list(work.rglob("*"))
        (made,) = (work / "tmp").glob("osmeter-probe.*")
        pid = int(made.name.split(".")[1])
        os.kill(pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3 and "repetition 1 of 1: exit status 137" in out, out
    assert not (work / "tmp").exists() and not list(TMP.glob(f"osmeter-probe.{pid}.*"))


def _remove(path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", plays.REMOVE, "osmeter-fleet", str(path)], capture_output=True, text=True,
                          timeout=30, env=env)


def test_the_removal_leaves_no_directory_a_late_run_script_could_write_into(tmp_path, probe) -> None:
    """Before: the clean-up after Ctrl-C removed the host's directory in
    place while a run script whose connection was being torn down was still
    starting; the script wrote its stderr there and the directory stayed
    (CI, 2026-11-28; tests/e2e/test_fleet.py's Ctrl-C test holds the race).
    The removal's contract: everything goes (links too, not followed), an
    absent directory is success, and a run script started afterwards
    creates nothing where the directory was."""
    host_tmp = tmp_path / "host-tmp"
    work = host_tmp / "osmeter-fleet-x.abc"
    (work / "tmp" / "deep").mkdir(parents=True)
    shutil.copy(probe, work / "osmeter-probe")
    (work / "stderr").write_text("old\n")
    (work / "link").symlink_to(work / "stderr")
    r = _remove(work)
    assert r.returncode == 0, r.stderr
    assert list(host_tmp.iterdir()) == []
    assert _remove(work).returncode == 0  # already gone: nothing to do, and that is success

    head, tail = plays.run_command(["run", "syscall.getpid", "--quiet"], 1)
    late = subprocess.run(f"exec {head} {work} {tail}", shell=True, capture_output=True, text=True, timeout=60)
    assert late.returncode == 3, late.stdout + late.stderr
    assert list(host_tmp.iterdir()) == []  # no directory, no stderr file, no work directory


def test_the_removal_fails_when_the_directory_stays(tmp_path) -> None:
    """A directory that cannot be renamed (a mount point: EBUSY; here an `mv`
    that fails) is reported (the host keeps it in the fleet's state, for the
    next attempt), not taken as gone."""
    (tmp_path / "d" / "sub").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mv").write_text("#!/bin/sh\necho 'mv: Device or resource busy' >&2\nexit 1\n")
    (bin_dir / "mv").chmod(0o755)
    r = _remove(tmp_path / "d", env={**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"})
    assert r.returncode != 0 and (tmp_path / "d" / "sub").is_dir()
    assert _remove(tmp_path / "d").returncode == 0 and not (tmp_path / "d").exists()
