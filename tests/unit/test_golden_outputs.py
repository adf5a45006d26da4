"""What people read, byte for byte: `show`, `report --format md/txt`,
`compare` (table and JSON) and `compare --by` of fixed stored runs against
files under tests/data/golden. A refactor must leave them as they are; a
change made on purpose (the wording of a table, a column) regenerates them:

    OSMETER_UPDATE_GOLDEN=1 python -m pytest tests/unit/test_golden_outputs.py

and the diff of tests/data/golden shows, in review, what users will see
differently."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ..conftest import DATA, import_fixture
from ..synthetic import MACHINE, add_run, noisy

GOLDEN = DATA / "golden"
UPDATE = "OSMETER_UPDATE_GOLDEN"

COMMANDS = {
    "show-1.txt": ("show", "1"),
    "show-2.txt": ("show", "2"),
    "show-4.txt": ("show", "4"),
    "show-1-lebench.txt": ("show", "1", "--names", "lebench"),
    "report-1-2.md": ("report", "1", "2", "--format", "md"),
    "report-4.md": ("report", "4", "--format", "md"),
    "report-1.txt": ("report", "1", "--format", "txt"),
    "compare-1-2.txt": ("compare", "1", "2"),
    "compare-1-2-3.txt": ("compare", "1", "2", "3"),
    "compare-1-3-lebench.txt": ("compare", "1", "3", "--names", "lebench"),
    "compare-1-2.json": ("compare", "1", "2", "--json"),
    "compare-by-label.txt": ("compare", "1", "2", "3", "--by", "label"),
}


@pytest.fixture
def stored(store_path: Path, probe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs 1-3: synthetic, seeded (run 2: syscall.null +10 % on another kernel; run 3: bandwidth -20 %,
    a skip); run 4: the x86-64 probe file imported. The real probe is named, so `--names lebench`
    reads its LEBench table wherever the tests run (an editable install finds no probe by itself)."""
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("OSMETER_PROBE", probe)
    rng = np.random.default_rng(26)

    def specs(null: float = 1.0, bw: float = 1.0) -> list:
        return [
            ("syscall.null", {}, "ns", noisy(rng, 100.0 * null, 2000)),
            ("cpu.call", {"args": 0}, "ns", noisy(rng, 1.5, 3000)),
            ("task.fork", {"touched_mib": 64}, "ns", noisy(rng, 2.65e6, 200, cv=0.1)),
            ("mem.bandwidth_read", {"size": 67108864}, "bytes_per_s", noisy(rng, 1.2e10 * bw, 500)),
        ]

    add_run(store_path, specs(), label="base", skips=[("file.read_cold", {"size": 4096}, "needs root")])
    add_run(store_path, specs(null=1.10), label="newkernel", machine=dict(MACHINE, kernel_release="6.9.0-synth"))
    add_run(store_path, specs(bw=0.80), label="slowmem")
    import_fixture(store_path, label="imported")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_output_is_the_golden_file(cli, stored, name: str) -> None:
    r = cli(*COMMANDS[name])
    assert r.code == 0, r.err
    path = GOLDEN / name
    if os.environ.get(UPDATE) == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(r.out, encoding="utf-8")
    assert path.is_file(), f"{path} is missing: run with {UPDATE}=1 to write it, then review and commit it"
    assert r.out == path.read_text(encoding="utf-8"), (
        f"`osmeter {' '.join(COMMANDS[name])}` differs from {path.relative_to(DATA.parent.parent)}; "
        f"if on purpose, regenerate with {UPDATE}=1 and review the diff")
