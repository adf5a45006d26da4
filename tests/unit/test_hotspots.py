"""The profile's figures (osmeter.hotspots.folded), its flame graphs
(flamegraph), where profiles come from (sources), and the journal replay
(tracestate), on hand-made profiles with known answers."""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from osmeter.errors import UsageError
from osmeter.hotspots import flamegraph, folded
from osmeter.hotspots.sources import load
from osmeter.report import hotspots as report_hs
from osmeter.tracestate import parse_journal, recover

# 100 samples: a syscall whose lookup recurses once, a copy, user time.
TEXT = """\
p;main;sys_[k];lookup_[k];lookup_[k] 30
p;main;sys_[k];lookup_[k] 10
p;main;sys_[k];copy_[k] 40
p;main 20
"""


def stacks() -> folded.Stacks:
    return folded.parse_folded(TEXT, "t.folded")


def test_parse_sums_identical_stacks_and_round_trips():
    s = folded.parse_folded(TEXT + "p;main 5\n\n# a comment\n")
    assert dict(s)[("p", "main")] == 25
    assert folded.parse_folded(folded.format_folded(s)) == s
    assert folded.format_folded(s).splitlines()[0] == "p;main;sys_[k];copy_[k] 40", "heaviest first"


@pytest.mark.parametrize("line, why", [
    ("a;b", "WEIGHT"), ("a;b x", "WEIGHT"), ("a;b 0", "positive"), ("a;;b 3", "empty frame"), (" 3", "WEIGHT"),
])
def test_parse_errors_name_the_file_and_line(line, why):
    with pytest.raises(UsageError, match=rf"f\.folded:2: .*{why}"):
        folded.parse_folded("a 1\n" + line + "\n", "f.folded")


@pytest.mark.parametrize("item", [["a", 0], ["", 3], ["a", 1.5], ["a", True], "a 3", ["a", 3, 4]])
def test_record_stacks_are_checked(item):
    with pytest.raises(UsageError, match=r"stacks\[1\]"):
        folded.stacks_from_record([["a", 1], item])


def test_function_table_self_and_total_with_recursion_counted_once():
    rows = {r.function: r for r in folded.function_table(stacks())}
    assert "p" not in rows, "the process frame is not a function"
    lookup = rows["lookup_[k]"]
    assert (lookup.self_weight, lookup.total_weight) == (40, 40), "the recursive stack counts once"
    assert rows["sys_[k]"].total_share == pytest.approx(0.8) and rows["sys_[k]"].self_share == 0
    assert rows["main"].total_share == 1.0 and rows["main"].self_share == pytest.approx(0.2)
    assert rows["copy_[k]"].kernel and not rows["main"].kernel
    assert [r.function for r in folded.function_table(stacks())][:3] == ["main", "sys_[k]", "copy_[k]"]


def test_calls_are_carried_only_when_known():
    rows = folded.function_table(stacks(), {"copy_[k]": 7})
    assert {r.function: r.calls for r in rows}["copy_[k]"] == 7
    assert all(r.calls is None for r in folded.function_table(stacks()))


def test_depth_view_counts_from_the_first_kernel_frame():
    v = folded.depth_view(stacks())
    assert v.total == 100 and v.outside == 20
    by_depth = {d.depth: d for d in v.depths}
    assert (by_depth[0].inclusive, by_depth[0].self_weight) == (80, 0)
    assert by_depth[1].functions == [("copy_[k]", 40), ("lookup_[k]", 40)]
    assert (by_depth[1].self_weight, by_depth[2].inclusive, by_depth[2].self_weight) == (50, 30, 30)
    u = folded.depth_view(stacks(), kernel_only=False)
    assert u.outside == 0 and u.depths[0].functions == [("main", 100)]


