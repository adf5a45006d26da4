"""Predictions (`--expect FILE.yaml`): estimate first, then measure, then explain.

The file maps a benchmark to what you predicted for it (docs/report.md):

    syscall.null:
      value: 100
      unit: ns
      note: ~300 cycles of entry/exit at 3 GHz
    cpu.call:
      - params: {args: 0}
        value: 1.5 ns          # "NUMBER UNIT" in one string works too
      - params: {args: 7}
        value: 3
        unit: ns
    mem.bandwidth_read: 10 GB/s  # the shortest form

A prediction without `params` applies to every parameter set of its
benchmark; with `params`, to the instances whose parameters include those
values. Units convert within their kind (ns, us, ms, s; B/s, KB/s ... GiB/s;
count); a prediction whose unit is of another kind than the measurement is
an error, never a silent ratio.

Everything is checked before anything is rendered: a malformed file is a
UsageError naming the file, the entry and what is wrong. The file is read
within bounds (osmeter.inputs): at most MAX_EXPECT_BYTES, and a pipe or
device that stalls or never ends (/dev/zero, a FIFO with no writer) is given
up on.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import inputs
from ..errors import UsageError
from ..model import BenchResult
from ..records import describe_instance, format_params

# unit as written -> (kind, the stored unit of that kind, factor to the stored unit)
_TIME = {"ns": 1.0, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}
_RATE = {
    "bytes_per_s": 1.0,
    "B/s": 1.0,
    "KB/s": 1e3,
    "MB/s": 1e6,
    "GB/s": 1e9,
    "KiB/s": 2.0**10,
    "MiB/s": 2.0**20,
    "GiB/s": 2.0**30,
}
UNITS: dict[str, tuple[str, float]] = {
    **{u: ("ns", f) for u, f in _TIME.items()},
    **{u: ("bytes_per_s", f) for u, f in _RATE.items()},
    "count": ("count", 1.0),
}
_ENTRY_KEYS = {"value", "unit", "params", "note"}
MAX_EXPECT_BYTES = 4 * inputs.MIB  # predictions for every benchmark of the catalogue take a few KiB
_NUMBER_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Prediction:
    bench: str
    params: Mapping[str, Any]  # {} = every parameter set
    value: float  # as written
    unit: str  # as written
    note: str | None

    @property
    def stored_unit(self) -> str:
        return UNITS[self.unit][0]

    @property
    def stored_value(self) -> float:
        """The prediction in the unit osmeter stores (ns, bytes_per_s, count)."""
        return self.value * UNITS[self.unit][1]

    def matches(self, result: BenchResult) -> bool:
        return result.bench == self.bench and all(
            k in result.params and _same(result.params[k], v) for k, v in self.params.items()
        )

    def describe(self) -> str:
        return describe_instance(self.bench, self.params)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return bool(a == b or str(a) == str(b))


@dataclass(frozen=True)
class PredictionRow:
    """A prediction next to one measured instance."""

    prediction: Prediction
    result: BenchResult | None  # None: not measured in this run

    @property
    def measured(self) -> float | None:
        if self.result is None or self.result.summary is None:
            return None
        return self.result.summary.median

    @property
    def ratio(self) -> float | None:
        """measured / predicted (1.0 = spot on)."""
        m = self.measured
        p = self.prediction.stored_value
        return None if m is None or p == 0 else m / p


# --- reading the file ---------------------------------------------------------


def _loader() -> Any:
    try:
        import yaml
    except ImportError:  # a dependency of osmeter; only a broken install lacks it
        from ..errors import MissingDependencyError

        raise MissingDependencyError("--expect needs PyYAML: pip install PyYAML") from None

    class UniqueKeyLoader(yaml.SafeLoader):
        """SafeLoader that refuses a key given twice (PyYAML keeps the last one silently)."""

    def construct_mapping(loader: Any, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"{key!r} is given twice", key_node.start_mark
                )
            seen[key] = True
        return yaml.SafeLoader.construct_mapping(loader, node, deep)

    UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return yaml, UniqueKeyLoader


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _entry(path: Path, bench: str, where: str, raw: Any) -> Prediction:
    def bad(why: str) -> UsageError:
        return UsageError(f"{path}: {where}: {why}")

    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
        raw = {"value": raw}
    if not isinstance(raw, dict):
        raise bad("expected a mapping with value and unit, a string like '100 ns', or a list of those")
    unknown = sorted(set(map(str, raw)) - _ENTRY_KEYS)
    if unknown:
        raise bad(f"unknown key {', '.join(map(repr, unknown))}; an entry has {', '.join(sorted(_ENTRY_KEYS))}")
    if "value" not in raw:
        raise bad("missing 'value'")
    value, unit = raw["value"], raw.get("unit")
    if isinstance(value, str):
        try:  # YAML 1.1 reads 1e3 (no dot) as a string
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, str):
        m = _NUMBER_UNIT.match(value)
        if not m:
            raise bad(f"value {value!r} is neither a number nor 'NUMBER UNIT'")
        if unit is not None and unit != m.group(2):
            raise bad(f"value {value!r} names unit {m.group(2)!r} but unit says {unit!r}")
        value, unit = float(m.group(1)), m.group(2)
    number = _number(value)
    if number is None:
        raise bad(f"value must be a finite number, not {value!r}")
    if number <= 0:
        raise bad(f"value must be more than 0, not {value!r}")
    if unit is None:
        raise bad("missing 'unit' (e.g. ns, us, GB/s, count)")
    if not isinstance(unit, str) or unit not in UNITS:
        raise bad(f"unknown unit {unit!r}; known: {', '.join(UNITS)}")
    params = raw.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise bad("params must be a mapping of parameter names to values")
    if any(isinstance(v, (dict, list)) for v in params.values()):
        raise bad("params values must be single values")
    note = raw.get("note")
    if note is not None and not isinstance(note, str):
        note = str(note)
    return Prediction(bench, dict(params), number, unit, note)


def parse_expect(text: str, path: Path) -> list[Prediction]:
    yaml, loader = _loader()
    try:
        doc = yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        raise UsageError(f"{path}: not valid YAML: {where}{problem}") from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise UsageError(f"{path}: not an expect file: its lists or mappings are nested too deeply") from None
    if doc is None:
        raise UsageError(f"{path}: the file holds no predictions")
    if not isinstance(doc, dict):
        raise UsageError(f"{path}: expected a mapping of benchmark names to predictions, not a {type(doc).__name__}")
    out: list[Prediction] = []
    for bench, raw in doc.items():
        if not isinstance(bench, str) or not re.fullmatch(r"[a-z0-9_]+\.[a-z0-9_]+", bench):
            raise UsageError(f"{path}: {bench!r} is not a benchmark name (family.operation, e.g. syscall.null)")
        if isinstance(raw, list):
            if not raw:
                raise UsageError(f"{path}: {bench}: an empty list")
            out.extend(_entry(path, bench, f"{bench}[{i}]", item) for i, item in enumerate(raw))
        else:
            out.append(_entry(path, bench, bench, raw))
    return out


def read_expect(path: Path) -> list[Prediction]:
    text = inputs.read_text_bounded(path, MAX_EXPECT_BYTES, what="expect file", idle_s=inputs.IDLE_S,
                                    total_s=inputs.TOTAL_S, too_large_hint="an expect file takes a few KiB")
    return parse_expect(text, path)


def match(predictions: Sequence[Prediction], results: Sequence[BenchResult], path: Path | str = "") -> list[PredictionRow]:
    """Each prediction next to every ok instance it applies to (or alone, when none).

    Raises UsageError when a prediction's unit is of another kind than the
    measured one (ns against bytes/s): the ratio would mean nothing.
    """
    out: list[PredictionRow] = []
    for p in predictions:
        hits = [r for r in results if p.matches(r) and r.status == "ok"]
        for r in hits:
            if r.unit != p.stored_unit:
                where = f"{path}: " if path else ""
                raise UsageError(
                    f"{where}{p.describe()}: predicted in {p.unit} ({p.stored_unit}) but "
                    f"{describe_instance(r.bench, r.params)} is measured in {r.unit}; give the prediction in "
                    f"{', '.join(u for u, (kind, _) in UNITS.items() if kind == r.unit)}"
                )
            out.append(PredictionRow(p, r))
        if not hits:
            out.append(PredictionRow(p, None))
    return out


def label(c: PredictionRow) -> str:
    if c.result is not None:
        return format_params(c.result.params)
    return format_params(c.prediction.params)
