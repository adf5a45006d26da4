"""Stored rows read back into the model, every column checked on the way.

A store can be damaged: a disk error, a bit flip, another program's UPDATE,
a half-restored backup. SQLite's column types do not stop that (a TEXT
column takes a blob, a REAL column takes text or an infinity), so each value
is checked here against the type the rest of osmeter relies on: text
columns hold text, numbers are finite (NULL where the schema allows it,
read as NaN for statistics), JSON columns hold JSON text of the right shape
(an object, an array of strings, an array of objects) within the reader
limits the probe's records are held to (records.loads_json: no NaN or
infinity, numbers within +-1e100, integers within 64 bits, at most 32
levels deep). Inside those shapes the readers take any JSON value (the
import path stores whatever a record's `machine`, `params` or `extra` holds);
where a reader needs more (the repetitions, each a Repetition) it is
checked here. A value that fails raises Corrupt naming the column and what
is wrong; SQLiteStore adds the run and result and raises StoreError.
"""

from __future__ import annotations

import json
import math
import sqlite3
import zlib
from contextlib import contextmanager
from dataclasses import fields
from operator import itemgetter
from typing import Any, Iterator

import numpy as np

from ..errors import RecordError
from ..frozen import built
from ..gcpause import paused
from ..model import RESULT_STATUSES, RUN_SOURCES, RUN_STATUSES, BenchResult, Counts, RunInfo
from ..records import MAX_DEPTH, MAX_MAGNITUDE, loads_json
from ..repeats import Repetition
from ..stats import FloatArray, Summary
from .base import TooManySamples, decode_samples

SUMMARY_COLUMNS = tuple(f.name for f in fields(Summary))
_INTEGER_STATS = ("n", "outliers", "kbest_stable")


PROFILE_HEADER = ("type", "bench", "params", "lebench_row", "stacks", "status", "mode")
MAX_PROFILE_TEXT = 1 << 30  # a damaged blob must not fill the memory


def encode_stacks(stacks: Any) -> bytes:
    """A profile record's stacks as stored: zlib of "frames weight" lines."""
    return zlib.compress("".join(f"{s} {w}\n" for s, w in stacks).encode("utf-8"))


def decode_stacks(blob: Any) -> list[tuple[str, int]]:
    if not isinstance(blob, bytes):
        raise Corrupt("stacks", f"{_sql_kind(blob)}, not a zlib-compressed blob")
    try:
        d = zlib.decompressobj()
        data = d.decompress(blob, MAX_PROFILE_TEXT)
        if not d.eof:
            raise Corrupt("stacks", "an incomplete or damaged zlib stream")
        out = []
        for line in data.decode("utf-8").splitlines():
            stack, _, weight = line.rpartition(" ")
            out.append((stack, int(weight)))
        return out
    except (zlib.error, UnicodeDecodeError, ValueError) as e:
        raise Corrupt("stacks", f"not folded stacks ({e})") from None


class Corrupt(Exception):
    """A stored value that cannot be used; turned into StoreError with the run's id."""

    def __init__(self, column: str, why: str) -> None:
        super().__init__(f"{column}: {why}")
        self.column = column
        self.why = why


class NotUTF8:
    """Stored TEXT that is not UTF-8 (sqlite3 would fail the whole query on it)."""

    __slots__ = ("raw",)

    def __init__(self, raw: bytes) -> None:
        self.raw = raw


def text_factory(raw: bytes) -> str | NotUTF8:
    """The connection's text_factory: TEXT as str, or NotUTF8 for the decoder to name."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return NotUTF8(raw)


def _sql_kind(value: Any) -> str:
    """An SQLite value's type in words."""
    if value is None:
        return "NULL"
    if isinstance(value, NotUTF8):
        return "text that is not UTF-8"
    if isinstance(value, bytes):
        return "a blob"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a real number"
    return "text"


def _json_kind(value: Any) -> str:
    """A decoded JSON value's type in words."""
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, bool):
        return "JSON true/false"
    if value is None:
        return "JSON null"
    return "a JSON number"


