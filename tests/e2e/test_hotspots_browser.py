"""The flame graphs of `osmeter hotspots` in a real browser (headless
Chromium, started as tests/e2e/test_report_browser.py starts it: no request
can leave the machine, and every request the page makes is recorded).

Each SVG must load with no console message, request nothing, and run its
script (which marks the document data-ready="1"); a search and a zoom,
driven by a small script appended to a copy, must change what is shown.
Chromium missing: skipped with the install hint (required in CI)."""
from __future__ import annotations

from pathlib import Path

import pytest

from osmeter.hotspots import flamegraph, folded

from .test_report_browser import browse, chromium  # noqa: F401 (chromium: a fixture)

A = folded.parse_folded("osmeter-probe;_Fork;entry_[k];copy_page_range_[k] 60\n"
                        "osmeter-probe;_Fork;entry_[k];alloc_pages_[k] 30\nosmeter-probe;main 10\n")
B = folded.parse_folded("osmeter-probe;_Fork;entry_[k];copy_page_range_[k] 95\nosmeter-probe;main 5\n")

DRIVE = """
<script><![CDATA[
(function () {
  window.prompt = function () { return "copy_page"; };
  document.getElementById("search").dispatchEvent(new MouseEvent("click"));
  var g = Array.prototype.filter.call(document.querySelectorAll("g.f"),
    function (f) { return f.getAttribute("data-n") === "entry [k]"; })[0];
  g.dispatchEvent(new MouseEvent("click"));
  document.documentElement.setAttribute("data-driven",
    document.getElementById("matched").textContent + "|" + g.querySelector("rect").getAttribute("width"));
})();
]]></script>
</svg>
"""


@pytest.mark.slow
def test_flame_graphs_load_clean_and_run_their_script(chromium: str, tmp_path: Path) -> None:  # noqa: F811
    pages = {"flame.svg": flamegraph.flamegraph_svg(A, "fork", "samples"),
             "diff.svg": flamegraph.diff_flamegraph_svg(A, B, "fork 1 -> 1024")}
    for name, svg in pages.items():
        page = tmp_path / name
        page.write_text(svg)
        dom, console, requests = browse(chromium, page, tmp_path, "--dump-dom")
        assert console == [], (name, console)
        assert requests == [], (name, requests)
        assert 'data-ready="1"' in dom, name


@pytest.mark.slow
def test_search_and_zoom_work(chromium: str, tmp_path: Path) -> None:  # noqa: F811
    svg = flamegraph.flamegraph_svg(A, "fork", "samples").replace("</svg>\n", DRIVE)
    page = tmp_path / "driven.svg"
    page.write_text(svg)
    dom, console, requests = browse(chromium, page, tmp_path, "--dump-dom")
    assert console == [] and requests == []
    # copy_page_range is 60 % of the samples; entry (90 %) zoomed fills the width.
    assert f'data-driven="Matched: 60.0%|{flamegraph.WIDTH}"' in dom, dom[:300]
