"""The probe's JSON Lines records (docs/schema.md), parsed and validated.

`parse_line()` turns one line into one frozen dataclass or raises RecordError
naming what is wrong. Keys this version does not know are ignored (schema.md,
"Versioning"); keys it needs are checked for presence and type.

Number policy (schema.md): the probe writes NaN and infinities as `null`, so
every floating-point field accepts `null` and reads it as NaN. Integer fields
(counts, indexes, batch sizes, CPU numbers) must be JSON integers.

Limits (schema.md, "Reader limits"), checked on every value of every record
before its type is looked at, so no later statistic, store write or figure
meets a value it cannot handle: numbers within +-MAX_MAGNITUDE, integers
within a signed 64-bit integer, nesting at most MAX_DEPTH deep, no lone
UTF-16 surrogate in a string, a line at most MAX_LINE_BYTES long.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Union

from .errors import RecordError

SCHEMA_VERSION = 1
SUPPORTED_SCHEMAS = (1,)

END_STATUSES = ("complete", "interrupted")

MAX_MAGNITUDE = 1e100  # |number| above this is refused: squares and sums of samples stay finite
MAX_INT = 2**63 - 1  # integers are stored as SQLite INTEGER (signed 64-bit)
MAX_DEPTH = 32  # objects and arrays nested deeper are refused
MAX_LINE_BYTES = 16 * 1024 * 1024  # one record; the largest real `samples` line is a few MiB
# The flag osmeter kernels run adds to every result of a guest booted under TCG (docs/kernels.md):
# the figure is the emulator's, not the kernel's.
EMULATED = "emulated"


def check_schema_version(version: Any, what: str) -> int:
    """Refuse a schema this front end cannot read; return the version."""
    if not _is_int(version):
        raise RecordError(f"{what}: 'schema' must be an integer, got {version!r}")
    if version not in SUPPORTED_SCHEMAS:
        readable = ", ".join(str(v) for v in SUPPORTED_SCHEMAS)
        newer = " (newer than this osmeter; upgrade osmeter)" if version > SCHEMA_VERSION else ""
        raise RecordError(f"{what}: schema {version} is not supported{newer}; this osmeter reads schema {readable}")
    return version


# --- field checks --------------------------------------------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return _is_int(v) or isinstance(v, float)


class _Fields:
    """Typed access to one record's keys; every miss raises RecordError."""

    def __init__(self, obj: Mapping[str, Any], where: str) -> None:
        self._obj = obj
        self._where = where

    def value(self, key: str) -> Any:
        if key not in self._obj:
            raise RecordError(f"{self._where}: missing key '{key}'")
        return self._obj[key]

    def _bad(self, key: str, want: str, got: Any) -> RecordError:
        return RecordError(f"{self._where}: '{key}' must be {want}, got {json.dumps(got)}")

    def integer(self, key: str, minimum: int | None = None) -> int:
        v = self.value(key)
        if not _is_int(v) or (minimum is not None and v < minimum):
            raise self._bad(key, "an integer" + (f" >= {minimum}" if minimum is not None else ""), v)
        return v

    def number(self, key: str) -> float:
        """A number; null (the probe's NaN/Inf) reads as NaN."""
        v = self.value(key)
        if v is None:
            return math.nan
        if not _is_num(v):
            raise self._bad(key, "a number or null", v)
        return float(v)

    def opt_number(self, key: str) -> float | None:
        v = self.value(key)
        if v is None:
            return None
        if not _is_num(v):
            raise self._bad(key, "a number or null", v)
        return float(v)

    def text(self, key: str, choices: tuple[str, ...] | None = None) -> str:
        v = self.value(key)
        if not isinstance(v, str) or (choices is not None and v not in choices):
            raise self._bad(key, "one of " + ", ".join(choices) if choices else "a string", v)
        return v

    def opt_text(self, key: str) -> str | None:
        v = self.value(key)
        if v is not None and not isinstance(v, str):
            raise self._bad(key, "a string or null", v)
        return v

    def later_text(self, key: str) -> str | None:
        """A string-or-null key that files of older probes do not have."""
        return self.opt_text(key) if key in self._obj else None

    def later_number(self, key: str) -> float | None:
        """A number-or-null key that files of older probes do not have."""
        return self.opt_number(key) if key in self._obj else None

    def later_texts(self, key: str) -> tuple[str, ...]:
        """A list of strings that files of older probes do not have (then empty)."""
        if key not in self._obj:
            return ()
        v = self._obj[key]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self._bad(key, "an array of strings", v if not isinstance(v, list) else "[...]")
        return tuple(v)

    def flag(self, key: str) -> bool:
        v = self.value(key)
        if not isinstance(v, bool):
            raise self._bad(key, "true or false", v)
        return v

    def opt_flag(self, key: str) -> bool | None:
        v = self.value(key)
        if v is not None and not isinstance(v, bool):
            raise self._bad(key, "true, false or null", v)
        return v

    def mapping(self, key: str) -> dict[str, Any]:
        v = self.value(key)
        if not isinstance(v, dict):
            raise self._bad(key, "an object", v)
        return v

    def sub(self, key: str) -> "_Fields":
        return _Fields(self.mapping(key), f"{self._where}.{key}")

    def numbers(self, key: str) -> tuple[float, ...]:
        v = self.value(key)
        if not isinstance(v, list) or not all(x is None or _is_num(x) for x in v):
            raise self._bad(key, "an array of numbers", v if not isinstance(v, list) else "[...]")
        if None in v:  # the probe never writes one: a sample that is not a finite number is an error record
            raise RecordError(f"{self._where}: '{key}[{v.index(None)}]' is null, but the probe writes only finite "
                              "numbers there (docs/schema.md): the file was altered")
        return tuple(float(x) for x in v)