def test_diff_ranks_by_self_share_change_and_its_standard_error_is_binomial():
    a = stacks()
    b = folded.parse_folded("p;main;sys_[k];copy_[k] 900\np;main 100\n")
    rows = folded.diff_table(a, b)
    assert rows[0].function == "copy_[k]" and rows[0].self_change == pytest.approx(0.9 - 0.4)
    lookup = next(r for r in rows if r.function == "lookup_[k]")
    assert (lookup.self_b, lookup.total_weight_a, lookup.total_weight_b) == (0, 40, 0)
    pa, pb, na, nb = 0.4, 0.9, 100, 1000
    want = np.sqrt(np.array(pa * (1 - pa) / na + pb * (1 - pb) / nb))
    assert rows[0].se == pytest.approx(float(want))
    assert all(r.se is None for r in folded.diff_table(a, b, weight_unit="ns"))


def test_text_tables_show_shares_and_counts():
    top = report_hs.render_top(folded.function_table(stacks()), 3, "samples")
    assert re.search(r"sys_\[k\]\s+80\.0%\s+0\.0%\s+80\s+0", top), top
    d = report_hs.render_diff(folded.diff_table(stacks(), stacks()), 2, "samples", "A", "B")
    assert "+0.0" in d and "A: A" in d
    depth = report_hs.render_depth(folded.depth_view(stacks()), 2)
    assert re.search(r"^\s+1\s+80\.0%\s+50\.0%\s+copy 40\.0%, lookup 40\.0%", depth, re.M), depth


def svg_frames(svg: str) -> dict[str, float]:
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    return {g.get("data-n"): float(g.find(f"{ns}rect").get("width")) for g in root.iter(f"{ns}g")
            if g.get("class") == "f"}


def test_flame_graph_widths_follow_weights_and_names_are_escaped():
    s = folded.parse_folded("p;operator<<&\"x\";leaf_[k] 75\np;main 25\n")
    svg = flamegraph.flamegraph_svg(s, "t <title>", "samples")
    frames = svg_frames(svg)
    assert frames["p"] == pytest.approx(flamegraph.WIDTH)
    assert frames['operator<<&"x"'] == pytest.approx(0.75 * flamegraph.WIDTH)
    assert frames["leaf [k]"] == pytest.approx(0.75 * flamegraph.WIDTH)
    assert frames["main"] == pytest.approx(0.25 * flamegraph.WIDTH)
    refs = re.findall(r"(?:href|src|url)\s*[=(]\s*[\"']?([^\"') >]+)", svg)
    assert refs == [] and "http" not in svg.replace("http://www.w3.org/2000/svg", "")


def test_tiny_frames_are_not_drawn():
    s = folded.parse_folded("p;big 100000\np;tiny 1\n")
    frames = svg_frames(flamegraph.flamegraph_svg(s, "t", "samples"))
    assert "big" in frames and "tiny" not in frames


def test_diff_flame_graph_colours_by_the_change_and_lists_what_only_a_has():
    a = folded.parse_folded("p;grow 10\np;shrink 80\np;gone 10\n")
    b = folded.parse_folded("p;grow 80\np;shrink 20\n")
    svg = flamegraph.diff_flamegraph_svg(a, b, "d")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    fill = {g.get("data-n"): g.find(f"{ns}rect").get("fill") for g in root.iter(f"{ns}g") if g.get("class") == "f"}
    assert fill["grow"].startswith("rgb(245,") and fill["shrink"].endswith(",245)"), fill
    assert "gone" not in fill and "only in A: p;gone (10.00% of A)" in svg


def test_sources_load_folded_and_probe_files(tmp_path):
    f = tmp_path / "x.folded"
    f.write_text(TEXT)
    assert load(str(f), lambda: None).stacks == stacks()
    j = tmp_path / "x.jsonl"
    j.write_text('{"type":"meta"}\n{"type":"profile","bench":"a.b","params":{},"status":"ok","mode":"sample",'
                 '"weight_unit":"samples","stacks":[["p;f",3]]}\n')
    p = load(str(j), lambda: None)
    assert p.stacks == [(("p", "f"), 3)] and p.bench == "a.b"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"profile","bench":"a.b","status":"unsupported","reason":"no PMU","stacks":[]}\n')
    with pytest.raises(UsageError, match="no PMU"):
        load(str(bad), lambda: None)
    with pytest.raises(UsageError, match="neither a file nor a stored run"):
        load(str(tmp_path / "missing"), lambda: None)


