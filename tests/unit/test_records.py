"""The records contract (docs/schema.md): what parse_line accepts and refuses."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from osmeter import records
from osmeter.errors import RecordError

DATA = Path(__file__).resolve().parents[1] / "data"


def lines(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


def first(kind: str) -> dict[str, Any]:
    for line in lines("run_x86_64.jsonl"):
        obj = json.loads(line)
        if obj["type"] == kind:
            return obj
    raise LookupError(kind)


@pytest.mark.parametrize("name", ["run_x86_64.jsonl", "run_aarch64.jsonl"])
def test_fixture_files_parse(name: str) -> None:
    parsed = [records.parse_line(line) for line in lines(name)]
    assert isinstance(parsed[0], records.Meta)
    assert isinstance(parsed[-1], records.End)


def test_every_record_type_maps_to_its_class() -> None:
    expected = {
        "meta": records.Meta,
        "progress": records.Progress,
        "samples": records.Samples,
        "result": records.Result,
        "skip": records.Skip,
        "error": records.Error,
        "end": records.End,
    }
    for kind, cls in expected.items():
        assert isinstance(records.parse_line(json.dumps(first(kind))), cls)
    counters = {"type": "counters", "bench": "cpu.call", "params": {}, "cycles": 5}
    assert isinstance(records.parse_line(json.dumps(counters)), records.Counters)


def test_parsed_values() -> None:
    meta = records.parse_line(json.dumps(first("meta")))
    assert isinstance(meta, records.Meta)
    assert meta.schema == 1 and meta.clock.source == "tsc" and meta.clock.invariant is True
    assert meta.machine["hostname"] == "testbox"
    result = records.parse_line(json.dumps(first("result")))
    assert isinstance(result, records.Result)
    assert result.bench == "cpu.call" and result.params == {"args": 0} and result.batch == 1000000
    assert result.placement is None and result.ref_cycles == 3.74


def test_records_are_frozen() -> None:
    end = records.parse_line(json.dumps(first("end")))
    with pytest.raises(AttributeError):
        end.status = "interrupted"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("", "empty line"),
        ("not json at all", "not valid JSON"),
        ('{"type": "result", "bench": ', "not valid JSON"),
        ("[1, 2, 3]", "must be a JSON object"),
        ('{"bench": "cpu.call"}', "missing key 'type'"),
        ('{"type": 3}', "'type' must be a non-empty string, got 3"),
        ('{"type": ""}', "'type' must be a non-empty string"),
        ('{"type": "skip", "bench": "x", "params": {}, "reason": NaN}', "NaN is not valid JSON"),
    ],
)
def test_malformed_lines(line: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        records.parse_line(line)


def test_unknown_record_type_is_kept_for_readers_to_skip() -> None:
    # schema.md, "Versioning": adding a record type is compatible; readers skip it.
    record = records.parse_line('{"type": "telemetry", "x": 1}')
    assert isinstance(record, records.Unknown) and record.kind == "telemetry"
    assert "telemetry" in records.describe_unknown(record)


def _samples_with(values: str) -> str:
    return '{"type":"samples","bench":"cpu.call","params":{},"unit":"ns","batch":1,"values":[' + values + "]}"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (_samples_with("1.0, 1e309"), r"'values\[1\]': a number too large for a double"),
        (_samples_with("-1e309"), r"'values\[0\]': a number too large for a double"),
        (_samples_with("2.0, 1e308"), r"'values\[1\]': the number 1e\+308 is out of range"),
        (_samples_with("1e101"), "out of range"),
        (_samples_with("9223372036854775808"), r"'values\[0\]': the integer 9223372036854775808 .*out of range"),
        (_samples_with("1" * 5000), r"'values\[0\]': the integer 1111.* \(5000 digits\) is out of range"),
        (_samples_with("[" * 100000 + "]" * 100000), "nested more than 32 levels deep"),
        (_samples_with("[" * 40 + "]" * 40), "nested more than 32 levels deep"),
        ('{"type":"skip","bench":"x","params":{},"reason":"\\ud800"}', "'reason': .*lone UTF-16 surrogate"),
        ('{"type":"skip","bench":"x","params":{"\\udfff":1},"reason":"r"}', "lone UTF-16 surrogate"),
    ],
)
def test_values_beyond_the_reader_limits_are_refused(line: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        records.parse_line(line)


def test_limits_keep_values_in_range() -> None:
    ok = records.parse_line(_samples_with("1e100, -1e100, 9223372036854775807, -9223372036854775808"))
    assert isinstance(ok, records.Samples) and ok.values[0] == 1e100


def test_line_separators_inside_strings_are_text() -> None:
    record = records.parse_line('{"type":"skip","bench":"x","params":{},"reason":"a\u2028b\u0085c\u2029"}')
    assert isinstance(record, records.Skip) and record.reason == "a\u2028b\u0085c\u2029"


@pytest.mark.parametrize("kind", ["meta", "progress", "samples", "result", "skip", "error", "end"])
def test_every_documented_key_is_required(kind: str) -> None:
    obj = first(kind)
    for key in obj:
        if key == "type":
            continue
        broken = {k: v for k, v in obj.items() if k != key}
        with pytest.raises(RecordError, match=f"missing key '{key}'"):
            records.parse_line(json.dumps(broken))


@pytest.mark.parametrize(
    ("kind", "key", "value", "message"),
    [
        ("progress", "index", "0", "'index' must be an integer"),
        ("progress", "index", -1, "'index' must be an integer >= 0"),
        ("progress", "index", True, "'index' must be an integer"),
        ("samples", "values", [1, "2"], "'values' must be an array of numbers"),
        ("samples", "batch", 0, "'batch' must be an integer >= 1"),
        ("result", "n", 1.5, "'n' must be an integer"),
        ("result", "params", [], "'params' must be an object"),
        ("result", "median", "fast", "'median' must be a number or null"),
        ("end", "status", "done", "'status' must be one of complete, interrupted"),
        ("meta", "clock", {"source": "tsc"}, "meta.clock: missing key 'forced'"),
    ],
)
def test_wrong_types(kind: str, key: str, value: Any, message: str) -> None:
    obj = dict(first(kind), **{key: value})
    with pytest.raises(RecordError, match=message):
        records.parse_line(json.dumps(obj))


def test_null_numbers_read_as_nan() -> None:
    r = records.parse_line(json.dumps(dict(first("result"), mean=None, ref_cycles=None)))
    assert isinstance(r, records.Result) and math.isnan(r.mean) and r.ref_cycles is None


def test_null_samples_are_refused() -> None:
    obj = dict(first("samples"), values=[1.0, None, 2.0])
    with pytest.raises(records.RecordError, match=r"'values\[1\]' is null, but the probe writes only finite"):
        records.parse_line(json.dumps(obj))


def test_json_errors_name_the_place_and_the_control_character() -> None:
    text = json.dumps(dict(first("skip"), reason="@@")).replace("@@", "needs\x0croot")
    with pytest.raises(records.RecordError) as e:
        records.parse_line(text)
    message = e.value.message
    assert "Invalid control character U+000C" in message and " at at " not in message
    assert f"at column {text.index(chr(12)) + 1}" in message and '\\"reason\\": \\"needs' in message


def test_unknown_keys_are_ignored() -> None:
    obj = dict(first("skip"), future_key={"anything": [1, 2]})
    skip = records.parse_line(json.dumps(obj))
    assert isinstance(skip, records.Skip) and skip.reason.startswith("needs root")


def test_newer_schema_is_refused_naming_supported_versions() -> None:
    obj = dict(first("meta"), schema=2)
    with pytest.raises(RecordError, match=r"schema 2 is not supported \(newer than this osmeter.*reads schema 1"):
        records.parse_line(json.dumps(obj))


@pytest.mark.parametrize("value", [0, "1", None, 1.0])
def test_invalid_schema_values(value: Any) -> None:
    with pytest.raises(RecordError, match="schema"):
        records.parse_line(json.dumps(dict(first("meta"), schema=value)))


def test_canonical_params_sorts_keys() -> None:
    assert records.canonical_params({"b": 1, "a": "x"}) == '{"a":"x","b":1}'
    assert records.describe_instance("cpu.call", {"args": 3}) == "cpu.call args=3"
    assert records.describe_instance("syscall.null", {}) == "syscall.null"
