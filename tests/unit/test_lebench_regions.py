"""benchmarks/lebench_regions.py and its C program: it builds, runs the rows it
is asked for with a tiny budget, prints LEBench's variant and osmeter's per
row with figures in time units, leaves no test file behind, and refuses a row
it does not know, naming the rows it has. Structure only: no timing is
asserted (the figures explain docs/lebench.md, they are not a check)."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from ..conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "lebench_regions.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lebench_regions", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def regions() -> ModuleType:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.fail("no C compiler: install gcc (the probe needs it too)")
    return _load()


def test_rows_run_with_lebenchs_and_osmeters_variants(regions, tmp_path: Path, capsys) -> None:
    keep = tmp_path / "keep"
    assert regions.main(["--rounds", "1", "--per", "2", "--keep", str(keep), "write4k", "epoll10"]) == 0
    out = capsys.readouterr().out
    for row in ("small write", "epoll"):
        block = out.split(f"\n{row}  (ratios against lebench)", 1)[1].split("\n\n", 1)[0]
        names = [line.split()[0] for line in block.splitlines()[2:]]
        assert names[:2] == ["lebench", "osmeter"], block
        # k-best and median in a time unit, the reference's ratio 1.00
        ref = block.splitlines()[2]
        assert re.search(r"\d+(\.\d+)? (ns|µs|ms) +\d+(\.\d+)? (ns|µs|ms) +1\.00 +1\.00 ", ref), ref
    assert "lebench+O0fill" in out and "(its fill took " in out
    assert [p.name for p in keep.iterdir() if p.is_file() and not p.name.startswith("lebench_regions")] == []


def test_an_unknown_row_is_refused_naming_the_rows(regions, capsys) -> None:
    assert regions.main(["--rounds", "1", "--per", "1", "nosuch"]) == 1
    err = capsys.readouterr().err
    assert "no row nosuch; rows: write4k" in err and "epoll1000" in err
