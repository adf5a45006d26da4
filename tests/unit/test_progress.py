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
        "[4/5] task.fork touched_mib=1 ... 90.49 µs",
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
    assert "[4/5] task.fork touched_mib=1 ... 90.49 µs\n" in text
    assert text.endswith(" ... error: fork: Resource temporarily unavailable\n")  # no bar left behind
    json.dumps(text)  # printable as a whole


READ_COLD_SKIP = "needs root: cannot drop the page cache (run as root, or skip file.read_cold)"


def test_a_skip_is_said_once_per_run(store_path) -> None:
    """Three repetitions (fresh probes) skipping one instance for one reason:
    the first says the reason, the later ones only that it skipped as above."""
    from osmeter.records import parse_line
    from osmeter.store import open_store

    out = io.StringIO()
    progress = PlainProgress(out)
    store = open_store(str(store_path), create=True)
    recorder = RunRecorder(store, RunContext(None, ["probe"], {}, "run"), repetitions=3)
    lines = (DATA / "run_x86_64.jsonl").read_text().splitlines()
    for _ in range(3):
        for line in lines:
            progress.show(recorder.feed(parse_line(line)))
    progress.close()
    store.close()
    text = out.getvalue()
    assert text.count(READ_COLD_SKIP) == 1, text
    skips = [line for line in text.splitlines() if "file.read_cold" in line]
    assert skips == [f"[3/5] file.read_cold size=4096 ... skipped: {READ_COLD_SKIP}"] + \
        ["[3/5] file.read_cold size=4096 ... skipped (as above)"] * 2
    # errors are not skips: each repetition's error is said with its reason
    assert text.count("error: fork: Resource temporarily unavailable") == 3


def test_a_new_reason_is_said_again() -> None:
    """A later repetition that skips the instance for another reason says it."""
    from osmeter.progress import done_line
    from osmeter.recorder import InstanceDone
    from osmeter.repeats import Repetition

    said: set[tuple[str, str]] = set()
    result = type("R", (), {"bench": "mem.fault_anon", "params": {"thp": 1}, "lebench_row": None,
                            "unit": "ns", "status": "skip", "reason": None, "summary": None, "flags": ()})()

    def line(reason: str) -> str:
        return done_line(InstanceDone(result, None, Repetition("skip", reason=reason)), 1, said)  # type: ignore[arg-type]

    first = "thp=1: only 40 % of the memory got transparent huge pages (memory too fragmented? see thp_defrag)"
    assert line(first).endswith(f"skipped: {first}")
    assert line(first).endswith("skipped (as above)")
    assert line(first.replace("40", "60")).endswith("skipped: " + first.replace("40", "60"))


def test_run_says_each_skip_once(cli, fake_probe, store_path) -> None:
    """`osmeter run` in 2 repetitions: the skip's reason once on stderr (the
    probe's own echo of it, `osmeter-probe: NAME: skip: ...`, not forwarded;
    its other stderr lines are), the summary's `skipped:` list once."""
    fake_probe.set(stderr=f"osmeter-probe: file.read_cold: skip: {READ_COLD_SKIP}\n"
                          "osmeter-probe: warning: something else the probe says")
    r = cli("run", "cpu.call", "file.read_cold", "--repeat", "2")
    assert r.code == 0, r.err
    assert "repetition 2 of 2" in r.err
    assert r.err.count(READ_COLD_SKIP) == 1, r.err
    assert r.err.count("file.read_cold size=4096 ... skipped (as above)") == 1, r.err
    assert "osmeter-probe: file.read_cold: skip:" not in r.err
    assert r.err.count("osmeter-probe: warning: something else the probe says") == 2
    assert r.out.count(READ_COLD_SKIP) == 1, r.out
