"""Text output a reader can take in: `osmeter list` and `osmeter sysinfo` fit
the terminal, sizes read in KiB/MiB/GiB, missing values are '-'."""

from __future__ import annotations

import json

import pytest

from osmeter.commands.sysinfo import render_machine
from osmeter.fmt import human_bytes, render_table
from osmeter.sysinfo import parse_sysinfo

from ..conftest import DATA

FLAGS = [f"flag_{i}" for i in range(120)]


@pytest.fixture
def real_probe(probe: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OSMETER_PROBE", probe)
    return probe


@pytest.mark.parametrize("columns", [100, 80])
def test_list_fits_the_terminal(cli, real_probe: str, monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    r = cli("list")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert max(len(line) for line in lines) <= columns, max(lines, key=len)
    # Nothing is lost: every benchmark, its description and each parameter on a line of its own.
    doc = json.loads(cli("list", "--json").out)
    starts = {line.split()[0] for line in lines if line and not line.startswith(" ")}
    assert {b["name"] for b in doc["benchmarks"]} <= starts
    last_column = lines[2].rindex(" -") + 1  # the dashes under the headings
    assert any(line[last_column:] == "args=0 [0..7]" for line in lines)
    words = " ".join(lines).split()
    assert all(w in words for w in doc["benchmarks"][0]["description"].split())


def test_list_wide_and_piped_keep_one_line_per_benchmark(cli, real_probe: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    wide = cli("list", "--wide").out.splitlines()
    doc = json.loads(cli("list", "--json").out)
    assert len(wide) == 2 + len(doc["benchmarks"])
    assert max(len(line) for line in wide) > 100
    monkeypatch.delenv("COLUMNS")
    assert cli("list").out.splitlines() == wide  # not a terminal: greppable lines


def machine(**extra: object) -> "object":
    doc = json.loads((DATA / "sysinfo.json").read_text())
    doc["fields"] += [{"key": k, "value": v, "help": ""} for k, v in extra.items()]
    return parse_sysinfo(doc)


CACHES = [{"level": 1, "type": "Data", "size_bytes": 32768, "line_bytes": 64, "ways": 8, "shared_cpu_list": "0"},
          {"level": 3, "type": "Unified", "size_bytes": 33554432, "line_bytes": 64, "ways": 16,
           "shared_cpu_list": "0-1"}]


@pytest.mark.parametrize("width", [100, 72])
def test_sysinfo_folds_cpu_flags_and_fits(width: int) -> None:
    info = machine(cpu_flags=FLAGS, cpu_caches=CACHES, isolated_cpus="", mitigations_map={"spectre_v2": "x " * 60})
    text = render_machine(info, explain=True, width=width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width, max(lines, key=len)
    flags_line = next(line for line in lines if line.startswith("cpu_flags"))
    assert "120" in flags_line and "--flags" in flags_line and "flag_7" not in text
    # one cache a line, sizes in binary units
    caches = [line for line in lines if "level=" in line]
    assert len(caches) == 2 and "size_bytes=32 KiB" in caches[0] and "size_bytes=32 MiB" in caches[1]
    assert next(line for line in lines if line.startswith("memory_bytes")).split()[1:] == ["16", "GiB",
                                                                                           "(17179869184)"]
    # missing and empty alike are '-'
    assert next(line for line in lines if line.startswith("isolated_cpus")).split() == ["isolated_cpus", "-"]
    assert next(line for line in lines if line.startswith("virtualization")).split() == ["virtualization", "-"]
    every = render_machine(info, explain=False, width=width, flags=True)
    assert all(f in every.split() for f in FLAGS)
    assert max(len(line) for line in every.splitlines()) <= width


def test_sysinfo_command_fits_columns(cli, real_probe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    for args in (("sysinfo",), ("sysinfo", "--flags", "--explain")):
        r = cli(*args)
        assert r.code == 0, r.err
        assert max(len(line) for line in r.out.splitlines()) <= 100
    assert not any(line.startswith("cpu_flags") and "[" in line for line in r.out.splitlines())


def test_human_bytes() -> None:
    sizes = (512, 1024, 4096, 5184, 40960, 1572864, 4096000, 64 << 20, 3 << 30, 1 << 40, 25276514304)
    assert [human_bytes(n) for n in sizes] == ["512 B", "1 KiB", "4 KiB", "5.062 KiB", "40 KiB", "1536 KiB",
                                               "4000 KiB", "64 MiB", "3 GiB", "1 TiB", "23.54 GiB"]


def test_table_wraps_only_the_columns_it_may() -> None:
    rows = [["a.bench", "word " * 30 + "{one|two|three|four|five|six|seven|eight}"], ["b", ""]]
    text = render_table(["name", "description"], rows, width=40, wrap=(1,))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 40
    assert lines[2].startswith("a.bench  ") and lines[3].startswith(" " * 9)
    assert "".join(line[9:].strip() for line in lines[2:-1]).endswith("{one|two|three|four|five|six|seven|eight}")
    one_line = render_table(["name", "description"], rows)
    assert len(one_line.splitlines()) == 4


def test_runs_shows_a_missing_label_as_a_dash(cli, store_path) -> None:
    from ..conftest import import_fixture

    import_fixture(store_path)  # no label
    row = cli("runs").out.splitlines()[2].split()
    assert row[:2] == ["1", "-"] and len(row) == 10, row


def test_skips_of_one_cause_are_said_once_with_their_instances_under_it() -> None:
    from osmeter.report.text import by_reason

    lines = by_reason([("task.fork thp=1", "THP is off"), ("ctxsw.pipe", "needs a second CPU"),
                       ("mem.fault_anon thp=1", "THP is off")])
    assert lines == ["  THP is off:", "    task.fork thp=1", "    mem.fault_anon thp=1",
                     "  ctxsw.pipe: needs a second CPU"]
    assert sum("THP is off" in line for line in lines) == 1


def test_the_summary_fits_100_columns_without_cutting_a_word() -> None:
    """Issue 28: `COLUMNS=100 osmeter show` of a standard run: no line over 100 characters; a folded
    instance or flag keeps its words whole (`source=monotonic_raw`, `calibration-timeout,`); best goes
    only when the table cannot fit with it."""
    import numpy as np

    from osmeter import stats
    from osmeter.model import BenchResult
    from osmeter.report.text import summary_table

    def r(seq: int, bench: str, params: dict, median: float, flags: tuple = ()) -> BenchResult:
        x = np.random.default_rng(seq).normal(median, median * 0.02, 12000)
        return BenchResult(seq=seq, bench=bench, params=params, status="ok", unit="ns",
                           summary=stats.summary(x), flags=flags)

    calm = [r(0, "cpu.timer_overhead", {"source": "monotonic_raw"}, 30.0), r(1, "syscall.null", {}, 150.0)]
    text = summary_table(calm, width=100)
    assert max(len(line) for line in text.splitlines()) <= 100 and " best " in text.splitlines()[1]
    assert "cpu.timer_overhead source=monotonic_raw " in text  # room enough: one line
    flagged = calm + [r(2, "mem.fault_file_major", {"size": 1 << 30}, 2.5e6,
                        ("calibration-timeout", "precision-unmet", "repetition-failed"))]
    text = summary_table(flagged, width=100)
    words = text.split()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "calibration-timeout," in words and "mem.fault_file_major" in words and "repetition-failed" in words
    assert "  source=monotonic_raw" in text.splitlines()  # folded: whole, on its own line, hung under its name