# --- records -------------------------------------------------------------


@dataclass(frozen=True)
class Clock:
    source: str  # tsc, cntvct, monotonic_raw or monotonic
    forced: bool  # chosen with --clock
    hz: float  # ticks per second
    tick_ns: float
    resolution_ns: float
    overhead_ns: float
    invariant: bool | None  # tsc only
    calibration_ns: float


@dataclass(frozen=True)
class Meta:
    schema: int
    probe_version: str
    command: str
    suite: str | None
    start_time: str
    clock: Clock
    cpu: int
    cpu_choice: str
    fifo: dict[str, Any]
    mlock: dict[str, Any]
    budget: dict[str, Any]
    build: dict[str, Any]
    machine: dict[str, Any]  # {key: value}, as `osmeter-probe sysinfo --json`
    raw: dict[str, Any]  # the whole record, unknown keys included


@dataclass(frozen=True)
class Progress:
    index: int  # from 0
    total: int
    bench: str
    params: dict[str, Any]
    lebench_row: str | None = None  # the LEBench row it reproduces (suite lebench)


@dataclass(frozen=True)
class Samples:
    bench: str
    params: dict[str, Any]
    unit: str
    batch: int  # operations each sample averages over
    values: tuple[float, ...]  # per operation, in `unit`; null read as NaN


@dataclass(frozen=True)
class Result:
    bench: str
    params: dict[str, Any]
    unit: str
    n: int
    min: float
    median: float
    mean: float
    batch: int
    cpu: int
    placement: str | None  # same_cpu / cross_cpu for two-party benchmarks, remote (net, peer=)
    elapsed_s: float
    stop_reason: str
    ref_cycles: float | None
    extra: dict[str, Any]
    raw: dict[str, Any]
    lebench_row: str | None = None
    rse: float | None = None  # the stopping rule's relative standard error at the stop
    flags: tuple[str, ...] = ()  # precision-unmet, calibration-timeout, not-pinned, tsc-unstable


@dataclass(frozen=True)
class Skip:
    bench: str
    params: dict[str, Any]
    reason: str
    raw: dict[str, Any]
    lebench_row: str | None = None


