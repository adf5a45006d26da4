"""Reading a layer table (docs/probe-layout.md, docs/frontend-layout.md):
the rows `| N | `a`, `b` | what |` give each module its layer. Shared by the
probe's layer test and the front end's."""

from __future__ import annotations

import re


def layer_table(doc: str, name: str) -> dict[str, int]:
    """module -> layer, from the rows of `doc` (the text of docs/`name`)."""
    table: dict[str, int] = {}
    for m in re.finditer(r"^\|\s*(\d+)\s*\|([^|]*)\|", doc, re.M):
        for module in re.findall(r"`([^`]+)`", m.group(2)):
            assert module not in table, f"docs/{name}: module {module} is in two layers"
            table[module] = int(m.group(1))
    return table
