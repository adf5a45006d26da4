"""`osmeter hotspots` end to end with the real probe (issue 14, "Must show").

- syscall.stat: its kernel time is the path lookup; the table and the flame
  graph name it, and the profile is stored with the run (--show renders it
  again from the store).
- task.fork touched_mib=1024 (slow): the page-table copy (copy_page_range,
  into which this kernel inlines copy_pte_range / copy_present_ptes) is
  among the top functions by total time; --diff of 1 vs 1024 MiB puts it
  first (by the change of its self time per fork).
- bad input: clear errors, nothing stored.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

LOOKUP = ("path_lookupat", "link_path_walk", "filename_lookup")
PAGE_TABLE_COPY = ("copy_page_range", "copy_pte_range", "copy_present_ptes")

needs_kernel_stacks = pytest.mark.skipif(
    os.geteuid() != 0 and int(Path("/proc/sys/kernel/perf_event_paranoid").read_text()) > 1,
    reason="kernel stacks need root or perf_event_paranoid <= 1",
)


def table_after(text: str, title: str, n: int) -> list[str]:
    """The first n names of the table under the line that starts with `title`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rule = next(i for i in range(start, len(lines)) if lines[i].startswith("---"))  # under a header of 1 or 2 lines
    names = []
    for line in lines[rule + 1:]:
        if not line.strip() or line.startswith("/"):  # the end, or the files written after it
            break
        names.append(line.split()[0].removesuffix("_[k]"))
    return names[:n]


@needs_kernel_stacks
def test_stat_names_the_path_lookup_and_is_stored(real_probe, cli, tmp_path):
    out_dir = tmp_path / "hs"
    r = cli("hotspots", "syscall.stat", "--min-time", "1", "--frequency", "2999", "-o", str(out_dir))
    assert r.code == 0, r.err
    top = (out_dir / "top.txt").read_text()
    assert any(name in top for name in LOOKUP), top
    assert any(name in r.out for name in LOOKUP), "the table is printed too"
    svg = (out_dir / "flamegraph.svg").read_text()
    ET.fromstring(svg)  # well-formed
    assert any(f"{name}" in svg for name in LOOKUP)
    folded = (out_dir / "profile.folded").read_text().splitlines()
    assert folded and all(re.match(r"^\S.* \d+$", line) for line in folded)
    assert "depth" in (out_dir / "depth.txt").read_text().lower()
    # Stored with the run: rendered again from the store alone.
    again = tmp_path / "again"
    r2 = cli("hotspots", "--show", "latest", "-o", str(again))
    assert r2.code == 0, r2.err
    assert (again / "profile.folded").read_text() == (out_dir / "profile.folded").read_text()
    runs = cli("runs")
    assert "hotspots syscall.stat" in runs.out


@pytest.mark.slow
@needs_kernel_stacks
def test_fork_1gib_names_the_page_table_copy_and_the_diff_puts_it_first(real_probe, cli, tmp_path):
    out_dir = tmp_path / "fork"
    r = cli("hotspots", "task.fork", "--param", "touched_mib=1024", "--min-time", "2", "-o", str(out_dir))
    assert r.code == 0, r.err
    top = (out_dir / "top.txt").read_text()
    assert any(name in table_after(top, "top 20 functions by total", 10) for name in PAGE_TABLE_COPY), top
    diff_dir = tmp_path / "diff"
    d = cli("hotspots", "task.fork", "--diff", "touched_mib=1", "touched_mib=1024", "--min-time", "2",
            "-o", str(diff_dir))
    assert d.code == 0, d.err
    diff_txt = (diff_dir / "diff.txt").read_text()
    assert table_after(diff_txt, "functions whose self time per operation changed most", 1)[0] in PAGE_TABLE_COPY, \
        diff_txt
    ET.fromstring((diff_dir / "diff.svg").read_text())


@pytest.mark.parametrize("args, message", [
    (("hotspots",), "give a benchmark"),
    (("hotspots", "no.such"), "unknown benchmark"),
    (("hotspots", "syscall.stat", "--frequency", "0"), "--frequency"),
    (("hotspots", "--show", "nothing-here"), "neither a file nor a stored run"),
    (("hotspots", "--show", "7"), "no store at"),
    (("hotspots", "syscall.stat", "--diff", "a", "b=1"), "not KEY=VALUE"),
    (("hotspots", "--show", "1", "syscall.stat"), "give it alone"),
])
def test_bad_input(real_probe, cli, args, message):
    r = cli(*args)
    assert r.code != 0
    assert message in r.err, r.err


def test_a_malformed_folded_file_is_refused_with_its_line(cli, tmp_path):
    bad = tmp_path / "bad.folded"
    bad.write_text("a;b 3\nno weight here\n")
    good = tmp_path / "good.folded"
    good.write_text("a;b 3\n")
    r = cli("hotspots", "--diff", str(good), str(bad), "-o", str(tmp_path / "out"))
    assert r.code != 0
    assert "bad.folded" in r.err and "2" in r.err, r.err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_diff_of_two_folded_files(cli, tmp_path):
    a = tmp_path / "a.folded"
    b = tmp_path / "b.folded"
    a.write_text("p;syscall_[k];lookup_[k] 10\np;syscall_[k];copy_[k] 90\n")
    b.write_text("p;syscall_[k];lookup_[k] 80\np;syscall_[k];copy_[k] 20\n")
    r = cli("hotspots", "--diff", str(a), str(b), "-o", str(tmp_path / "d"))
    assert r.code == 0, r.err
    text = (tmp_path / "d" / "diff.txt").read_text()
    # lookup: 10 % -> 80 % (+70 pp), copy: 90 % -> 20 % (-70 pp), syscall: 0 -> 0 (self)
    ranked = table_after(text, "functions whose self share changed most", 3)
    assert sorted(ranked[:2]) == ["copy", "lookup"] and ranked[2] == "syscall", ranked
    assert "+70.0" in text and "-70.0" in text
    ET.fromstring((tmp_path / "d" / "diff.svg").read_text())
