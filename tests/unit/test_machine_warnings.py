"""The machine warnings the report added: boost, clocksource, debug build."""

from __future__ import annotations

from osmeter.model import RunInfo
from osmeter.warnings import boost_warning, clocksource_warning, debug_build_warning, profiled_warning


def _run(build: dict) -> RunInfo:
    return RunInfo(1, None, "t", None, "complete", None, "run", "0.1.0", "0.1.0", None, [], {}, {}, {"build": build})


def test_boost() -> None:
    assert boost_warning({}) is None and boost_warning({"cpu_boost": None}) is None
    assert boost_warning({"cpu_boost": False}) is None
    w = boost_warning({"cpu_boost": True})
    assert w is not None and w.code == "cpu-boost" and "no_turbo" in w.advice


def test_clocksource() -> None:
    assert clocksource_warning({"clocksource": "tsc"}) is None
    assert clocksource_warning({"clocksource": "arch_sys_counter"}) is None
    assert clocksource_warning({}) is None
    w = clocksource_warning({"clocksource": "kvm-clock", "available_clocksources": ["kvm-clock", "tsc"]})
    assert w is not None and w.code == "clocksource" and "paravirtual" in w.message and "echo tsc" in w.advice
    w = clocksource_warning({"clocksource": "hpet", "available_clocksources": ["hpet", "acpi_pm"]})
    assert w is not None and "system call" in w.message and "same clocksource" in w.advice


def test_debug_build() -> None:
    assert debug_build_warning(_run({"build_type": "Release", "flags": "-O3 -DNDEBUG"})) is None
    assert debug_build_warning(_run({"build_type": "RelWithDebInfo", "flags": "-O2 -g"})) is None
    assert debug_build_warning(_run({"build_type": "Debug", "flags": "-g"})) is not None
    assert debug_build_warning(_run({"build_type": None, "flags": "-O0 -g"})) is not None


def test_profiled() -> None:
    def run(command: str) -> RunInfo:
        return RunInfo(1, None, "t", None, "complete", None, "run", "0.1.0", "0.1.0", None, [], {}, {},
                       {"command": command})
    assert profiled_warning(run("run")) is None
    w = profiled_warning(run("hotspots"))
    assert w is not None and w.code == "profiled" and "ctxsw" in w.message and "profiled runs only" in w.advice
