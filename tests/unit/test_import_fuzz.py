"""Property-based: `osmeter import` of generated and mutated JSON Lines never
fails with a traceback, and only with a documented exit code (issue 10, item 9).

The good fixture file is mutated (values replaced by generated JSON, lines
dropped, duplicated, swapped, cut, bytes inserted) and imported in-process;
a file that is stored is then shown and exported, so a value that passes
import but breaks a later command is found too. The default run is bounded
(FUZZ_EXAMPLES, a few seconds); OSMETER_TEST_SLOW=1 (CI) runs many more.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .. import hypothesis_home  # noqa: F401  (before hypothesis: its caches go to a temporary directory)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osmeter.errors import EXIT_IMPORT, EXIT_OK

from ..conftest import DATA, invoke_main

SLOW = os.environ.get("OSMETER_TEST_SLOW") == "1"
FUZZ_EXAMPLES = 2000 if SLOW else 75
GOOD_LINES = (DATA / "run_x86_64.jsonl").read_bytes().split(b"\n")[:-1]
GOOD_RECORDS = [json.loads(line) for line in GOOD_LINES]

# Texts that have broken readers: out-of-range numbers, NaN literals, deep
# nesting, lone surrogates, line separators that are not "\n".
NASTY = [
    "1e309", "-1e309", "1e308", "1e300", "NaN", "Infinity", "-Infinity", "9" * 5000, str(2**63), str(-(2**63) - 1),
    "-0", "1e-400", '"\\ud800"', '"\\udfff x"', '"a\u2028b"', '"\u0085"', '"\u2029"', "[" * 3000 + "]" * 3000,
    '{"a":' * 50 + "1" + "}" * 50, "null", "[]", "{}", '""', "true", "0", "-1", "1.5",
]

json_leaf = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_value = st.recursive(
    json_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
value_text = st.one_of(json_value.map(lambda v: json.dumps(v, ensure_ascii=False)), st.sampled_from(NASTY))


@st.composite
def replace_value(draw: Any, lines: list[bytes]) -> list[bytes]:
    """A key of one record given a generated value (or a new key added)."""
    i = draw(st.integers(0, len(lines) - 1))
    try:
        obj = json.loads(lines[i])
    except (ValueError, RecursionError):
        return lines
    if not isinstance(obj, dict):
        return lines
    key = draw(st.sampled_from(sorted(obj) + ["new_key"]) if obj else st.just("type"))
    if key == "values" and isinstance(obj.get("values"), list) and obj["values"] and draw(st.booleans()):
        j = draw(st.integers(0, len(obj["values"]) - 1))
        obj["values"][j] = "@@FUZZ@@"
    else:
        obj[key] = "@@FUZZ@@"
    text = json.dumps(obj, separators=(",", ":")).replace('"@@FUZZ@@"', draw(value_text))
    return lines[:i] + [text.encode("utf-8", "surrogatepass")] + lines[i + 1:]


@st.composite
def mutate_lines(draw: Any, lines: list[bytes]) -> list[bytes]:
    if not lines:
        return [draw(st.binary(max_size=40))]
    kind = draw(st.sampled_from(["value", "value", "value", "drop", "dup", "swap", "insert", "bytes", "cut"]))
    i = draw(st.integers(0, len(lines) - 1))
    if kind == "value":
        return draw(replace_value(lines))
    if kind == "drop":
        return lines[:i] + lines[i + 1:]
    if kind == "dup":
        return lines[:i + 1] + lines[i:]
    if kind == "swap":
        j = draw(st.integers(0, len(lines) - 1))
        lines = list(lines)
        lines[i], lines[j] = lines[j], lines[i]
        return lines
    if kind == "insert":
        new = draw(st.one_of(value_text.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=30),
                             st.sampled_from([b'{"type":"telemetry"}', b'{"type":""}', b'{"type":null}', b""])))
        return lines[:i] + [new] + lines[i:]
    if kind == "bytes":
        line = lines[i]
        at = draw(st.integers(0, len(line)))
        junk = draw(st.sampled_from([b"\xff", b"\x00", b"\r", b"\xe2\x80\xa8", b"\xc2\x85", b"\\", b'"', b"\n"])
                    | st.binary(min_size=1, max_size=4))
        return lines[:i] + [line[:at] + junk + line[at:]] + lines[i + 1:]
    line = lines[i]  # cut: the file ends inside this line
    return lines[:i] + [line[: draw(st.integers(0, len(line)))]]


@st.composite
def probe_files(draw: Any) -> bytes:
    lines = list(GOOD_LINES)
    for _ in range(draw(st.integers(1, 3))):
        lines = draw(mutate_lines(lines))
    data = b"\n".join(lines)
    return data + b"\n" if draw(st.booleans()) else data


FUZZ_SETTINGS = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,  # nothing written to the working tree
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
counted = {"import": 0, "stored": 0}


@FUZZ_SETTINGS
@given(data=probe_files(), allow_incomplete=st.booleans())
def test_import_of_mutated_files(tmp_path: Path, data: bytes, allow_incomplete: bool) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    store = str(tmp_path / "fuzz.db")
    flags = ["--allow-incomplete"] if allow_incomplete else []
    code, out, err = invoke_main("import", "--again", "--store", store, *flags, str(path))
    counted["import"] += 1
    assert code in (EXIT_OK, EXIT_IMPORT), err
    assert "Traceback" not in err
    if code == EXIT_IMPORT:
        assert err.startswith("osmeter: error: ") and str(path) in err
        return
    counted["stored"] += 1
    run_id = out.split(" as run ", 1)[1].split(" ", 1)[0]
    for args in (["show", run_id], ["show", run_id, "--json"], ["export", run_id, "--format", "csv"],
                 ["export", run_id, "--format", "json"]):
        code, _, err = invoke_main(*args, "--store", store)
        assert code == EXIT_OK, (args, err)


def test_fuzz_ran(capsys: pytest.CaptureFixture[str]) -> None:
    """Say how many files were imported (pytest -s shows it); run after the fuzz test."""
    if counted["import"]:
        with capsys.disabled():
            print(f"\nimport fuzz: {counted['import']} files, {counted['stored']} stored")
