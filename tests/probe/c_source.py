"""A small reader of the probe's C sources for the layout tests: comments,
strings and preprocessor lines blanked; top-level function definitions and
header prototypes found by brace matching. Enough for this code base's
style (K&R, one definition per top-level brace block); not a C parser."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
_NAME_BEFORE_PARAMS = re.compile(r"([A-Za-z_]\w*)\s*\([^;{]*\)\s*(?:__attribute__\s*\(\(.*\)\)\s*)?$", re.S)


def strip(text: str) -> list[str]:
    """The source's lines with comments, string and character literals and
    preprocessor lines (with their continuations) blanked; line numbers kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(q + re.sub(r"[^\n]", " ", text[i + 1:j]) + q)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    lines = "".join(out).split("\n")
    cont = False
    for k, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            lines[k] = ""
    return lines


@dataclass
class Function:
    name: str
    first: int  # line of the name (1-based)
    last: int   # line of the closing brace

    @property
    def lines(self) -> int:
        return self.last - self.first + 1


def functions(text: str) -> list[Function]:
    """Top-level function definitions, in order."""
    res: list[Function] = []
    depth, head, start = 0, "", None
    for ln, line in enumerate(strip(text), 1):
        for ch in line:
            if depth == 0:
                if ch == "{":
                    h = head.strip()
                    m = _NAME_BEFORE_PARAMS.search(h)
                    is_fn = m is not None and "=" not in h[:m.start()] and not re.search(r"\b(struct|union|enum)\s*\w*\s*$", h)
                    off = len(head) - len(head.lstrip()) + (m.start() if m else 0)
                    start = (m.group(1), ln - head[off:].count("\n")) if is_fn else None
                    depth = 1
                elif ch == ";":
                    head = ""
                else:
                    head += ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    if start:
                        res.append(Function(start[0], start[1], ln))
                    head, start = "", None
        if depth == 0:
            head += "\n"
    return res


def prototypes(text: str) -> list[str]:
    """Names of the functions a header declares (not static, not typedefs,
    not members of a struct)."""
    names, depth, stmt = [], 0, ""
    for ch in "\n".join(strip(text)):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            stmt = ""
        elif depth == 0:
            if ch == ";":
                s = " ".join(stmt.split())
                stmt = ""
                if "(" not in s or re.match(r"(typedef|static)\b", s):
                    continue
                m = re.match(r"[^(]*?\b([A-Za-z_]\w*)\s*\(", s)
                if m and not s.lstrip().startswith("("):
                    names.append(m.group(1))
            else:
                stmt += ch
    return names


def includes(text: str) -> list[tuple[int, str]]:
    """(line, target) of every #include "..." (quoted: the project's own)."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in INCLUDE.finditer(text)]


def sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".c", ".h"))
