"""Property-based: generated argument lists to `osmeter` end with an exit code
from docs/exit-codes.md and never with a traceback (issue 10, item 9).

Arguments are drawn from each command's own options and choices, values
that broke parsers before (huge, negative, non-finite, empty, non-UTF-8)
and short random words, so most lists get past argparse into the commands.
Everything runs in-process against a store holding one imported run; the
probe is missing (commands that need it exit 4 without starting anything),
and files are written only into the test's directory. The default run is
bounded (CLI_EXAMPLES); OSMETER_TEST_SLOW=1 (CI) runs many more.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from pathlib import Path
from typing import Any

import pytest

from .. import hypothesis_home  # noqa: F401  (before hypothesis: its caches go to a temporary directory)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osmeter.cli import build_parser, main
from osmeter.errors import EXIT_INTERNAL

from ..conftest import DATA, import_fixture

SLOW = os.environ.get("OSMETER_TEST_SLOW") == "1"
CLI_EXAMPLES = 2000 if SLOW else 150
DOCUMENTED = {0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}  # docs/exit-codes.md, without signals


def _commands() -> dict[str, list[argparse.Action]]:
    """Per command: its arguments (options and positionals)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: [a for a in p._actions if a.dest != "help"] for name, p in sub.choices.items()}


COMMANDS = _commands()
VALUES = [
    "1", "2", "latest", "0", "-1", "1.5", "1e309", "-1e309", "nan", "inf", "9" * 30, str(2**63), "", " ", "-", "--",
    "x=1", "size=4k", "args=", "=1", "cpu.call", "syscall.null", "cpu.call,syscall.null", "sw,cycles", "0..7",
    "\udcff", "caf\udce9", "a\u2028b", "\x00", "out.csv", "out.json", "out.html", "out.md", "out.svg", "figs",
    "expect.yaml", "postgresql://u:p@h/db", "nowhere.db", str(DATA / "run_x86_64.jsonl"), "missing.jsonl",
]
word = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), max_size=8).filter(
    lambda w: w.strip(".") != ""
)


def value_for(action: argparse.Action) -> st.SearchStrategy[str]:
    choices = [str(c) for c in action.choices or ()]
    if action.dest in ("run", "runs", "baseline"):
        choices = ["1", "latest"]  # the store's one run
    elif action.dest == "files":
        choices = [str(DATA / "run_x86_64.jsonl"), str(DATA / "run_aarch64.jsonl")]
    return st.one_of(st.sampled_from(VALUES), word, *([st.sampled_from(choices)] * 3 if choices else []))


@st.composite
def well_formed(draw: Any, command: str) -> list[str]:
    """Some of the command's arguments, each with a value of a fitting kind."""
    argv = [command]
    positionals = [a for a in COMMANDS[command] if not a.option_strings]
    chosen = draw(st.lists(st.sampled_from(COMMANDS[command]), max_size=5))
    for action in positionals if draw(st.integers(0, 4)) else []:  # mostly: every positional, first
        argv += draw(st.lists(value_for(action), min_size=1, max_size=1 if action.nargs is None else 3))
    for action in chosen:
        if action.option_strings:
            argv.append(draw(st.sampled_from(action.option_strings)))
            if action.nargs != 0:
                argv.append(draw(value_for(action)))
        else:
            argv += draw(st.lists(value_for(action), min_size=1, max_size=3))
    return argv


@st.composite
def argument_lists(draw: Any) -> list[str]:
    command = draw(st.sampled_from(sorted(COMMANDS) + ["--version", "--help", "nosuch", ""]))
    if command in COMMANDS and draw(st.integers(0, 3)):
        return draw(well_formed(command))
    options = [o for a in COMMANDS.get(command, []) for o in a.option_strings] or ["--json"]
    token = st.one_of(st.sampled_from(options), st.sampled_from(VALUES), word)
    return [command, *draw(st.lists(token, max_size=8))]


CLI_SETTINGS = settings(
    max_examples=CLI_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
counted = {"lists": 0, "past_argparse": 0}


@pytest.fixture
def fuzz_dir(tmp_path: Path, store_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import_fixture(store_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("OSMETER_PROBE", str(tmp_path / "no-such-probe"))
    (work / "expect.yaml").write_text("cpu.call:\n  ns: 1\n")
    return work


@CLI_SETTINGS
@given(argv=argument_lists())
def test_generated_argument_lists(fuzz_dir: Path, argv: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
            counted["past_argparse"] += 1
        except SystemExit as e:  # argparse: usage errors, --help, --version
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    counted["lists"] += 1
    assert code != EXIT_INTERNAL and code in DOCUMENTED, (argv, code, err.getvalue())
    assert "Traceback" not in err.getvalue()
    if code not in (0, 2) or "error:" in err.getvalue():
        assert "error:" in err.getvalue(), (argv, code, err.getvalue())


def test_cli_fuzz_ran(capsys: pytest.CaptureFixture[str]) -> None:
    """Say how many lists ran (pytest -s shows it); runs after the fuzz test."""
    if counted["lists"]:
        with capsys.disabled():
            print(f"\ncli fuzz: {counted['lists']} argument lists, {counted['past_argparse']} past argparse")
