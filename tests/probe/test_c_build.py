"""The probe's own builds: warnings are errors, the C unit tests pass, and an
ASan+UBSan build runs the quick suite without a single sanitizer report."""
import json
import os
import shutil
import subprocess

import pytest

from probe_helpers import REPO


def need(tool):
    path = shutil.which(tool)
    if not path:
        pytest.fail(f"{tool} is needed to build the probe (Debian: apt-get install build-essential cmake)")
    return path


def build(tmp, *defs):
    need("cmake")
    need("cc")
    b = tmp / "build"
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(b), "-DOSM_WERROR=ON", *defs],
                   check=True, capture_output=True, text=True)
    p = subprocess.run(["cmake", "--build", str(b), "-j2"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    return b


def ctest(b):
    p = subprocess.run(["ctest", "--output-on-failure", "-j2"], cwd=b, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-6000:]
    assert "tests passed" in p.stdout
    assert "No tests were found" not in p.stdout
    return p.stdout


@pytest.fixture(scope="module")
def sanitized(tmp_path_factory):
    return build(tmp_path_factory.mktemp("san"), "-DOSM_SANITIZE=ON", "-DCMAKE_BUILD_TYPE=RelWithDebInfo")


@pytest.mark.slow  # ~20 s; the default run's sanitized build is -Werror at -O2 too and runs the same unit tests
def test_release_build_has_no_warnings_and_unit_tests_pass(tmp_path):
    b = build(tmp_path, "-DCMAKE_BUILD_TYPE=Release")
    ctest(b)


@pytest.mark.slow
def test_sanitized_unit_tests_pass(sanitized):
    ctest(sanitized)


@pytest.mark.slow
def test_sanitized_probe_runs_the_quick_suite_cleanly(sanitized, tmp_path):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1", TMPDIR=str(tmp_path))
    p = subprocess.run([str(sanitized / "probe" / "osmeter-probe"), "run", "--suite", "quick",
                        "--max-time", "0.2", "--min-time", "0.01", "--quiet"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert "runtime error" not in p.stderr and "Sanitizer" not in p.stderr, p.stderr[-4000:]
    assert p.returncode == 0, p.stderr[-4000:]
    recs = [json.loads(x) for x in p.stdout.splitlines()]
    assert recs[-1]["type"] == "end" and recs[-1]["status"] == "complete"
    assert "-fsanitize=address,undefined" in recs[0]["build"]["flags"]
    for cmd in (["list", "--json", "--all"], ["sysinfo", "--json"], ["sysinfo"], ["run", "nope"]):
        q = subprocess.run([str(sanitized / "probe" / "osmeter-probe"), *cmd], capture_output=True,
                           text=True, env=env)
        assert "runtime error" not in q.stderr and "Sanitizer" not in q.stderr, (cmd, q.stderr)


@pytest.mark.slow
def test_sanitized_probe_runs_init_cleanly(sanitized, tmp_path, monkeypatch):
    """Init mode (PID 1 of a PID namespace, root only) with the sanitized
    probe: no report on its console or in any frame of its channel."""
    from test_init import run_init  # noqa: PLC0415 (the unshare runner and frame checks)
    monkeypatch.setenv("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
    monkeypatch.setenv("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    r = run_init([str(sanitized / "probe" / "osmeter-probe")], tmp_path,
                 "run\tsyscall.null\t--max-time\t0.05\nsysinfo\t--json\nlist\t--json\t--all\nrun\tno.such\n")
    assert "runtime error" not in r.stderr and "Sanitizer" not in r.stderr, r.stderr[-4000:]
    for f in r.frames:
        assert b"runtime error" not in f.payload and b"Sanitizer" not in f.payload, f
    assert [f.text for f in r.of("X")] == ["exit 0", "exit 0", "exit 0", "exit 2"]
