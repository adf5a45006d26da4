"""A store that goes away mid-run (issue 27, defect 2), the store's side: a
lost connection is reconnected and the write tried again, idempotently; a
server that stops answering is given up on within the store timeout; a
write that cannot be made (full disk) is not retried."""

from __future__ import annotations

import os
import signal
import time

import pytest
import sqlalchemy as sa

from osmeter.errors import StoreError
from osmeter.model import BenchResult, NewRun
from osmeter.store import open_store
from osmeter.store.base import StoreConnectionLost
from osmeter.store.postgres import connect_args, store_timeout
from osmeter.store.sql import SQLStore

from ..conftest import StoreAt

pytestmark = pytest.mark.slow  # a PostgreSQL server


def _run(store) -> int:
    return store.create_run(NewRun(label=None, start_time="2026-11-28T00:00:00Z", source="run", osmeter_version="0",
                                   probe_version="0", suite="quick", argv=[], params={}, machine={}, meta={}))


def _result(seq: int) -> BenchResult:
    return BenchResult(seq=seq, bench="syscall.null", params={"n": seq}, status="skip", unit=None, reason="test")


@pytest.fixture
def pg(pg_server, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(SQLStore, "RETRY_DELAYS", (0.1, 0.2, 0.4))
    store = open_store(pg_server.database(), create=True)
    yield store
    store.close()


def _backend_pid(store) -> int:
    return int(store._conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())  # noqa: SLF001 (the test's probe)


def _terminate(pg_server, pid: int) -> None:
    engine = sa.create_engine(pg_server.url("postgres").replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"SELECT pg_terminate_backend({pid})")
    finally:
        engine.dispose()


def test_a_lost_connection_is_reconnected_and_the_write_done_once(pg, pg_server) -> None:
    run_id = _run(pg)
    pg.add_result(run_id, _result(0), None)
    pid = _backend_pid(pg)
    pg._conn.commit()  # noqa: SLF001
    _terminate(pg_server, pid)  # as `pg_ctl restart` does to every session
    pg.add_result(run_id, _result(1), None)
    pg.finish_run(run_id, "complete", "2026-11-28T00:01:00Z", None)
    assert _backend_pid(pg) != pid
    assert [r.seq for r in pg.results(run_id)] == [0, 1] and pg.run(str(run_id)).status == "complete"


def test_a_stalled_server_is_given_up_on_and_another_connection_used(pg_server, monkeypatch) -> None:
    monkeypatch.setenv("OSMETER_STORE_TIMEOUT", "1")
    monkeypatch.setattr(SQLStore, "RETRY_DELAYS", (0.1,))
    store = open_store(pg_server.database(), create=True)
    try:
        run_id = _run(store)
        pid = _backend_pid(store)
        store._conn.commit()  # noqa: SLF001: idle, holding no lock
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            store.add_result(run_id, _result(0), None)
            waited = time.monotonic() - started
        finally:
            os.kill(pid, signal.SIGCONT)
        assert 5 <= waited < 60, waited  # the cut after timeout + 5 s, then a new connection
        assert [r.seq for r in store.results(run_id)] == [0]
    finally:
        store.close()


def test_a_server_that_stays_away_raises_connection_lost(pg, pg_server, monkeypatch) -> None:
    run_id = _run(pg)
    pid = _backend_pid(pg)
    pg._conn.commit()  # noqa: SLF001
    monkeypatch.setattr(pg._engine, "connect", lambda: (_ for _ in ()).throw(  # noqa: SLF001
        sa.exc.OperationalError("connect", {}, Exception("connection refused"))))
    _terminate(pg_server, pid)
    with pytest.raises(StoreConnectionLost, match="cannot reconnect to the store"):
        pg.add_result(run_id, _result(0), None)


def test_a_failed_write_that_is_not_a_lost_connection_is_not_retried(store_at: StoreAt, monkeypatch) -> None:
    store = open_store(store_at.location, create=True)
    try:
        run_id = _run(store)
        store.add_result(run_id, _result(0), None)
        calls = []
        monkeypatch.setattr(SQLStore, "reconnect", lambda self: calls.append(1))
        with pytest.raises(StoreError) as e:
            store.add_result(run_id + 1000, _result(0), None)  # no such run: a constraint, not an outage
        assert not isinstance(e.value, StoreConnectionLost) and calls == []
    finally:
        store.close()


def test_store_timeout_is_read_and_bounded(monkeypatch) -> None:
    assert store_timeout({}) == 60
    assert store_timeout({"OSMETER_STORE_TIMEOUT": "2.5"}) == 2.5
    for bad in ("0", "-1", "x", "1e9", "nan"):
        with pytest.raises(StoreError, match="OSMETER_STORE_TIMEOUT"):
            store_timeout({"OSMETER_STORE_TIMEOUT": bad})


def test_connect_args_leave_what_the_url_sets() -> None:
    args = connect_args({}, 60)
    assert args["options"] == "-c statement_timeout=60000" and args["keepalives"] == 1
    assert "options" not in connect_args({"options": "-c search_path=x"}, 60)
    assert connect_args({"connect_timeout": "3"}, 60).get("connect_timeout") is None


def test_opening_and_an_import_lock_wait_without_the_statement_timeout(pg_server, monkeypatch) -> None:
    """Waiting for another's migration or import is not a stalled server."""
    monkeypatch.setenv("OSMETER_STORE_TIMEOUT", "1")
    url = pg_server.database()
    holder = open_store(url, create=True)
    waiter = open_store(url, create=True)
    try:
        assert waiter._conn.exec_driver_sql("SHOW statement_timeout").scalar_one() == "1s"  # noqa: SLF001
        waiter._conn.commit()  # noqa: SLF001
        digest = "ab" * 32
        with holder.transaction():
            holder.lock_content([digest])
            import threading

            took = []

            def wait() -> None:
                started = time.monotonic()
                with waiter.transaction():
                    waiter.lock_content([digest])
                took.append(time.monotonic() - started)

            t = threading.Thread(target=wait)
            t.start()
            time.sleep(2.5)  # past the 1 s statement timeout: still waiting, not failed
            assert t.is_alive() and took == []
        t.join(timeout=30)
        assert len(took) == 1 and took[0] >= 2
    finally:
        holder.close()
        waiter.close()
