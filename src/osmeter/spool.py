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

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Iterator, Mapping


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
        self._close()
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
            self._close()

    def lines(self) -> Iterator[str]:
        """Every line spooled so far, in order (the files are flushed after each line)."""
        for path in self.files:
            with open(path, encoding="utf-8", newline="\n") as f:
                for line in f:
                    if line.strip():
                        yield line.rstrip("\n")

    def _close(self) -> None:
        if self._out is not None:
            try:
                self._out.close()
            except OSError:
                pass
            self._out = None

    def close(self) -> None:
        self._close()

    def discard(self) -> None:
        """The files removed (the store holds everything they do)."""
        self._close()
        for path in self.files:
            try:
                path.unlink()
            except OSError:
                pass
        self.files = []
