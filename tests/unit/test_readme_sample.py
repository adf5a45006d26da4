"""The README's sample output is a real run of its quick-start command:
its instance counts are the quick suite's as the probe defines it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_sample_counts_match_the_quick_suite(probe: str) -> None:
    doc = json.loads(subprocess.run([probe, "list", "--json", "--all"], capture_output=True, text=True,
                                    check=True, timeout=60).stdout)
    instances = sum(max(1, len(b["sweep"])) for b in doc["benchmarks"] if "quick" in b["suites"])
    readme = (ROOT / "README.md").read_text()
    sample = readme[readme.index("$ osmeter run --suite quick"):]
    sample = sample[: sample.index("```")]
    progress = re.search(r"^\[1/(\d+)\] ", sample, re.M)
    assert progress and int(progress.group(1)) == instances
    counts = re.search(r"; (\d+) ok, (\d+) skipped, (\d+) failed", sample)
    assert counts and sum(int(c) for c in counts.groups()) == instances
    # The table has the columns osmeter prints today.
    header = next(line for line in sample.splitlines() if line.startswith("benchmark "))
    assert header.split()[:2] == ["benchmark", "median"] and header.split()[-1] == "flags"
    assert "headline (the figures people quote" in sample and "IQR %" in sample
    assert max(len(line) for line in sample.splitlines()) <= 100  # COLUMNS=100, as a pipe gets it
