"""Property-based: every command that reads the store ends with exit 0 or a
documented error, never a traceback, whatever one damaged cell holds
(issue 10: "every bad store is an error").

The fixture run is imported twice (runs 1 and 2, so `compare` has two), the
first result of each given a counters record; then one column of one row of
`runs` or `results` (the columns come from PRAGMA table_info, so a column a
later migration adds is fuzzed too) is set to a generated SQLite value:
NULL, integers up to +-(2^63 - 1), reals with the infinities, text, text
that is not UTF-8, JSON text of any shape, the stored JSON with one inner
value replaced (the right shape with the wrong inner types), blobs, and
zlib-compressed blobs (how samples are stored) of bytes, JSON and float64
arrays holding NaN, infinities or huge values. CHECK constraints are
switched off for the update; a NOT NULL or UNIQUE refusal leaves the store
as it was. Then `runs`, `show`, `show --json`, `export` (CSV, JSON),
`report --format md`, `compare` and `mem-levels` run in-process.

The default run is bounded (FUZZ_EXAMPLES, a few seconds); OSMETER_TEST_SLOW=1
(CI) runs many more, and a sweep that is not random: every value inside every
JSON cell of a run and its results replaced in turn by values of another
shape (a list holding an object where a reader wanted text broke
warnings.py; a thousand random examples rarely hit that one key).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .. import hypothesis_home  # noqa: F401  (before hypothesis: its caches go to a temporary directory)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osmeter.errors import EXIT_NOT_FOUND, EXIT_OK, EXIT_STORE
from osmeter.store import open_store

from ..conftest import import_fixture, invoke_main

SLOW = os.environ.get("OSMETER_TEST_SLOW") == "1"
FUZZ_EXAMPLES = 1000 if SLOW else 25

# A counters record as `osmeter-probe run --counters sw,cycles` writes it
# on a machine without a PMU (docs/schema.md), so counters are fuzzed too.
COUNTERS = {
    "type": "counters", "bench": "cpu.call", "params": {"args": 0}, "ops": 1000, "kernel": False,
    "kernel_reason": "perf_event_paranoid is 2", "inherit": True,
    "counters": [
        {"name": "task-clock", "status": "ok", "unit": "ns", "value": 1.3, "total": 1300.0, "running": 1,
         "reason": None},
        {"name": "cycles", "status": "unsupported", "unit": "count", "value": None, "total": None,
         "running": None, "reason": "no PMU"},
    ],
}

# JSON texts that have broken readers: NaN literals, out-of-range numbers,
# deep nesting, lone surrogates.
NASTY_JSON = [
    "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e300", str(2**64), "9" * 400, "[" * 2000 + "]" * 2000,
    '{"a":' * 40 + "1" + "}" * 40, '"\\ud800"', '{"\\udfff":1}', "", " ", "{", "[1,", "null", "[]", "{}", '""',
    "true", "0", "-1", "1.5", '[""]', "[{}]", '[[]]', '{"":null}',
]

json_leaf = (
    st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_value = st.recursive(
    json_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)
json_text = json_value.map(lambda v: json.dumps(v, ensure_ascii=False)) | st.sampled_from(NASTY_JSON)
# Values of another shape than a reader expects: containers where it wants a
# scalar (unhashable ones too), scalars where it wants a container, extremes.
WRONG_SHAPES = [[{}], [[]], {}, {"": {}}, [], "", "x", 0, -1, 1.5, 2**63 - 1, -(2**63), 1e100, None, True, ["x", 1]]
inner_text = st.sampled_from(WRONG_SHAPES).map(json.dumps) | json_text
float_arrays = st.lists(st.floats() | st.sampled_from([1e300, -1e300, 1e101]), min_size=0, max_size=6)


@st.composite
def reshaped(draw: Any, good: Any) -> str:
    """The stored JSON with one inner value (or the whole) replaced, a key added or removed."""
    good = json.loads(json.dumps(good))  # a copy: changed in place below
    path: list[Any] = []
    node = good
    while isinstance(node, (dict, list)) and node and draw(st.integers(0, 3)):
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    if not path:
        return draw(json_text)
    parent = good
    for key in path[:-1]:
        parent = parent[key]
    kind = draw(st.sampled_from(["set", "set", "set", "drop", "add"]))
    if kind == "drop":
        del parent[path[-1]]
    elif kind == "add" and isinstance(parent, dict):
        parent[draw(st.text(max_size=6))] = draw(json_value)
    else:
        parent[path[-1]] = "@@FUZZ@@"
    text = json.dumps(good, ensure_ascii=False)
    return text.replace('"@@FUZZ@@"', draw(inner_text), 1)


def sql_values(good: Any) -> st.SearchStrategy[tuple[str, Any]]:
    """(SQL expression, parameter) pairs: a generated value for one cell that now holds `good`."""
    plain = st.one_of(
        st.none(),
        st.integers(-(2**63), 2**63 - 1) | st.sampled_from([2**63 - 1, -(2**63), 0, -1, 1, 2]),
        st.floats() | st.sampled_from([float("inf"), float("-inf"), 1e300, -0.0]),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=16),
        json_text,
        st.binary(max_size=40),
        st.binary(max_size=64).map(zlib.compress),
        json_text.map(lambda t: zlib.compress(t.encode("utf-8", "surrogatepass"))),
        float_arrays.map(lambda xs: zlib.compress(np.asarray(xs, dtype="<f8").tobytes())),
    ).map(lambda v: ("?", v))
    not_utf8 = st.sampled_from([b"\xff", b"a\xc3", b"\xed\xa0\x80", b'{"a":"\xfe"}']).map(
        lambda b: ("CAST(? AS TEXT)", b))
    strategies = [plain, not_utf8]
    try:
        parsed = json.loads(good) if isinstance(good, str) else None
    except ValueError:
        parsed = None
    if isinstance(parsed, (dict, list)):
        strategies += [reshaped(parsed).map(lambda t: ("?", t))] * 3
    return st.one_of(strategies)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """A store with the fixture run imported twice, each first result with counters."""
    path = tmp_path_factory.mktemp("store-fuzz") / "template.db"
    first = import_fixture(path)
    second = import_fixture(path)
    store = open_store(str(path), create=False)
    try:
        for run_id in (first, second):
            store.set_counters(run_id, 0, COUNTERS)
    finally:
        store.close()
    return path, first, second


FUZZ_SETTINGS = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,  # nothing written to the working tree
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
counted: Counter[str] = Counter()


def commands(first: int, second: int, out: Path) -> list[list[str]]:
    return [["runs"], ["show", str(first)], ["show", str(first), "--json"],
            ["export", str(first), "--format", "csv"], ["export", str(first), "--format", "json"],
            ["report", str(first), "--format", "md", "-o", str(out / "report.md")],
            ["compare", str(first), str(second)], ["mem-levels", str(first)]]


def check_commands(path: Path, first: int, second: int, damaged: tuple[str, str], out: Path) -> set[int]:
    """Run every reading command on the store; each exits 0 or with a documented
    error naming the damaged column. Returns the exit codes seen."""
    column = damaged[1]
    # A changed run id leaves no run `first` (or `second`): no such run.
    allowed = (EXIT_OK, EXIT_STORE, EXIT_NOT_FOUND) if damaged == ("runs", "id") else (EXIT_OK, EXIT_STORE)
    codes = set()
    for args in commands(first, second, out):
        code, _, err = invoke_main(*args, "--store", str(path))
        codes.add(code)
        assert "Traceback" not in err, (args, err)
        assert code in allowed, (args, code, err)
        if code != EXIT_OK:
            assert err.startswith("osmeter: error: "), (args, err)
        if code == EXIT_STORE:  # the damage is named: run, result, column
            assert "is damaged: run " in err and f"column '{column}'" in err, (args, err)
    return codes


def _damage(path: Path, table: str, column: str, rowid: int, expr: str, value: Any) -> bool:
    """Set one cell; False when SQLite refuses the value (NOT NULL, UNIQUE)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        conn.execute(f'UPDATE {table} SET "{column}" = {expr} WHERE rowid = ?', (value, rowid))
        conn.commit()
        return True
    except sqlite3.IntegrityError:
        return False
    finally:
        conn.close()