@dataclass(frozen=True)
class Error:
    bench: str
    params: dict[str, Any]
    message: str
    raw: dict[str, Any]
    lebench_row: str | None = None


@dataclass(frozen=True)
class Counters:
    """Performance counters of the result before it (`--counters`, schema.md).

    Kept verbatim in `raw` (ops, kernel, kernel_reason, inherit and the
    `counters` list of {name, status, unit, value, total, running, reason});
    readers pick what they need (report/figures/task.py)."""

    bench: str
    params: dict[str, Any]
    raw: dict[str, Any]


@dataclass(frozen=True)
class Profile:
    """Where the timed region's time went (`osmeter-probe hotspots`,
    schema.md `profile`), for the result before it. Kept verbatim in `raw`;
    `stacks` is checked here: a list of [folded stack, positive weight]."""

    bench: str
    params: dict[str, Any]
    raw: dict[str, Any]


@dataclass(frozen=True)
class End:
    status: str  # complete or interrupted
    signal: str | None
    end_time: str
    counts: dict[str, int]  # ok, skip, error


@dataclass(frozen=True)
class Unknown:
    """A record of a type this osmeter does not know (a newer probe's):
    readers skip it (schema.md, "Versioning") and say so."""

    kind: str
    raw: dict[str, Any]


Record = Union[Meta, Progress, Samples, Result, Skip, Error, Counters, Profile, End, Unknown]


def _clock(f: _Fields) -> Clock:
    return Clock(
        source=f.text("source"),
        forced=f.flag("forced"),
        hz=f.number("hz"),
        tick_ns=f.number("tick_ns"),
        resolution_ns=f.number("resolution_ns"),
        overhead_ns=f.number("overhead_ns"),
        invariant=f.opt_flag("invariant"),
        calibration_ns=f.number("calibration_ns"),
    )


def _meta(f: _Fields, raw: dict[str, Any]) -> Meta:
    schema = check_schema_version(f.value("schema"), "meta")
    return Meta(
        schema=schema,
        probe_version=f.text("probe_version"),
        command=f.text("command"),
        suite=f.opt_text("suite"),
        start_time=f.text("start_time"),
        clock=_clock(f.sub("clock")),
        cpu=f.integer("cpu"),
        cpu_choice=f.text("cpu_choice"),
        fifo=f.mapping("fifo"),
        mlock=f.mapping("mlock"),
        budget=f.mapping("budget"),
        build=f.mapping("build"),
        machine=f.mapping("machine"),
        raw=raw,
    )


def _progress(f: _Fields, raw: dict[str, Any]) -> Progress:
    return Progress(
        index=f.integer("index", 0),
        total=f.integer("total", 0),
        bench=f.text("bench"),
        params=f.mapping("params"),
        lebench_row=f.later_text("lebench_row"),
    )


def _samples(f: _Fields, raw: dict[str, Any]) -> Samples:
    return Samples(
        bench=f.text("bench"),
        params=f.mapping("params"),
        unit=f.text("unit"),
        batch=f.integer("batch", 1),
        values=f.numbers("values"),
    )


def _result(f: _Fields, raw: dict[str, Any]) -> Result:
    return Result(
        bench=f.text("bench"),
        params=f.mapping("params"),
        unit=f.text("unit"),
        n=f.integer("n", 0),
        min=f.number("min"),
        median=f.number("median"),
        mean=f.number("mean"),
        batch=f.integer("batch", 1),
        cpu=f.integer("cpu"),
        placement=f.opt_text("placement"),
        elapsed_s=f.number("elapsed_s"),
        stop_reason=f.text("stop_reason"),
        ref_cycles=f.opt_number("ref_cycles"),
        extra=f.mapping("extra"),
        raw=raw,
        lebench_row=f.later_text("lebench_row"),
        rse=f.later_number("rse"),
        flags=f.later_texts("flags"),
    )


def _skip(f: _Fields, raw: dict[str, Any]) -> Skip:
    return Skip(
        bench=f.text("bench"),
        params=f.mapping("params"),
        reason=f.text("reason"),
        raw=raw,
        lebench_row=f.later_text("lebench_row"),
    )


