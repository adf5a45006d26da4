"""Naming a run (osmeter.store.refs; docs/store.md, "Naming a run"): an id,
`latest`, `latest~N` or a label, resolved once for both backends (the
`store_at` tests run on SQLite, and on PostgreSQL with the slow tests)."""

from __future__ import annotations

import re

import pytest

from osmeter.errors import NotFoundError, UsageError
from osmeter.model import NewRun
from osmeter.store import open_store
from osmeter.store.refs import MAX_LISTED, MAX_REF_CHARS, UnknownLabel, closest, nameable, parse

from ..conftest import StoreAt


def new_run(label: str | None, day: int) -> NewRun:
    return NewRun(label=label, start_time=f"2026-03-{day:02d}T09:15:00Z", source="run", osmeter_version="0.1.0",
                  probe_version="0.1.0", suite="quick", argv=["osmeter-probe", "run"], params={},
                  machine={"hostname": "h"}, meta={"type": "meta", "schema": 1})


# runs 1..7, oldest first; "twice" names runs 3 and 5; "12" and "latest" are labels no reference names
LABELS = ["kernel-6.1", "kernel-6.8", "twice", None, "twice", "12", "latest"]


@pytest.fixture
def runs(store_at: StoreAt):
    store = open_store(store_at.location, create=True)
    ids = [store.create_run(new_run(label, day)) for day, label in enumerate(LABELS, 1)]
    assert ids == list(range(1, len(LABELS) + 1))
    yield store
    store.close()


def snapshot(store_at: StoreAt) -> list[tuple[object, ...]]:
    return store_at.rows("SELECT id, label, status FROM runs ORDER BY id")


def test_each_form_names_its_run(runs) -> None:
    assert runs.run("2").label == "kernel-6.8"
    assert runs.run("latest").id == 7
    assert runs.run("latest~0").id == 7
    assert runs.run("latest~1").id == 6
    assert runs.run("latest~6").id == 1
    assert runs.run("latest~006").id == 1
    assert runs.run("kernel-6.1").id == 1
    assert runs.run("kernel-6.8").id == 2


def test_latest_n_out_of_range_says_how_many_runs_there_are(runs, store_at: StoreAt) -> None:
    before = snapshot(store_at)
    for ref in ("latest~7", "latest~9223372036854775807", "latest~" + "9" * 40):
        with pytest.raises(UsageError, match=r"holds 7 runs, so latest~0 \(the newest\) to latest~6 \(the oldest\)"):
            runs.run(ref)
    assert snapshot(store_at) == before, "resolving writes nothing"


def test_a_malformed_latest_n_is_refused(runs) -> None:
    for ref in ("latest~", "latest~x", "latest~-1", "latest~1~2", "latest~ 1", "latest~²", "latest~1.0"):
        with pytest.raises(UsageError, match="latest~N takes a whole number N >= 0") as e:
            runs.run(ref)
        assert not isinstance(e.value, UnknownLabel), ref


def test_an_empty_store_has_no_latest(store_at: StoreAt) -> None:
    store = open_store(store_at.location, create=True)
    try:
        for ref in ("latest", "latest~0", "latest~3"):
            with pytest.raises(NotFoundError, match="has no runs yet"):
                store.run(ref)
        with pytest.raises(UnknownLabel, match="no run labelled 'x'"):
            store.run("x")
    finally:
        store.close()


def test_an_ambiguous_label_lists_its_runs_and_how_to_name_one(runs, store_at: StoreAt) -> None:
    before = snapshot(store_at)
    with pytest.raises(UsageError) as e:
        runs.run("twice")
    text = e.value.message
    assert not isinstance(e.value, UnknownLabel)
    assert "the label 'twice' names 2 runs" in text
    assert "run 5 (latest~2, 2026-03-05 09:15); run 3 (latest~4, 2026-03-03 09:15)" in text, text
    assert "name one by its id or latest~N" in text and "more" not in text
    assert snapshot(store_at) == before


def test_a_label_of_many_runs_lists_the_newest_ten_and_counts_the_rest(store_at: StoreAt) -> None:
    store = open_store(store_at.location, create=True)
    try:
        for day in range(1, 16):
            store.create_run(new_run("nightly", day))
        with pytest.raises(UsageError) as e:
            store.run("nightly")
    finally:
        store.close()
    text = e.value.message
    listed = [int(n) for n in re.findall(r"run (\d+) \(latest~", text)]
    assert listed == list(range(15, 15 - MAX_LISTED, -1)), text
    assert "names 15 runs" in text and f"and {15 - MAX_LISTED} more" in text