@FUZZ_SETTINGS
@given(data=st.data())
def test_commands_on_a_damaged_store(template: tuple[Path, int, int], tmp_path: Path, data: st.DataObject) -> None:
    source, first, second = template
    path = tmp_path / "fuzz.db"
    shutil.copyfile(source, path)
    table = data.draw(st.sampled_from(["runs", "results"]), label="table")
    conn = sqlite3.connect(path)
    try:
        where = "id" if table == "runs" else "run_id"
        rowids = [r[0] for r in conn.execute(f"SELECT rowid FROM {table} WHERE {where} IN (?, ?)", (first, second))]
        rowid = data.draw(st.sampled_from(rowids), label="rowid")
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        values = conn.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE rowid = ?", (rowid,)).fetchone()
        row = dict(zip(columns, values))
    finally:
        conn.close()
    # Half the time a column that holds JSON: its inner values are where readers differ.
    nested = [c for c, v in row.items() if isinstance(v, str) and v[:1] in "[{"]
    column = data.draw(st.sampled_from(nested if nested and data.draw(st.booleans()) else list(row)), label="column")
    good = row[column]
    expr, value = data.draw(sql_values(good), label="value")
    counted["examples"] += 1
    if not _damage(path, table, column, rowid, expr, value):
        counted["refused by SQLite"] += 1
        return
    codes = check_commands(path, first, second, (table, column), tmp_path)
    counted[f"exit {max(codes)}"] += 1


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a JSON value, deepest last."""
    inner: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            inner += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            inner += _paths(v, (*path, i))
    return [path, *inner] if path else inner


SWEPT = ([{}], {}, "x", -1, None, ["x", 1])  # the WRONG_SHAPES that broke readers, and their kin


@pytest.mark.slow
def test_every_inner_value_of_another_shape(template: tuple[Path, int, int], tmp_path: Path) -> None:
    """Not random: every value inside every JSON cell of the first run and its
    results, in turn, replaced by each of SWEPT (what the fuzz finds only now and then)."""
    source, first, second = template
    conn = sqlite3.connect(source)
    cells = []
    try:
        for table, where in (("runs", "id"), ("results", "run_id")):
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            for row in conn.execute(f"SELECT rowid, * FROM {table} WHERE {where} = ?", (first,)):
                cells += [(table, row[0], c, json.loads(v)) for c, v in zip(columns, row[1:])
                          if isinstance(v, str) and v[:1] in "[{"]
    finally:
        conn.close()
    path = tmp_path / "sweep.db"
    for table, rowid, column, good in cells:
        for place in _paths(good):
            for wrong in SWEPT:
                value = json.loads(json.dumps(good))
                node = value
                for key in place[:-1]:
                    node = node[key]
                node[place[-1]] = wrong
                shutil.copyfile(source, path)
                assert _damage(path, table, column, rowid, "?", json.dumps(value))
                check_commands(path, first, second, (table, column), tmp_path)


def test_fuzz_ran(capsys: pytest.CaptureFixture[str]) -> None:
    """Say how many damaged stores were tried (pytest -s shows it); run after the fuzz test."""
    if counted["examples"]:
        with capsys.disabled():
            tally = ", ".join(f"{counted[k]} {k}" for k in sorted(counted) if k != "examples")
            print(f"\nstore fuzz: {counted['examples']} damaged stores ({tally})")
