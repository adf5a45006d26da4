"""Finding, running and stopping osmeter-probe.

The probe runs in its own session and process group (start_new_session),
so a Ctrl-C in the terminal reaches osmeter only and osmeter decides what
the probe gets. It is started with --die-with-parent (PR_SET_PDEATHSIG),
so it dies with osmeter even when osmeter is killed outright. When osmeter
is done with it, for any reason, the whole group gets SIGKILL: no child of
the probe survives.

Lines are read by a thread and handed over through a queue, so osmeter
notices when the probe has exited even if a leftover child of the probe
still holds its stdout open. A line ends at "\\n" only, and one longer
than MAX_LINE_BYTES is not buffered: it is reported as an error.

The probe's temporary files go to a directory osmeter makes for each probe
process ($TMPDIR points into it) and removes once the probe's group is dead,
so a probe killed with SIGKILL (which cannot clean up) leaves nothing. The
file benchmarks' work directories elsewhere (`--param dir=PATH`, or
/var/tmp) are named `osmeter-probe.<pid>.XXXXXX` after the probe's pid, and
osmeter removes those of its own probe there too (remove_probe_workdirs).
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any, Callable, Iterator, Mapping, Sequence

from .errors import ProbeError, UsageError
from .records import MAX_LINE_BYTES

ENV_PROBE = "OSMETER_PROBE"
PROBE_NAME = "osmeter-probe"
PROBE_BENCH_FAILED_EXIT = 1  # the probe's exit code when a benchmark reported `error`
PROBE_USAGE_EXIT = 2  # the probe's exit code for bad input (docs/exit-codes.md)

# After the probe exits, wait this long for the rest of its output before
# killing the group (a leftover child may hold stdout open).
EXIT_DRAIN_S = 1.0
# After SIGTERM, give the probe this long to write `end` and exit.
TERM_GRACE_S = 10.0
# When osmeter stops reading early, the probe gets this long after SIGTERM.
CLOSE_GRACE_S = 5.0
# `list` and `sysinfo` must answer within this time.
DOCUMENT_TIMEOUT_S = 120.0


BUNDLED_PROBE = Path(__file__).resolve().parent / "bin" / PROBE_NAME  # installed by the wheel


def locate_probe(env: Mapping[str, str] = os.environ, bundled: Path | None = None) -> Path:
    """$OSMETER_PROBE, else the probe installed next to this package, else PATH."""
    bundled = BUNDLED_PROBE if bundled is None else bundled
    override = env.get(ENV_PROBE)
    if override:
        path = Path(override).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ProbeError(f"{ENV_PROBE}={override} is not an executable file; fix or unset {ENV_PROBE}")
        return path
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return bundled
    found = shutil.which(PROBE_NAME, path=env.get("PATH"))
    if found:
        return Path(found)
    raise ProbeError(
        f"{PROBE_NAME} not found (looked at ${ENV_PROBE}, {bundled} and PATH); "
        f"install osmeter with pip, which builds it, or build it with CMake and set {ENV_PROBE}"
    )


def probe_message(stderr: str) -> str:
    """The probe's stderr without its own `osmeter-probe: error: ` prefixes."""
    lines = []
    for line in stderr.strip().splitlines():
        for prefix in (f"{PROBE_NAME}: error: ", f"{PROBE_NAME}: "):
            if line.startswith(prefix):
                line = line[len(prefix) :]
                break
        lines.append(line)
    return "\n".join(lines)


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


@dataclass(frozen=True)
class Line:
    text: str
    complete: bool  # False: the output ended in the middle of this line
    error: str | None = None  # the line could not be read as text (too long, not UTF-8)


class _TooLong:
    """Queued in place of a line longer than MAX_LINE_BYTES."""


