"""Stored text made safe to show: nothing in a label, a parameter, a machine
description or an error message may drive the reader's terminal or reorder
what they see.

`terminal(text)` removes escape sequences (ESC [ ... CSI, ESC ] ... OSC and the
other ESC forms, and their C1 spellings), every other C0 control but TAB and
newline, DEL, the C1 controls U+0080-U+009F and the bidirectional overrides
and isolates (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C).
`line(text)` does the same and turns TAB and newline into spaces: for one
table cell. `scrub(obj)` applies `line` to every string inside a stored run
or result (dataclasses, dicts, lists, tuples), keys included.
`json_text(text)` writes those characters as \\uXXXX escapes in JSON text,
which keeps the data exact and the terminal safe. `visible(text)` writes
them (and CR) as backslash escapes instead of removing them: what
osmeter.streams does to everything written to a terminal on stdout.
`clip(text)` cuts a long value for a table cell or a heading, saying how
much was cut (`LLL…(+2950 chars)`); JSON and CSV keep the whole value.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from typing import Any

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# ESC or C1 CSI (U+009B) with parameters; ESC ] / U+009D OSC and the string controls
# (DCS, SOS, PM, APC) up to their terminator (BEL or ST), or to the end when unterminated;
# any other ESC with its intermediate and final byte.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])(?:[^\x07\x1b\x9c]*)(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_CONTROL_AND_SPACE = re.compile("[\t\n]")
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_BIDI}\u2028\u2029]")


def terminal(text: str) -> str:
    """`text` without escape sequences, controls (but TAB and newline) and bidi overrides."""
    if text.isprintable():  # the common case: nothing to remove (TAB and newline are not printable)
        return text
    if ("\n" in text or "\t" in text) and text.replace("\n", "").replace("\t", "").isprintable():
        return text  # lines of printable text (a hover of several lines): nothing to remove either
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def line(text: str) -> str:
    """`terminal(text)` on one line: TAB and newline become spaces."""
    return _CONTROL_AND_SPACE.sub(" ", terminal(text))


def say(kind: str, text: str) -> None:
    """`osmeter: KIND: TEXT` on stderr, TEXT on one line without escapes: how
    every warning and note reaches the user (errors: cli.main)."""
    print(f"osmeter: {kind}: {line(text)}", file=sys.stderr)


def scrub(obj: Any) -> Any:
    """`obj` with `line` applied to every string in it (a frozen dataclass is copied)."""
    if isinstance(obj, str):
        return line(obj)
    if isinstance(obj, dict):
        return {scrub(k): scrub(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(scrub(v) for v in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: scrub(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}
        return dataclasses.replace(obj, **changes)
    return obj


def json_text(text: str) -> str:
    """JSON text with DEL, the C1 controls and the bidi characters written as \\uXXXX escapes
    (json.dumps already escapes the C0 controls); the value it decodes to is unchanged."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def visible(text: str) -> str:
    """`text` with every control but TAB and newline (ESC, CR, DEL, the C1 controls) and the bidi
    overrides written as backslash escapes (`\\x1b`, `\\r`, `\\u202e`): shown, not obeyed."""
    if text.isprintable():
        return text
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


CLIP = 64  # characters: the most a table cell or a heading shows of one label or flag


def clip(text: str, limit: int = CLIP) -> str:
    """`text`, or when it is longer than `limit` characters its start and how much was cut
    (`LLL…(+2950 chars)`), `limit` characters in all: for a table cell or a heading, which
    must not grow with whatever was stored. JSON and CSV keep the whole value."""
    if len(text) <= limit:
        return text
    keep = limit
    while True:
        marker = f"…(+{len(text) - keep} chars)"
        if keep + len(marker) <= limit or keep <= 1:
            return text[:keep] + marker
        keep = max(1, limit - len(marker))
