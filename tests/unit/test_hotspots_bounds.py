"""Issue 27, defect 5: what `osmeter hotspots` reads is bounded, and every
figure made of it is linear in its size.

- a deep stack: parsing, the tables, the depth view, the diff and both
  flame graphs take memory in proportion to the input (they took memory
  quadratic in the depth: 4.1 GB for one stack of 32 000 frames);
- a weight is an integer of at most 2**63-1, and so is a profile's sum: a
  longer one is an error naming the file and the line, never a traceback;
- a frame name may hold ESC, NUL or any control: the SVG files still parse
  as XML, and the tables show nothing that could drive a terminal.
"""
from __future__ import annotations

import json
import tracemalloc
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from osmeter.errors import UsageError
from osmeter.hotspots import flamegraph, folded
from osmeter.hotspots.sources import load
from osmeter.report import hotspots as report_hs

BIG = "9" * 5000
MAX = 2**63 - 1
HOSTILE = "evil\x1b[31m\x1b]0:title\x07\x00nul\x01\x08\x0b\x0c\x1f\ufffe\x7f\x9b2J\u202eend"


def deep(n: int, kernel: bool = True) -> str:
    """One stack of n frames under the process, and a short one."""
    return "p;" + ";".join(f"fn{i}{'_[k]' if kernel else ''}" for i in range(n)) + " 3\np;main 1\n"


def everything(a_text: str, b_text: str) -> None:
    """What `hotspots --show` and `--diff` compute and write, all of it."""
    a, b = folded.parse_folded(a_text, "a"), folded.parse_folded(b_text, "b")
    report_hs.render_top(folded.function_table(b), 20, "samples")
    report_hs.render_depth(folded.depth_view(b), 5)
    report_hs.render_depth(folded.depth_view(b, kernel_only=False), 5)
    report_hs.render_diff(folded.diff_table(a, b), 20, "samples", "a", "b")
    flamegraph.flamegraph_svg(b, "t", "samples")
    flamegraph.diff_flamegraph_svg(a, b, "t")
    folded.format_folded(b)


