"""`osmeter kernels run` booting real kernels: Debian's standard and
PREEMPT_RT 6.1 kernels (`deb:linux-image-amd64`, `deb:linux-image-rt-amd64`,
downloaded with apt into a session cache) under qemu with the probe as init.

- both stored as two runs of one group, `preemption` read `rt` in one of them
  by the probe inside the guest, `compare --by kernel` rendered, every
  result flagged `emulated` when the guest ran under TCG; the wall time per
  kernel and the initramfs's size and build time recorded (and printed);
- a kernel told to panic (rdinit=/nonexistent) and a hung guest (init told
  to sleep: osmeter.sleep=600) each reported with their console's tail
  within the time limit, the other kernels going on, no qemu left;
- --resume boots only the kernel that failed;
- --accel kvm refused with the KVM check's reason where KVM does not work,
  and a kernel booted under KVM where it does;
- `study rt --kernel` in two VMs, side by side.

qemu-system-x86_64 and apt's Debian kernel packages are optional tools
(OSMETER_REQUIRE_QEMU_SYSTEM=1 or OSMETER_TEST_REQUIRE_OPTIONAL=1 make a
missing one a failure).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import osmeter_command, subprocess_env
from probe_helpers import find_probe, optional_tool_missing

pytestmark = [pytest.mark.slow]

STD, RT = "deb:linux-image-amd64", "deb:linux-image-rt-amd64"
BENCHES = ["syscall.null", "ctxsw.pipe", "task.fork", "file.stat", "net.tcp_rtt"]
TINY = ["--min-time", "0.01", "--max-time", "0.1", "--repeat", "1"]
GROUP_ID = re.compile(r"group (kernels-\d{8}T\d{6}Z-[0-9a-f]{4}):")


@pytest.fixture(scope="session")
def kernel_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of every `osmeter kernels` here: a session's own cache
    (the packages are downloaded once), state directory and store."""
    if not shutil.which("qemu-system-x86_64"):
        optional_tool_missing("qemu-system-x86_64 is not installed (Debian: apt-get install qemu-system-x86)",
                              "qemu-system")
    if not (shutil.which("apt-get") and shutil.which("dpkg-deb")):
        optional_tool_missing("apt-get and dpkg-deb are needed for deb: kernels (a Debian machine)", "qemu-system")
    policy = subprocess.run(["apt-cache", "policy", "linux-image-amd64", "linux-image-rt-amd64"],
                            capture_output=True, text=True)
    if policy.stdout.count("Candidate: (none)") or "Candidate:" not in policy.stdout:
        optional_tool_missing("apt has no candidate for linux-image-amd64 / linux-image-rt-amd64 (Debian's "
                              "sources; run apt-get update)", "qemu-system")
    root = tmp_path_factory.mktemp("kernels")
    env = subprocess_env()
    env.update(XDG_CACHE_HOME=str(root / "cache"), XDG_STATE_HOME=str(root / "state"),
               OSMETER_STORE=str(root / "store.db"))
    probe = find_probe()
    if probe:
        env["OSMETER_PROBE"] = probe
    return env


