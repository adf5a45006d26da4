"""The standard streams as a shell hands them over (issue 27, defect 6): closed
(`>&-`, `2>&-`), full (`> /dev/full`), a pipe whose reader left, an encoding
that lacks a character, a terminal (osmeter.streams). Real processes: the
defects live in file descriptors, which an in-process run cannot have."""

from __future__ import annotations

import csv
import io
import os
import pty
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from osmeter.errors import EXIT_NOT_FOUND, EXIT_OUTPUT

from ..conftest import db_rows, osmeter_command, subprocess_env
from ..synthetic import add_run, noisy

ESC = "\x1b]0;pwned\x07\x1b[2J\x1b[31m"
RLO = "\u202e"


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stdout: str  # as written: no newline translation (a CR in a CSV cell stays one)
    stderr: str


def osmeter(*args: str, redirect: str = "", timeout: float = 120, **env: str) -> Outcome:
    """`osmeter ARGS REDIRECT` as a shell runs it: stdout and stderr captured unless REDIRECT says otherwise."""
    command = ["sh", "-c", f'exec "$@" {redirect}', "sh", *osmeter_command(*args)]
    r = subprocess.run(command, capture_output=True, env={**subprocess_env(), **env}, timeout=timeout)
    return Outcome(r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace"))


@pytest.fixture
def two_runs(store_path: Path) -> Path:
    rng = np.random.default_rng(6)
    for label in ("é base", f"other{ESC}{RLO}\r"):
        add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0, 200))], label=label)
    return store_path


CLOSED_OUT = "osmeter: error: cannot write to standard output: it is closed\n"
FULL = "osmeter: error: cannot write to standard output: No space left on device\n"
COMMANDS = [("runs",), ("show", "1"), ("list",), ("export", "1"), ("export", "1", "--format", "csv"),
            ("compare", "1", "2"), ("sysinfo",), ("store", "info"), ("--help",)]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
@pytest.mark.slow
def test_closed_stdout_is_one_line_and_exit_12(two_runs: Path, real_probe: str, args: tuple[str, ...]) -> None:
    r = osmeter(*args, redirect=">&-")
    assert (r.returncode, r.stderr) == (EXIT_OUTPUT, CLOSED_OUT)


@pytest.mark.parametrize("args", [("show", "1"), ("runs",), ("export", "1", "--format", "csv"), ("--version",)],
                         ids=" ".join)
@pytest.mark.slow
def test_full_stdout_is_one_line_and_exit_12(two_runs: Path, args: tuple[str, ...]) -> None:
    r = osmeter(*args, redirect="> /dev/full")  # `runs` fits the buffer: the error comes at the last flush
    assert (r.returncode, r.stderr) == (EXIT_OUTPUT, FULL)


@pytest.mark.slow
def test_both_closed_still_exits_12(two_runs: Path) -> None:
    r = osmeter("runs", redirect=">&- 2>&-")
    assert (r.returncode, r.stdout, r.stderr) == (EXIT_OUTPUT, "", "")


@pytest.mark.slow
def test_error_and_full_stdout_are_reported_once(two_runs: Path) -> None:
    r = osmeter("show", "9", redirect="> /dev/full")  # nothing printed: the run's error, not the output's
    assert (r.returncode, r.stderr.count("\n"), "Traceback" in r.stderr) == (EXIT_NOT_FOUND, 1, False)


def test_reader_gone_stays_quiet(two_runs: Path) -> None:
    proc = subprocess.Popen(osmeter_command("runs"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=subprocess_env())
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head -0`: gone before osmeter writes a byte
    err = proc.stderr.read()
    assert (proc.wait(timeout=60), err) == (0, b"")


@pytest.mark.slow
def test_ascii_output_escapes_what_it_cannot_encode(two_runs: Path) -> None:
    for args in (("runs",), ("show", "1"), ("export", "1", "--format", "csv")):
        r = osmeter(*args, PYTHONIOENCODING="ascii")
        assert (r.returncode, r.stderr) == (0, ""), args
        assert "\\xe9 base" in r.stdout, args


def run_args(*extra: str) -> list[str]:
    return ["run", "syscall.null", "--min-time", "0.01", "--max-time", "0.05", "--repeat", "1", *extra]


@pytest.mark.slow
def test_run_with_stdout_closed_stores_the_run_and_says_so(store_path: Path, real_probe: str) -> None:
    r = osmeter(*run_args(), redirect=">&-")
    assert r.returncode == EXIT_OUTPUT, r.stderr
    assert r.stderr.endswith("osmeter: error: cannot write to standard output: it is closed; "
                             "the run is stored (`osmeter runs` lists it)\n"), r.stderr
    assert "Traceback" not in r.stderr
    assert db_rows(store_path, "SELECT id, status FROM runs") == [(1, "complete")]
    assert db_rows(store_path, "SELECT bench, status FROM results") == [("syscall.null", "ok")]


def test_run_with_stderr_closed_measures_and_stores(store_path: Path, real_probe: str) -> None:
    r = osmeter(*run_args(), redirect="2>&-")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.startswith("run 1") and "syscall.null" in r.stdout, r.stdout
    assert db_rows(store_path, "SELECT id, status FROM runs") == [(1, "complete")]


def on_terminal(*args: str) -> bytes:
    """What `osmeter ARGS` shows on a terminal (a pseudo-terminal's master side)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(osmeter_command(*args), stdout=slave, stderr=subprocess.PIPE, env=subprocess_env())
    finally:
        os.close(slave)
    shown = b""
    try:
        while chunk := os.read(master, 65536):
            shown += chunk
    except OSError:  # EIO: the last writer closed the terminal
        pass
    finally:
        os.close(master)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    return shown


def test_csv_on_a_terminal_shows_controls_escaped(two_runs: Path) -> None:
    shown = on_terminal("export", "2", "--format", "csv").decode()
    for bad in ("\x1b", "\x07", RLO):
        assert bad not in shown, repr(bad)
    assert "other\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m\\u202e\\r" in shown


def test_csv_in_a_file_keeps_the_value_and_stays_valid(two_runs: Path, tmp_path: Path) -> None:
    r = osmeter("export", "2", "--format", "csv")
    assert r.returncode == 0
    rows = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
    assert [row["run_label"] for row in rows] == [f"other{ESC}{RLO}\r"]
