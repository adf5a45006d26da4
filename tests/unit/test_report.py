"""osmeter report and osmeter plot: content, self-containment, predictions, bad input."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from osmeter import errors
from osmeter.report import figures as figures_pkg
from osmeter.report.expect import parse_expect

from ..conftest import import_fixture

EXTERNAL = re.compile(r"""(?:\b(?:src|href|xlink:href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//)|url\(\s*["']?\s*(?:https?:)?//|@import""", re.I)


class Page(HTMLParser):
    """Tags, ids and classes of an HTML document, and whether it parsed cleanly."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if a.get("id")}

    def count(self, tag: str) -> int:
        return sum(1 for t, _ in self.tags if t == tag)


def assert_self_contained(text: str) -> None:
    assert not EXTERNAL.search(text), EXTERNAL.search(text)
    assert "<script" not in text.lower()
    assert "<!DOCTYPE svg" not in text and "<?xml" not in text


def test_html_report_of_one_run(cli, store_path: Path, tmp_path: Path) -> None:
    run_id = import_fixture(store_path, "run_x86_64.jsonl", label="box")
    out = tmp_path / "report.html"
    r = cli("report", str(run_id), "-o", str(out))
    assert r.code == 0, r.err
    assert r.out == "" and f"wrote {out}" in r.err
    text = out.read_text()
    page = Page(text)
    assert {f"machine-{run_id}", f"summary-{run_id}", f"setup-{run_id}", f"run-{run_id}"} <= page.ids()
    assert page.count("svg") >= 3  # one distribution figure per benchmark with samples (cpu.call, syscall.null, task.fork)
    assert_self_contained(text)
    # every id is unique, even with several SVGs on one page
    ids = [a["id"] for _, a in page.tags if a.get("id")]
    assert len(ids) == len(set(ids))
    # the summary: ok rows with statistics, the skip and the error with their reasons
    assert "45.06" in text and "44.78 – 45.33" in text
    assert "needs root: cannot drop the page cache" in text
    assert "fork: Resource temporarily unavailable" in text
    # machine rows with help, warnings with advice
    assert "Test CPU @ 3.0GHz" in text and "Current kernel clocksource" in text
    # the spread is the IQR over the median and the tail p99 over it; no warning for a heavy tail (high-cv)
    assert "IQR %" in text and "p99/med" in text and "high-cv" not in text and "CV %" not in text
    assert "dist-syscall.null" not in text or 'id="r1-dist-syscall-null"' in text
    assert 'href="#r1-dist-syscall-null"' in text  # summary rows link to their figure


def test_report_defaults_to_latest_on_stdout_and_sections_per_run(cli, store_path: Path) -> None:
    a = import_fixture(store_path, "run_x86_64.jsonl")
    b = import_fixture(store_path, "run_aarch64.jsonl")
    r = cli("report")
    assert r.code == 0 and f'id="run-{b}"' in r.out and f'id="run-{a}"' not in r.out
    r = cli("report", str(a), str(b))
    page = Page(r.out)
    assert {f"run-{a}", f"run-{b}", f"summary-{a}", f"summary-{b}", f"machine-{a}", f"machine-{b}"} <= page.ids()
    assert "cpu-governor" in r.out and "cpupower" in r.out  # the board's warnings
    assert "PREEMPT_RT" in r.out


def test_markdown_report(cli, store_path: Path, tmp_path: Path) -> None:
    run_id = import_fixture(store_path, "run_aarch64.jsonl")
    out = tmp_path / "report.md"
    assert cli("report", str(run_id), "-o", str(out)).code == 0  # format from the suffix
    text = out.read_text()
    assert text.startswith(f"# osmeter report: Run {run_id}")
    assert "| benchmark | params | median |" in text
    assert "| syscall.null |" in text and "**few-samples**" in text
    assert "<svg" not in text and f"osmeter plot {run_id}" in text
    assert cli("report", str(run_id), "--format", "md").out == text


EXPECT = """\
# predictions for the test box
syscall.null:
  value: 0.05
  unit: us
  note: about 150 cycles at 3 GHz
cpu.call:
  - params: {args: 0}
    value: 1 ns
task.fork: 100000 ns
mem.latency: 90 ns
"""


def test_predictions_side_by_side(cli, store_path: Path, tmp_path: Path) -> None:
    run_id = import_fixture(store_path, "run_x86_64.jsonl")
    expect = tmp_path / "expect.yaml"
    expect.write_text(EXPECT)
    r = cli("report", str(run_id), "--expect", str(expect))
    assert r.code == 0, r.err
    assert f'id="predictions-{run_id}"' in r.out
    rows = re.findall(r"<tr><td class=\"mono\">([a-z.]+)</td>.*?</tr>", r.out.split(f'id="predictions-{run_id}"')[1].split("</table>")[0])
    assert rows == ["syscall.null", "cpu.call", "task.fork", "mem.latency"]
    assert "about 150 cycles at 3 GHz" in r.out
    assert "(0.05000 us)" in r.out  # as given, next to the converted 50 ns
    assert "0.90×" in r.out  # syscall.null: 45.06 / 50
    assert "not measured in this run" in r.out  # mem.latency
    md = cli("report", str(run_id), "--expect", str(expect), "--format", "md").out
    assert "| syscall.null |   | 50.00 ns (0.05000 us) | 45.06 ns | 0.90× | about 150 cycles at 3 GHz |" in md


@pytest.mark.parametrize(
    "content, message",
    [
        ("syscall.null: [unclosed", "not valid YAML: line 1"),
        ("- just\n- a list\n", "expected a mapping of benchmark names"),
        ("", "holds no predictions"),
        ("syscall.null:\n  value: 50\n", "syscall.null: missing 'unit'"),
        ("syscall.null:\n  unit: ns\n", "missing 'value'"),
        ("syscall.null:\n  value: fifty\n  unit: ns\n", "neither a number nor 'NUMBER UNIT'"),
        ("syscall.null:\n  value: 50\n  unit: furlongs\n", "unknown unit 'furlongs'"),
        ("syscall.null:\n  vaule: 50\n  unit: ns\n", "unknown key 'vaule'"),
        ("syscall.null: 50 ns\nsyscall.null: 60 ns\n", "given twice"),
        ("syscall: 50 ns\n", "not a benchmark name"),
        ("syscall.null:\n  value: -5\n  unit: ns\n", "more than 0"),
        ("syscall.null: 5 GB/s\n", "predicted in GB/s (bytes_per_s) but syscall.null is measured in ns"),
    ],
)
def test_malformed_expect_files_are_refused_and_nothing_is_written(
    cli, store_path: Path, tmp_path: Path, content: str, message: str
) -> None:
    run_id = import_fixture(store_path, "run_x86_64.jsonl")
    expect = tmp_path / "bad.yaml"
    expect.write_text(content)
    out = tmp_path / "report.html"
    r = cli("report", str(run_id), "--expect", str(expect), "-o", str(out))
    assert r.code == errors.EXIT_USAGE, r.err
    assert message in r.err and str(expect) in r.err
    assert not out.exists() and list(tmp_path.glob(".report.html.*")) == []


def test_expect_file_forms() -> None:
    preds = parse_expect(EXPECT, Path("e.yaml"))
    assert [(p.bench, p.params, p.stored_value, p.unit) for p in preds] == [
        ("syscall.null", {}, pytest.approx(50.0), "us"),
        ("cpu.call", {"args": 0}, 1.0, "ns"),
        ("task.fork", {}, 100000.0, "ns"),
        ("mem.latency", {}, 90.0, "ns"),
    ]
    (p,) = parse_expect("mem.bw:\n  value: 1e3\n  unit: MiB/s\n", Path("e.yaml"))
    assert p.stored_unit == "bytes_per_s" and p.stored_value == 1000 * 2**20


def test_missing_expect_file(cli, store_path: Path, tmp_path: Path) -> None:
    import_fixture(store_path)
    r = cli("report", "--expect", str(tmp_path / "nope.yaml"))
    assert r.code == errors.EXIT_USAGE and "cannot read" in r.err and "No such file" in r.err


def test_unknown_run_and_unwritable_output(cli, store_path: Path, tmp_path: Path) -> None:
    import_fixture(store_path)
    r = cli("report", "7", "-o", str(tmp_path / "r.html"))
    assert r.code == errors.EXIT_NOT_FOUND and "no run 7" in r.err
    assert not (tmp_path / "r.html").exists()
    r = cli("report", "1", "-o", str(tmp_path / "no" / "such" / "dir" / "r.html"))
    assert r.code == errors.EXIT_USAGE and "cannot write" in r.err
    r = cli("report", "1", "-o", str(tmp_path))
    assert r.code == errors.EXIT_USAGE and "is a directory" in r.err
    r = cli("report", "1", "1")
    assert r.code == errors.EXIT_USAGE and "given twice" in r.err


def test_failed_report_leaves_an_existing_file_alone(cli, store_path: Path, tmp_path: Path) -> None:
    import_fixture(store_path)
    out = tmp_path / "report.html"
    out.write_text("the old report")
    bad = tmp_path / "bad.yaml"
    bad.write_text("syscall.null: 5 GB/s\n")
    assert cli("report", "1", "-o", str(out), "--expect", str(bad)).code == errors.EXIT_USAGE
    assert out.read_text() == "the old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "home", "report.html", "store"]


def test_a_failing_family_figure_is_shown_not_fatal(cli, store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import_fixture(store_path)

    def broken(data):
        raise RuntimeError("no curve today")

    def one(data):
        from osmeter.report import plots

        fig = plots.figure()
        ax = fig.add_subplot()
        ax.plot([1, 2], [3, 4], label="line")
        ax.set_xlabel("x (ns)")
        return [figures_pkg.NamedFigure("test-line", "A test figure", fig)]

    monkeypatch.setitem(figures_pkg.FIGURES, "broken", broken)
    monkeypatch.setitem(figures_pkg.FIGURES, "testfam", one)
    r = cli("report", "1")
    assert r.code == 0
    assert "figure-failed" in r.out and "RuntimeError: no curve today" in r.out
    assert "<h3>Figures</h3>" in r.out and "A test figure" in r.out


def test_plot_writes_every_figure(cli, store_path: Path, tmp_path: Path) -> None:
    run_id = import_fixture(store_path, "run_x86_64.jsonl")
    out = tmp_path / "figs"
    r = cli("plot", str(run_id), "-o", str(out), "--format", "svg")
    assert r.code == 0, r.err
    names = sorted(p.name for p in out.iterdir())
    assert names == [f"run{run_id}-dist-{b}.svg" for b in ("cpu.call", "syscall.null", "task.fork")]
    svg = (out / f"run{run_id}-dist-syscall.null.svg").read_text()
    assert "time per operation (ns)" in svg and "median" in svg and "samples" in svg  # labelled axes, legend
    for fmt, magic in (("png", b"\x89PNG"), ("pdf", b"%PDF")):
        r = cli("plot", str(run_id), "syscall.null", "-o", str(out), "--format", fmt)
        assert r.code == 0, r.err
        assert (out / f"run{run_id}-dist-syscall.null.{fmt}").read_bytes().startswith(magic)
    assert r.out.strip() == str(out / f"run{run_id}-dist-syscall.null.pdf")


def test_plot_bad_input(cli, store_path: Path, tmp_path: Path) -> None:
    import_fixture(store_path)
    r = cli("plot", "1", "mem.latency", "-o", str(tmp_path / "figs"))
    assert r.code == errors.EXIT_USAGE and "no ok result of 'mem.latency'" in r.err and "syscall.null" in r.err
    assert not (tmp_path / "figs").exists()
    afile = tmp_path / "afile"
    afile.write_text("")
    r = cli("plot", "1", "-o", str(afile))
    assert r.code == errors.EXIT_USAGE and "not a directory" in r.err
    r = cli("plot", "1", "-o", str(tmp_path / "f"), "--format", "gif")
    assert r.code == errors.EXIT_USAGE and "invalid choice" in r.err
    assert cli("plot", "9", "-o", str(tmp_path / "f")).code == errors.EXIT_NOT_FOUND


def test_distribution_labels_show_what_varies() -> None:
    from osmeter.report.figures.distribution import split_params

    shared, own = split_params([{"pattern": "random", "size": 1024}, {"pattern": "random", "size": 2048}])
    assert shared == {"pattern": "random"} and own == [{"size": 1024}, {"size": 2048}]
    assert split_params([{"size": 1}]) == ({}, [{"size": 1}])  # one instance keeps its label
