"""Issue 27, defect 5, end to end: `osmeter hotspots --show/--diff` read
every file within bounds (osmeter.inputs) and render a pathological one in
memory proportional to it.

Each command runs in its own process under an address-space limit, so that
what used to read /dev/zero until the OOM killer came fails fast with a
MemoryError instead, and under a time limit, so that what used to wait for
a FIFO's writer forever fails the test instead of hanging it. The size and
time caps are made small by setting the module constants in that process.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..conftest import subprocess_env

GIB = 1024**3
BOOT = """
import resource, sys
import osmeter.inputs as inputs, osmeter.hotspots.sources as sources
{patches}
from osmeter.cli import main
try:
    code = main(sys.argv[1:])
finally:
    print("MAXRSS_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


@dataclass
class Done:
    code: int
    out: str
    err: str
    seconds: float
    max_rss: int  # bytes


def hotspots(*args: str, patches: str = "", memory: int = 2 * GIB, timeout: float = 60,
             stdin: str | None = None) -> Done:
    """`osmeter hotspots ARGS` in a process of at most `memory` bytes of address space."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", BOOT.format(patches=patches), "hotspots", *args],
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env(),
                            preexec_fn=limit)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"osmeter hotspots {' '.join(args)} still running after {timeout:g} s")
    rss = next((int(line.split()[1]) * 1024 for line in err.splitlines() if line.startswith("MAXRSS_KB")), 0)
    return Done(proc.returncode, out, err, time.monotonic() - start, rss)


SMALL_CAP = "sources.MAX_INPUT_BYTES = 8 * inputs.MIB"


@pytest.mark.parametrize("args", [("--show", "/dev/zero"), ("--show", "/dev/urandom"),
                                  ("--diff", "/dev/null", "/dev/zero")])
@pytest.mark.slow
def test_an_endless_device_is_refused_at_the_size_cap(tmp_path: Path, args):
    r = hotspots(*args, "-o", str(tmp_path / "out"), patches=SMALL_CAP)
    assert r.code == 2, r.err  # was a MemoryError (exit 1) here, the OOM killer without a limit
    assert "is not a regular file and sent more than 8 MiB, the limit" in r.err, r.err
    assert "Traceback" not in r.err
    assert not (tmp_path / "out").exists()


def test_the_default_size_cap_bounds_memory(tmp_path: Path):
    r = hotspots("--show", "/dev/zero", "-o", str(tmp_path / "out"))
    assert r.code == 2 and "more than 256 MiB" in r.err, r.err
    assert r.max_rss < 1 * GIB, f"{r.max_rss / 2**20:.0f} MiB"


@pytest.mark.slow  # waits out the idle limit, about 1.2 s; CI runs it
def test_a_fifo_without_a_writer_is_given_up_on(tmp_path: Path):
    fifo = tmp_path / "stacks"
    os.mkfifo(fifo)
    r = hotspots("--show", str(fifo), "-o", str(tmp_path / "out"), patches="inputs.IDLE_S = 0.5", timeout=30)
    assert r.code == 2 and "sent nothing for 0.5 s" in r.err, r.err  # blocked forever


@pytest.mark.slow
def test_a_fifo_that_never_ends_is_given_up_on(tmp_path: Path):
    fifo = tmp_path / "stacks"
    os.mkfifo(fifo)
    stop = threading.Event()

    def trickle() -> None:
        fd = os.open(fifo, os.O_WRONLY)  # waits for osmeter to open it
        try:
            while not stop.wait(0.05):
                os.write(fd, b"p;a 1\n")
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)

    writer = threading.Thread(target=trickle, daemon=True)
    writer.start()
    try:
        r = hotspots("--show", str(fifo), "-o", str(tmp_path / "out"), patches="inputs.TOTAL_S = 1.5", timeout=30)
    finally:
        stop.set()
        writer.join(5)
    assert r.code == 2 and "was still sending after 1.5 s" in r.err, r.err


@pytest.mark.slow
def test_a_stack_of_100000_frames_renders_in_memory_proportional_to_it(tmp_path: Path):
    """A 0.7 MB file; paths built per frame needed about 40 GB (4.1 GB for 32 000 frames)."""
    f = tmp_path / "deep.folded"
    f.write_text("p;" + ";".join(f"fn{i}_[k]" for i in range(100_000)) + " 5\np;main 1\n")
    g = tmp_path / "other.folded"
    g.write_text("p;" + ";".join(f"fn{i}_[k]" for i in range(50_000)) + " 5\np;main 5\n")
    r = hotspots("--show", str(f), "-o", str(tmp_path / "show"), memory=3 * GIB, timeout=300)
    assert r.code == 0, r.err[-2000:]
    assert r.max_rss < 1 * GIB, f"{r.max_rss / 2**20:.0f} MiB"  # about 100 MiB
    ET.parse(tmp_path / "show" / "flamegraph.svg")
    assert "goes deeper than the 1024 depths listed" in (tmp_path / "show" / "depth.txt").read_text()
    d = hotspots("--diff", str(g), str(f), "-o", str(tmp_path / "diff"), memory=3 * GIB, timeout=300)
    assert d.code == 0, d.err[-2000:]
    assert d.max_rss < 1 * GIB, f"{d.max_rss / 2**20:.0f} MiB"
    ET.parse(tmp_path / "diff" / "diff.svg")


@pytest.mark.slow  # about 1.3 s; CI runs it
def test_standard_input_is_read_within_the_same_bounds(tmp_path: Path):
    r = hotspots("--show", "-", "-o", str(tmp_path / "out"), stdin="p;sys_[k];read_[k] 3\np;main 1\n")
    assert r.code == 0, r.err
    assert "standard input" in r.out and "read" in (tmp_path / "out" / "top.txt").read_text()
    r = hotspots("--diff", "-", "-", "-o", str(tmp_path / "d"), stdin="p;a 1\n")
    assert r.code == 2 and "only one side can be standard input" in r.err, r.err


def test_control_characters_in_names_reach_neither_the_terminal_nor_the_files(cli, tmp_path: Path):
    f = tmp_path / "evil.folded"
    f.write_text("p;evil\x1b]0:pwned\x07\x1b[2J\x00;leaf\x9b31m_[k] 7\np;main 3\n")
    r = cli("hotspots", "--show", str(f), "-o", str(tmp_path / "out"))
    assert r.code == 0, r.err
    assert "evil" in r.out and "leaf" in r.out
    for text in (r.out, *(p.read_text() for p in (tmp_path / "out").glob("*.txt"))):
        assert not any(c in text for c in "\x1b\x07\x00\x9b"), repr(text)
    ET.parse(tmp_path / "out" / "flamegraph.svg")
