"""inputs.read_bounded: the size cap, a directory, a device that never ends,
a FIFO that never sends, standard input (issue 27)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from osmeter import inputs
from osmeter.errors import ImportFileError, UsageError


def test_a_regular_file_within_the_cap_is_read_whole(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x" * 5000)
    assert inputs.read_bounded(f, 5000) == b"x" * 5000
    with pytest.raises(UsageError, match="is more than 4.88 KiB, the limit; say so"):
        inputs.read_bounded(f, 4999, too_large_hint="say so")


def test_refusals_use_the_callers_error(tmp_path: Path) -> None:
    with pytest.raises(ImportFileError, match="it is a directory"):
        inputs.read_bounded(tmp_path, 10, error=ImportFileError)
    with pytest.raises(ImportFileError, match="No such file"):
        inputs.read_bounded(tmp_path / "none", 10, error=ImportFileError)
    with pytest.raises(UsageError, match="not a regular file and sent more than 1 MiB"):
        inputs.read_bounded("/dev/zero", 1 << 20)


def test_the_time_caps_are_read_when_called(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "IDLE_S", 0.2)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(UsageError, match="sent nothing for 0.2 s"):
        inputs.read_bounded(fifo, 100, what="folded-stack file")
    assert time.monotonic() - started < 10


def test_text_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"ok\nbad \xff\n")
    with pytest.raises(UsageError, match="not UTF-8 text \\(line 2"):
        inputs.read_text_bounded(f, 100)


def test_standard_input_is_left_blocking_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """O_NONBLOCK set on a dup of fd 0 is set on the shell's terminal too: it is put back."""
    import io
    import sys

    r, w = os.pipe()
    os.write(w, b"data\n")
    os.close(w)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.FileIO(r, closefd=True)))
    assert os.get_blocking(r)
    assert inputs.read_bounded("-", 100, stdin=True) == b"data\n"
    assert os.get_blocking(r)
