"""Ground truth for compare --explain: a change of the machine's state that
is known, measured before and after with `osmeter run --profile`, and what
the explanation must say about it.

- seccomp: the second run under 32 filters that inspect a system call's
  argument (so the kernel's cache of constant verdicts cannot skip them) and
  allow everything: syscall.null is slower, most of the added ns are in
  seccomp's functions and the JIT-compiled filters, and `seccomp_filters:
  0 → 32` is among the causes.
- THP: the system's setting `never`, then `always` (root; put back on every
  way out): the explanation names the setting, and the instances whose
  `thp=0` pins THP off say so and name `thp=2`.

Audit is not here: enabling it slows every task until reboot
(benchmarks/explain_groundtruth.py audit does it, on purpose).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from probe_helpers import optional_tool_missing

import seccomp_wrap

pytestmark = pytest.mark.slow
FILTERS = 32
BUDGET = ["--profile", "--min-time", "0.2", "--max-time", "1"]
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
SRC = Path(__file__).resolve().parents[2] / "src"


def osmeter_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "osmeter", *args]


def subprocess_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC) + (os.pathsep + os.environ["PYTHONPATH"]
                                                    if os.environ.get("PYTHONPATH") else "")}


def osmeter(*args: str, wrap: int = 0) -> str:
    argv = osmeter_command(*args)
    if wrap:
        argv = seccomp_wrap.command(argv, wrap)
    p = subprocess.run(argv, capture_output=True, text=True, env=subprocess_env(), timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout


def explained(a: str, b: str) -> dict[str, Any]:
    return json.loads(osmeter("compare", a, b, "--explain", "--json"))["explain"]


def seccomp_related(name: str) -> bool:
    """seccomp's own functions, and the filters' JIT-compiled classic BPF (not in kallsyms: named as outside text)."""
    return "seccomp" in name or name.startswith("bpf_prog_") or name == "[kernel outside text]"


def test_seccomp_filters_are_named_with_the_functions_they_cost(probe: str, store_path: Path) -> None:
    why = seccomp_wrap.unavailable()
    if why:
        optional_tool_missing(why)
    names = ["syscall.null", "syscall.getuid", "file.read", "--param", "size=4096"]
    osmeter("run", *names, *BUDGET, "--label", "plain")
    osmeter("run", *names, *BUDGET, "--label", "filtered", wrap=FILTERS)
    doc = explained("plain", "filtered")
    null = next(e for e in doc["explanations"] if e["bench"] == "syscall.null")
    assert null["delta_ns"] > 0 and null["ratio_ci"][0] > 1
    top = null["functions"][0]
    assert seccomp_related(top["function"].removesuffix("_[k]")), null["functions"]
    added = sum(f["self_delta_ns"] for f in null["functions"] if seccomp_related(f["function"].removesuffix("_[k]")))
    assert added > 0.5 * null["delta_ns"], (added, null["delta_ns"], null["functions"])
    assert not any(f["function"].startswith("_einittext") for f in null["functions"])  # named, not a neighbour
    cause = next(c for c in null["causes"] if c["key"] == "seccomp_filters")
    assert (cause["baseline"], cause["run"], cause["rule"]) == ("0", str(FILTERS), "seccomp")
    assert f"seccomp_filters: 0 → {FILTERS}" in null["summary"]


@pytest.fixture
def thp_mode() -> Iterator[Any]:
    """Sets the system's THP mode; the one found is put back on every way out."""
    if os.geteuid() != 0 or not THP.exists():
        optional_tool_missing("the THP ground truth needs root and a kernel with transparent huge pages")
    text = THP.read_text()
    before = text[text.index("[") + 1:text.index("]")]
    try:
        yield lambda mode: THP.write_text(mode)
    finally:
        THP.write_text(before)
        assert f"[{before}]" in THP.read_text()


def test_thp_setting_is_named_and_the_pinned_instances_say_so(probe: str, store_path: Path,
                                                              thp_mode: Any) -> None:
    names = ["task.fork", "mem.fault_anon", "--param", "touched_mib=64", "--param", "thp=0,1,2"]
    thp_mode("never")
    osmeter("run", *names, *BUDGET, "--label", "never")
    thp_mode("always")
    osmeter("run", *names, *BUDGET, "--label", "always")
    doc = explained("never", "always")
    assert any(d["key"] == "thp_enabled" and (d["baseline"], d["run"]) == ("never", "always")
               for d in doc["differences"])
    system = next(e for e in doc["explanations"] if e["bench"] == "mem.fault_anon" and e["params"]["thp"] == 2)
    assert system["ratio"] < 1 and any(c["key"] == "thp_enabled" for c in system["causes"])  # huge pages: faster
    # mem.fault_anon thp=0's note: in the report's list when its change is not
    # significant (named there), in its own explanation's when noise makes it so.
    pinned = [p for p in doc["pinned"] if p.startswith("mem.fault_anon") and "thp=0" in p]
    pinned += [p for e in doc["explanations"] if e["bench"] == "mem.fault_anon" and e["params"]["thp"] == 0
               for p in e["pinned"]]
    assert any("thp=0" in p and "use thp=2" in p for p in pinned), (doc["pinned"], doc["explanations"])
    assert any(s.startswith("mem.fault_anon") and "thp=1" in s and "skipped in run" in s for s in doc["skipped"])
