"""How the `osmeter` program ends (cli.entry): main()'s exit code, the
streams flushed and the exit handlers run, then a quick exit that skips
Python's object-by-object teardown; the usual exit while another thread
runs or a profiler watches."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from osmeter.errors import NotFoundError

from ..conftest import subprocess_env

# A program that ends through cli.entry: an exit handler that writes a file
# and prints, then `osmeter show 1` on a missing store. "unwound" is printed
# when entry() leaves by SystemExit (the usual exit, with Python's teardown
# after it); a quick exit ends the process inside entry().
PROGRAM = """
import atexit, pathlib, sys, threading, time

marks = pathlib.Path(sys.argv[1])
atexit.register(lambda: (marks.joinpath("atexit").write_text("ran"), print("handler", flush=True)))
{before}
sys.argv = ["osmeter", "show", "1"]
print("before", end="")  # unflushed when main() returns: entry flushes it
from osmeter.cli import entry
try:
    entry()
finally:
    print("unwound", flush=True)
"""


def _run(tmp_path: Path, before: str = "") -> subprocess.CompletedProcess[str]:
    env = subprocess_env()
    env["OSMETER_STORE"] = str(tmp_path / "nothing-here.db")
    program = PROGRAM.format(before=textwrap.dedent(before))
    return subprocess.run([sys.executable, "-c", program, str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=60)


def test_quick_exit_keeps_the_code_the_output_and_the_exit_handlers(tmp_path: Path) -> None:
    r = _run(tmp_path)
    assert r.returncode == NotFoundError("x").exit_code, r.stderr
    assert "no store at" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout.startswith("before") and "handler" in r.stdout
    assert (tmp_path / "atexit").read_text() == "ran"
    assert "unwound" not in r.stdout  # ended inside entry(): no teardown


def test_a_running_thread_gets_the_usual_exit(tmp_path: Path) -> None:
    """A thread that runs until the test closes the program's stdin, which
    it does once osmeter has said its error (main() has returned): the
    process must wait for the thread, as Python's own exit does."""
    before = """
    def late():
        sys.stdin.read()
        marks.joinpath("thread").write_text("done")
    threading.Thread(target=late).start()
    """
    env = subprocess_env()
    env["OSMETER_STORE"] = str(tmp_path / "nothing-here.db")
    program = PROGRAM.format(before=textwrap.dedent(before))
    with subprocess.Popen([sys.executable, "-c", program, str(tmp_path)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stdin is not None and proc.stderr is not None
        try:
            assert "no store at" in proc.stderr.readline()
            proc.stdin.close()
            proc.wait(timeout=60)
            out = proc.stdout.read() if proc.stdout else ""
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == NotFoundError("x").exit_code
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert "unwound" in out


def test_a_profiler_gets_the_usual_exit(tmp_path: Path) -> None:
    r = _run(tmp_path, "sys.setprofile(lambda frame, event, arg: None)")
    assert r.returncode == NotFoundError("x").exit_code, r.stderr
    assert "unwound" in r.stdout and "handler" in r.stdout


def test_python_m_osmeter_and_the_console_script_end_through_entry() -> None:
    root = Path(__file__).resolve().parents[2]
    main_py = (root / "src" / "osmeter" / "__main__.py").read_text()
    assert "entry()" in main_py
    assert 'osmeter = "osmeter.cli:entry"' in (root / "pyproject.toml").read_text()