def text(row: sqlite3.Row, column: str, *, null: bool = False, choices: tuple[str, ...] | None = None) -> Any:
    """A TEXT column: a str (or None where NULL is allowed), one of `choices` when given."""
    value = row[column]
    if value is None and null:
        return None
    if not isinstance(value, str):
        raise Corrupt(column, f"{_sql_kind(value)}, not text")
    if choices is not None and value not in choices:
        raise Corrupt(column, f"{value[:40]!r}, not one of {', '.join(choices)}")
    return value


def integer(row: sqlite3.Row, column: str, *, null: bool = False, minimum: int | None = None,
            maximum: int | None = None) -> Any:
    """An INTEGER column: an int within the bounds (or None where NULL is allowed)."""
    value = row[column]
    if value is None and null:
        return None
    if not isinstance(value, int):
        raise Corrupt(column, f"{_sql_kind(value)}, not an integer")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = f"{minimum if minimum is not None else '...'} to {maximum if maximum is not None else '...'}"
        raise Corrupt(column, f"{value}, out of range ({bounds})")
    return value


def real(row: sqlite3.Row, column: str) -> float:
    """A REAL statistics column: a finite number, or NULL (a NaN statistic) read as NaN."""
    value = row[column]
    if value is None:
        return math.nan
    if not isinstance(value, (int, float)):
        raise Corrupt(column, f"{_sql_kind(value)}, not a number")
    value = float(value)
    if not math.isfinite(value):
        raise Corrupt(column, f"{value}, not a finite number")
    return value


# What loads_json refuses, found quickly in the text's bytes with digits made 0,
# E made e, '+' removed, D made d and { made [: a run of 19 zeros is an integer
# near or past 64 bits; 0e00 a positive exponent of two digits or more (a number
# near or past MAX_MAGNITUDE: 18 digits times 1e9 stay far below it; JSON puts
# a digit before the e); \ud an escaped UTF-16 surrogate; the count of [ bounds
# the nesting. NaN and infinities are refused by the decoder's parse_constant.
# Strings are searched too: a false alarm only costs the careful path. Searching
# bytes is many times quicker than a regular expression.
_SCAN = bytes.maketrans(b"123456789ED{", b"000000000ed[")
_SURROGATE, _LONG, _EXPONENT = b"\\ud", b"0" * 19, b"0e00"


class _Constant(Exception):
    """NaN or an infinity in the text."""


def _constant(name: str) -> Any:
    raise _Constant(name)


_DECODER = json.JSONDecoder(parse_constant=_constant)


def _nesting_ok(value: Any) -> bool:
    """No array or object nested MAX_DEPTH levels deep (check_values' limit)."""
    level, depth = [value] if isinstance(value, (list, dict)) else [], 0
    while level:
        if depth >= MAX_DEPTH:
            return False
        level = [x for c in level for x in (c.values() if isinstance(c, dict) else c) if isinstance(x, (list, dict))]
        depth += 1
    return True


def loads_checked(text: str) -> Any:
    """loads_json(text), quickly: a text that cannot hold what loads_json refuses
    (see _SCAN) is parsed by json alone, to the same value; any other goes
    through loads_json (which raises RecordError). A store holds thousands of
    runs and results: their JSON is read at C speed."""
    if text == "{}" or text == "[]":  # most extra and flags columns
        return {} if text == "{}" else []
    try:
        scan = text.encode("utf-8").translate(_SCAN, b"+")
    except UnicodeEncodeError:  # a lone surrogate in the str itself
        return loads_json(text)
    if _SURROGATE not in scan and _LONG not in scan and _EXPONENT not in scan:
        try:
            value = _DECODER.decode(text)
        except (ValueError, RecursionError, _Constant):  # malformed, deep, NaN: loads_json says what
            pass
        else:
            if scan.count(b"[") <= MAX_DEPTH or _nesting_ok(value):
                return value
    return loads_json(text)


def json_value(row: sqlite3.Row, column: str) -> Any:
    """A JSON column's value (None for NULL), within the records' reader limits."""
    value = row[column]
    if value is None:
        return None
    if not isinstance(value, str):
        raise Corrupt(column, f"{_sql_kind(value)}, not JSON text")
    try:
        return loads_checked(value)
    except RecordError as e:
        raise Corrupt(column, f"not valid JSON ({e.message})") from None


def json_object(row: sqlite3.Row, column: str, *, null: bool = False) -> Any:
    value = json_value(row, column)
    if value is None and null and row[column] is None:
        return None
    if not isinstance(value, dict):
        raise Corrupt(column, f"{_json_kind(value)}, not an object")
    return value


