"""The HTML comparison of two runs (report/compare_narrow.py): its heatmap
had one column, alone under a rotated header with the page's width blank
beside it. Now each row reads left to right: the instance (left aligned),
both medians in their unit's step, the change cell, the ratio as a bar with
its 95 % interval."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from ..synthetic import add_run, noisy
from .test_report import Page

ROW = re.compile(r'<tr><th class="bench mono" style="text-align:left;white-space:normal"[^>]*>(?P<name>[^<]+)</th>'
                 r'<td class="num">(?P<base>[^<]+)</td><td class="num">(?P<run>[^<]+)</td>'
                 r'(?P<cell><td class="cell[^"]*"[^>]*>[^<]*(?:<span[^>]*>[^<]*</span>)?</td>)'
                 r'<td class="bar"(?: title="(?P<title>[^"]*)")?>(?P<bar>.*?)</td></tr>')


def _runs(store_path: Path) -> None:
    rng = np.random.default_rng(42)

    def specs(null: float = 1.0) -> list:
        return [("syscall.null", {}, "ns", noisy(rng, 100.0 * null, 2000)),
                ("task.fork", {"touched_mib": 64}, "ns", noisy(rng, 2.654e6, 400)),
                ("mem.bandwidth_read", {"size": 67108864}, "bytes_per_s", noisy(rng, 1.2e10, 500))]

    add_run(store_path, specs(), label="base")
    add_run(store_path, specs(null=1.5), label="new")
    add_run(store_path, specs(), label="third")


def _bar_px(bar: str) -> tuple[float, float, float, float]:
    """The bar's left and width, the whisker's left and width, in px."""
    boxes = re.findall(r"left:([\d.]+)px;width:([\d.]+)px", bar)
    (bl, bw), (wl, ww) = [(float(a), float(b)) for a, b in boxes]
    return bl, bw, wl, ww


def test_two_runs_get_a_table_of_medians_changes_and_bars(cli, store_path: Path, tmp_path: Path) -> None:
    _runs(store_path)
    out = tmp_path / "two.html"
    r = cli("compare", "1", "2", "-o", str(out))
    assert r.code == 0, r.err
    text = out.read_text()
    page = Page(text)
    assert "heatmap" in page.ids() and 'class="heatmap narrow"' in text
    assert '<th class="run"' not in text  # no rotated column header
    head = re.search(r'<table class="heatmap narrow".*?</thead>', text, re.S).group(0)
    assert re.findall(r"<th(?:\s[^>]*)?>([^<]*)", head) == ["instance", "baseline #1", "#2 new", "change %",
                                                          "ratio and its 95 % CI"]
    rows = {m["name"]: m for m in ROW.finditer(text)}
    assert set(rows) == {"syscall.null", "task.fork touched_mib=64", "mem.bandwidth_read size=67108864"}
    assert re.fullmatch(r"\d{2,3}\.\d+ ns", rows["syscall.null"]["base"])
    assert re.fullmatch(r"1[45]\d\.\d ns", rows["syscall.null"]["run"])
    assert re.fullmatch(r"2\.6\d\d ms", rows["task.fork touched_mib=64"]["base"])  # not 2,654,000 ns
    assert re.fullmatch(r"1[12]\.\d\d GB/s", rows["mem.bandwidth_read size=67108864"]["run"])
    slower = rows["syscall.null"]
    assert "+50" in slower["cell"] and "background:#" in slower["cell"]
    ratio = float(re.search(r"ratio ([\d.]+)", slower["title"])[1])
    left, width, w_left, w_width = _bar_px(slower["bar"])
    assert left == 120 and math.isclose(width, 120 * math.log2(ratio), abs_tol=0.1)  # 1x in the middle, 2x at the end
    assert w_left < left + width < w_left + w_width  # the interval around the ratio
    assert 0 < w_left and w_left + w_width <= 240


def test_three_runs_keep_the_heatmap(cli, store_path: Path, tmp_path: Path) -> None:
    _runs(store_path)
    out = tmp_path / "three.html"
    assert cli("compare", "1", "2", "3", "-o", str(out)).code == 0
    text = out.read_text()
    assert 'class="heatmap narrow"' not in text and text.count('<th class="run"') == 2
