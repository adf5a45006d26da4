"""What differs between runs: their facts (suite, options, clock, CPU
choice, the machine description), flattened, and the ones whose values
differ, for compare's "what differs" and compare --by's sysinfo diff."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .causes import plausibility
from .sysinfo import format_value


# Per-run facts that always differ and explain nothing, or are measurements
# themselves (the clock's calibrated rate and overhead).
_IGNORED = frozenset(
    {
        "option.label",
        "option.suite",
        "option.file",
        "option.profile",  # probe_command says it (run / hotspots), for imported and fleet runs too
        "option.profile_frequency",
        "clock.hz",
        "clock.tick_ns",
        "clock.resolution_ns",
        "clock.overhead_ns",
        "clock.calibration_ns",
    }
)
LIST_DIFF_AT = 8  # lists longer than this are shown as what was added/removed


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """Objects one level down become `key.sub`; everything else stays whole."""
    if isinstance(value, dict) and value and not prefix.count("."):
        for k in sorted(value):
            _flatten(f"{prefix}.{k}", value[k], out)
    else:
        out[prefix] = value


def describe_run(run: Any) -> dict[str, Any]:
    """The facts of a run (a model.RunInfo) that may explain a difference, flat."""
    facts: dict[str, Any] = {
        "suite": run.suite,
        "status": run.status,
        "osmeter_version": run.osmeter_version,
        "probe_version": run.probe_version,
    }
    for key in sorted(run.params):
        facts[f"option.{key}"] = run.params[key]
    for key in ("clock", "budget", "fifo", "mlock"):
        if isinstance(run.meta.get(key), dict):
            _flatten(key, run.meta[key], facts)
    for key in ("cpu", "cpu_choice"):
        if key in run.meta:
            facts[key] = run.meta[key]
    if "command" in run.meta:  # run, or hotspots: measured while sampled (run --profile)
        facts["probe_command"] = run.meta["command"]
    facts.update(machine_facts(run.machine))
    return {k: v for k, v in facts.items() if k not in _IGNORED}


def machine_facts(machine: Mapping[str, Any]) -> dict[str, Any]:
    """The machine description (`osmeter sysinfo`) flat, as describe_run has it."""
    facts: dict[str, Any] = {}
    for key in sorted(machine):
        _flatten(key, machine[key], facts)
    return facts


@dataclass(frozen=True)
class Difference:
    key: str
    values: tuple[str, ...]  # one per run, baseline first, as text ("-" when missing)


def _list_delta(base: list[Any], value: list[Any]) -> str:
    added = [str(v) for v in value if v not in base]
    removed = [str(v) for v in base if v not in value]
    parts = [f"+{v}" for v in added] + [f"-{v}" for v in removed]
    return " ".join(parts) if parts else "same items, other order"


def run_differences(runs: Sequence[Any]) -> list[Difference]:
    """Every fact whose value is not the same in all runs (baseline first)."""
    return fact_differences([describe_run(r) for r in runs])


def fact_differences(described: Sequence[Mapping[str, Any]]) -> list[Difference]:
    """Every fact whose value is not the same in all these flat descriptions (baseline first).

    Ordered by plausibility (osmeter.causes): the facts that change kernel
    costs first (the kernel, audit, seccomp, mitigations, THP, ...), in the
    order of RULES, then the others in the order they were met.
    Long lists (CPU flags) are shown for the non-baseline runs as the items
    added (+) and removed (-) against the baseline.
    """
    keys: list[str] = []
    for facts in described:
        keys.extend(k for k in facts if k not in keys)
    out = []
    missing = object()
    for key in keys:
        values = [facts.get(key, missing) for facts in described]
        if all(v == values[0] for v in values[1:]):
            continue
        base = values[0]
        texts = []
        for i, v in enumerate(values):
            if v is missing:
                texts.append("-")
            elif (
                i > 0
                and isinstance(v, list)
                and isinstance(base, list)
                and max(len(v), len(base)) > LIST_DIFF_AT
            ):
                texts.append(_list_delta(base, v))
            elif isinstance(v, list) and len(v) > LIST_DIFF_AT:
                texts.append(f"{len(v)} items")
            else:
                texts.append(format_value(v))
        if all(t == texts[0] for t in texts[1:]):
            continue  # differ only as missing against null: nothing to tell
        out.append(Difference(key, tuple(texts)))
    return sorted(out, key=lambda d: plausibility(d.key))  # what plausibly changes costs first (causes.RULES)