def json_texts(row: sqlite3.Row, column: str) -> list[str]:
    """A JSON array of strings."""
    value = json_value(row, column)
    if not isinstance(value, list):
        raise Corrupt(column, f"{_json_kind(value)}, not an array of strings")
    bad = next((i for i, v in enumerate(value) if not isinstance(v, str)), None)
    if bad is not None:
        raise Corrupt(column, f"an array whose element {bad} is {_json_kind(value[bad])}, not a string")
    return value


# --- runs ----------------------------------------------------------------


@contextmanager
def bulk() -> Iterator[None]:
    """Python's cyclic garbage collector paused while many rows are decoded,
    and their params texts parsed once each (_params).
    JSON makes thousands of containers, none of them in a cycle; with the
    collector running, it walked them again and again as they piled up (a
    third of the time of reading 10 000 runs). Reference counting frees
    them as usual; the collector comes back afterwards."""
    global _params_memo
    outer = _params_memo is None
    if outer:
        _params_memo = {}
    try:
        with paused():
            yield
    finally:
        if outer:
            _params_memo = None


# While bulk() decodes many rows: the params texts met so far and their
# checked objects. The results of many runs share a few hundred parameter
# sets; each text is parsed and checked once, and each result gets a copy.
_params_memo: dict[str, dict[str, Any]] | None = None


def _params(row: sqlite3.Row) -> dict[str, Any]:
    text = row["params"]
    memo = _params_memo
    if memo is None or type(text) is not str:
        return json_object(row, "params")
    value = memo.get(text)
    if value is None:
        value = memo[text] = json_object(row, "params")
    return dict(value)


def _machine(row: sqlite3.Row, shared: dict[str, Any] | None) -> Any:
    """The machine column; with `shared`, the runs of one machine description
    (a host's runs, most often) share its decoded object (read-only)."""
    value = row["machine"]
    if shared is None or not isinstance(value, str):
        return json_object(row, "machine")
    if value not in shared:
        shared[value] = json_object(row, "machine")
    return shared[value]


def run(row: sqlite3.Row, shared: dict[str, Any] | None = None) -> RunInfo:
    """A `runs` row (with the n_ok, n_skip, n_error counts) as a RunInfo;
    `shared`: see _machine (a list of runs passes one dict for all)."""
    return RunInfo(
        id=integer(row, "id", minimum=1),
        label=text(row, "label", null=True),
        start_time=text(row, "start_time"),
        end_time=text(row, "end_time", null=True),
        status=text(row, "status", choices=RUN_STATUSES),
        status_reason=text(row, "status_reason", null=True),
        source=text(row, "source", choices=RUN_SOURCES),
        osmeter_version=text(row, "osmeter_version"),
        probe_version=text(row, "probe_version"),
        suite=text(row, "suite", null=True),
        argv=json_texts(row, "argv"),
        params=json_object(row, "params"),
        machine=_machine(row, shared),
        meta=json_object(row, "meta"),
        counts=Counts(ok=row["n_ok"], skip=row["n_skip"], error=row["n_error"]),
        host=text(row, "host", null=True),
        fleet=text(row, "fleet", null=True),
    )


# --- results -------------------------------------------------------------


_MODES = ("mode_low", "mode_high")  # NULL for most results (one mode): read apart from the quick path of the rest
_REAL_STATS = tuple(c for c in SUMMARY_COLUMNS if c not in _INTEGER_STATS and c not in _MODES)
_FLOAT_ONLY = {float}
_get_reals = itemgetter(*_REAL_STATS)


def _reals(row: sqlite3.Row, columns: tuple[str, ...], get: Any) -> dict[str, Any]:
    """The REAL statistics `columns` (`get`: their itemgetter), each as real() reads it."""
    reals = get(row)
    # what real() takes as is: floats only, all finite (an infinity or a NaN among them makes the sum one)
    if set(map(type, reals)) == _FLOAT_ONLY and math.isfinite(sum(reals)):
        return dict(zip(columns, reals))
    # a NULL (a NaN statistic), an integer, or damage: real() says which
    return {c: real(row, c) for c in columns}


