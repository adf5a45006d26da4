"""Escaping text from a run for a dialect: HTML (esc) and Markdown (escape,
inline, cell, code). Text from a run (labels, parameters, machine values,
messages, partly from a remote peer) is never trusted: terminal controls and
bidi overrides are removed (osmeter.textsafe), markup characters escaped.
"""

from __future__ import annotations

import html
import re
from typing import Any

from .. import textsafe


def esc(value: Any) -> str:
    """Any text in the page, attributes included: HTML-escaped (quotes too), without the controls
    and bidi overrides that have no place in a page and could make it lie (osmeter.textsafe)."""
    return html.escape(textsafe.terminal(str(value)), quote=True)


# Characters Markdown would read as markup: code, emphasis, links and images, inline HTML,
# table cells, strikethrough, headings. Each is backslash-escaped in text from a run, but an
# underscore between two letters or digits (`touched_mib`), which CommonMark never reads as
# emphasis, stays as it is.
_SPECIAL = re.compile(r"[\\`*\[\]<>|~#_]")


def _escape_one(m: re.Match[str]) -> str:
    s, at = m.string, m.start()
    if m.group() == "_" and 0 < at < len(s) - 1 and s[at - 1].isalnum() and s[at + 1].isalnum():
        return "_"
    return "\\" + m.group()


def escape(text: object) -> str:
    """Text from a run (a label, a parameter, a machine value, a message) as Markdown that shows
    it as it is: markup characters escaped, terminal controls and bidi overrides removed
    (osmeter.textsafe); line breaks are kept."""
    return _SPECIAL.sub(_escape_one, textsafe.terminal(str(text)))


def inline(text: object) -> str:
    """escape(text) on one line (a heading, a paragraph, a list item)."""
    return " ".join(escape(text).split("\n"))


def cell(text: object) -> str:
    """A table cell: escape(text), line breaks as <br>."""
    return escape(text).replace("\n", "<br>") or " "


def code(name: str) -> str:
    """`name` as inline code when it is a plain word, else as escaped text."""
    return f"`{name}`" if re.fullmatch(r"[A-Za-z0-9_.:-]+", name) else inline(name)
