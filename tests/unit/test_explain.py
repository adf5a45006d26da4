"""compare --explain on runs whose differences are known: syscall.null made
3x slower in run B, one function new there, audit rules 0 -> 3 and THP
madvise -> always in B's machine description, counters counted in both."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from osmeter import causes
from osmeter.comparing import compare_runs
from osmeter.explain import capture_command, explain, summary_line
from osmeter.recorder import RunContext, RunRecorder
from osmeter.records import parse_line
from osmeter.report import explain_text as ex
from osmeter.report.compare_text import heatmap_file
from osmeter.store import open_store

from ..conftest import DATA

LINES = [json.loads(x) for x in (DATA / "run_x86_64.jsonl").read_text().splitlines()]
SLOWER = 3.0


def counters(bench: str, params: dict[str, Any], faults: int, ops: int, clock_ns: float) -> dict[str, Any]:
    return {"type": "counters", "bench": bench, "params": params, "lebench_row": None, "ops": ops, "kernel": True,
            "kernel_reason": None, "inherit": True, "counters": [
                {"name": "task-clock", "status": "ok", "unit": "ns", "value": clock_ns, "total": clock_ns * ops,
                 "running": 1, "reason": None},
                {"name": "page-faults", "status": "ok", "unit": "count", "value": faults / ops, "total": faults,
                 "running": 1, "reason": None}]}


def profile(bench: str, params: dict[str, Any], stacks: list[list[Any]]) -> dict[str, Any]:
    return {"type": "profile", "bench": bench, "params": params, "lebench_row": None, "status": "ok",
            "reason": None, "mode": "sample", "event": "cpu-clock", "frequency_hz": 999, "weight_unit": "samples",
            "samples": sum(w for _, w in stacks), "lost": 0, "kernel": True, "kernel_reason": None,
            "symbols": {"kernel": "kallsyms"}, "window": {"enabled_s": 1.0, "batches": 10, "left_out": 0},
            "ops": 10_000_000, "stacks": stacks, "calls": None, "notes": []}


BASE_STACKS = [["p;entry_[k];do_syscall_64_[k]", 600], ["p;entry_[k];do_syscall_64_[k];getpid_[k]", 400]]
# B: do_syscall_64's share falls (60 % -> 30 %) while its time rises (27 -> 40.6 ns); audit's is new
SLOW_STACKS = [["p;entry_[k];do_syscall_64_[k]", 300], ["p;entry_[k];do_syscall_64_[k];getpid_[k]", 134],
               ["p;entry_[k];do_syscall_64_[k];__audit_syscall_exit_[k]", 566]]


def run_lines(slow: bool, with_profile: bool = True, profiled_slow: bool = False) -> list[dict[str, Any]]:
    out = []
    for rec in LINES:
        rec = json.loads(json.dumps(rec))
        if rec.get("bench") == "task.fork":
            rec["params"]["thp"] = 0  # pins THP off, whatever the machine's setting
        if rec["type"] == "meta":
            rec["machine"].update({"audit_rules": 3 if slow else 0, "thp_enabled": "always" if slow else "madvise",
                                   "seccomp_filters": 0})
            if slow and profiled_slow:
                rec["command"] = "hotspots"  # run --profile: the probe's hotspots command
        if slow and rec["bench" if "bench" in rec else "type"] == "syscall.null" and rec["type"] in ("samples",
                                                                                                   "result"):
            if rec["type"] == "samples":
                rec["values"] = [v * SLOWER for v in rec["values"]]
            else:
                for k in ("min", "median", "mean"):
                    rec[k] *= SLOWER
        out.append(rec)
        if rec["type"] == "result":
            faults = 3000 if slow and rec["bench"] == "syscall.null" else 1000
            out.append(counters(rec["bench"], rec["params"], faults, 1_000_000, rec["median"]))
            if with_profile and rec["bench"] == "syscall.null":
                out.append(profile(rec["bench"], rec["params"], SLOW_STACKS if slow else BASE_STACKS))
    return out


def stored(store: Any, *runs: list[dict[str, Any]], labels: tuple[str | None, ...] = (None, None)) -> list[int]:
    """Each run's records fed to a recorder; the runs' ids."""
    ids = []
    for records, label in zip(runs, labels):
        recorder = RunRecorder(store, RunContext(label, ["probe"], {}, "run"))
        for rec in records:
            recorder.feed(parse_line(json.dumps(rec)))
        recorder.finish()
        ids.append(recorder.run_id)
    return ids


@pytest.fixture
def two_runs(store_path: Any) -> Any:
    store = open_store(str(store_path), create=True)
    ids = stored(store, run_lines(False), run_lines(True), labels=("base", "slow"))
    yield store, ids
    store.close()


def explained(store: Any, ids: list[int]) -> Any:
    runs = [store.run(str(i)) for i in ids]
    outcome = compare_runs(store, runs, 0.05)
    return outcome, explain(store, outcome, 0.05)


def test_the_slower_syscall_is_explained_in_ns_with_its_function_and_cause(two_runs: Any) -> None:
    store, ids = two_runs
    _, report = explained(store, ids)
    assert [e.comparison.bench for e in report.explanations] == ["syscall.null"]
    e = report.explanations[0]
    base = e.comparison.baseline_median
    assert e.delta_ns == pytest.approx(base * (SLOWER - 1), rel=1e-6)
    assert e.delta_ci[0] <= e.delta_ns <= e.delta_ci[1]
    top = e.functions[0]
    assert top.function == "__audit_syscall_exit_[k]" and top.appeared
    assert top.self_delta_ns == pytest.approx(0.566 * base * SLOWER, rel=1e-6)  # share x median
    syscall = next(f for f in e.functions if f.function == "do_syscall_64_[k]")
    assert syscall.self_share_b < syscall.self_share_a and syscall.self_delta_ns > 0  # less share, more time
    assert top.se_ns == pytest.approx(base * SLOWER * math.sqrt(0.566 * 0.434 / 1000), rel=1e-6)
    keys = [c.key for c in e.causes]
    assert "audit_rules" in keys and "thp_enabled" not in keys  # THP does not touch a system call
    assert [f"{c.values[0]} → {c.values[1]}" for c in e.causes if c.key == "audit_rules"] == ["0 → 3"]
    faults = next(c for c in e.counters if c.name == "page-faults")
    assert faults.baseline == pytest.approx(0.001) and faults.value == pytest.approx(0.003) and faults.significant
    assert next(c for c in e.counters if c.name == "task-clock").significant is None  # no spread known
    line = summary_line(e)
    assert line.startswith("syscall.null +200 % (") and "in __audit_syscall_exit (new)" in line
    assert "audit_rules: 0 → 3" in line


def test_the_plausible_differences_come_first(two_runs: Any) -> None:
    store, ids = two_runs
    _, report = explained(store, ids)
    keys = [d.key for d in report.differences]
    assert keys.index("audit_rules") < keys.index("thp_enabled")
    assert keys == sorted(keys, key=causes.plausibility)


def test_profiling_one_side_is_no_cause_of_a_system_calls_change(store_path: Any) -> None:
    store = open_store(str(store_path), create=True)
    try:
        ids = stored(store, run_lines(False, profiled_slow=True), run_lines(True, profiled_slow=True))
        _, report = explained(store, ids)
        assert any(d.key == "probe_command" and d.values == ("run", "hotspots") for d in report.differences)
        (e,) = report.explanations
        assert [c.key for c in e.causes][:1] == ["audit_rules"] and "probe_command" not in [c.key for c in e.causes]
        assert "probe_command" not in summary_line(e)
    finally:
        store.close()


def test_a_side_without_a_profile_names_the_command_that_captures_it(store_path: Any) -> None:
    store = open_store(str(store_path), create=True)
    try:
        ids = stored(store, run_lines(False, with_profile=False), run_lines(True, with_profile=True))
        _, report = explained(store, ids)
        e = report.explanations[0]
        assert e.functions == [] and f"no profile in run {ids[0]}" in e.profile_missing
        assert "`osmeter run syscall.null --profile`" in e.profile_missing
    finally:
        store.close()


def test_text_json_and_html(two_runs: Any) -> None:
    store, ids = two_runs
    outcome, report = explained(store, ids)
    text = ex.render_text(report)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "summary:\n  syscall.null +200 %" in text and "__audit_syscall_exit [k] (new)" in text
    assert "e+" not in text and "e-0" not in text
    doc = json.loads(json.dumps(ex.document(report), allow_nan=False))
    (e,) = doc["explanations"]
    assert e["bench"] == "syscall.null" and e["functions"][0]["appeared"] is True
    audit = next(c for c in e["causes"] if c["key"] == "audit_rules")
    assert (audit["baseline"], audit["run"], audit["rule"]) == ("0", "3", "audit")
    assert e["delta_ns"] > 0 and e["functions"][0]["self_delta_ns"] > 0 and e["counters"][1]["significant"]
    page = heatmap_file(outcome, 0.05, "html", explained=report)
    anchor = ex.anchor(report.explanations[0].comparison)
    assert f'id="{anchor}"' in page and f'href="#{anchor}"' in page and "<h2>Explanations</h2>" in page


def test_an_unchanged_instance_pinned_against_a_differing_fact_says_so(two_runs: Any) -> None:
    store, ids = two_runs
    _, report = explained(store, ids)
    (line,) = report.pinned
    assert line.startswith("task.fork ") and "no significant change" in line
    assert "thp_enabled differs (madvise → always)" in line and "use thp=2" in line
    assert "unchanged, and pinned by their own parameters" in ex.render_text(report)


def test_a_pinned_parameter_is_named_with_what_to_use_instead() -> None:
    thp = next(r for r in causes.RULES if r.name == "THP")
    (does, instead), = causes.pinned(thp, {"size": 16 << 20, "thp": 0})
    assert "MADV_NOHUGEPAGE" in does and instead.startswith("thp=2")
    assert causes.pinned(thp, {"thp": 2}) == [] and causes.pinned(thp, {"size": 1}) == []


def test_rules_touch_what_they_say() -> None:
    audit = next(r for r in causes.RULES if r.name == "audit")
    assert audit.touches_bench("syscall.null") and audit.touches_bench("file.read")
    assert not audit.touches_bench("cpu.call") and not audit.touches_bench("mem.latency")
    assert [r.name for r in causes.rules_for_key("mitigations.spectre_v2")] == ["mitigations"]
    assert causes.plausibility("hostname") == len(causes.RULES)


def test_capture_command_names_the_instance() -> None:
    class C:
        bench = "mem.fault_anon"
        params = {"size": 16777216, "thp": 0, "dir": ""}
    assert capture_command(C, "--profile") == (  # type: ignore[arg-type]
        "osmeter run mem.fault_anon --param size=16777216 --param thp=0 --profile")