def _summary(row: sqlite3.Row) -> Summary:
    values = _reals(row, _REAL_STATS, _get_reals)
    for c in _MODES:
        values[c] = real(row, c)
    values["n"] = integer(row, "n", minimum=1)
    values["outliers"] = integer(row, "outliers", minimum=0, maximum=values["n"])
    values["kbest_stable"] = bool(integer(row, "kbest_stable", minimum=0, maximum=1))
    return built(Summary, values)


# What a light read (SQLStore.figures, for compare --by) takes of the statistics:
# the median, its interval and n, all compare's cells use; the rest is NaN.
LIGHT_STATS = ("n", "median", "ci_low", "ci_high")
_LIGHT_REALS = LIGHT_STATS[1:]
_get_light_reals = itemgetter(*_LIGHT_REALS)
_UNREAD: dict[str, Any] = {c: math.nan for c in SUMMARY_COLUMNS if c not in LIGHT_STATS}
_UNREAD.update(outliers=0, kbest_stable=False)


def _light_summary(row: sqlite3.Row) -> Summary:
    """_summary of a row read with LIGHT_STATS only: those checked as there, every other statistic NaN
    (outliers 0, kbest_stable False), so nothing can show them as figures."""
    values = _reals(row, _LIGHT_REALS, _get_light_reals)
    values["n"] = integer(row, "n", minimum=1)
    return built(Summary, {**_UNREAD, **values})


_REP_NUMBERS = ("median", "ci_low", "ci_high", "elapsed_s")


_FLOAT_OR_NONE = (float, type(None))
_TEXT_OR_NONE = (str, type(None))


def _plain_repetition(d: Any) -> Repetition | None:
    """_repetition's quick path: an element as Repetition.to_dict writes it
    (floats or null, an int n >= 0, text or null, a list of strings), taken as
    is; None for anything else (integers where floats are written, damage),
    which _repetition checks one key at a time."""
    if type(d) is not dict:
        return None
    get = d.get
    status, n, batch, flags = get("status", "ok"), get("n", 0), get("batch"), get("flags", [])
    if not (status in RESULT_STATUSES and type(n) is int and n >= 0
            and (batch is None or (type(batch) is int and batch >= 1))
            and all(type(get(k)) in _FLOAT_OR_NONE for k in _REP_NUMBERS)
            and type(get("stop_reason")) in _TEXT_OR_NONE and type(get("reason")) in _TEXT_OR_NONE
            and type(flags) is list and all(type(f) is str for f in flags)):
        return None
    nan = math.nan
    median, ci_low, ci_high, elapsed = get("median"), get("ci_low"), get("ci_high"), get("elapsed_s")
    return built(Repetition, {"status": status, "n": n, "median": nan if median is None else median,
                              "ci_low": nan if ci_low is None else ci_low, "ci_high": nan if ci_high is None else ci_high,
                              "batch": batch, "stop_reason": get("stop_reason"), "flags": tuple(flags),
                              "elapsed_s": nan if elapsed is None else elapsed, "reason": get("reason")})


def _repetition(i: int, d: Any) -> Repetition:
    """One element of the repetitions array (model: repeats.Repetition.to_dict)."""
    quick = _plain_repetition(d)
    if quick is not None:
        return quick

    def bad(key: str, want: str) -> Corrupt:
        return Corrupt("repetitions", f"an array whose element {i} has '{key}' of {_json_kind(d[key])}, not {want}")

    if not isinstance(d, dict):
        raise Corrupt("repetitions", f"an array whose element {i} is {_json_kind(d)}, not an object")
    if d.get("status", "ok") not in RESULT_STATUSES:
        raise bad("status", "one of " + ", ".join(RESULT_STATUSES))
    if not _is_int(d.get("n", 0)) or d.get("n", 0) < 0:
        raise bad("n", "an integer >= 0")
    if d.get("batch") is not None and (not _is_int(d["batch"]) or d["batch"] < 1):
        raise bad("batch", "an integer >= 1 or null")
    for key in _REP_NUMBERS:
        if d.get(key) is not None and not (_is_int(d[key]) or isinstance(d[key], float)):
            raise bad(key, "a number or null")
    for key in ("stop_reason", "reason"):
        if d.get(key) is not None and not isinstance(d[key], str):
            raise bad(key, "a string or null")
    flags = d.get("flags", [])
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise bad("flags", "an array of strings")
    return Repetition.from_dict(d)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _repetitions(row: sqlite3.Row) -> tuple[Repetition, ...]:
    value = json_value(row, "repetitions")
    if value is None and row["repetitions"] is None:  # stored before migration 0003: one repetition
        return ()
    if not isinstance(value, list):
        raise Corrupt("repetitions", f"{_json_kind(value)}, not an array of objects")
    return tuple(_repetition(i, d) for i, d in enumerate(value))


