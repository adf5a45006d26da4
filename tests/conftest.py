"""Shared fixtures: an isolated user environment, the fake probe, CLI runners."""

from __future__ import annotations

import functools
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
FAKE_PROBE = ROOT / "tests" / "fake_probe.py"
SRC = ROOT / "src"

# tests/probe_helpers.py (the real probe's finder and runner) is imported as a
# plain module by the probe, ground-truth and end-to-end tests.
sys.path.insert(0, str(ROOT / "tests"))
from probe_helpers import find_probe, optional_tool_missing  # noqa: E402,F401

import pgserver  # noqa: E402  (tests/ is on sys.path: conftest is also imported as a plain module)


# Tests marked `slow` run when this variable is 1, as CI sets it (.ci/run),
# or when `-m` names them (`pytest -m slow` runs just those); the README's
# test command skips them, so it stays under five minutes on a 2-core
# machine. Slow: tens of seconds (the fork study, the cross builds under
# qemu, PostgreSQL), or a robustness scenario of about two seconds or more
# (signals, killed partners, fuzzing, races, a browser). The default run
# keeps every benchmark's plausibility test, the harness's ground truth and
# the golden outputs.
RUN_SLOW = "OSMETER_TEST_SLOW"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(RUN_SLOW) == "1" or "slow" in (config.getoption("markexpr", "") or ""):
        return
    skip = pytest.mark.skip(reason=f"slow: set {RUN_SLOW}=1 (CI does) or run pytest -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@functools.lru_cache(maxsize=1)
def _real_probe() -> str | None:
    return find_probe()


@pytest.fixture(scope="session")
def probe() -> str:
    """The real osmeter-probe; missing is a failure, never a silent skip."""
    path = find_probe()
    if path is None:
        pytest.fail("osmeter-probe not found: pip install . (or set OSMETER_TEST_PROBE)")
    return path


_USER_VARIABLES = ("OSMETER_STORE", "OSMETER_PROBE", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
                   "XDG_STATE_HOME", "HOME")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every user directory and osmeter variable points into tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("OSMETER_STORE", str(tmp_path / "store" / "osmeter.db"))
    # The real probe, named: an installed osmeter finds its own, an editable one none, and what a
    # table shows (the catalogue's parameter defaults, report.params) must not depend on which
    real = _real_probe()
    if real is not None:
        monkeypatch.setenv("OSMETER_PROBE", real)
    else:
        monkeypatch.delenv("OSMETER_PROBE", raising=False)
    for name in list(os.environ):
        if name.startswith("FAKE_PROBE_"):
            monkeypatch.delenv(name)
    return tmp_path


@pytest.fixture
def store_path(isolated_env: Path) -> Path:
    return isolated_env / "store" / "osmeter.db"


@dataclass
class FakeProbe:
    """The fake probe, configured through FAKE_PROBE_* variables."""

    path: Path
    marker: str
    monkeypatch: pytest.MonkeyPatch
    env: dict[str, str] = field(default_factory=dict)

    def set(self, **knobs: object) -> None:
        for name, value in knobs.items():
            key = f"FAKE_PROBE_{name.upper()}"
            self.monkeypatch.setenv(key, str(value))
            self.env[key] = str(value)

    def processes(self) -> list[int]:
        """Live (not zombie) fake probes of this test and their children.

        osmeter carries the marker too (it passes its environment on), so
        the command line tells the probe and its child from it. A process
        with its parent's command line is not another probe but a fork of
        the interpreter's wrapper on its way to exec (pyenv's bash shim
        does this), and is not counted.
        """
        seen: dict[int, tuple[bytes, int]] = {}  # pid: (command line, parent pid)
        for pid in marked_processes(f"FAKE_PROBE_MARKER={self.marker}"):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if b"fake_probe.py" in cmdline or b"fake-probe-child" in cmdline:
                seen[pid] = (cmdline, ppid)
        return [pid for pid, (cmdline, ppid) in seen.items() if seen.get(ppid, (None,))[0] != cmdline]


def marked_processes(needle: str) -> list[int]:
    """Scan /proc for processes whose environment contains `needle`."""
    found = []
    token = needle.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if token not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture
def fake_probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProbe]:
    if not os.access(FAKE_PROBE, os.X_OK):
        FAKE_PROBE.chmod(0o755)
    marker = uuid.uuid4().hex
    monkeypatch.setenv("OSMETER_PROBE", str(FAKE_PROBE))
    monkeypatch.setenv("FAKE_PROBE_MARKER", marker)
    probe = FakeProbe(FAKE_PROBE, marker, monkeypatch)
    yield probe
    for pid in marked_processes(f"FAKE_PROBE_MARKER={marker}"):  # never leak a process into later tests
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def invoke_main(*args: str) -> tuple[int, str, str]:
    """`osmeter ARGS` in this process without a fixture (for Hypothesis
    tests, which cannot take function-scoped ones): exit code, stdout, stderr."""
    import contextlib
    import io

    from osmeter.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse
            code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """Run `osmeter ARGS` in this process; returns exit code, stdout, stderr."""
    from osmeter.cli import main

    def invoke(*args: str) -> Outcome:
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse
            code = int(e.code or 0)
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return invoke


