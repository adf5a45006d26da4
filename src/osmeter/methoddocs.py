"""The method docs (docs/methods/*.md): where a benchmark is described, and
the gist of its method.

Each family's note is docs/methods/FAMILY.md (the harness's ground truth,
`test.spin`, is in harness.md). A benchmark's section is, in this order:
the first heading that names it (`## mem.latency`, `## file.read and
file.write`); else the section holding its row in a table (first cell
`` `syscall.null` ``) or its item in a list (``- `mem.fault_anon`: ...``),
a section under a heading of its own before the note's title and
introduction; else the first section that mentions it. The family's note
is searched first, then the others. Its anchor is GitHub's for that
heading (`#fileread-and-filewrite`; a repeated heading's gets `-1`, `-2`).

The gist is the method in the docs' own words, Markdown removed: the
benchmark's row in the section's table (its columns but the first and
`unit`, as "header: cell"), its list item, its row in the note's
introductory table, the section's `**Method.**` / `**Timed:**` paragraph,
or its first paragraph that is not a list of sources or parameters.
`bounded()` cuts it to a few lines.

The docs live in the source tree (an editable install finds them beside the
package); an installed wheel has none, and `MethodDocs.found` says so.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

_PACKAGED = Path(__file__).resolve().parent / "docs" / "methods"  # a wheel's copy (CMakeLists.txt installs it)
_SOURCE = Path(__file__).resolve().parents[2] / "docs" / "methods"  # the source tree's (an editable install)
DOCS_DIR = _PACKAGED if _PACKAGED.is_dir() else _SOURCE
DOCS_PREFIX = "docs/methods"  # how a section is named: docs/methods/mem.md#memlatency

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_LABEL = re.compile(r"^\*\*([^*]{1,40}?)[.:]\*\*\s*|^\*\*([^*]{1,40}?)\*\*[.:]\s*")
_METHOD_LABEL = re.compile(r"method|timed|region", re.IGNORECASE)
_NOT_METHOD = re.compile(r"^(?:parameters?|sources?|benchmarks?|suites?|code)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`*\"])")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: links reduced to their text, lower
    case, every character but letters, digits, '_', '-' and spaces
    dropped, spaces made hyphens ("cpu.call — ns per call" ->
    "cpucall--ns-per-call")."""
    text = _LINK.sub(r"\1", heading).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in "_- ")
    return text.replace(" ", "-")


def plain(markdown: str) -> str:
    """Markdown's inline marks removed, whitespace made single spaces."""
    text = _LINK.sub(r"\1", markdown).replace("\\|", "|").replace("**", "").replace("`", "")
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"\1", text)
    return " ".join(text.split())


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, break_on_hyphens=False)


def bounded(text: str, width: int, lines: int = 2) -> list[str]:
    """`text` in at most `lines` lines of `width`: the whole sentences that
    fit when they fill at least half of them, else as many words as fit,
    ended with '…'."""
    width = max(width, 10)
    wrapped = _wrap(text, width)
    if len(wrapped) <= lines:
        return wrapped
    kept = ""
    for sentence in _SENTENCE_END.split(text):
        trial = f"{kept} {sentence}".strip()
        if len(_wrap(trial, width)) > lines:
            break
        kept = trial
    if len(kept) * 2 >= width * lines:
        return _wrap(kept, width)
    head = wrapped[:lines]
    last = head[-1]
    while len(last) + 2 > width and " " in last:
        last = last.rsplit(" ", 1)[0]
    head[-1] = last[: width - 2].rstrip(" ,;:(") + " …"
    return head


