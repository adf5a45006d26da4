"""The record order (docs/schema.md) as RunRecorder enforces it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osmeter.errors import RecordError
from osmeter.recorder import InstanceDone, RunContext, RunRecorder, RunStarted
from osmeter.records import parse_line
from osmeter.store import open_store

from ..conftest import DATA, StoreAt, db_rows

LINES = (DATA / "run_x86_64.jsonl").read_text().splitlines()


def objs() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LINES]


def feed_all(store_path: Path | str, items: list[dict[str, Any]]) -> RunRecorder:
    store = open_store(str(store_path), create=True)
    recorder = RunRecorder(store, RunContext("t", ["probe"], {}, "run"))
    try:
        for obj in items:
            recorder.feed(parse_line(json.dumps(obj)))
        recorder.finish()
    finally:
        store.close()
    return recorder


def test_whole_run(store_at: StoreAt) -> None:
    recorder = feed_all(store_at.location, objs())
    assert [r.status for r in recorder.results] == ["ok", "ok", "skip", "ok", "error"]
    assert recorder.notes == []
    assert store_at.rows("SELECT status, status_reason FROM runs") == [("complete", None)]


def test_each_result_is_committed_as_it_arrives(store_at: StoreAt) -> None:
    store = open_store(store_at.location, create=True)
    recorder = RunRecorder(store, RunContext(None, ["probe"], {}, "run"))
    events = [recorder.feed(parse_line(line)) for line in LINES[:4]]
    assert isinstance(events[0], RunStarted) and isinstance(events[3], InstanceDone)
    # Another connection sees the run and the first result before the run ends.
    assert store_at.rows("SELECT status FROM runs") == [("running",)]
    assert store_at.rows("SELECT bench FROM results") == [("cpu.call",)]
    store.close()


def test_missing_end_marks_incomplete(store_at: StoreAt) -> None:
    feed_all(store_at.location, objs()[:-1])
    assert store_at.rows("SELECT status, status_reason FROM runs") == [
        ("incomplete", "the probe's output ended without an 'end' record")
    ]


def test_interrupted_end_marks_incomplete(store_at: StoreAt) -> None:
    items = objs()
    items[-1] = dict(items[-1], status="interrupted", signal="SIGINT")
    feed_all(store_at.location, items)
    assert store_at.rows("SELECT status, status_reason FROM runs") == [
        ("incomplete", "probe interrupted by SIGINT")
    ]


def without(items: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    return items[:index] + items[index + 1 :]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda o: o[1:], "the first record must be 'meta'"),
        (lambda o: o[:2] + [o[0]] + o[2:], "a second 'meta' record"),
        (lambda o: o + [o[1]], "a record after 'end'"),
        (lambda o: without(o, 2), "'result' for cpu.call args=0 without its 'samples'"),
        (lambda o: without(o, 3), "'samples' for cpu.call args=0 not followed by its 'result'"),
        (lambda o: o[:2] + [dict(o[2], values=o[2]["values"][:-1])] + o[3:], "says n=40 but its 'samples' hold 39"),
        (lambda o: o[:2] + [dict(o[2], unit="count")] + o[3:], "disagree on unit or batch"),
        (lambda o: [dict(o[0], command="serve")] + o[1:], "only the output of `osmeter-probe run`"),
    ],
)
def test_order_violations(store_at: StoreAt, mutate, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        feed_all(store_at.location, mutate(objs()))


def test_null_samples_are_refused_naming_the_sample(store_at: StoreAt) -> None:
    """docs/schema.md: 'values' never holds null (the probe turns a sample that
    is not a finite number into an error record), so a null is damage."""
    items = objs()
    values = items[2]["values"]
    items[2] = dict(items[2], values=values[:-1] + [None])
    with pytest.raises(RecordError, match=rf"'values\[{len(values) - 1}\]' is null, but the probe writes only"):
        feed_all(store_at.location, items)


def test_counters_attach_to_their_result(store_at: StoreAt) -> None:
    items = objs()
    counters = {"type": "counters", "bench": "cpu.call", "params": {"args": 0}, "cycles": 4.0}
    recorder = feed_all(store_at.location, items[:4] + [counters] + items[4:])
    assert recorder.results[0].counters == counters
    assert store_at.rows("SELECT counters FROM results WHERE seq = 0") == [(json.dumps(counters, sort_keys=True, separators=(",", ":")),)]


def test_end_counts_mismatch_is_noted(store_at: StoreAt) -> None:
    items = objs()
    items[-1] = dict(items[-1], counts={"ok": 9, "skip": 1, "error": 1})
    recorder = feed_all(store_at.location, items)
    assert "counts" in recorder.notes[0]


def test_mem_latency_results_at_the_last_caches_edge_are_flagged(store_at: StoreAt) -> None:
    """The run's own mem.latency curve decides the band (memlevels.edge_band):
    sizes past the L3 plateau up to the L3's sysfs size carry cache-edge."""
    kib, mib = 1024, 1024 * 1024
    meta = dict(objs()[0])
    meta["machine"] = {**meta["machine"], "caches": [
        {"level": 1, "type": "Data", "size_bytes": 32 * kib},
        {"level": 2, "type": "Unified", "size_bytes": 512 * kib},
        {"level": 3, "type": "Unified", "size_bytes": 32 * mib}]}
    items: list[dict[str, Any]] = [meta]
    sizes = [int(kib * 2 ** (k / 2)) // 64 * 64 for k in range(0, 37)]  # 1 KiB .. 256 MiB
    for size in sizes:
        ns = 1.4 if size <= 32 * kib else 4.5 if size <= 512 * kib else 15.0 if size <= 4 * mib else 120.0
        params = {"size": size, "pattern": "random", "stride": 64, "thp": 0}
        items.append({"type": "samples", "bench": "mem.latency", "params": params, "unit": "ns", "batch": 100,
                      "values": [ns] * 3})
        items.append({"type": "result", "bench": "mem.latency", "params": params, "unit": "ns", "n": 3,
                      "min": ns, "median": ns, "mean": ns, "batch": 100, "cpu": 1, "placement": None,
                      "elapsed_s": 0.1, "stop_reason": "rse", "ref_cycles": None, "extra": {"size_bytes": size}})
    items.append({"type": "end", "status": "complete", "signal": None, "end_time": "2026-11-22T07:41:10Z",
                  "counts": {"ok": len(sizes), "skip": 0, "error": 0}})
    recorder = feed_all(store_at.location, items)
    flagged = [r.params["size"] for r in recorder.results if "cache-edge" in r.flags]
    assert flagged == [s for s in sizes if 2 * mib < s <= 32 * mib]  # from a doubling below the plateau's end
    store = open_store(store_at.location, create=False)
    try:
        stored = store.results(store.run("1").id)
        assert [r.params["size"] for r in stored if "cache-edge" in r.flags] == flagged
        assert store.samples(store.run("1").id, stored[-1].seq) is not None
    finally:
        store.close()