@pytest.mark.slow
def test_a_deep_stack_takes_memory_in_proportion_to_it():
    """8000 frames: a few MB now; paths built per frame took 0.5 GB (and 4.1 GB at 32 000)."""
    tracemalloc.start()
    try:
        everything(deep(4000), deep(8000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40e6, f"{peak / 1e6:.0f} MB for a 90 KB profile"


def test_a_deep_stack_is_drawn_to_a_bounded_depth_and_counted_whole():
    n = folded.DEPTH_SHOWN + 500
    s = folded.parse_folded(deep(n), "d")
    svg = flamegraph.flamegraph_svg(s, "t", "samples")
    root = ET.fromstring(svg)
    depths = [int(g.get("data-d")) for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "f"]
    assert max(depths) == folded.DEPTH_SHOWN - 1
    assert f"the deepest: {n + 1:,}" in svg
    view = folded.depth_view(s)
    assert len(view.depths) == folded.DEPTH_SHOWN and view.deeper == 3 and view.deepest == n - 1
    assert "goes deeper than" in report_hs.render_depth(view, 5)
    rows = {r.function: r for r in folded.function_table(s)}
    assert rows[f"fn{n - 1}_[k]"].self_weight == 3, "the tables count the whole stack"


@pytest.mark.parametrize("line, message", [
    (f"p;a {BIG}", r"f\.folded:2: the weight 9{20}\.\.\. \(5000 digits\) is more than 9223372036854775807"),
    (f"p;a {2**63}", r"f\.folded:2: the weight 9223372036854775808 is more than 9223372036854775807"),
    (f"p;a 0000{MAX}", None),
    ("p;a ٣", r"f\.folded:2: not a folded stack"),  # isdigit() says yes, int() would not
    ("p;a ²", r"f\.folded:2: not a folded stack"),
])
def test_weights_are_bounded_integers(line, message):
    if message is None:
        assert folded.parse_folded(line + "\n", "f.folded") == [(("p", "a"), MAX)]
        return
    text = "p;b 1\n" + line + "\n"
    with pytest.raises(UsageError, match=message):
        folded.parse_folded(text, "f.folded")


def test_the_sum_of_the_weights_is_bounded_too():
    with pytest.raises(UsageError, match=r"f\.folded:3: the weights add up to more than 9223372036854775807"):
        folded.parse_folded(f"p;a {MAX // 2}\np;b {MAX // 2}\np;a 2\n", "f.folded")
    assert folded.total_weight(folded.parse_folded(f"p;a {MAX // 2}\np;b {MAX // 2 + 1}\n")) == MAX
    with pytest.raises(UsageError, match=r"stacks\[1\]: the weights add up"):
        folded.stacks_from_record([["p;a", MAX], ["p;b", 1]])
    with pytest.raises(UsageError, match=r"stacks\[0\]: a weight of 64 bits is more than"):
        folded.stacks_from_record([["p;a", 2**63]])


def test_a_probe_file_with_a_huge_number_is_refused_with_its_line(tmp_path: Path):
    f = tmp_path / "p.jsonl"
    f.write_text('{"type":"meta"}\n{"type":"profile","bench":"a.b","status":"ok","stacks":[["p;a",' + BIG + "]]}\n")
    with pytest.raises(UsageError, match=r"p\.jsonl:2: not JSON \(a number of more than 4300 digits\)"):
        load(str(f), lambda: None)
    f.write_text('{"type":"profile","x":' + "[" * 100000 + "]" * 100000 + "}\n")
    with pytest.raises(UsageError, match=r"p\.jsonl:1: not JSON \(nested too deeply\)"):
        load(str(f), lambda: None)


@pytest.mark.parametrize("field, value, message", [
    ("weight_unit", "</script><script>alert(1)", "weight_unit is"),
    ("params", [1, 2], "params is not a map"),
    ("calls", {"a": "many"}, "'calls' is not a map"),
    ("stacks", "p;a 1", "stacks is not a list"),
])
def test_a_profile_record_is_checked_before_it_is_drawn(tmp_path: Path, field, value, message):
    rec = {"type": "profile", "bench": "a.b", "status": "ok", "stacks": [["p;a", 1]], field: value}
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps(rec) + "\n")
    with pytest.raises(UsageError, match=message):
        load(str(f), lambda: None)


def test_a_frame_cap_bounds_what_a_profile_may_hold(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(folded, "MAX_FRAMES", 100)
    assert len(folded.parse_folded("p;" + ";".join("x" * 97) + " 1\n" + "p;x 5\n" * 1000)) == 2, \
        "a stack seen again costs nothing"
    with pytest.raises(UsageError, match=r"f:2: the profile holds more than 100 frames"):
        folded.parse_folded("p;" + ";".join(["x"] * 60) + " 1\nq;" + ";".join(["y"] * 60) + " 1\n", "f")
    with pytest.raises(UsageError, match=r"stacks\[0\]: the profile holds more than 100 frames"):
        folded.stacks_from_record([[";".join(["x"] * 101), 1]])


def test_control_characters_in_frame_names_keep_the_svg_xml_and_the_tables_inert():
    text = f"p;{HOSTILE};leaf_[k] 70\np;{HOSTILE}_[k] 20\np;main 10\n"
    s = folded.parse_folded(text, "h.folded")
    other = folded.parse_folded("p;main 50\np;gone\x00\x1b 50\n", "g.folded")
    for svg, drawn in ((flamegraph.flamegraph_svg(s, f"title {HOSTILE}", "samples", subtitle=HOSTILE), "evil"),
                       (flamegraph.diff_flamegraph_svg(other, s, f"d {HOSTILE}"), "evil"),
                       (flamegraph.diff_flamegraph_svg(s, other, "d"), "gone")):
        root = ET.fromstring(svg)  # raised "not well-formed (invalid token)" on the ESC
        names = [g.get("data-n") for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "f"]
        assert any(n.startswith(drawn) for n in names), names
    assert "only in A: p;evil" in flamegraph.diff_flamegraph_svg(s, other, "d")
    tables = (report_hs.render_top(folded.function_table(s), 5, "samples")
              + report_hs.render_depth(folded.depth_view(s), 5)
              + report_hs.render_diff(folded.diff_table(other, s), 5, "samples", HOSTILE, "b"))
    assert "evil" in tables and "end" in tables
    assert not any(c in tables for c in "\x1b\x00\x07\x01\x08\x0b\x0c\x1f\x7f\x9b\u202e"), repr(tables)


def test_a_long_name_is_cut_in_the_tables_so_it_cannot_widen_every_row():
    long_name = "x" * 200_000
    s = folded.parse_folded("p;" + ";".join(f"f{i}_[k]" for i in range(2000)) + f";{long_name}_[k] 1\n")
    for table in (report_hs.render_depth(folded.depth_view(s), 5),
                  report_hs.render_top(folded.function_table(s), 5, "samples"),
                  report_hs.render_diff(folded.diff_table(s, s), 5, "samples", "a", "b")):
        assert max(map(len, table.splitlines())) < 1000
    assert "x" * 150 + ".." in report_hs.render_top(folded.function_table(s), 5, "samples")