def _light_repetitions(row: sqlite3.Row) -> tuple[Repetition, ...]:
    """_repetitions for a light read: an array of one object (one `{`, one
    `}`: a repetition has no nested object) is the result itself, () as for a
    result stored before repetitions had a column, and is not parsed (a
    heatmap of 100 hosts meets 20 000 of them); anything else is read and
    checked as always."""
    value = row["repetitions"]
    if (type(value) is str and value.startswith("[{") and value.endswith("}]")
            and value.count("{") == 1 and value.count("}") == 1):
        return ()
    return _repetitions(row)


def _flags(row: sqlite3.Row, record: dict[str, Any]) -> tuple[str, ...]:
    if row["flags"] is not None:
        return tuple(json_texts(row, "flags"))
    # Stored before migration 0003: the flags the probe's record carries (checked by
    # the records contract when it was stored; anything else is ignored, as then).
    flags = record.get("flags", [])
    return tuple(f for f in flags if isinstance(f, str)) if isinstance(flags, list) else ()


def result(row: sqlite3.Row, *, light: bool = False) -> BenchResult:
    """A `results` row as a BenchResult. `light`: a row read without its
    extra and counters columns, with its record only where the flags
    column is NULL, and of the statistics only LIGHT_STATS (SQLStore.figures):
    those fields are left empty, the other statistics NaN (_light_summary),
    and a single repetition is not read (_light_repetitions)."""
    record = {} if light and row["flags"] is not None else json_object(row, "record")
    status = text(row, "status", choices=RESULT_STATUSES)
    # BenchResult's own checks hold by construction: a known status, statistics exactly when ok
    return built(BenchResult, {
        "seq": integer(row, "seq", minimum=0),
        "bench": text(row, "bench"),
        "params": _params(row),
        "status": status,
        "unit": text(row, "unit", null=status != "ok"),
        "reason": text(row, "reason", null=True),
        "summary": None if status != "ok" else _light_summary(row) if light else _summary(row),
        "batch": integer(row, "batch", null=True, minimum=1),
        "extra": {} if light else json_object(row, "extra", null=True) or {},
        "counters": None if light else json_object(row, "counters", null=True) or None,
        "record": record,
        "flags": _flags(row, record),
        "repetitions": _light_repetitions(row) if light else _repetitions(row),
    })


MAX_STORED_SAMPLES = 1 << 27  # 1 GiB of float64: the cap when a result's n cannot say


def samples(blob: Any, n: Any) -> FloatArray:
    """A samples blob: zlib-compressed little-endian float64, every value finite
    and within the records' limits (what stats and the figures take), and no
    more values than the result's `n` (decompression stops there)."""
    if not isinstance(blob, bytes):
        raise Corrupt("samples", f"{_sql_kind(blob)}, not a blob")
    from_n = _is_int(n) and 0 < n <= MAX_STORED_SAMPLES
    cap = n if from_n else MAX_STORED_SAMPLES
    try:
        values = decode_samples(blob, cap)
    except TooManySamples:  # n and the blob disagree: either may be the damaged one
        if from_n:
            raise Corrupt("n", f"{n}, fewer than the values in column 'samples' (one of the two is damaged)") from None
        raise Corrupt("samples", f"not readable samples (more than {cap} values)") from None
    except (zlib.error, ValueError) as e:  # not zlib; a length that is not a multiple of 8
        raise Corrupt("samples", f"not readable samples ({type(e).__name__}: {e})") from None
    if values.size == 0:
        raise Corrupt("samples", "not readable samples (no values)")
    bad = np.flatnonzero(~(np.abs(values) <= MAX_MAGNITUDE))
    if bad.size:
        raise Corrupt("samples", f"not readable samples (value {int(bad[0])} is {values[bad[0]]!r}, "
                                 f"not a finite number within +-{MAX_MAGNITUDE:g})")
    return values