def test_an_unknown_label_names_the_closest_labels(runs) -> None:
    with pytest.raises(UnknownLabel) as e:
        runs.run("kernel-6.2")
    assert e.value.exit_code == 2
    text = e.value.message
    assert "no run labelled 'kernel-6.2'" in text
    assert "'kernel-6.8' (run 2)" in text and "'kernel-6.1' (run 1)" in text, text
    assert "`osmeter runs` lists" in text
    with pytest.raises(UnknownLabel, match=r"'twice' \(2 runs, the newest 5\)"):
        runs.run("Twice")
    with pytest.raises(UnknownLabel) as e:
        runs.run("zzzz")
    assert "closest" not in e.value.message


def test_labels_a_reference_cannot_name_are_never_suggested(runs) -> None:
    runs.create_run(new_run("latest~beta", 20))  # stored text a reference cannot name: no suggestion, no crash
    with pytest.raises(UnknownLabel) as e:
        runs.run("lastest")
    assert "'latest' (run" not in e.value.message and "latest~beta" not in e.value.message
    assert "Did you mean latest?" in e.value.message
    with pytest.raises(UnknownLabel, match=r"Did you mean latest~2\?"):
        runs.run("Latest~2")


def test_a_number_is_always_an_id_and_latest_forms_never_labels(runs) -> None:
    assert runs.run("latest").id == 7  # the newest run, which happens to be labelled "latest"
    assert runs.run("6").label == "12"
    with pytest.raises(NotFoundError, match=r"no run 12 .*\(run 6 is labelled '12', but a number is always a run id\)"):
        runs.run("12")
    for ref in ("0", "-1", "9223372036854775808"):
        with pytest.raises(NotFoundError, match="run ids are 1 to"):
            runs.run(ref)


def test_overlong_empty_and_hostile_references_are_refused(runs, store_at: StoreAt) -> None:
    before = snapshot(store_at)
    with pytest.raises(UsageError, match=f"201 characters is too long \\(at most {MAX_REF_CHARS}\\)"):
        runs.run("k" * 201)
    with pytest.raises(UsageError, match=f"{10**6} characters is too long"):
        runs.run("1" * 10**6)
    for ref in ("", "   "):
        with pytest.raises(UsageError, match="the run reference is empty"):
            runs.run(ref)
    with pytest.raises(UnknownLabel) as e:
        runs.run("\x1b[31mred\u202e")
    assert "\x1b" not in e.value.message and "\u202e" not in e.value.message
    with pytest.raises(UnknownLabel):
        runs.run("x' OR '1'='1")  # bound as a parameter, never spliced into SQL
    assert snapshot(store_at) == before


def test_a_label_of_the_longest_length_names_its_run(store_at: StoreAt) -> None:
    store = open_store(store_at.location, create=True)
    try:
        long = "é" * MAX_REF_CHARS
        run_id = store.create_run(new_run(long, 1))
        assert store.run(long).id == run_id
    finally:
        store.close()


def test_parse_tells_the_forms_apart_without_a_store() -> None:
    assert parse("12").id == 12 and parse("-3").id == -3
    assert parse("latest").back == 0 and parse("latest~4").back == 4
    for label in ("latest-kernel", "latestx", "12a", "١٢", "+5", " 12", "kernel:6.1", "a/b"):
        assert parse(label).label == label, label
    assert nameable("base") and not nameable("12") and not nameable("latest~3") and not nameable("")
    assert not nameable("latest~beta") and not nameable("x" * (MAX_REF_CHARS + 1))
    assert nameable("latest-kernel")


def test_closest_prefers_case_then_containment_then_likeness() -> None:
    labels = ["Base", "audit-3-rules", "baseline", "unrelated", "bsae"]
    assert closest("base", labels)[:2] == ["Base", "baseline"]
    assert closest("audit", labels) == ["audit-3-rules"]
    assert closest("qqqq", labels) == []
    assert len(closest("a", [f"a{i}" for i in range(100)])) <= 4