def mentions(text: str, name: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", text) is not None


@dataclass(frozen=True)
class Section:
    path: str  # docs/methods/mem.md
    heading: str
    anchor: str  # GitHub's, without '#'
    gist: str  # the method in the docs' words, Markdown removed; "" when they have none apt

    @property
    def ref(self) -> str:
        return f"{self.path}#{self.anchor}"


@dataclass(frozen=True)
class _Block:
    kind: str  # para, item, table, code
    lines: tuple[str, ...]


@dataclass(frozen=True)
class _Part:
    level: int  # 1 for the note's title and introduction
    heading: str
    anchor: str
    blocks: tuple[_Block, ...]


def _blocks(lines: list[str]) -> tuple[_Block, ...]:
    out: list[_Block] = []
    current: list[str] = []
    kind = ""

    def flush() -> None:
        nonlocal current, kind
        if current:
            out.append(_Block(kind, tuple(current)))
        current, kind = [], ""

    fenced = False
    for line in lines:
        if _FENCE.match(line):
            if not fenced:
                flush()
            fenced = not fenced
            current.append(line)
            kind = "code"
            if not fenced:
                flush()
            continue
        if fenced:
            current.append(line)
            continue
        if not line.strip():
            flush()
            continue
        if _ITEM.match(line):
            flush()
            kind = "item"
        elif line.lstrip().startswith("|"):
            if kind != "table":
                flush()
            kind = "table"
        elif kind == "table":
            flush()
        elif not current and line.startswith("    "):
            kind = "code"  # an indented code block
        kind = kind or "para"
        current.append(line)
    flush()
    return tuple(out)


def _parts(text: str) -> list[_Part]:
    """The note's sections: each heading with the blocks up to the next heading."""
    parts: list[_Part] = []
    seen: dict[str, int] = {}
    heading, level, body = "", 1, []
    fenced = False

    def close() -> None:
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        parts.append(_Part(level, plain(heading), base if n == 0 else f"{base}-{n}", _blocks(body)))

    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m is None:
            body.append(line)
            continue
        if heading or any(x.strip() for x in body):
            close()
        heading, level, body = m.group(2), len(m.group(1)), []
    if heading or body:
        close()
    return parts


def _cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def _table_row(block: _Block, name: str) -> str | None:
    if block.kind != "table" or len(block.lines) < 3:
        return None
    headers = [plain(h) for h in _cells(block.lines[0])]
    for row in block.lines[2:]:
        cells = _cells(row)
        if cells and plain(cells[0]) == name:
            pairs = [(h, plain(c)) for h, c in zip(headers[1:], cells[1:])
                     if h.lower() != "unit" and plain(c) and not plain(c).lower().startswith("see ")]
            return "; ".join(f"{h}: {c}" for h, c in pairs)
    return None


def _item(block: _Block, name: str) -> str | None:
    if block.kind != "item":
        return None
    text = plain(_ITEM.sub("", " ".join(block.lines), count=1))
    if not text.startswith(name) or text[len(name):len(name) + 1] not in (":", " ", ""):
        return None
    return text[len(name):].lstrip(" :")


def _labelled(block: _Block) -> str | None:
    if block.kind != "para":
        return None
    first = " ".join(x.strip() for x in block.lines)
    m = _LABEL.match(first)
    if m is None or not _METHOD_LABEL.search(m.group(1) or m.group(2)):
        return None
    return plain(first[m.end():])


def _prose(part: _Part, name: str) -> str:
    paras = [plain(" ".join(b.lines)) for b in part.blocks if b.kind == "para"]
    paras = [p for p in paras if p and not _NOT_METHOD.match(p)]
    return next((p for p in paras if mentions(p, name)), paras[0] if paras else "")


def _defines(part: _Part, name: str) -> bool:
    return any(_table_row(b, name) is not None or _item(b, name) is not None for b in part.blocks)


def _section_of(parts: list[_Part], name: str) -> _Part | None:
    for part in parts:
        if mentions(part.heading, name):
            return part
    deeper = [p for p in parts if p.level > 1] + [p for p in parts if p.level == 1]
    for found in (lambda p: _defines(p, name),
                  lambda p: any(b.kind != "code" and mentions(" ".join(b.lines), name) for b in p.blocks)):
        part = next((p for p in deeper if found(p)), None)
        if part is not None:
            return part
    return None


def _gist(parts: list[_Part], part: _Part, name: str) -> str:
    for block in part.blocks:
        text = _table_row(block, name) or _item(block, name)
        if text:
            return text
    for other in parts:  # the note's introductory table
        for block in other.blocks:
            text = _table_row(block, name)
            if text:
                return text
    labelled = next((t for t in (_labelled(b) for b in part.blocks) if t), None)
    return labelled or _prose(part, name)


class MethodDocs:
    """The notes of one docs/methods directory, read once each."""

    def __init__(self, directory: Path = DOCS_DIR) -> None:
        self.directory = directory
        self._parsed: dict[Path, list[_Part]] = {}

    @property
    def found(self) -> bool:
        return self.directory.is_dir()

    def _read(self, path: Path) -> list[_Part]:
        if path not in self._parsed:
            try:
                self._parsed[path] = _parts(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                self._parsed[path] = []
        return self._parsed[path]

    def section(self, name: str, family: str) -> Section | None:
        """The section describing benchmark `name`, its family's note first."""
        if not self.found:
            return None
        own = self.directory / f"{family}.md"
        others = sorted(p for p in self.directory.glob("*.md") if p != own)
        for path in ([own] if own.is_file() else []) + others:
            parts = self._read(path)
            part = _section_of(parts, name)
            if part is not None:
                return Section(f"{DOCS_PREFIX}/{path.name}", part.heading, part.anchor, _gist(parts, part, name))
        return None
