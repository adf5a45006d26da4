"""Sizes under src/osmeter, as under probe/src (docs/probe-layout.md): no file
over 600 lines, no function or method over 80, so one can find one's way in.
A file that outgrows the limit is split by what it does; a function, into steps."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "osmeter"
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80


def function_sizes(text: str) -> dict[str, int]:
    """Every function and method (nested ones too) -> its lines, decorators
    excluded: end_lineno - lineno + 1. Named Class.method, outer.inner."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out[name] = child.end_lineno - child.lineno + 1  # type: ignore[operator]
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(text), "")
    return out


def sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_the_sources_are_found():
    names = {p.relative_to(SRC).as_posix() for p in sources()}
    assert {"cli.py", "memlevels.py", "report/html.py"} <= names


def test_no_file_over_600_lines():
    big = {p.relative_to(SRC).as_posix(): n for p in sources()
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES}
    assert not big, f"src/osmeter files over {MAX_FILE_LINES} lines (split them by what they do): {big}"


def test_no_function_over_80_lines():
    long = {f"{p.relative_to(SRC).as_posix()}: {name}()": n for p in sources()
            for name, n in function_sizes(p.read_text(encoding="utf-8")).items() if n > MAX_FUNCTION_LINES}
    assert not long, f"src/osmeter functions over {MAX_FUNCTION_LINES} lines (break them into steps): {long}"


def test_the_scanner_catches_a_long_function():
    """The measure itself, on a made-up text: a method of 81 lines is caught,
    one of 80 is not, nested functions and decorators are counted as stated."""
    body = "".join(f"        x{i} = {i}\n" for i in range(78))
    text = ("import functools\n\n\n"
            "class C:\n"
            "    @functools.cache\n"
            "    def long(self):\n" + body + "        y = 0\n        return y\n\n"
            "    def fits(self):\n" + body + "        return 1\n\n\n"
            "def outer():\n"
            "    def inner():\n"
            "        return 2\n"
            "    return inner\n")
    sizes = function_sizes(text)
    assert sizes == {"C.long": 81, "C.fits": 80, "outer": 4, "outer.inner": 2}
    assert [n for n, lines in sizes.items() if lines > MAX_FUNCTION_LINES] == ["C.long"]
