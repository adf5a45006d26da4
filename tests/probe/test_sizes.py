"""Sizes under probe/src (docs/probe-layout.md): no file over 600 lines, no
top-level function over 80, so one can find one's way in. Exceptions are
listed here with their reason, and fail once they are no longer needed."""

from __future__ import annotations

import c_source
from probe_helpers import REPO

SRC = REPO / "probe" / "src"
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80

# None today; an entry names the file (or file and function) and why it may
# stay over the limit.
FILE_EXCEPTIONS: dict[str, str] = {}
FUNCTION_EXCEPTIONS: dict[tuple[str, str], str] = {}


def file_sizes() -> dict[str, int]:
    return {p.relative_to(SRC).as_posix(): p.read_text().count("\n") for p in c_source.sources(SRC)}


def function_sizes() -> dict[tuple[str, str], int]:
    return {(p.relative_to(SRC).as_posix(), f.name): f.lines
            for p in c_source.sources(SRC) if p.suffix == ".c"
            for f in c_source.functions(p.read_text())}


def test_no_file_over_600_lines():
    big = {f: n for f, n in file_sizes().items() if n > MAX_FILE_LINES and f not in FILE_EXCEPTIONS}
    assert not big, f"probe/src files over {MAX_FILE_LINES} lines (split them by what they do): {big}"


def test_no_function_over_80_lines():
    long = {f"{f}: {fn}()": n for (f, fn), n in function_sizes().items()
            if n > MAX_FUNCTION_LINES and (f, fn) not in FUNCTION_EXCEPTIONS}
    assert not long, f"probe/src functions over {MAX_FUNCTION_LINES} lines (break them up): {long}"


def test_every_exception_is_still_needed():
    files, funcs = file_sizes(), function_sizes()
    stale = [f for f in FILE_EXCEPTIONS if files.get(f, 0) <= MAX_FILE_LINES]
    stale += [f"{f}: {fn}()" for f, fn in FUNCTION_EXCEPTIONS if funcs.get((f, fn), 0) <= MAX_FUNCTION_LINES]
    assert not stale, f"no longer over the limit, remove from test_sizes.py's exceptions: {stale}"


def test_the_scanner_measures_functions():
    """The measure itself, on a known text: braces in strings, comments and
    initialisers do not confuse it."""
    text = ('static const int t[] = {1, 2};\n'
            'struct s { int a; };\n'
            'int f(int x)\n'
            '{\n'
            '\tconst char *s = "}{"; /* } */\n'
            '\tif (x) {\n'
            '\t\treturn 1;\n'
            '\t}\n'
            '\treturn s[0];\n'
            '}\n'
            'static void g(void) { }\n')
    fns = c_source.functions(text)
    assert [(f.name, f.first, f.lines) for f in fns] == [("f", 3, 8), ("g", 11, 1)]
