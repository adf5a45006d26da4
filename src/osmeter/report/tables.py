"""One table model for every dialect: a table is its columns (header,
alignment) and its cells, computed once; plain text, Markdown and HTML only
render it (hyperfine's exporters: one table, each format renders it).

A cell holds the text every dialect shows. Where a dialect must say it in
its own way, the cell carries that form too, next to the text: `md` (a
range with an en dash where the terminal has '..', an empty cell where the
terminal shows '-') and `html` (already escaped: a link, a badge, a mark),
and the HTML attributes a page needs (class, title, style, colspan). What a
table shows is decided where it is built (report.results_table,
report.compare_table, report.by_cells, report.fleet, report.hotspots); the
renderers below decide nothing but layout and escaping.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Callable, Iterable, Sequence

from ..fmt import WRAP_HANG, render_table
from ..frozen import built
from .escaping import cell as md_cell
from .escaping import esc


DIALECTS = ("text", "md", "html")


@dataclass(frozen=True)
class Column:
    header: str  # the terminal's header; a newline splits it over two lines
    right: bool = False  # a number: right-aligned, and class "num" in HTML
    css: str | None = None  # HTML class of the header (None: "num" for a number column, none else)
    title: str = ""  # HTML: the header's hover text
    md: str | None = None  # Markdown's header, if it differs
    html: str | None = None  # HTML's header, already escaped, if it is more than the text
    dialects: tuple[str, ...] = DIALECTS  # those that show the column (a heatmap's unit: in its row header in HTML)

    def markdown_text(self) -> str:
        return self.header if self.md is None else self.md

    def html_content(self) -> str:
        return self.html if self.html is not None else esc(self.markdown_text())


@dataclass(frozen=True)
class Cell:
    text: str = ""  # what the terminal shows, and Markdown and HTML unless they have their own form
    md: str | None = None  # Markdown's form of the text (unescaped), if it differs
    html: str | None = None  # HTML's content, already escaped, if it is more than the text
    css: str | None = None  # HTML class of the cell (None: "num" in a number column, none else)
    title: str = ""  # HTML: hover text
    style: str = ""  # HTML: inline style (a heatmap's colour)
    span: int = 1  # columns the cell covers; text and Markdown show it then span-1 empty cells
    head: bool = False  # HTML: a row header (<th>), as a heatmap's first cell

    def markdown_text(self) -> str:
        return self.text if self.md is None else self.md

    def html_content(self) -> str:
        return self.html if self.html is not None else esc(self.markdown_text())


_CELL_DEFAULTS = {f.name: f.default for f in fields(Cell)}


def quick_cell(**values: object) -> Cell:
    """Cell(**values), made without the frozen dataclass's __init__ (osmeter.frozen.built): for the
    tables of tens of thousands of cells (a heatmap of 100 hosts)."""
    return built(Cell, {**_CELL_DEFAULTS, **values})


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    css: str = ""  # HTML class of the row


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    attrs: str = ""  # HTML attributes of the <table> (id, class)

    @property
    def headers(self) -> list[str]:
        return [c.header for c in self.columns]

    @property
    def right(self) -> list[bool]:
        return [c.right for c in self.columns]

    def shown_in(self, dialect: str) -> Table:
        """The table without the columns `dialect` does not show."""
        keep = [i for i, c in enumerate(self.columns) if dialect in c.dialects]
        return self if len(keep) == len(self.columns) else self.select(keep)

    def select(self, indices: Sequence[int]) -> Table:
        """The table of the columns at `indices` (in the table's order): a spanning cell keeps
        the selected columns it covers, and goes when it covers none."""
        keep = set(indices)
        order = sorted(keep)
        rows = []
        for r in self.rows:
            if len(r.cells) == len(self.columns) and all(c.span == 1 for c in r.cells):  # no spans: pick the cells
                rows.append(Row(tuple(r.cells[i] for i in order), r.css))
                continue
            out, at = [], 0
            for c in r.cells:
                covered = sum(1 for i in range(at, at + c.span) if i in keep)
                if covered:
                    out.append(c if covered == c.span else replace(c, span=covered))
                at += c.span
            rows.append(Row(tuple(out), r.css))
        return Table(tuple(self.columns[i] for i in order), tuple(rows), self.attrs)


LONG_VALUE = 240  # characters: a longer value is folded into <details> in HTML


def value_cell(text: str) -> Cell:
    """A machine value: whole in every dialect; in HTML a long one is folded into <details>,
    its first line as the summary."""
    if len(text) <= LONG_VALUE:
        return Cell(text, css="value")
    first = text.splitlines()[0] if "\n" in text else text
    short = first[:90].rstrip() + " …"
    return Cell(text, html=f"<details><summary>{esc(short)}</summary>{esc(text)}</details>", css="value")


def simple(headers: Sequence[str], rows: Iterable[Sequence[str]], right: Sequence[bool] = (),
           attrs: str = "") -> Table:
    """A table of plain text cells (each dialect escapes them its way)."""
    columns = tuple(Column(h, i < len(right) and right[i]) for i, h in enumerate(headers))
    return Table(columns, tuple(Row(tuple(Cell(t) for t in row)) for row in rows), attrs)


# --- renderers ------------------------------------------------------------------------


def _spread(row: Row, text: Callable[[Cell], str]) -> list[str]:
    out: list[str] = []
    for c in row.cells:
        out.append(text(c))
        out.extend([""] * (c.span - 1))
    return out


def to_text(table: Table, width: int | None = None, wrap: Sequence[int] = (), whole_words: bool = False) -> str:
    """Columns padded to their widest cell (osmeter.fmt.render_table); with `width`, the `wrap`
    columns narrowed to fit it, and with `whole_words` never narrower than their longest word."""
    table = table.shown_in("text")
    rows = [_spread(r, lambda c: c.text) for r in table.rows]
    # a word on a continuation line comes after the hang: the floor holds both
    floors = {i: len(WRAP_HANG) + max((len(w) for row in rows for w in row[i].split()), default=0)
              for i in wrap} if whole_words else None
    return render_table(table.headers, rows, table.right, width=width, wrap=wrap, floors=floors)


def to_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table, every cell escaped (report.escaping.cell)."""
    cell = md_cell
    table = table.shown_in("md")
    align = ["---:" if c.right else "---" for c in table.columns]
    heads = [c.markdown_text() for c in table.columns]
    lines = ["| " + " | ".join(cell(h) for h in heads) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(cell(t) for t in _spread(r, Cell.markdown_text)) + " |" for r in table.rows]
    return "\n".join(lines)


def _attrs(css: str | None, title: str = "", style: str = "", span: int = 1) -> str:
    out = f' class="{css}"' if css else ""
    if style:
        out += f' style="{style}"'
    if title:
        out += f' title="{esc(title)}"'
    if span > 1:
        out += f' colspan="{span}"'
    return out


def html_cell(c: Cell, column: Column) -> str:
    """One cell as <td> (<th> for a row header) under `column`."""
    css = c.css if c.css is not None else ("num" if column.right else None)
    tag = "th" if c.head else "td"
    return f"<{tag}{_attrs(css, c.title, c.style, c.span)}>{c.html_content()}</{tag}>"


def html_td(content: str, css: str, title: str = "", style: str = "") -> str:
    """html_cell of a data cell given by its parts (`content` already escaped), for a table that
    writes tens of thousands of them itself (report.by_cells' heatmap)."""
    return f"<td{_attrs(css, title, style)}>{content}</td>"


def _html_row(row: Row, columns: Sequence[Column]) -> str:
    parts = []
    i = 0
    for c in row.cells:
        parts.append(html_cell(c, columns[i] if i < len(columns) else Column("")))
        i += c.span
    cls = f' class="{esc(row.css)}"' if row.css else ""
    return f"<tr{cls}>{''.join(parts)}</tr>\n"


def html_frame(columns: Sequence[Column], attrs: str, body: str) -> str:
    """The table box of to_html around `body` (its rows, already HTML): the scrolling box, the
    header of `columns` (those HTML shows)."""
    head = "".join(
        f"<th{_attrs(c.css if c.css is not None else ('num' if c.right else None), c.title)}>{c.html_content()}</th>"
        for c in columns if "html" in c.dialects
    )
    attrs = f" {attrs}" if attrs else " "
    return f'<div class="scroll"><table{attrs}><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table></div>\n'


def to_html(table: Table) -> str:
    """The table in a scrolling box; number columns right-aligned by the page's CSS."""
    table = table.shown_in("html")
    return html_frame(table.columns, table.attrs, "".join(_html_row(r, table.columns) for r in table.rows))