def _error(f: _Fields, raw: dict[str, Any]) -> Error:
    return Error(
        bench=f.text("bench"),
        params=f.mapping("params"),
        message=f.text("message"),
        raw=raw,
        lebench_row=f.later_text("lebench_row"),
    )


def _counters(f: _Fields, raw: dict[str, Any]) -> Counters:
    return Counters(bench=f.text("bench"), params=f.mapping("params"), raw=raw)


PROFILE_STATUSES = ("ok", "unsupported", "empty")


def _profile(f: _Fields, raw: dict[str, Any]) -> Profile:
    f.text("status", PROFILE_STATUSES)
    f.text("mode", ("sample", "function"))
    f.text("weight_unit", ("samples", "ns"))
    stacks = f.value("stacks")
    if not isinstance(stacks, list):
        raise RecordError("profile.stacks must be a list of [stack, weight]")
    for i, item in enumerate(stacks):
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str) or not item[0]
                or not isinstance(item[1], int) or isinstance(item[1], bool) or item[1] <= 0):
            raise RecordError(f"profile.stacks[{i}] must be [a non-empty folded stack, a positive integer]")
    calls = raw.get("calls")
    if calls is not None and not (isinstance(calls, dict) and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in calls.values())):
        raise RecordError("profile.calls must be null or an object of counts")
    return Profile(bench=f.text("bench"), params=f.mapping("params"), raw=raw)


def _end(f: _Fields, raw: dict[str, Any]) -> End:
    c = f.sub("counts")
    return End(
        status=f.text("status", END_STATUSES),
        signal=f.opt_text("signal"),
        end_time=f.text("end_time"),
        counts={"ok": c.integer("ok", 0), "skip": c.integer("skip", 0), "error": c.integer("error", 0)},
    )


_PARSERS: dict[str, Callable[[_Fields, dict[str, Any]], Record]] = {
    "meta": _meta,
    "progress": _progress,
    "samples": _samples,
    "result": _result,
    "skip": _skip,
    "error": _error,
    "counters": _counters,
    "profile": _profile,
    "end": _end,
}

RECORD_TYPES = tuple(_PARSERS)


def _reject_constant(name: str) -> Any:
    raise RecordError(f"{name} is not valid JSON (the probe writes NaN and infinities as null)")


class _LongInteger:
    """An integer literal longer than any 64-bit integer, kept unconverted
    (int() of thousands of digits is slow, and refused past 4300) until
    check_values() refuses it with the field's name."""

    def __init__(self, text: str) -> None:
        self.text = text


def _parse_int(text: str) -> Any:
    return _LongInteger(text) if len(text.lstrip("-")) > 19 else int(text)


def _where(path: str) -> str:
    return f"'{path}'" if path else "the record"


