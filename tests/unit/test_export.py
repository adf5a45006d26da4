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
# The parameters of run_x86_64.jsonl's results, sorted: cpu.call args, ctxsw.pipe placement,
# file.read_cold size, task.fork touched_mib.
PARAM_COLUMNS = ["param.args", "param.placement", "param.size", "param.touched_mib"]


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
    assert list(table[0]) == list(FIELD_NAMES) + PARAM_COLUMNS  # the CSV alone has a column per parameter
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


def test_csv_has_a_column_per_parameter(store_path: Path) -> None:
    """`param.<name>` for the union of the run's parameters, sorted, after every
    other column; the value as recorded, empty where a result lacks it; the
    `params` JSON cell kept for round trips."""
    text = rendered(store_path, "csv")
    table = list(csv.DictReader(io.StringIO(text)))
    header = list(table[0])
    assert header[-len(PARAM_COLUMNS):] == PARAM_COLUMNS and header.index("params") < header.index("status")
    cells = {r["bench"]: {c: r[c] for c in PARAM_COLUMNS} for r in table}
    assert cells["cpu.call"] == {"param.args": "0", "param.placement": "", "param.size": "", "param.touched_mib": ""}
    assert cells["file.read_cold"]["param.size"] == "4096"  # bytes, as recorded: no '4 KiB'
    assert cells["task.fork"]["param.touched_mib"] == "1"
    assert cells["ctxsw.pipe"]["param.placement"] == "same_cpu"
    assert not any(cells["syscall.null"].values())  # no parameter: all empty
    for r in table:
        params = json.loads(r["params"])
        assert {c for c in PARAM_COLUMNS if r[c]} == {"param." + k for k in params}


def test_param_columns_are_the_union_sorted_and_never_a_field() -> None:
    from types import SimpleNamespace

    from osmeter.export.fields import param_columns, param_value

    results = [SimpleNamespace(params={"size": 16, "peer": ""}), SimpleNamespace(params={}),
               SimpleNamespace(params={"family": "ipv4", "size": 1024})]
    assert param_columns(results) == ("param.family", "param.peer", "param.size")  # type: ignore[arg-type]
    assert param_value({"params": {"size": 16}}, "param.size") == 16
    assert param_value({"params": {"size": 16}}, "param.family") is None


def test_pandas_reads_a_parameter_column(store_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(io.StringIO(rendered(store_path, "csv")))
    size = frame.set_index("bench")["param.size"]
    assert size["file.read_cold"] == 4096 and size.isna().sum() == len(frame) - 1
    assert frame.set_index("bench")["param.placement"]["ctxsw.pipe"] == "same_cpu"
