"""Output that can't be turned against its reader: stored text (labels, params,
machine values, reasons) in CSV, Markdown, HTML and on the terminal."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from osmeter import textsafe

from ..synthetic import MACHINE, add_run, noisy

ESC = "\x1b]0;pwned\x07\x1b[2J\x1b[31m"  # retitle the terminal, clear the screen, go red
C1 = "\x9b31m"  # the same CSI in its one-character C1 spelling
RLO = "\u202e"  # right-to-left override: `txt.exe` shown as `exe.txt`
SCRIPT = "</script><script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
MD = "a | b *bold* _em_ `code` [link](http://evil.example) <b>x</b> ~~s~~"
HOSTILE_TERMINAL = ("\x1b", "\x9b", "\x07", RLO, "\x9d")


@pytest.fixture
def hostile(store_path: Path) -> int:
    """A run whose every stored string tries something."""
    rng = np.random.default_rng(3)
    machine = dict(MACHINE, hostname=f"box{ESC}{RLO}", kernel_release=f"6.8{IMG}", cpu_model=f"=cmd|' /C calc'!A0 {MD}")
    specs = [
        ("syscall.null", {"tag": f"{SCRIPT}{C1}", "note": "@SUM(A1)"}, "ns", noisy(rng, 100.0, 300)),
        ("cpu.call", {"args": 0}, "ns", noisy(rng, 2.0, 300)),
    ]
    skips = [("file.read_cold", {"size": 4096}, f"-2+3{ESC} needs root\n| x | y |")]
    return add_run(store_path, specs, label=f"=HYPERLINK(\"http://evil\"){ESC}{RLO}{MD}", machine=machine, skips=skips)


def test_csv_cells_that_would_run_as_formulas_are_neutralised(cli, hostile: int) -> None:
    text = cli("export", str(hostile), "--format", "csv").out
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["run_label"].startswith("'=HYPERLINK(")
    assert rows[2]["reason"].startswith("'-2+3")
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "@", "\t", "\r")), value
            assert not value.startswith("-") or re.fullmatch(r"-[0-9.e+-]+", value), value
    assert rows[0]["median"] and float(rows[0]["median"]) > 0  # numbers stay numbers


@pytest.mark.parametrize(
    "text, shown",
    [
        ("-1.5", "-1.5"),
        ("+3", "+3"),
        ("-2.5e-07", "-2.5e-07"),
        ("-inf", "-inf"),
        ("-", "'-"),
        ("-1+2", "'-1+2"),
        ("=1+1", "'=1+1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("+cmd", "'+cmd"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("a=1", "a=1"),
        ("", ""),
    ],
)
def test_neutral(text: str, shown: str) -> None:
    from osmeter.export.csv_ import neutral

    assert neutral(text) == shown


def _cells(line: str) -> int:
    """The number of cells of a Markdown table row: its unescaped pipes less one."""
    return len(re.findall(r"(?<!\\)\|", line)) - 1


def test_markdown_report_escapes_stored_text(cli, hostile: int) -> None:
    md = cli("report", str(hostile), "--format", "md").out
    for bad in ("<b>", "[link](", "*bold*", "`code`", "~~s~~", *HOSTILE_TERMINAL):
        assert bad not in md, bad
    assert re.findall(r"(?<!\\)<(?!br>)", md) == []  # no tag but the line breaks in cells
    assert "\\<script\\>" in md and "\\*bold\\*" in md and "\\[link\\](http://evil.example)" in md
    # every table keeps its shape: a row has as many cells as its header
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| ---"):
            width = _cells(lines[i - 1])
            for row in lines[i + 1 :]:
                if not row.startswith("|"):
                    break
                assert _cells(row) == width, row
    title = next(l for l in lines if l.startswith("# "))
    assert "\\|" in title and "\x1b" not in title


def test_markdown_cell() -> None:
    from osmeter.report.escaping import cell

    assert cell("touched_mib=1") == "touched_mib=1"  # an underscore inside a word is no markup
    assert cell("_em_ a_ _b") == "\\_em\\_ a\\_ \\_b"
    assert cell("a\nb|c") == "a<br>b\\|c"
    assert cell(f"x{ESC}{RLO}y") == "xy"


def test_html_report_escapes_stored_text(cli, hostile: int, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert cli("report", str(hostile), "-o", str(out)).code == 0
    page = out.read_text()
    assert "<script" not in page.lower() and "<img" not in page and "<b>x" not in page
    assert "&lt;/script&gt;&lt;script&gt;" in page and "&quot;&gt;&lt;img" in page
    for bad in HOSTILE_TERMINAL:
        assert bad not in page, repr(bad)


def test_html_heatmap_escapes_stored_text(cli, store_path: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    specs = [("syscall.null", {"tag": SCRIPT}, "ns", noisy(rng, 100.0, 300))]
    add_run(store_path, specs, label="base")
    add_run(store_path, specs, label=f"{SCRIPT}{IMG}{ESC}{RLO}")
    out = tmp_path / "heat.html"
    r = cli("compare", "1", "2", "-o", str(out))
    assert r.code == 0, r.err
    page = out.read_text()
    assert "<script" not in page.lower() and "<img" not in page
    for bad in HOSTILE_TERMINAL:
        assert bad not in page and bad not in r.out, repr(bad)


def test_runs_and_show_strip_terminal_escapes(cli, hostile: int) -> None:
    for args in (("runs",), ("show", str(hostile))):
        out = cli(*args).out
        for bad in HOSTILE_TERMINAL:
            assert bad not in out, (args, repr(bad))
        assert "=HYPERLINK" in out and "box" in out
    shown = cli("show", str(hostile)).out
    assert "-2+3 needs root | x | y |" in shown  # the reason on one line, its text kept
    # --json keeps the data exact and escapes what a terminal would obey
    raw = cli("show", str(hostile), "--json").out
    for bad in HOSTILE_TERMINAL:
        assert bad not in raw, repr(bad)
    doc = json.loads(raw)
    assert doc["run"]["label"].startswith('=HYPERLINK("http://evil")' + ESC + RLO)
    assert doc["run"]["machine"]["hostname"] == f"box{ESC}{RLO}"
    assert json.loads(cli("runs", "--json").out)["runs"][0]["host"] == f"box{ESC}{RLO}"


def test_textsafe() -> None:
    assert textsafe.terminal("plain text") == "plain text"
    assert textsafe.terminal(f"a\tb\nc{ESC}d{C1}e\x9d8;;http://x\x9cf{RLO}\u2066g\x00\x7f\r") == "a\tb\ncdefg"
    assert textsafe.terminal("unterminated \x1b]0;title") == "unterminated "
    lines = "x.y size=4k\nrun 2 vs baseline 1\tratio 1.0500"  # a hover of several lines: kept as it is
    assert textsafe.terminal(lines) is lines
    for bad in (f"a\nb{ESC}c", f"a\n{RLO}b", "a\tb\x00", "a\n\x1b]0;t"):  # a newline does not let them through
        assert textsafe.terminal(bad) in ("a\nbc", "a\nb", "a\tb", "a\n"), repr(bad)
    assert textsafe.line("a\tb\nc") == "a b c"
    assert textsafe.json_text('"\x9b\u202e"') == '"\\u009b\\u202e"'


def test_errors_warnings_and_progress_strip_terminal_escapes(cli, store_path: Path, tmp_path: Path) -> None:
    """What osmeter says on stderr quotes input (a file name, a record's
    type, a probe's message): none of its escapes reach the terminal."""
    # An error quoting a hostile file name.
    r = cli("export", "latest", "-o", str(tmp_path / f"x{ESC}.zzz"))
    assert r.code != 0 and "osmeter: error:" in r.err
    assert not any(c in r.err for c in HOSTILE_TERMINAL), repr(r.err)
    # A warning quoting a record's unknown type.
    src = (Path(__file__).parent.parent / "data" / "run_x86_64.jsonl").read_text().splitlines()
    hostile_file = tmp_path / "hostile.jsonl"
    hostile_file.write_text("\n".join([src[0], json.dumps({"type": f"x{ESC}{C1}{RLO}"}), *src[1:]]) + "\n")
    r = cli("import", str(hostile_file))
    assert r.code == 0, r.err
    assert "unknown type" in r.err and not any(c in r.err for c in HOSTILE_TERMINAL), repr(r.err)
    # Progress lines carry the probe's names and reasons.
    from osmeter.progress import PlainProgress

    out = io.StringIO()
    PlainProgress(out)._print(f"skip: cpu.call{ESC}{C1}: {RLO}reason")
    assert not any(c in out.getvalue() for c in HOSTILE_TERMINAL), repr(out.getvalue())