def check_values(value: Any, path: str = "", depth: int = 0) -> None:
    """Refuse what later code cannot handle: out-of-range numbers, deep
    nesting, lone surrogates. `path` names the field (values[3], params.size)."""
    if isinstance(value, str):
        _check_text(value, path)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not -MAX_INT - 1 <= value <= MAX_INT:
            raise RecordError(f"{_where(path)}: the integer {value} is out of range (a signed 64-bit integer)")
    elif isinstance(value, _LongInteger):
        shown = value.text if len(value.text) <= 24 else value.text[:20] + "..."
        raise RecordError(f"{_where(path)}: the integer {shown} ({len(value.text.lstrip('-'))} digits) is out of "
                          "range (a signed 64-bit integer)")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise RecordError(f"{_where(path)}: a number too large for a double (read as {value!r}); the probe "
                              "writes NaN and infinities as null")
        if not abs(value) <= MAX_MAGNITUDE:
            raise RecordError(f"{_where(path)}: the number {value!r} is out of range (at most {MAX_MAGNITUDE:g} "
                              "in magnitude)")
    elif isinstance(value, (list, dict)):
        if depth >= MAX_DEPTH:
            raise RecordError(f"{_where(path)}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, list):
            if value and all(type(x) is float for x in value):  # samples: the common, long case
                bad = next((i for i, x in enumerate(value) if not abs(x) <= MAX_MAGNITUDE), None)  # NaN too
                if bad is not None:
                    check_values(value[bad], f"{path}[{bad}]", depth + 1)
                return
            for i, x in enumerate(value):
                check_values(x, f"{path}[{i}]", depth + 1)
        else:
            for k, x in value.items():
                _check_text(k, f"{path} key")
                check_values(x, f"{path}.{k}" if path else k, depth + 1)


def _check_text(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise RecordError(f"{_where(path)}: a string holds a lone UTF-16 surrogate "
                          f"({text[e.start]!r}), which is not text") from None


def _json_error(text: str, e: json.JSONDecodeError) -> str:
    """json's complaint, with the column and the text just before it (which
    names the key) shown safely, and the character at fault if it is a control."""
    what = e.msg.removesuffix(" at")  # "Invalid control character at": json appends the position itself
    if e.pos < len(text) and ord(text[e.pos]) < 0x20:
        what = f"{what} U+{ord(text[e.pos]):04X} (the probe escapes control characters in strings)"
    before = text[max(0, e.pos - 40):e.pos]
    shown = json.dumps(before, ensure_ascii=True)[1:-1]
    return f"not valid JSON ({what}, at column {e.colno}, after \"{'...' if e.pos > 40 else ''}{shown}\")"


def loads_json(text: str) -> Any:
    """Strict JSON within the reader limits: NaN/Infinity literals, numbers
    out of range, deep nesting and lone surrogates are refused."""
    try:
        obj = json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int)
    except json.JSONDecodeError as e:
        raise RecordError(_json_error(text, e)) from None
    except RecursionError:
        raise RecordError(f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as e:  # the int-digits limit, in case a parse hook is bypassed
        raise RecordError(f"not a valid record ({e})") from None
    check_values(obj)
    return obj


def parse_record(obj: Any) -> Record:
    """Validate one decoded JSON object as a record."""
    if not isinstance(obj, dict):
        raise RecordError(f"a record must be a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    if kind is None:
        raise RecordError("missing key 'type'")
    if not isinstance(kind, str) or not kind:
        raise RecordError(f"'type' must be a non-empty string, got {json.dumps(kind)}")
    parser = _PARSERS.get(kind)
    if parser is None:
        return Unknown(kind, obj)  # a newer probe's record: skipped (schema.md, "Versioning")
    return parser(_Fields(obj, kind), obj)


def parse_line(line: str) -> Record:
    """Parse one JSON Lines line (trailing newline allowed) into a record."""
    if len(line) > MAX_LINE_BYTES:
        raise RecordError(f"the line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB")
    text = line.strip(" \t\r\n")
    if not text:
        raise RecordError("empty line")
    return parse_record(loads_json(text))


def describe_unknown(record: Unknown) -> str:
    """The warning for a skipped record."""
    return (f"skipped a record of unknown type {json.dumps(record.kind, ensure_ascii=False)[:80]} "
            f"(a newer probe's?); known: {', '.join(RECORD_TYPES)}")


def canonical_params(params: Mapping[str, Any]) -> str:
    """The canonical text of a parameter set: sorted keys, no spaces."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _param_text(value: Any) -> str:
    if isinstance(value, str):
        return value if value and not any(c.isspace() or c == '"' for c in value) else json.dumps(value)
    return json.dumps(value) if isinstance(value, (bool, type(None), list, dict)) else str(value)


def format_params(params: Mapping[str, Any]) -> str:
    """Parameters for people: `args=3 size=4096 path=""`, sorted by key."""
    return " ".join(f"{k}={_param_text(params[k])}" for k in sorted(params))


def describe_instance(bench: str, params: Mapping[str, Any]) -> str:
    """One benchmark instance for people: `cpu.call args=3`."""
    text = format_params(params)
    return f"{bench} {text}" if text else bench
