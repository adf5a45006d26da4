"""The spool: a local copy of everything a probe writes while a run goes.

`osmeter run` writes each line the probe prints here as well as to the
store, one file per repetition (probe process), in the probe's own format:
if the store fails mid-run, the measuring goes on into the spool and
`osmeter import FILE...` stores the whole run later. A run whose store
never failed removes its spool when it ends.

Where: $XDG_STATE_HOME/osmeter/spool (default ~/.local/state/osmeter/spool),
a directory only its owner can read.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Iterator, Mapping


def spool_dir(env: Mapping[str, str] = os.environ) -> Path:
    state = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(state) / "osmeter" / "spool"


class Spool:
    """Files run-STAMP-PID-repK.jsonl; a write that fails turns the spool off
    (`error` says why) and the run goes on without it."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else spool_dir()
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        self.stem = f"run-{stamp}-{os.getpid()}"
        self.files: list[Path] = []
        self.error: str | None = None
        self._out: IO[str] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def start_repetition(self) -> None:
        """A new file, for the next probe process's output."""
        self.close()
        if not self.ok:
            return
        path = self.directory / f"{self.stem}-rep{len(self.files) + 1}.jsonl"
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
            self._out = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        except OSError as e:
            self.error = f"cannot write the spool {path}: {e.strerror}"
            return
        self.files.append(path)

    def write(self, line: str) -> None:
        if self._out is None:
            return
        try:
            self._out.write(line.rstrip("\n") + "\n")
            self._out.flush()
        except OSError as e:
            self.error = f"cannot write the spool {self.files[-1]}: {e.strerror}"
            self.close()

    def lines(self) -> Iterator[str]:
        """Every line spooled so far, in order (the files are flushed after each line)."""
        for path in self.files:
            with open(path, encoding="utf-8", newline="\n") as f:
                for line in f:
                    if line.strip():
                        yield line.rstrip("\n")

    def close(self) -> None:
        if self._out is not None:
            try:
                self._out.close()
            except OSError:
                pass
            self._out = None

    def discard(self) -> None:
        """The files removed (the store holds everything they do)."""
        self.close()
        for path in self.files:
            try:
                path.unlink()
            except OSError:
                pass
        self.files = []


# --- runs left unmarked ------------------------------------------------
# A run whose store failed for good cannot be marked then; it is noted here
# by its uid (the store as shown, a URL without its password, only for
# messages) and marked by the next osmeter that opens the store holding a
# run of that uid still `running` (osmeter.store.open_store).

PENDING = "unmarked.jsonl"
MAX_PENDING_BYTES = 1024 * 1024
_KEYS = {"uid": str, "store": str, "run": int, "status": str, "end_time": str, "reason": str}


def note_unmarked(uid: str, shown: str, run_id: int, status: str, end_time: str, reason: str,
                  directory: Path | None = None) -> bool:
    """Remember that the run of `uid` is to be marked `status`; False if it cannot be."""
    directory = directory if directory is not None else spool_dir()
    entry = {"uid": uid, "store": shown, "run": run_id, "status": status, "end_time": end_time, "reason": reason}
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(directory / PENDING, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
        return True
    except OSError:
        return False


def unmarked(directory: Path | None = None) -> list[dict[str, Any]]:
    """The runs left to mark (a damaged line is skipped; an oversized file: none)."""
    path = (directory if directory is not None else spool_dir()) / PENDING
    try:
        if not path.is_file() or path.stat().st_size > MAX_PENDING_BYTES:
            return []
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [e for e in map(_entry, lines) if e is not None]


def forget_unmarked(uids: set[str], directory: Path | None = None) -> None:
    """The entries of these runs removed (the file removed when none is left)."""
    path = (directory if directory is not None else spool_dir()) / PENDING
    try:
        kept = [line for line in path.read_text(encoding="utf-8").splitlines()
                if (e := _entry(line)) is not None and e["uid"] not in uids]
        if kept:
            tmp = path.with_suffix(".tmp")
            tmp.write_text("".join(k + "\n" for k in kept), encoding="utf-8")
            os.replace(tmp, path)
        else:
            path.unlink()
    except (OSError, UnicodeDecodeError):
        pass


def _entry(line: str) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or any(not isinstance(entry.get(k), t) for k, t in _KEYS.items()):
        return None
    return entry