class _StderrPump(threading.Thread):
    """Collects the probe's stderr; once forwarding, also copies it live."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(name="probe-stderr", daemon=True)
        self._stream = stream
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._forward_to: IO[str] | None = None

    def run(self) -> None:
        for raw in iter(self._stream.readline, b""):
            text = raw.decode("utf-8", errors="replace")
            with self._lock:
                self._lines.append(text)
                if self._forward_to is not None:
                    self._write(self._forward_to, text)

    @staticmethod
    def _write(out: IO[str], text: str) -> None:
        out.write(text if text.endswith("\n") else text + "\n")
        out.flush()

    def forward(self, out: IO[str]) -> None:
        """Copy what was collected so far, and everything after, to `out`."""
        with self._lock:
            for text in self._lines:
                self._write(out, text)
            self._forward_to = out

    def text(self) -> str:
        with self._lock:
            return "".join(self._lines)


class ProbeProcess:
    """A running osmeter-probe; use as a context manager so the group always dies."""

    def __init__(self, argv: Sequence[str], popen: subprocess.Popen[bytes], tmpdir: str | None = None) -> None:
        self.argv = list(argv)
        self._popen = popen
        self.tmpdir = tmpdir  # the probe's $TMPDIR, removed by close()
        self._lock_fd: int | None = None  # flock held on it while we live (remove_stale_tmpdirs)
        self.leftovers: list[str] = []  # work directories the probe left and close() removed
        self._lines: queue.Queue[bytes | type[_TooLong] | None] = queue.Queue()
        assert popen.stdout is not None and popen.stderr is not None
        self._reader = threading.Thread(target=self._read, args=(popen.stdout,), name="probe-stdout", daemon=True)
        self._stderr = _StderrPump(popen.stderr)
        self._reader.start()
        self._stderr.start()

    @classmethod
    def start(cls, argv: Sequence[str], before_exec: Callable[[], None] | None = None) -> "ProbeProcess":
        """Start the probe. `before_exec` runs in the child before it execs (Popen's
        preexec_fn: `osmeter run --cgroup-mem` enters the memory cgroup there, so
        nothing the probe does escapes it); its `what` names it in the error."""
        remove_stale_tmpdirs()
        try:
            tmpdir, lock_fd = make_locked_tmpdir()
        except OSError as e:
            raise ProbeError(f"cannot make a temporary directory for the probe in {tempfile.gettempdir()}: "
                             f"{e.strerror}; set TMPDIR to a writable directory") from None
        try:
            popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env={**os.environ, "TMPDIR": tmpdir},
                preexec_fn=before_exec,
            )
        except OSError as e:
            _remove_locked_tmpdir(tmpdir, lock_fd)
            raise ProbeError(f"cannot start {argv[0]}: {e.strerror}") from None
        except subprocess.SubprocessError:  # before_exec raised in the child: it never ran
            _remove_locked_tmpdir(tmpdir, lock_fd)
            what = getattr(before_exec, "what", "its set-up before exec")
            raise ProbeError(f"cannot start {argv[0]}: {what} failed") from None
        except BaseException:
            _remove_locked_tmpdir(tmpdir, lock_fd)
            raise
        proc = cls(argv, popen, tmpdir)
        proc._lock_fd = lock_fd
        return proc

    def __enter__(self) -> "ProbeProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def _read(self, stream: IO[bytes]) -> None:
        skipping = False  # in the rest of a line that was too long
        while True:
            raw = stream.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            if skipping:
                skipping = not raw.endswith(b"\n")
                continue
            if len(raw) > MAX_LINE_BYTES:
                self._lines.put(_TooLong)
                skipping = not raw.endswith(b"\n")
                continue
            self._lines.put(raw)
        self._lines.put(None)

    def lines(self) -> Iterator[Line]:
        """The probe's stdout, line by line as it arrives, until EOF.

        Once the probe itself has exited, output still missing after
        EXIT_DRAIN_S is given up on and the group is killed, which closes
        any copy of stdout a leftover child holds.
        """
        drain_deadline: float | None = None
        while True:
            try:
                raw = self._lines.get(timeout=0.1)
            except queue.Empty:
                if self._popen.poll() is not None:
                    if drain_deadline is None:
                        drain_deadline = time.monotonic() + EXIT_DRAIN_S
                    elif time.monotonic() > drain_deadline:
                        self.kill()
                        drain_deadline = time.monotonic() + 3600.0  # killed: EOF follows
                continue
            if raw is None:
                return
            if raw is _TooLong:
                yield Line("", True, f"the line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB, the limit")
                continue
            assert isinstance(raw, bytes)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield Line("", raw.endswith(b"\n"), f"it is not UTF-8 text (byte {e.start + 1} of the line)")
                continue
            yield Line(text, complete=text.endswith("\n"))

    def forward_stderr(self, out: IO[str] = sys.stderr) -> None:
        self._stderr.forward(out)

    def stderr_text(self) -> str:
        return self._stderr.text()

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self._popen.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass  # the group is gone already

    def terminate(self) -> None:
        """Ask the probe (and its children) to stop: SIGTERM to the group."""
        self._signal_group(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL to the whole group."""
        self._signal_group(signal.SIGKILL)

    def close(self, grace_s: float = CLOSE_GRACE_S) -> int:
        """Stop what is left of the group, reap the probe; returns its exit status.

        A probe still running (osmeter stopped reading early) first gets
        SIGTERM and `grace_s` to restore what it changed, then SIGKILL.
        """
        if self._popen.poll() is None:
            self.terminate()
            try:
                self._popen.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        # The probe was reaped at most moments ago, and its pid (the group
        # id) stays reserved while any member of the group lives, so this
        # SIGKILL reaches leftovers of this group and nothing else.
        self.kill()
        returncode = self._popen.wait()
        self._reader.join(timeout=5)
        self._stderr.join(timeout=5)
        for stream in (self._popen.stdout, self._popen.stderr):
            if stream is not None:
                stream.close()
        self.remove_tmpdir()
        self.leftovers += remove_probe_workdirs(self._popen.pid, self.argv)
        return returncode

    def remove_tmpdir(self) -> None:
        """Remove the probe's $TMPDIR and whatever a killed probe left in it."""
        if self.tmpdir is not None:
            _remove_locked_tmpdir(self.tmpdir, self._lock_fd)
            self.tmpdir, self._lock_fd = None, None


