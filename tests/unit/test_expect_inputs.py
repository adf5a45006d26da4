"""Issue 27: `osmeter report --expect FILE` reads FILE within bounds
(osmeter.inputs, report.expect.MAX_EXPECT_BYTES): /dev/zero is refused at
the size cap, a FIFO without a writer after the idle cap; both read until
memory ran out or forever. Each runs in its own process under an
address-space and a time limit, so the old behaviour fails the test
instead of the machine."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from osmeter.errors import UsageError
from osmeter.report.expect import parse_expect, read_expect

from ..conftest import subprocess_env

GIB = 1024**3
BOOT = """
import sys
import osmeter.inputs as inputs
{patches}
from osmeter.cli import main
sys.exit(main(sys.argv[1:]))
"""


def report(*args: str, patches: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * GIB, 2 * GIB))

    try:
        return subprocess.run([sys.executable, "-c", BOOT.format(patches=patches), "report", *args],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, env=subprocess_env(),
                              preexec_fn=limit, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"osmeter report {' '.join(args)} still running after {timeout:g} s")


def test_an_endless_expect_file_is_refused_at_the_size_cap(tmp_path: Path):
    r = report("--expect", "/dev/zero", "-o", str(tmp_path / "r.html"))
    assert r.returncode == 2, r.stderr  # was a MemoryError under the limit, the OOM killer without
    assert "the expect file /dev/zero is not a regular file and sent more than 4 MiB, the limit" in r.stderr
    assert not (tmp_path / "r.html").exists()


@pytest.mark.slow
def test_an_expect_fifo_without_a_writer_is_given_up_on(tmp_path: Path):
    fifo = tmp_path / "expect.yaml"
    os.mkfifo(fifo)
    r = report("--expect", str(fifo), patches="inputs.IDLE_S = 0.5", timeout=30)
    assert r.returncode == 2 and "sent nothing for 0.5 s" in r.stderr, r.stderr  # blocked forever


def test_read_expect_refuses_a_large_file_and_a_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from osmeter.report import expect

    f = tmp_path / "e.yaml"
    f.write_text("syscall.null: 100 ns\n" + "# padding\n" * 1000)
    assert read_expect(f)[0].value == 100
    monkeypatch.setattr(expect, "MAX_EXPECT_BYTES", 1024)
    with pytest.raises(UsageError, match=r"e\.yaml is more than 1 KiB, the limit"):
        read_expect(f)
    with pytest.raises(UsageError, match="it is a directory"):
        read_expect(tmp_path)


@pytest.mark.slow
def test_deeply_nested_yaml_is_an_error_not_a_traceback():
    with pytest.raises(UsageError, match="nested too deeply"):
        parse_expect("a.b: " + "[" * 100_000 + "]" * 100_000 + "\n", Path("e.yaml"))
