"""Racing writers (issue 27, defect 4): imports of one file and stores of
one fleet host at once end as they would one after the other: one stored,
the others refused with the sequential refusal. On both backends."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from osmeter import errors
from osmeter.errors import StoreError
from osmeter.model import NewRun
from osmeter.store import open_store

from ..conftest import DATA, StoreAt

GOOD = DATA / "run_x86_64.jsonl"


@pytest.mark.slow
def test_concurrent_imports_of_one_file_store_it_once(store_at: StoreAt, tmp_path: Path) -> None:
    open_store(store_at.location, create=True).close()  # migrated once, so the racers only import
    racers = [subprocess.Popen([sys.executable, "-m", "osmeter", "import", str(GOOD), "--store", store_at.location],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [(p.wait(timeout=120), p.stderr.read()) for p in racers]
    for p in racers:
        p.stdout.close()
        p.stderr.close()
    assert sorted(code for code, _ in outs) == [0, errors.EXIT_IMPORT, errors.EXIT_IMPORT, errors.EXIT_IMPORT], outs
    assert all("was imported before" in err for code, err in outs if code), outs
    assert store_at.rows("SELECT count(*) FROM runs") == [(1,)]


@pytest.mark.slow
def test_imports_that_check_at_the_same_moment_store_once(store_at: StoreAt, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each import checks for an earlier one, then (held up here) stores: the
    check and the store are one step under the database's lock."""
    from osmeter import ingest
    from osmeter.recorder import RunContext

    open_store(store_at.location, create=True).close()
    checked = threading.Barrier(2, timeout=5)
    real = ingest.refuse_imported_before

    def slow_check(*args, **kwargs):
        real(*args, **kwargs)
        try:
            checked.wait()  # without the lock both get here before either stores
        except threading.BrokenBarrierError:
            pass  # the other is waiting for the lock: as it should

    monkeypatch.setattr(ingest, "refuse_imported_before", slow_check)
    files = [ingest.read_probe_file(GOOD)]
    outcomes: list[str] = []

    def one() -> None:
        store = open_store(store_at.location, create=True)
        try:
            ingest.store_files(store, RunContext(None, ["import"], {}, "import"), files, again=False)
            outcomes.append("stored")
        except errors.ImportFileError as e:
            outcomes.append(e.message)
        finally:
            store.close()

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(outcomes)[-1] == "stored" and "was imported before" in sorted(outcomes)[0], outcomes
    assert store_at.rows("SELECT count(*) FROM runs") == [(1,)]


def _fleet_run(store, status: str = "running") -> int:
    run_id = store.create_run(NewRun(label=None, start_time="2026-11-28T00:00:00Z", source="import",
                                     osmeter_version="0", probe_version="0", suite="quick", argv=[], params={},
                                     machine={}, meta={}, host="web1", fleet="f-1"))
    return run_id


def test_a_fleet_host_is_stored_complete_once(store_at: StoreAt) -> None:
    a = open_store(store_at.location, create=True)
    b = open_store(store_at.location, create=True)
    try:
        first, second = _fleet_run(a), _fleet_run(b)  # both resumers found the host missing
        a.finish_run(first, "complete", "2026-11-28T00:01:00Z", None)
        with pytest.raises(StoreError, match="host web1 of fleet run f-1 is already stored as a complete run"):
            with b.transaction():
                b.finish_run(second, "complete", "2026-11-28T00:01:00Z", None)
        b.finish_run(second, "incomplete", "2026-11-28T00:01:00Z", "stored twice")  # not complete: allowed
    finally:
        a.close()
        b.close()
    assert store_at.rows("SELECT status FROM runs ORDER BY id") == [("complete",), ("incomplete",)]