def test_journal_lines_outside_tracing_state_are_ignored():
    text = ("rmdir /sys/kernel/tracing/instances/osmeter-1\nwrite /proc/sys/kernel/kptr_restrict 2\n"
            "umount /sys/kernel/tracing\nwrite /etc/passwd x\nrmdir /sys/kernel/tracing/../../../home\n"
            "write /proc/sys/kernel/kptr_restrict\nbogus line\n")
    assert parse_journal(text) == [
        ("rmdir", "/sys/kernel/tracing/instances/osmeter-1", ""),
        ("write", "/proc/sys/kernel/kptr_restrict", "2"),
        ("umount", "/sys/kernel/tracing", ""),
    ]


def test_recover_skips_live_probes_and_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("write /proc/sys/kernel/kptr_restrict 0\n")
    (tmp_path / f"trace-{os.getpid()}").write_text("rmdir /sys/kernel/tracing/instances/x\n")
    assert recover(tmp_path) == []
    assert (tmp_path / "notes.txt").exists()
    assert recover(tmp_path / "absent") == []


def _text_fits(svg: str) -> list[str]:
    """Every header and note text of a flame graph, checked to lie inside the
    SVG's width at the writer's estimate of a monospace character (EM per px
    of font size): centred ones on both sides, left-anchored ones on the right."""
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    width = float(root.get("width"))
    font = float(root.get("font-size"))
    shown = []
    for t in root.findall(f"{ns}text"):  # the header and the notes: the frames' own are inside their <g>
        if t.get("id") in ("details", "matched") or not (t.text or "").strip():
            continue
        size = float(t.get("font-size", font))
        w = len(t.text) * flamegraph.EM * size
        x = float(t.get("x"))
        left, right = (x - w / 2, x + w / 2) if t.get("text-anchor") == "middle" else (x, x + w)
        assert left >= 0 and right <= width, f"{t.text!r} runs off the graph: {left:.0f}..{right:.0f} of {width:.0f}"
        shown.append(t.text)
    return shown


def test_a_long_title_and_subtitle_are_wrapped_inside_the_graph():
    """A profile's subtitle (two lines of `describe`, ~200 characters) was one
    centred line cut at both edges; now each line fits, the frames move down
    under it, and no word is lost."""
    subtitle = ("syscall.open_close path=/very/long/directory/name/for/the/benchmark: sample profile, event "
                "cpu-clock, 123456 samples in 4321 distinct stacks;   timed region sampled for 2.00 s over 30 "
                "batches (1234567 operations), and a note that goes on for a while longer than that")
    title = "task.fork concurrency=1 drop_caches=0 migrate=0 thp=0 touched_mib=1024 vmas=100000 " * 2
    short = flamegraph.flamegraph_svg(stacks(), "t", "samples", subtitle="s")
    for svg in (flamegraph.flamegraph_svg(stacks(), title, "samples", subtitle=subtitle),
                flamegraph.diff_flamegraph_svg(stacks(), stacks(), title, subtitle=subtitle)):
        shown = " ".join(_text_fits(svg))
        assert all(word in shown for word in (title + subtitle).split()), shown
        root = ET.fromstring(svg)
        ns = "{http://www.w3.org/2000/svg}"
        rects = [float(g.find(f"{ns}rect").get("y")) for g in root.iter(f"{ns}g") if g.get("class") == "f"]
        heads = [float(t.get("y")) for t in root.iter(f"{ns}text") if t.get("text-anchor") == "middle"]
        assert len(heads) == 4 and min(rects) > max(heads) + 10  # the frames start under the last line
    assert float(ET.fromstring(svg).get("height")) > float(ET.fromstring(short).get("height"))
    _text_fits(short)
