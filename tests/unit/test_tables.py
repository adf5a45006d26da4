"""The table model (osmeter.report.tables): one table, three renderers that
decide only layout and escaping."""

from __future__ import annotations

from osmeter.report.tables import (LONG_VALUE, Cell, Column, Row, Table, quick_cell, simple, to_html, to_markdown,
                                   to_text, value_cell)


def sample() -> Table:
    columns = (Column("name"), Column("unit", dialects=("text", "md")), Column("median", True), Column("ci", True),
               Column("status"))
    rows = (
        Row((Cell("a|b"), Cell("ns"), Cell("12.5"), Cell("1 .. 2", md="1 – 2"), Cell("ok", html="<b>ok</b>"))),
        Row((Cell("<c>"), Cell("-"), Cell("", html="skipped: no root", css="reason", span=2),
             Cell("skip: no root", html="<i>skip</i>")), css="flagged"),
    )
    return Table(columns, rows, 'id="t"')


def test_text_pads_right_aligns_and_spreads_spans() -> None:
    lines = to_text(sample()).splitlines()
    assert lines[0].split() == ["name", "unit", "median", "ci", "status"]
    assert lines[2].split() == ["a|b", "ns", "12.5", "1", "..", "2", "ok"]
    assert lines[2].index("12.5") + 4 == lines[0].index("median") + 6  # right-aligned under its header
    # the spanning cell is shown, then one empty cell, so the status stays in its column
    assert lines[3].split() == ["<c>", "-", "skip:", "no", "root"]
    assert lines[3].index("skip") == lines[0].index("status")


def test_markdown_uses_its_own_forms_escapes_and_drops_html_only_columns() -> None:
    text = to_markdown(sample())
    lines = text.splitlines()
    assert lines[0] == "| name | unit | median | ci | status |"
    assert lines[1] == "| --- | --- | ---: | ---: | --- |"
    assert lines[2] == "| a\\|b | ns | 12.5 | 1 – 2 | ok |"
    assert lines[3] == "| \\<c\\> | - |   |   | skip: no root |"


def test_html_escapes_text_keeps_markup_spans_and_skips_text_only_columns() -> None:
    page = to_html(sample())
    assert page.startswith('<div class="scroll"><table id="t"><thead><tr><th>name</th><th class="num">median</th>')
    assert "unit" not in page and ">ns<" not in page  # a column the page does not show
    assert '<td class="num">1 – 2</td>' in page  # the Markdown form, escaped
    assert "<td>&lt;c&gt;</td>" in page
    assert '<td class="reason" colspan="2">skipped: no root</td><td><i>skip</i></td>' in page
    assert '<tr class="flagged">' in page


def test_select_and_simple() -> None:
    t = simple(["x", "y", "z"], [["1", "2", "3"]], [False, True, False]).select([0, 2])
    assert t.headers == ["x", "z"] and t.right == [False, False]
    assert to_text(t).splitlines()[-1] == "1  3"


def test_a_long_value_is_folded_in_html_only() -> None:
    long = "v" * (LONG_VALUE + 1)
    cell = value_cell(long)
    assert cell.text == long
    assert cell.html is not None and cell.html.startswith("<details><summary>")
    assert value_cell("short").html is None


def test_quick_cell_is_the_cell_its_init_makes() -> None:
    assert quick_cell(text="+3% ~", html="+3", css="cell ns", title="t", style="background:#fff") == \
        Cell("+3% ~", html="+3", css="cell ns", title="t", style="background:#fff")
    assert quick_cell(text="x") == Cell("x") and quick_cell(text="x").span == 1
