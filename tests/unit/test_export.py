"""Exporters: one field list, JSON and CSV agree, and a golden CSV."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from osmeter.export import EXPORTERS
from osmeter.export.fields import CSV_SPELLING, FIELD_NAMES, FIELDS
from osmeter.store import open_store

from ..conftest import DATA, import_fixture

GOLDEN_CSV = DATA / "golden_x86_64.csv"


def rendered(store_path: Path, fmt: str) -> str:
    run_id = import_fixture(store_path, label="golden")
    store = open_store(str(store_path), create=False)
    try:
        run = store.run(str(run_id))
        return EXPORTERS[fmt](run, store.results(run.id))
    finally:
        store.close()


def test_registry_has_json_and_csv() -> None:
    assert set(EXPORTERS) == {"json", "csv"}
    assert len(FIELD_NAMES) == len(set(FIELD_NAMES)) == len(FIELDS)


def test_json_and_csv_have_the_same_fields_and_values(store_path: Path) -> None:
    doc = json.loads(rendered(store_path, "json"))
    store = open_store(str(store_path), create=False)
    run = store.run("latest")
    table = list(csv.DictReader(io.StringIO(EXPORTERS["csv"](run, store.results(run.id)))))
    store.close()
    assert doc["osmeter_export"] == 1
    assert [list(r) for r in doc["results"]] == [list(FIELD_NAMES)] * len(doc["results"])
    assert list(table[0]) == list(FIELD_NAMES)
    assert len(table) == len(doc["results"]) == 5
    for from_json, from_csv in zip(doc["results"], table):
        for name in FIELD_NAMES:
            value = from_json[name]
            cell = from_csv[name]
            if name in CSV_SPELLING:
                assert cell == CSV_SPELLING[name](value), name
            elif value is None:
                assert cell == "", name
            elif isinstance(value, bool):
                assert cell == str(value).lower(), name
            elif isinstance(value, (dict, list)):
                assert json.loads(cell) == value, name
            elif isinstance(value, float):
                assert float(cell) == value, name  # full precision in CSV
            else:
                assert cell == str(value), name


def test_json_envelope_carries_the_run(store_path: Path) -> None:
    doc = json.loads(rendered(store_path, "json"))
    run = doc["run"]
    assert run["label"] == "golden" and run["status"] == "complete" and run["source"] == "import"
    assert run["machine"]["hostname"] == "testbox"
    assert run["counts"] == {"ok": 3, "skip": 1, "error": 1}
    assert "machine" not in run["meta"] and run["meta"]["clock"]["source"] == "tsc"
    skip = doc["results"][2]
    assert skip["status"] == "skip" and skip["median"] is None and skip["reason"].startswith("needs root")


def _is_float(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return "." in cell or "e" in cell


def _same(a: object, b: object, name: str) -> None:
    """JSON values equal, their floats to 1e-9."""
    if isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-9), name
    elif isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys(), name
        for k in b:
            _same(a[k], b[k], f"{name}.{k}")
    elif isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), name
        for x, y in zip(a, b):
            _same(x, y, name)
    else:
        assert a == b, name


def test_csv_matches_golden_file(store_path: Path) -> None:
    """Same rows, columns and text; floats equal to 1e-9 (summation order may differ by platform),
    also inside JSON cells (per_repetition)."""
    text = rendered(store_path, "csv")
    if not GOLDEN_CSV.exists():
        pytest.fail(f"{GOLDEN_CSV} is missing; review and save this output as the golden file:\n{text}")
    got = list(csv.reader(io.StringIO(text)))
    want = list(csv.reader(io.StringIO(GOLDEN_CSV.read_text())))
    assert len(got) == len(want) and got[0] == want[0]
    for row_got, row_want in zip(got[1:], want[1:]):
        assert len(row_got) == len(row_want)
        for name, a, b in zip(want[0], row_got, row_want):
            if _is_float(b):
                assert float(a) == pytest.approx(float(b), rel=1e-9), name
            elif b.startswith(("[", "{")):
                _same(json.loads(a), json.loads(b), name)
            else:
                assert a == b, name