TMPDIR_PREFIX = "osmeter-run."
TMPDIR_LOCK = ".osmeter-run.lock"
STALE_UNLOCKED_S = 600.0  # a directory without its lock file this old was left mid-creation


def make_locked_tmpdir() -> tuple[str, int]:
    """A new `$TMPDIR/osmeter-run.XXXXXX` for one probe, and an flock on the
    lock file inside it, held (close-on-exec, so not by the probe) until
    the directory is removed. If osmeter is SIGKILLed the kernel drops the
    lock, and the next osmeter's remove_stale_tmpdirs() removes the rest.

    The lock file is locked under another name and then renamed into place
    (the lock goes with the file): a checker that finds TMPDIR_LOCK always
    finds it held, never in the moment between its creation and its lock,
    when it would take the lock itself and remove a directory in use."""
    tmpdir = tempfile.mkdtemp(prefix=TMPDIR_PREFIX)
    fd = None
    try:
        making = os.path.join(tmpdir, TMPDIR_LOCK + ".new")  # a name no checker opens
        fd = os.open(making, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a file only we know of: cannot be held
        os.rename(making, os.path.join(tmpdir, TMPDIR_LOCK))
    except OSError:
        if fd is not None:
            os.close(fd)
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise
    return tmpdir, fd


def _remove_locked_tmpdir(tmpdir: str, lock_fd: int | None) -> None:
    shutil.rmtree(tmpdir, ignore_errors=True)
    if lock_fd is not None:
        os.close(lock_fd)


def remove_stale_tmpdirs(root: str | None = None) -> list[str]:
    """Remove the probe directories (`osmeter-run.*`, ours) of osmeter
    processes that died without cleaning up (SIGKILL, a power cut): those
    whose lock file no living osmeter holds. Best effort; returns what went."""
    root = root or tempfile.gettempdir()
    removed = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        if entry.name.startswith(TMPDIR_PREFIX) and _is_stale(entry):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


def _is_stale(entry: os.DirEntry[str]) -> bool:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    if not entry.is_dir(follow_symlinks=False) or st.st_uid != os.geteuid():
        return False
    try:
        fd = os.open(os.path.join(entry.path, TMPDIR_LOCK), os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:  # made a moment ago (before its lock file), or long ago and half made
        return time.time() - st.st_mtime > STALE_UNLOCKED_S
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # held: a living osmeter's
    finally:
        os.close(fd)
    return True


# The file benchmarks' work directories: "DIR/osmeter-probe.<pid>.XXXXXX"
# (probe/src/cleanup.c, mkdtemp), in each `--param dir=DIR` and, for the
# default directory when $TMPDIR is on tmpfs, in /var/tmp.
PROBE_WORKDIR_PREFIX = "osmeter-probe."
PROBE_SHARED_WORKDIR = "/var/tmp"
GROUP_GONE_S = 2.0  # how long the killed group's members get to die before the removal


def probe_dir_params(argv: Sequence[str]) -> list[str]:
    """Every `dir` value of `--param dir=...` in a probe command line, in
    order: `--param dir=X`, `--param=dir=X` and getopt's abbreviations of
    --param. A string parameter is a path taken whole, commas included
    (probe/src/cli_param.c), so `dir=a,b` is the one directory "a,b";
    `--param dir=A --param dir=B` gives two. Arguments after `--` are
    operands, not options."""
    dirs: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            break
        name, eq, attached = arg.partition("=")
        if len(name) < 3 or not "--param".startswith(name):
            continue
        if eq:
            value = attached
        elif i < len(args):
            value = args[i]
            i += 1
        else:
            break
        key, eq, path = value.partition("=")
        if eq and key == "dir" and path and path not in dirs:
            dirs.append(path)
    return dirs


def remove_probe_workdirs(pid: int, argv: Sequence[str], shared: str = PROBE_SHARED_WORKDIR) -> list[str]:
    """Remove the work directories `osmeter-probe.<pid>.XXXXXX` that the
    ended probe `pid` (run with `argv`) left in its `dir=` directories and
    in `shared` (/var/tmp): a probe killed with SIGKILL cannot remove them.
    Only that exact name (six mkdtemp characters) and only real directories
    (a symbolic link of that name is left alone, and shutil.rmtree follows
    none inside); best effort. Returns what was removed.

    Call it once the probe is dead: its pid names nothing else until
    another osmeter-probe gets the same pid and makes a directory in the
    same place, which the moment just after the probe ended makes
    vanishingly unlikely. Relative `dir=` paths are the probe's: osmeter's
    working directory, which the probe shares."""
    _wait_group_gone(pid)
    name = re.compile(rf"{re.escape(PROBE_WORKDIR_PREFIX)}{pid}\.[A-Za-z0-9]{{6}}")
    removed: list[str] = []
    for parent in (*probe_dir_params(argv), shared):
        try:
            entries = list(os.scandir(parent))
        except OSError:
            continue
        for entry in entries:
            if not name.fullmatch(entry.name):
                continue
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                continue
            shutil.rmtree(entry.path, ignore_errors=True)
            if not os.path.lexists(entry.path) and entry.path not in removed:
                removed.append(entry.path)
    return removed


def _wait_group_gone(pgid: int, timeout: float = GROUP_GONE_S) -> None:
    """Until no process of the probe's group (a child reading or writing in
    a work directory, SIGKILLed a moment ago) is left, or `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.01)


class SignalForwarder:
    """While active, SIGINT/SIGTERM/SIGHUP to osmeter become a SIGTERM to the probe.

    The first signal asks the probe to stop (it then writes `end` with
    status interrupted) and arms a timer that kills the group after
    TERM_GRACE_S; a second signal kills the group at once. `received`
    holds the first signal's number.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self, probe: ProbeProcess, grace_s: float = TERM_GRACE_S) -> None:
        self._probe = probe
        self._grace_s = grace_s
        self._previous: dict[int, Any] = {}
        self._timer: threading.Timer | None = None
        self.received: int | None = None

    def __enter__(self) -> "SignalForwarder":
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        if self._timer is not None:
            self._timer.cancel()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
            self._probe.terminate()
            self._timer = threading.Timer(self._grace_s, self._probe.kill)
            self._timer.daemon = True
            self._timer.start()
        else:
            self._probe.kill()


def run_document(probe: Path, args: Sequence[str]) -> dict[str, Any]:
    """Run `osmeter-probe ARGS` that prints one JSON document; return it."""
    argv = [str(probe), *args]
    try:
        popen = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
    except OSError as e:
        raise ProbeError(f"cannot start {probe}: {e.strerror}") from None
    try:
        out, err = popen.communicate(timeout=DOCUMENT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ProbeError(f"`{' '.join(argv)}` did not answer within {DOCUMENT_TIMEOUT_S:.0f} s") from None
    finally:
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        popen.wait()
    message = probe_message(err.decode("utf-8", errors="replace"))
    if popen.returncode == PROBE_USAGE_EXIT:
        raise UsageError(message or f"`{' '.join(argv)}` rejected its arguments")
    if popen.returncode != 0:
        raise ProbeError(f"`{' '.join(argv)}` failed ({describe_exit(popen.returncode)}): {message or 'no message'}")
    try:
        doc = json.loads(out.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as e:
        raise ProbeError(f"`{' '.join(argv)}` printed something that is not JSON ({e.msg})") from None
    if not isinstance(doc, dict):
        raise ProbeError(f"`{' '.join(argv)}` printed JSON that is not an object")
    return doc