def osmeter(env: dict[str, str], *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(osmeter_command(*args), capture_output=True, text=True, env=env, timeout=timeout)


def qemu_left() -> list[str]:
    out = subprocess.run(["pgrep", "-af", "osmeter-guest"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "qemu" in line]


def kvm_usable() -> bool:
    from osmeter.kernels import kvm

    return kvm.check().usable


def group_of(done: subprocess.CompletedProcess[str]) -> str:
    m = GROUP_ID.search(done.stdout + done.stderr)
    assert m, done.stdout + done.stderr
    return m.group(1)


def test_standard_and_rt_kernels_one_group(kernel_env: dict[str, str]) -> None:
    started = time.monotonic()
    done = osmeter(kernel_env, "kernels", "run", "--kernel", STD, "--kernel", RT, *BENCHES, *TINY,
                   "--timeout", "300")
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    group = group_of(done)
    shown = json.loads(osmeter(kernel_env, "runs", "--json").stdout)
    runs = [r for r in (shown if isinstance(shown, list) else shown["runs"]) if r.get("fleet") == group]
    assert len(runs) == 2
    preemption = {}
    for r in runs:
        run = json.loads(osmeter(kernel_env, "show", str(r["id"]), "--json").stdout)
        machine, boot = run["run"]["machine"], run["run"]["params"]["kernels"]
        preemption[machine["kernel_release"]] = machine["preemption"]
        assert boot["release"] == machine["kernel_release"] == r["host"]
        assert boot["qemu_argv"][0].endswith("qemu-system-x86_64") and boot["image_sha256"]
        assert 0 < boot["initramfs_bytes"] < 64 << 20 and boot["initramfs_build_s"] < 5
        assert machine["vm_accel"] == boot["accel"] and machine["kernel_config_sha256"] == boot["config_sha256"]
        allowed = sorted(os.sched_getaffinity(0))
        if len(allowed) >= 2:  # each vCPU thread pinned (through QMP) to one of the first CPUs, before it ran
            assert boot["pinned"] == {"0": allowed[0], "1": allowed[1]}, boot["pinned"]
        results = run["results"]
        assert {x["bench"] for x in results} == set(BENCHES)
        assert all(x["status"] == "ok" for x in results), [(x["bench"], x.get("reason")) for x in results]
        emulated = not kvm_usable()
        assert all(("emulated" in x["flags"]) == emulated for x in results)
        print(f"{boot['release']}: {boot['wall_s']:.1f} s wall, initramfs {boot['initramfs_bytes']} B "
              f"in {boot['initramfs_build_s'] * 1e3:.1f} ms, accel {boot['accel']}")
    assert sorted(preemption.values()) == ["dynamic", "rt"], preemption
    print(f"two kernels, group {group}: {elapsed:.1f} s in all")
    compared = osmeter(kernel_env, "compare", "--by", "kernel", "--fleet", group)
    assert compared.returncode == 0, compared.stderr
    for release in preemption:
        assert release in compared.stdout
    assert "preemption" in compared.stdout and ("emulated" in compared.stdout) == (not kvm_usable())
    assert not qemu_left()


@pytest.mark.parametrize("append, timeout, expect, console", [
    ("rdinit=/nonexistent", 120, "the kernel panicked: Kernel panic - not syncing", "Kernel panic"),
    ("osmeter.sleep=600", 20, "did not finish within 20 s", "sleeping 600 s"),
])
def test_panic_and_hang_reported_with_console(kernel_env: dict[str, str], append: str, timeout: int, expect: str,
                                              console: str) -> None:
    started = time.monotonic()
    done = osmeter(kernel_env, "kernels", "run", "--kernel", STD, "syscall.null", *TINY, "--append", append,
                   "--timeout", str(timeout))
    elapsed = time.monotonic() - started
    assert done.returncode == 11, done.stdout + done.stderr
    assert expect in done.stdout and console in done.stderr, done.stdout + done.stderr
    assert elapsed < timeout + 60
    group = group_of(done)
    kept = Path(kernel_env["XDG_STATE_HOME"]) / "osmeter" / "kernels" / group / "1.console.log"
    assert console in kept.read_text(errors="replace")
    assert not qemu_left()


def test_resume_boots_only_the_kernel_not_stored(kernel_env: dict[str, str]) -> None:
    """Interrupted (SIGTERM) once the first of two kernels is stored (its work directory being removed
    then: the removal is not cut short): --resume boots the second alone."""
    before = set(Path("/tmp").glob("osmeter-kernel.*"))
    proc = subprocess.Popen(osmeter_command("kernels", "run", "--kernel", STD, "--kernel", RT, "syscall.null", *TINY),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kernel_env)
    seen = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if "stored run" in line:
                proc.terminate()
                break
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    err = "".join(seen) + err
    assert proc.returncode == 143, out + err
    assert "--resume" in err and set(Path("/tmp").glob("osmeter-kernel.*")) <= before
    group = group_of(subprocess.CompletedProcess([], 0, out, err))
    again = osmeter(kernel_env, "kernels", "run", "--resume", group)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 kernel(s) to boot, 1 stored before" in again.stderr
    assert "2 of 2 kernel(s) stored" in again.stdout and "(stored before)" in again.stdout
    assert not qemu_left()


def test_a_local_kernel_that_cannot_boot_is_refused_up_front(kernel_env: dict[str, str], tmp_path: Path) -> None:
    """A missing image or a file that is no x86 kernel would fail on every attempt: exit 2, no group made."""
    state = Path(kernel_env["XDG_STATE_HOME"]) / "osmeter" / "kernels"
    before = set(state.glob("kernels-*")) if state.is_dir() else set()
    for kernel, expect in ((str(tmp_path / "vmlinuz-none"), "no such file"), ("/bin/ls", "not an x86 kernel image")):
        done = osmeter(kernel_env, "kernels", "run", "--kernel", STD, "--kernel", kernel, "syscall.null", *TINY)
        assert done.returncode == 2 and expect in done.stderr, done.stderr
    assert (set(state.glob("kernels-*")) if state.is_dir() else set()) == before


def test_kvm_refused_with_its_reason_or_used(kernel_env: dict[str, str]) -> None:
    from osmeter.kernels import kvm

    check = kvm.check()
    done = osmeter(kernel_env, "kernels", "run", "--kernel", STD, "syscall.null", *TINY, "--accel", "kvm")
    if not check.usable:
        assert done.returncode == 2 and check.reason in done.stderr, done.stderr
        pytest.skip(f"KVM does not work here, so the KVM path was only refused: {check.reason}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "emulated" not in done.stdout


def test_study_rt_in_two_vms_side_by_side(kernel_env: dict[str, str], tmp_path: Path) -> None:
    listing = json.loads(osmeter(kernel_env, "list", "--json").stdout)
    bench = next(b for b in listing["benchmarks"] if b["name"] == "rt.workload")
    workloads = next(p for p in bench["params"] if p["name"] == "kernel")["choices"][:2]
    out = tmp_path / "rt"
    done = osmeter(kernel_env, "study", "rt", "--kernel", STD, "--kernel", RT, "--quick", "--jobs", "10",
                   "--cyclic-s", "0.3", "--kernels", ",".join(workloads), "-o", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    side = (out / "rt-kernels.txt").read_text()
    releases = [p.name for p in out.iterdir() if p.is_dir()]
    assert len(releases) == 2 and all(r in side for r in releases)
    assert "preemption rt" in side and all(w in side for w in workloads) and "1 x read" in side
    for r in releases:
        assert (out / r / "rt-study.txt").is_file()
    assert not qemu_left()


def test_interrupted_leaves_no_qemu_nor_files(kernel_env: dict[str, str]) -> None:
    """SIGTERM while a guest runs (init told to sleep): qemu is killed with osmeter, its
    temporary directory removed, the kernel marked interrupted; exit 143."""
    before = set(Path("/tmp").glob("osmeter-kernel.*"))
    proc = subprocess.Popen(osmeter_command("kernels", "run", "--kernel", STD, "syscall.null", *TINY, "--append",
                                            "osmeter.sleep=600"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=kernel_env)
    try:
        deadline = time.monotonic() + 120
        while not qemu_left() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert qemu_left(), "qemu never started"
        time.sleep(3)  # well into the boot
        proc.terminate()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, out + err
    assert "interrupted by SIGTERM" in err and not qemu_left()
    assert set(Path("/tmp").glob("osmeter-kernel.*")) <= before
    state = json.loads(next(Path(kernel_env["XDG_STATE_HOME"]).glob(
        f"osmeter/kernels/{group_of(subprocess.CompletedProcess([], 0, out, err))}/state.json")).read_text())
    assert [o["reason"] for o in state["outcomes"].values()] == ["interrupted"]
