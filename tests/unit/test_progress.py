"""Progress output: plain lines for pipes and logs, a bar on a terminal."""

from __future__ import annotations

import io
import json

from osmeter.progress import BarProgress, PlainProgress, make_progress
from osmeter.recorder import RunContext, RunRecorder

from ..conftest import DATA


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def replay(progress: PlainProgress, store_path) -> None:
    from osmeter.records import parse_line
    from osmeter.store import open_store

    store = open_store(str(store_path), create=True)
    recorder = RunRecorder(store, RunContext(None, ["probe"], {}, "run"))
    for line in (DATA / "run_x86_64.jsonl").read_text().splitlines():
        progress.show(recorder.feed(parse_line(line)))
    progress.close()
    store.close()


def test_plain_lines(store_path) -> None:
    out = io.StringIO()
    progress = make_progress(out)
    assert type(progress) is PlainProgress
    replay(progress, store_path)
    lines = out.getvalue().splitlines()
    assert lines[0] == "run 1: osmeter-probe 0.2.0, clock tsc, CPU 1 (least busy)"
    assert lines[1:] == [
        "[1/5] cpu.call args=0 ... 1.250 ns",
        "[2/5] syscall.null ... 45.06 ns",
        "[3/5] file.read_cold size=4096 ... skipped: needs root: cannot drop the page cache "
        "(run as root, or skip file.read_cold)",
        "[4/5] task.fork touched_mib=1 ... 90490 ns",
        "[5/5] ctxsw.pipe placement=same_cpu ... error: fork: Resource temporarily unavailable",
    ]
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_bar_on_a_terminal(store_path) -> None:
    out = Terminal()
    progress = make_progress(out)
    assert type(progress) is BarProgress
    replay(progress, store_path)
    text = out.getvalue()
    assert "\r\x1b[K[" in text and "] 3/5 task.fork touched_mib=1" in text
    assert "[4/5] task.fork touched_mib=1 ... 90490 ns\n" in text
    assert text.endswith(" ... error: fork: Resource temporarily unavailable\n")  # no bar left behind
    json.dumps(text)  # printable as a whole