def osmeter_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "osmeter", *args]


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@pytest.fixture
def osmeter_proc() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start `python -m osmeter ARGS` as a real process (for signal tests)."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            osmeter_command(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def db_rows(path: Path, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Read the store directly, bypassing osmeter."""
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="session")
def pg_server() -> Iterator["pgserver.Server"]:
    """One throw-away PostgreSQL server for the session (tests/pgserver.py)."""
    bindir = pgserver.binaries()
    if bindir is None:
        optional_tool_missing(pgserver.INSTALL_HINT, "postgresql")
    server = pgserver.Server(bindir)
    try:
        server.start()
    except (RuntimeError, OSError, KeyError, subprocess.TimeoutExpired) as e:
        server.stop()
        pytest.fail(f"cannot start the test PostgreSQL server: {e}")
    yield server
    server.stop()


@dataclass
class StoreAt:
    """A store location for the tests that run on both backends, with
    direct SQL access that bypasses osmeter (to read, or to damage)."""

    location: str
    backend: str  # sqlite / postgresql

    def _engine(self) -> "sqlalchemy.Engine":
        import sqlalchemy as sa

        if self.backend == "sqlite":
            return sa.create_engine(f"sqlite:///{self.location}")
        return sa.create_engine(self.location.replace("postgresql://", "postgresql+psycopg://"))

    def rows(self, sql: str, *args: object) -> list[tuple[object, ...]]:
        """The rows of a query (`?` placeholders on both backends); none where
        no store was made (as db_rows has none for a missing file)."""
        if self.backend == "sqlite":
            return db_rows(Path(self.location), sql, args)
        return self._pg_rows(sql, *args) if self.exists() else []

    def _pg_rows(self, sql: str, *args: object) -> list[tuple[object, ...]]:
        engine = self._engine()
        try:
            with engine.connect() as conn:
                return [tuple(r) for r in conn.exec_driver_sql(sql.replace("?", "%s"), args).all()]
        finally:
            engine.dispose()

    def exists(self) -> bool:
        """Whether a store was made there (SQLite: the file; PostgreSQL: any table)."""
        if self.backend == "sqlite":
            return Path(self.location).exists()
        return self._pg_rows("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") != [(0,)]

    def execute(self, sql: str, *args: object) -> None:
        """One statement run and committed; `?` placeholders on both backends."""
        engine = self._engine()
        try:
            with engine.begin() as conn:
                conn.exec_driver_sql(sql if self.backend == "sqlite" else sql.replace("?", "%s"), tuple(args))
        finally:
            engine.dispose()


BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)]


@pytest.fixture(params=BACKENDS)
def store_at(request: pytest.FixtureRequest, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> StoreAt:
    """An empty store on each backend (PostgreSQL: a new database on the
    session's server; its copies of the store tests are slow-marked), also
    made the default through $OSMETER_STORE."""
    if request.param == "sqlite":
        location = str(isolated_env / "store" / "osmeter.db")
    else:
        location = request.getfixturevalue("pg_server").database()
    monkeypatch.setenv("OSMETER_STORE", location)
    return StoreAt(location, request.param)


def import_fixture(store_path: Path | str, name: str = "run_x86_64.jsonl", label: str | None = None) -> int:
    """Store tests/data/NAME through the import path; returns the run id."""
    from osmeter.ingest import read_probe_file, store_probe_file
    from osmeter.recorder import RunContext, RunRecorder
    from osmeter.store import open_store

    store = open_store(str(store_path), create=True)
    try:
        recorder = RunRecorder(store, RunContext(label, ["import", name], {}, "import"))
        with store.transaction():
            store_probe_file(read_probe_file(DATA / name), recorder)
        assert recorder.run_id is not None
        return recorder.run_id
    finally:
        store.close()
