"""Every command that takes a run takes it by id, label, `latest` or `latest~N`
(docs/store.md, "Naming a run"): one test per command family, and the errors
(exit 2, nothing written) through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmeter.errors import EXIT_NOT_FOUND, EXIT_USAGE
from osmeter.store import open_store

from ..conftest import StoreAt, import_fixture

PROFILE = {
    "type": "profile", "bench": "cpu.call", "params": {"args": 0}, "lebench_row": None, "status": "ok",
    "reason": None, "mode": "sample", "event": "cpu-clock", "frequency_hz": 999, "weight_unit": "samples",
    "samples": 12, "lost": 0, "kernel": True, "kernel_reason": None,
    "symbols": {"kernel": "kallsyms", "kernel_reason": None},
    "window": {"start_ns": 1, "end_ns": 2, "enabled_s": 0.5, "batches": 3}, "ops": 300, "calls": None, "notes": [],
}


@pytest.fixture
def labelled(store_path: Path) -> Path:
    """Runs 1 `before`, 2 `after`, 3 and 4 `twice`; 3 and 4 hold a profile of cpu.call (result 0)."""
    ids = [import_fixture(store_path, label=label) for label in ("before", "after", "twice", "twice")]
    assert ids == [1, 2, 3, 4]
    store = open_store(str(store_path), create=False)
    try:
        store.add_profile(3, 0, dict(PROFILE, stacks=[["osmeter-probe;main;sys_[k]", 9], ["osmeter-probe;main", 3]]))
        store.add_profile(4, 0, dict(PROFILE, stacks=[["osmeter-probe;main;sys_[k]", 30],
                                                      ["osmeter-probe;main;audit_[k]", 20]]))
    finally:
        store.close()
    return store_path


def test_compare_takes_labels_and_latest_forms(cli, labelled: Path) -> None:
    r = cli("compare", "before", "after", "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["baseline"] == 1 and [x["id"] for x in doc["runs"]] == [1, 2]
    r = cli("compare", "latest~3", "latest~2", "--baseline", "after", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["baseline"] == 2
    r = cli("compare", "before", "1")
    assert r.code == EXIT_USAGE and "run 1 is given twice" in r.err


def test_show_report_and_page_cache_take_latest_n(cli, labelled: Path) -> None:
    r = cli("show", "latest~1")
    assert r.code == 0, r.err
    assert r.out.startswith("run 3 'twice'"), r.out[:200]
    r = cli("report", "latest~3", "after", "--format", "txt")
    assert r.code == 0, r.err
    assert "run 1 'before'" in r.out and "run 2 'after'" in r.out
    r = cli("page-cache", "before")
    assert r.code == 0, r.err
    assert r.out.startswith("run 1\n")


def test_export_and_load_take_a_label(cli, labelled: Path, tmp_path: Path) -> None:
    r = cli("export", "before", "--format", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["run"]["id"] == 1
    out = tmp_path / "after.csv"
    r = cli("export", "after", "-o", str(out))
    assert r.code == 0, r.err
    assert out.read_text().splitlines()[1].startswith("2,after,"), out.read_text()[:200]
    pytest.importorskip("pandas")
    import osmeter

    assert set(osmeter.load(run="after")["run_id"]) == {2}
    assert set(osmeter.load(run="latest~3")["run_id"]) == {1}


def test_hotspots_diff_takes_latest_n_with_a_bench(cli, labelled: Path, tmp_path: Path) -> None:
    out = tmp_path / "diff"
    r = cli("hotspots", "--diff", "latest~1:cpu.call", "latest:cpu.call", "-o", str(out))
    assert r.code == 0, r.err
    text = (out / "diff.txt").read_text()
    assert "run 3 cpu.call" in text and "run 4 cpu.call" in text and "audit_[k]" in text
    r = cli("hotspots", "--show", "twice:1")
    assert r.code == EXIT_USAGE and "names 2 runs" in r.err
    r = cli("hotspots", "--show", "befor:1")
    assert r.code == EXIT_USAGE
    assert "neither a file nor a stored run" in r.err and "'before' (run 1)" in r.err, r.err


BAD = [
    (("show", "twice"), EXIT_USAGE, "run 4 (latest~0, 2026-11-22 07:40); run 3 (latest~1, 2026-11-22 07:40)"),
    (("compare", "before", "aftr"), EXIT_USAGE, "no run labelled 'aftr'"),
    (("compare", "before", "after", "--baseline", "latest~4"), EXIT_USAGE, "holds 4 runs"),
    (("report", "latest~x", "--format", "txt"), EXIT_USAGE, "latest~N takes a whole number"),
    (("plot", "x" * 201, "-o", "DIR"), EXIT_USAGE, "too long"),
    (("export", "12", "-o", "OUT.json"), EXIT_NOT_FOUND, "no run 12"),
]


def test_a_bad_reference_is_refused_and_nothing_is_written(cli, labelled: Path, tmp_path: Path) -> None:
    before = StoreAt(str(labelled), "sqlite").rows("SELECT * FROM runs ORDER BY id")
    for args, code, message in BAD:
        r = cli(*(str(tmp_path / a) if a in ("DIR", "OUT.json") else a for a in args))
        assert r.code == code and message in r.err, (args, r.err)
    assert not (tmp_path / "DIR").exists() and not (tmp_path / "OUT.json").exists()
    assert StoreAt(str(labelled), "sqlite").rows("SELECT * FROM runs ORDER BY id") == before
